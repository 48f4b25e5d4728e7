import json

from hypothesis import given
from hypothesis import strategies as st

from core.measure import Measured, estimate_tokens, json_chars


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
