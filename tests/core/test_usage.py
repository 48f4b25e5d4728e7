"""One reading of a call's usage: the context it filled, what was billed, the cache's share."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.usage import Usage, context_tokens

CACHED = {"input_tokens": 4, "cache_creation_input_tokens": 6120,
          "cache_read_input_tokens": 14350, "output_tokens": 8, "service_tier": "standard",
          "cache_creation": {"ephemeral_5m_input_tokens": 6120, "ephemeral_1h_input_tokens": 0}}
# A server compaction (the SDK's BetaUsage): the summariser's step is billed apart and is not
# in the top-level fields; the answering step read the compacted context.
COMPACTED = {"input_tokens": 2_000, "output_tokens": 20, "cache_creation_input_tokens": 700,
             "cache_read_input_tokens": 0,
             "iterations": [
                 {"type": "compaction", "input_tokens": 90_000, "output_tokens": 1_500,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                 {"type": "message", "input_tokens": 2_000, "output_tokens": 20,
                  "cache_creation_input_tokens": 700, "cache_read_input_tokens": 0}]}
# A server tool loop: the top-level fields add up both sampling steps; the window is the last.
TOOL_LOOP = {"input_tokens": 3_100, "output_tokens": 90, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 8_000,
             "iterations": [
                 {"type": "message", "input_tokens": 1_000, "output_tokens": 40,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 4_000},
                 {"type": "message", "input_tokens": 2_100, "output_tokens": 50,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 4_000}]}


def test_context_tokens_are_input_cached_or_not():
    usage = Usage.from_api(CACHED)
    assert usage is not None
    assert usage.context_tokens == 4 + 6120 + 14350
    assert (usage.input, usage.cache_write, usage.cache_read, usage.output) == (4, 6120, 14350, 8)
    assert usage.cache_share == 14350 / (4 + 6120 + 14350)


def test_a_compaction_step_is_billed_but_is_not_the_context():
    usage = Usage.from_api(COMPACTED)
    assert usage is not None
    assert usage.context_tokens == 2_700
    assert usage.billed_input == 2_700 + 90_000
    assert usage.billed() == Usage(input=92_000, cache_write_5m=700, output=1_520)
    assert usage.billed_total == 92_700 + 1_520


def test_a_tool_loop_fills_the_window_of_its_last_step_and_is_billed_once():
    usage = Usage.from_api(TOOL_LOOP)
    assert usage is not None
    assert usage.context_tokens == 2_100 + 4_000
    assert usage.billed_input == 3_100 + 8_000  # the steps are in the top level already


def test_one_hour_cache_writes_are_told_apart():
    usage = Usage.from_api({"input_tokens": 1, "cache_creation_input_tokens": 3_000,
                            "cache_creation": {"ephemeral_1h_input_tokens": 1_000}})
    assert usage is not None
    assert (usage.cache_write_5m, usage.cache_write_1h) == (2_000, 1_000)


def test_no_usage_and_no_input_count_are_none():
    assert Usage.from_api(None) is None and Usage.from_api([1, 2]) is None
    assert Usage.from_api({"output_tokens": 5}) is None  # a delta, not a reading
    assert context_tokens(None) is None and context_tokens({}) is None
    assert context_tokens(CACHED) == 20_474


def test_a_transcript_is_read_as_the_api_object_it_recorded():
    assert Usage.from_transcript(CACHED) == Usage.from_api(CACHED)


def test_codex_counts_cached_input_and_cache_writes_inside_its_input():
    usage = Usage.from_codex({"input_tokens": 5_120, "cached_input_tokens": 3_072,
                              "cache_write_input_tokens": 1_024, "output_tokens": 96,
                              "reasoning_output_tokens": 64, "total_tokens": 5_216})
    assert usage == Usage(input=1_024, cache_write_5m=1_024, cache_read=3_072, output=96)
    assert usage.context_tokens == 5_120
    assert usage.to_api() == {"input_tokens": 1_024, "cache_creation_input_tokens": 1_024,
                              "cache_read_input_tokens": 3_072, "output_tokens": 96}
    older = Usage.from_codex({"input_tokens": 5_400, "cached_input_tokens": 5_120})
    assert older is not None and older.context_tokens == 5_400 and older.cache_write == 0


def test_calls_add_up_to_the_billed_tally_of_both():
    first, second = Usage.from_api(COMPACTED), Usage.from_api(CACHED)
    assert first is not None and second is not None
    total = first + second
    assert total.billed_input == first.billed_input + second.billed_input
    assert total.output == 1_520 + 8 and total.steps == () and total.window is None
    assert total.billed() is total  # a tally is its own billed tally
    assert (total + second).billed_input == total.billed_input + second.billed_input


# -- any recorded object ---------------------------------------------------------------------

VALUES = st.one_of(st.integers(-10**13, 10**13), st.none(), st.booleans(), st.text(max_size=3),
                   st.floats(allow_nan=True), st.lists(st.integers(), max_size=2))
KEYS = st.sampled_from(["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                        "output_tokens", "cached_input_tokens", "cache_write_input_tokens"])
STEP = st.dictionaries(KEYS, VALUES) | st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "compaction", "advisor_message", 7])},
    optional={"input_tokens": VALUES, "cache_read_input_tokens": VALUES})
OBJECTS = st.dictionaries(KEYS, VALUES) | st.builds(
    lambda top, steps, split: {**top, "iterations": steps, "cache_creation": split},
    st.dictionaries(KEYS, VALUES), st.one_of(st.lists(STEP, max_size=3), VALUES),
    st.one_of(st.dictionaries(st.just("ephemeral_1h_input_tokens"), VALUES), VALUES))


@given(OBJECTS)
def test_whatever_a_file_says_the_counts_are_never_negative(data):
    for usage in (Usage.from_api(data), Usage.from_codex(data)):
        if usage is None:
            continue
        assert usage.context_tokens >= 0 and usage.billed_input >= 0
        assert min(usage.input, usage.cache_write_5m, usage.cache_write_1h, usage.cache_read,
                   usage.output) >= 0
        assert 0.0 <= usage.cache_share <= 1.0


COUNTS = st.integers(0, 10**9)


@given(COUNTS, COUNTS, COUNTS, COUNTS)
def test_without_steps_the_context_is_the_sum_of_its_parts(uncached, written, read, out):
    usage = Usage.from_api({"input_tokens": uncached, "cache_creation_input_tokens": written,
                            "cache_read_input_tokens": read, "output_tokens": out})
    assert usage is not None
    assert usage.context_tokens == uncached + written + read == usage.billed_input


@given(COUNTS, COUNTS, COUNTS)
def test_a_codex_context_is_its_whole_input(read, written, uncached):
    usage = Usage.from_codex({"input_tokens": read + written + uncached,
                              "cached_input_tokens": read, "cache_write_input_tokens": written})
    assert usage is not None
    assert usage.context_tokens == read + written + uncached
    assert (usage.input, usage.cache_write, usage.cache_read) == (uncached, written, read)
