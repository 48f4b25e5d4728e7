"""The API's own context management and prompt caching, over real HTTP with the real SDK.

The scripted server refuses what the API refuses (a beta field without its header, a
compaction trigger under the minimum, more than four cache breakpoints), so these tests
prove the requests ctxlab sends are ones the API accepts.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.config import ConfigError
from core.providers.anthropic import AnthropicProvider
from core.providers.api_context import (
    COMPACTION_BETA,
    CONTEXT_MANAGEMENT_BETA,
    ApiContext,
    ContextEditing,
    ServerCompaction,
)
from core.providers.base import ModelCall, ModelReply, ProviderError
from tests.support.messages_server import MessagesServer

HISTORY = [
    {"role": "user", "content": "read the log"},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "line\n" * 50}]},
]
CACHE_USAGE = {"input_tokens": 40, "output_tokens": 12, "cache_creation_input_tokens": 900,
               "cache_read_input_tokens": 3_000,
               "cache_creation": {"ephemeral_5m_input_tokens": 900,
                                  "ephemeral_1h_input_tokens": 0}}


def provider(server: MessagesServer, api: ApiContext) -> AnthropicProvider:
    return AnthropicProvider("claude-test", base_url=server.url, api_key="k", api_context=api)


def call(p: AnthropicProvider, purpose: str = "main", messages: list | None = None,
         **options: Any) -> ModelReply:
    async def go() -> ModelReply:
        try:
            sink = (lambda _t: None) if purpose == "main" else None
            return await p.complete(ModelCall(purpose, messages or HISTORY, **options), sink)
        finally:
            await p.aclose()

    return asyncio.run(go())


def betas(headers: dict[str, str]) -> set[str]:
    return {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}


# -- context editing -------------------------------------------------------------------------


def test_context_editing_is_sent_with_its_beta_and_applied_edits_come_back(messages_server):
    edit = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4,
            "cleared_input_tokens": 12_000}
    messages_server.reply_text("done", context_management={"applied_edits": [edit]})
    api = ApiContext(editing=ContextEditing(trigger=30_000, keep=2, clear_at_least=5_000,
                                            exclude_tools=("memory",)))
    reply = call(provider(messages_server, api), system="sys")
    (request,) = messages_server.requests_to()
    assert betas(request.headers) == {CONTEXT_MANAGEMENT_BETA}
    assert request.body["context_management"] == {"edits": [{
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 30_000},
        "keep": {"type": "tool_uses", "value": 2},
        "clear_at_least": {"type": "input_tokens", "value": 5_000},
        "exclude_tools": ["memory"],
    }]}
    assert reply.extras["context_management"] == {"applied_edits": [edit]}


def test_side_calls_never_carry_context_management(messages_server):
    messages_server.reply_text("summary")
    api = ApiContext(editing=ContextEditing(), compaction=ServerCompaction())
    call(provider(messages_server, api), purpose="summary")
    (request,) = messages_server.requests_to()
    assert "context_management" not in request.body and "anthropic-beta" not in request.headers
    assert "cache_control" not in request.raw.decode()


def test_a_beta_field_without_its_header_is_refused_by_the_server(messages_server):
    """The server's own check: the SDK's beta surface without ``betas`` gets a 400."""
    class NoBetas(AnthropicProvider):
        def params(self, call: ModelCall) -> dict[str, Any]:
            params = super().params(call)
            params["betas"] = []  # the beta surface, but no header
            return params

    messages_server.reply_text("never sent")
    p = NoBetas("claude-test", base_url=messages_server.url, api_key="k",
                api_context=ApiContext(compaction=ServerCompaction()))
    with pytest.raises(ProviderError, match="requires the anthropic-beta header"):
        call(p, messages=[{"role": "user", "content": "x"}])


# -- server compaction -----------------------------------------------------------------------


def test_compaction_block_streams_back_with_its_billed_iteration(messages_server):
    usage = {**CACHE_USAGE, "iterations": [
        {"type": "compaction", "input_tokens": 180_000, "output_tokens": 2_100,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        {"type": "message", "input_tokens": 2_300, "output_tokens": 12,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    ]}
    messages_server.reply_compaction("We read the log; it had 50 lines.", text="Next.",
                                     usage=usage)
    api = ApiContext(compaction=ServerCompaction(trigger=60_000, instructions="keep paths"))
    reply = call(provider(messages_server, api))
    (request,) = messages_server.requests_to()
    assert betas(request.headers) == {COMPACTION_BETA}
    assert request.body["context_management"] == {"edits": [{
        "type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60_000},
        "instructions": "keep paths"}]}
    assert reply.content == [
        {"type": "compaction", "content": "We read the log; it had 50 lines."},
        {"type": "text", "text": "Next."},
    ]
    assert [i["type"] for i in reply.usage["iterations"]] == ["compaction", "message"]
    assert reply.usage["cache_read_input_tokens"] == 3_000


def test_a_history_with_a_compaction_block_is_sent_back_with_the_beta(messages_server):
    messages_server.reply_text("ok")
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "compaction", "content": None},
                                                 {"type": "text", "text": "sum"}]},
               {"role": "user", "content": "go on"}]
    call(provider(messages_server, ApiContext(cache=False)), messages=history)
    (request,) = messages_server.requests_to()
    assert COMPACTION_BETA in betas(request.headers)
    assert request.body["messages"][1]["content"][0] == {"type": "compaction", "content": None}


def test_pause_after_compaction_ends_the_reply_with_stop_reason_compaction(messages_server):
    messages_server.reply_compaction("summary only")
    api = ApiContext(compaction=ServerCompaction(pause_after_compaction=True))
    reply = call(provider(messages_server, api))
    assert reply.stop_reason == "compaction"
    assert messages_server.requests_to()[0].body["context_management"]["edits"][0][
        "pause_after_compaction"] is True


@pytest.mark.parametrize("api, words", [
    (ApiContext(compaction=ServerCompaction(trigger=10_000)), "at least 50,000"),
    (ApiContext(editing=ContextEditing(keep=-1)), "keep"),
    (ApiContext(editing=ContextEditing(trigger_unit="turns")), "trigger unit"),
    (ApiContext(clear_thinking=1), "extended thinking"),
])
def test_invalid_combinations_fail_before_any_call(messages_server, api, words):
    with pytest.raises(ConfigError, match=words):
        provider(messages_server, api)
    assert messages_server.requests == []


# -- prompt caching --------------------------------------------------------------------------


def test_main_calls_mark_system_and_the_end_of_the_history(messages_server):
    messages_server.reply_text("ok", usage=CACHE_USAGE)
    history = [dict(m) for m in HISTORY]
    reply = call(provider(messages_server, ApiContext()), messages=history, system="sys",
                 tools=[{"name": "t", "description": "d", "input_schema": {"type": "object"}}])
    body = messages_server.requests_to()[0].body
    assert body["system"] == [{"type": "text", "text": "sys",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][:-1] == HISTORY[:-1]
    last = body["messages"][-1]["content"][-1]
    assert last["cache_control"] == {"type": "ephemeral"} and last["tool_use_id"] == "toolu_1"
    assert history == HISTORY  # the caller's history is never marked
    assert "betas" not in body and "anthropic-beta" not in messages_server.requests[0].headers
    assert reply.usage["cache_creation_input_tokens"] == 900
    assert reply.usage["cache_creation"]["ephemeral_5m_input_tokens"] == 900


def test_caching_switched_off_sends_no_breakpoint(messages_server):
    messages_server.reply_text("ok")
    call(provider(messages_server, ApiContext(cache=False)), system="sys")
    assert "cache_control" not in messages_server.requests_to()[0].raw.decode()


def test_a_plain_string_last_message_becomes_one_marked_text_block(messages_server):
    messages_server.reply_text("ok")
    call(provider(messages_server, ApiContext()), messages=[{"role": "user", "content": "hi"}])
    assert messages_server.requests_to()[0].body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]


def test_the_breakpoint_goes_before_the_part_of_the_system_that_changes(messages_server):
    messages_server.reply_text("ok")
    call(provider(messages_server, ApiContext()), system="rules\n\nwork log: turn 3",
         system_stable=5)
    assert messages_server.requests_to()[0].body["system"] == [
        {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "\n\nwork log: turn 3"},
    ]


def test_a_pinned_run_marks_the_system_prompt_before_its_work_log(messages_server, tmp_path):
    from tests.support.runs import main_requests, run_prompts

    for text in ("first", "second", "third"):
        messages_server.reply_text(text)
    ok, _ = run_prompts(messages_server, tmp_path, ["one", "two", "three"], memory=False)
    assert ok
    alone, second, third = (r.body["system"] for r in main_requests(messages_server))
    assert len(alone) == 1  # no work log yet: one marked block
    assert second[0]["cache_control"] and "cache_control" not in second[1]
    assert "two" in second[1]["text"] and "two" not in second[0]["text"]
    assert second[0] == third[0] == alone[0]  # the cached part is the same on every call
    assert second[1] != third[1]  # the work log after it is not
