import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.measure as measure
from core.measure import (
    Measured,
    SizeCache,
    escape_extra,
    estimate_tokens,
    forget_large,
    json_chars,
    str_json_chars,
)


def dump_len(messages):
    return len(json.dumps(messages, ensure_ascii=False))


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@given(st.lists(texts, max_size=6), texts)
def test_set_content_keeps_chars_equal_to_json_dump(contents, new):
    messages = [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}",
                                                   "name": "bash", "input": {}}
                                                  for i in range(len(contents))]}]
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{i}", "content": c}
        for i, c in enumerate(contents)]})
    m = Measured(list(messages))
    assert m.chars == dump_len(m.messages)
    for i in range(len(contents)):
        m.set_content(1, i, new)
        assert m.chars == dump_len(m.messages)
    # the caller's original list of message dicts is untouched
    assert messages[1]["content"][0:1] == [] or messages[1]["content"][0]["content"] == contents[0]


def test_replace_all_and_append_stay_exact():
    msgs = [{"role": "user", "content": "héllo 你好"}, {"role": "assistant", "content": "ok"}]
    m = Measured(list(msgs))
    m.replace_all([msgs[1]])
    assert m.chars == dump_len([msgs[1]])
    m.replace_all([])
    assert m.chars == 2 == json_chars([])
    m.append({"role": "user", "content": "x"})
    assert m.chars == dump_len(m.messages)


def test_token_estimate_is_cjk_aware():
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("你" * 100) == 130
    assert estimate_tokens("") == 0


# -- the counting path: exact for any JSON value and any large string ------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(texts, inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=2),
    max_leaves=12,
)


@given(json_values)
def test_json_chars_equals_the_dump_for_any_value(value):
    assert json_chars(value) == len(json.dumps(value, ensure_ascii=False))


ascii_pieces = st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=1, max_size=30)


@given(st.lists(ascii_pieces, min_size=1, max_size=8), st.integers(0, 3))
def test_a_large_ascii_string_is_counted_exactly(pieces, filler):
    # past LARGE_STRING, so the counting path runs; every control character included
    text = "".join(pieces) * (70_000 // len("".join(pieces)) + 1) + "\x00\x1f\"\\\n" * filler
    assert json_chars(text) == len(json.dumps(text, ensure_ascii=False))
    assert json_chars({"content": [text]}) == len(json.dumps({"content": [text]},
                                                             ensure_ascii=False))


def test_a_large_non_ascii_string_is_exact_too():
    text = "日志 \"行\"\n\t\x01" * 10_000 + "\ud800"
    assert json_chars(text) == len(json.dumps(text, ensure_ascii=False))


def test_sizes_cached_between_calls_are_each_messages_own():
    """The cache looks a whole list up by identity in one pass: messages it kept, copies of
    them, messages it never saw and ones it let go are each measured as themselves."""
    base = [{"role": "user", "content": f"message {n} " * n} for n in range(8)]
    cache = SizeCache()
    history = Measured(list(base), cache)
    cache.keep(history)
    lists = [base[3:], [*base, {"role": "assistant", "content": "new"}],
             [{**base[0], "content": "copied"}, *base[1:]], base[:2], base, []]
    for messages in lists:
        measured = Measured(list(messages), cache)
        assert measured.sizes == [json_chars(m) for m in messages]
        assert measured.chars == json_chars(messages)
        cache.keep(measured)
    assert cache.light_total(base, 10_000) == json_chars(base)


# any code point: control characters, quotes, backslashes, non-ASCII, lone surrogates
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=60)


@given(any_text)
def test_the_escapes_counted_on_the_bytes_are_what_the_dump_adds(text):
    data = text.encode("utf-8", "surrogatepass")
    assert len(text) + 2 + escape_extra(data) == len(json.dumps(text, ensure_ascii=False))


@settings(max_examples=80)
@given(st.lists(any_text, min_size=1, max_size=8), st.integers(1, 7), st.integers(1, 40))
def test_a_large_string_of_any_text_is_counted_exactly_in_any_slices(parts, slice_at, large):
    """The counting path for any text (non-ASCII and lone surrogates included, no escaped
    copy), with strings past the large-string size and counted in several slices, the
    slice edges falling anywhere (inside a multi-byte character too)."""
    text = "".join(parts) + "\x00\x1f\"\\\n\t\u00e9\u65e5\ud800"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(measure, "LARGE_STRING", large)
        patch.setattr(measure, "_SLICE", slice_at)
        forget_large()
        assert str_json_chars(text) == len(json.dumps(text, ensure_ascii=False))
        assert json_chars({"content": [text]}) == len(json.dumps({"content": [text]},
                                                                 ensure_ascii=False))
    forget_large()


def test_a_non_ascii_string_is_counted_on_its_bytes_not_escaped(monkeypatch):
    """A large non-ASCII string takes the bytes route (whose bytes the archive's write
    reuses), never the escaped copy."""
    text = "日志 \"行\"\n\t\x01" * 10_000 + "\ud800"
    monkeypatch.setattr(measure, "encode_basestring", None)  # would raise if called
    forget_large()
    assert str_json_chars(text) == len(json.dumps(text, ensure_ascii=False))
    assert measure.utf8(text) is measure.utf8(text)  # remembered for the write
    forget_large()


def test_a_size_cached_by_a_light_total_that_gave_up_is_never_another_messages():
    """``light_total`` stores sizes before it may give up (a large or too much new text):
    those messages are held too, so a freed one's id reused by a new dict cannot
    return the old size."""
    cache = SizeCache()
    small = {"role": "user", "content": "x" * 10}
    messages = [small, {"role": "user", "content": "y" * 50_000}]
    assert cache.light_total(messages, 20_000) is None
    gone = id(small)
    del messages, small
    made = []
    for _ in range(2000):  # CPython hands a freed dict's memory to the next dict made
        fresh = {"role": "assistant", "content": "z" * 1000}
        assert cache.size(fresh) == json_chars(fresh), id(fresh) == gone
        made.append(fresh)
