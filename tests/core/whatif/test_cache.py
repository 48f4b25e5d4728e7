"""The prefix-cache model against hand-computed cases.

Every message below is built to a known JSON size so the arithmetic can be done by hand:
a user message ``{"role": "user", "content": "<text>"}`` is 31 chars plus its text, so a
69-char text makes it exactly 100 chars, and an array of n such messages is
2 + 100n + 2(n - 1) = 102n chars. The ratio is 2 chars per token and the fixed overhead
1,000 tokens, so n messages cost 51n + 1,000 tokens.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.measure import json_chars
from core.whatif.cache import CacheSplit, PrefixCache, request_tokens

RATIO = 2.0
OVERHEAD = 1_000


def message(n: int, role: str = "user") -> dict:
    """A 100-char message whose text says which one it is."""
    text = f"message {n}".ljust(69 if role == "user" else 64, ".")
    built = {"role": role, "content": text}
    assert json_chars(built) == 100  # the premise of every sum below
    return built


def history(count: int) -> list[dict]:
    return [message(i, "user" if i % 2 == 0 else "assistant") for i in range(count)]


def new_cache() -> PrefixCache:
    return PrefixCache(ratio=RATIO, overhead_tokens=OVERHEAD)


def test_request_tokens_is_chars_at_the_ratio_plus_the_overhead():
    assert request_tokens(204, 2.0, 1_000) == 102 + 1_000
    assert request_tokens(7, 4.0, 0) == 2  # 1.75 rounds to 2


def test_the_first_request_reads_nothing():
    # 2 messages: 204 chars = 102 tokens, + 1,000 overhead, all written
    assert new_cache().observe(history(2), None) == CacheSplit(read=0, write=1_102)


def test_a_stable_prefix_reads_all_of_the_previous_request():
    cache = new_cache()
    messages = history(6)
    assert cache.observe(messages[:2], None) == CacheSplit(0, 1_102)
    # 4 messages = 408 chars = 204 tokens + 1,000 = 1,204; the previous request's
    # 2 messages (204 chars = 102 tokens) and the overhead are read: 1,102; 102 written
    assert cache.observe(messages[:4], None) == CacheSplit(1_102, 102)
    # 6 messages = 612 chars = 306 + 1,000 = 1,306; read 4 messages' 1,204
    assert cache.observe(messages[:6], None) == CacheSplit(1_204, 102)


def test_a_compaction_that_rewrites_from_the_first_message_reads_only_the_overhead():
    cache = new_cache()
    messages = history(10)
    cache.observe(messages, None)
    summary = {"role": "user", "content": "summary of it all".ljust(69, ".")}
    compacted = [summary, *messages[7:]]  # the summary first, then the last three kept
    # 4 messages = 408 chars = 204 tokens + 1,000; the first message changed, so only
    # the overhead is read and the kept tail (same objects, but after the change) is written
    assert cache.observe(compacted, None) == CacheSplit(1_000, 204)


def text_block(text: str, length: int) -> dict:
    """A ``{"type": "text", "text": ...}`` block of ``length`` chars (28 + its text)."""
    block = {"type": "text", "text": text.ljust(length - 28, ".")}
    assert json_chars(block) == length
    return block


def test_a_clearing_at_message_40_of_60_reads_up_to_the_first_changed_block():
    cache = new_cache()
    before = history(60)
    # message 40: {"role": "user", "content": [b0, b1, b2]} with blocks of 100, 100, 101
    # chars: 28 for the head, then [ 100 , 100 , 101 ] }: 28 + 1 + 301 + 4 + 1 + 1 = 336
    kept = [text_block("kept one", 100), text_block("kept two", 100)]
    before[40] = {"role": "user", "content": [*kept, text_block("a long tool result", 101)]}
    assert json_chars(before[40]) == 336
    cache.observe(before, "2025-10-02T09:00:00Z")
    after = list(before)
    after[40] = {"role": "user", "content": [*kept, text_block("[cleared]", 101)]}
    # the whole request: 2 + 59 × 100 + 336 + 59 × 2 = 6,356 chars = 3,178 tokens + 1,000
    # read: messages 0..39 as an array, 102 × 40 = 4,080 chars, plus the two unchanged
    # blocks of message 40 with their separators, 2 × (100 + 2) = 204: 4,284 chars =
    # 2,142 tokens, + the 1,000 overhead = 3,142; written: 4,178 - 3,142 = 1,036
    assert cache.observe(after, "2025-10-02T09:01:00Z") == CacheSplit(3_142, 1_036)


def test_a_gap_longer_than_the_ttl_reads_nothing():
    messages = history(4)
    cache = new_cache()
    cache.observe(messages[:2], "2025-10-02T09:00:00.000Z")
    # 301 s later: the 5-minute entry has expired; all 1,204 tokens are written again
    assert cache.observe(messages[:4], "2025-10-02T09:05:01.000Z") == CacheSplit(0, 1_204)
    # exactly 300 s after that one is not longer than the TTL: the previous 1,204 are read
    assert cache.observe(history(6), "2025-10-02T09:10:01.000Z") == CacheSplit(1_204, 102)


def test_a_custom_ttl_is_honoured():
    cache = PrefixCache(RATIO, OVERHEAD, ttl_seconds=3_600)
    cache.observe(history(2), "2025-10-02T09:00:00Z")
    assert cache.observe(history(4), "2025-10-02T09:30:00Z") == CacheSplit(1_102, 102)


@pytest.mark.parametrize("first, second", [(None, "2025-10-02T12:00:00Z"),
                                           ("2025-10-02T09:00:00Z", None),
                                           ("2025-10-02T09:00:00Z", "not a time")])
def test_a_missing_timestamp_means_no_expiry_is_known(first, second):
    cache = new_cache()
    cache.observe(history(2), first)
    assert cache.observe(history(4), second) == CacheSplit(1_102, 102)


def test_equal_copies_give_the_same_split_as_the_same_objects():
    messages = history(60)
    changed = list(messages)
    changed[30] = message(999)
    same, copied, measured = new_cache(), new_cache(), new_cache()
    for request in (messages[:20], messages[:40], changed):
        by_identity = same.observe(request, None)
        by_equality = copied.observe(copy.deepcopy(request), None)
        with_sizes = measured.observe(request, None, sizes=[json_chars(m) for m in request])
        assert by_identity == by_equality == with_sizes
    # the last one: 60 messages = 6,120 chars = 3,060 + 1,000 = 4,060 tokens; read the
    # first 30 (102 × 30 = 3,060 chars = 1,530 tokens) + 1,000; message 30's string
    # content is one block, and it changed
    assert by_identity == CacheSplit(2_530, 1_530)


def test_a_message_of_another_role_is_not_a_partial_match():
    cache = new_cache()
    cache.observe([message(0)], None)
    assistant = {"role": "assistant", "content": message(0)["content"]}
    assert cache.observe([assistant], None).read == OVERHEAD


def test_bad_arguments_are_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="ratio must be positive"):
        PrefixCache(0.0, 10)
    with pytest.raises(ValueError, match="2 sizes given for 3 messages"):
        new_cache().observe(history(3), None, sizes=[100, 100])


# -- property: the split always adds up, and never reads more than was cached -----------------

blocks = st.lists(st.sampled_from(["a", "bb", "result", "ü" * 3, "x" * 40]), min_size=1,
                  max_size=3)
messages_st = st.builds(
    lambda role, texts, as_string: {"role": role, "content": texts[0] if as_string else
                                    [{"type": "text", "text": t} for t in texts]},
    st.sampled_from(["user", "assistant"]), blocks, st.booleans())
edits = st.lists(st.tuples(st.sampled_from(["append", "replace", "drop_front", "copy"]),
                           messages_st, st.integers(0, 20),
                           st.one_of(st.none(), st.integers(0, 900))),
                 min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(edits, st.sampled_from([1.0, 2.5, 3.7, 4.0]), st.integers(0, 500))
def test_read_plus_write_is_the_request_and_read_never_exceeds_the_previous(
        steps, ratio, overhead):
    cache = PrefixCache(ratio, overhead)
    current: list[dict] = []
    previous_tokens = None
    clock = 0
    for kind, new, where, gap in steps:
        if kind == "append" or not current:
            current = [*current, new]
        elif kind == "replace":
            current = list(current)
            current[where % len(current)] = new
        elif kind == "drop_front":
            current = current[where % len(current):]
        else:
            current = copy.deepcopy(current)
        stamp = None
        if gap is not None:
            clock += gap
            stamp = f"2025-10-02T{9 + clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}Z"
        split = cache.observe(current, stamp)
        tokens = request_tokens(json_chars(current), ratio, overhead)
        assert split.read + split.write == tokens
        assert split.read >= 0
        if previous_tokens is None:
            assert split.read == 0
        else:
            assert split.read <= previous_tokens
        previous_tokens = tokens
