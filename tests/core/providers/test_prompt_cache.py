"""Cache breakpoints: one on the last markable block, the caller's history untouched."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from core.providers.prompt_cache import cached_messages, cached_system

BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=5)),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, st.text()),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": f"t{i}", "content": "r"},
              st.integers(0, 9)),
)
MESSAGE = st.builds(lambda role, content: {"role": role, "content": content},
                    st.sampled_from(["user", "assistant"]),
                    st.one_of(st.text(max_size=5), st.lists(BLOCK, max_size=4)))


@given(st.lists(MESSAGE, max_size=6))
def test_at_most_one_marker_on_a_markable_block_and_the_input_is_untouched(messages):
    before = copy.deepcopy(messages)
    marked = cached_messages(messages)
    assert messages == before
    assert json.dumps(marked).count("cache_control") <= 1
    assert marked[:-1] == messages[:-1]
    for message in marked:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if "cache_control" in block:
                assert block["type"] != "thinking" and (block["type"] != "text" or block["text"])


def test_the_system_split_keeps_the_text_whole():
    blocks = cached_system("abc\n\nlog", stable=3)
    assert "".join(b["text"] for b in blocks) == "abc\n\nlog"
    assert cached_system("abc", stable=3) == [
        {"type": "text", "text": "abc", "cache_control": {"type": "ephemeral"}}]
