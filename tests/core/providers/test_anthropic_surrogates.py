"""The provider's last line of defence: no lone surrogate reaches the SDK's serialiser.

Tools no longer return them, but a history can still hold one (a session saved before,
a prompt, a tool input the model itself sent with a ``\\ud800`` escape, a memory record).
One such character anywhere used to fail every later call of the session with
``UnicodeEncodeError``; now it goes out as U+FFFD and the caller's history is untouched.
"""

from __future__ import annotations

import asyncio
import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.providers.anthropic import AnthropicProvider
from core.providers.base import ModelCall
from core.providers.unicode_safe import valid_unicode
from tests.support.messages_server import MessagesServer

HISTORY = [
    {"role": "user", "content": "list caf\udcff.txt and \ud800 please"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "ok \udfff"},
        {"type": "tool_use", "id": "toolu_1", "name": "glob",
         "input": {"pattern": "caf\udcff*", "\udc80key": ["\ud83d\ude00 pair", 3]}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "caf\udcff.txt"},
    ]},
]


def test_a_history_holding_lone_surrogates_still_makes_a_call(messages_server: MessagesServer):
    server = messages_server
    server.reply_text("fine")
    server.reply_text("fine again")
    provider = AnthropicProvider("claude-test", base_url=server.url, api_key="test-key")
    history = copy.deepcopy(HISTORY)
    tools = [{"name": "glob", "description": "find \udcff", "input_schema": {"type": "object"}}]

    async def two_calls() -> list[str]:
        try:
            first = await provider.complete(ModelCall("main", history, system="sys \ud800",
                                                      tools=tools), lambda _t: None)
            second = await provider.complete(ModelCall("side", history))
            return [first.text, second.text]
        finally:
            await provider.aclose()

    assert asyncio.run(two_calls()) == ["fine", "fine again"]
    assert history == HISTORY  # the caller's history is not rewritten
    first, _second = server.requests_to()
    body = json.loads(first.raw.decode("utf-8"))  # strict UTF-8 on the wire
    assert body["messages"][0]["content"] == "list caf\ufffd.txt and \ufffd please"
    tool_use = body["messages"][1]["content"][1]
    assert tool_use["input"] == {"pattern": "caf\ufffd*", "\ufffdkey": ["\U0001f600 pair", 3]}
    assert "\ufffd" in json.dumps(body["system"], ensure_ascii=False)


# any code point, with lone surrogates (and halves of pairs) drawn often, not by luck
_CHARS = st.characters(exclude_categories=()) | st.sampled_from(["\ud800", "\udcff", "\ude00"])
_ANY_TEXT = st.text(alphabet=_CHARS, max_size=20)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_ANY_TEXT, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_every_value_comes_out_encodable_and_clean_values_come_out_as_they_were(value):
    before = copy.deepcopy(value)
    cleaned = valid_unicode(value)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # never raises
    assert value == before
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    assert cleaned is value  # nothing to fix: the very same object, no copy


def test_a_deeply_nested_request_is_cleaned_without_recursing():
    value: object = "\ud800"
    for _ in range(5_000):
        value = [value]
    cleaned = valid_unicode(value)
    for _ in range(5_000):
        assert isinstance(cleaned, list)
        cleaned = cleaned[0]
    assert cleaned == "\ufffd"
