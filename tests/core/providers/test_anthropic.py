"""The Anthropic provider, driven through the real SDK over real HTTP to a scripted server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import anthropic
import pytest

from core.events import Retry
from core.providers.anthropic import DEFAULT_MODEL, AnthropicProvider
from core.providers.api_context import ApiContext
from core.providers.base import (
    AuthError,
    ContextOverflow,
    ModelCall,
    ModelReply,
    NetworkError,
    ProviderError,
)
from tests.support.messages_server import MessagesServer, unused_port_url

USER = [{"role": "user", "content": "hello"}]
T = TypeVar("T")


def provider(server: MessagesServer, **options: Any) -> AnthropicProvider:
    options.setdefault("api_key", "test-key")
    return AnthropicProvider("claude-test", base_url=server.url, **options)


def complete(p: AnthropicProvider, purpose: str = "main", **call: Any) -> tuple[ModelReply, list]:
    """One call in a fresh event loop, closing the provider's client before the loop ends."""
    texts: list[str] = []
    sink = texts.append if purpose == "main" else None
    model_call = ModelCall(purpose, call.pop("messages", USER), **call)
    return in_loop(p, p.complete(model_call, sink)), texts


def in_loop(p: AnthropicProvider, work: Coroutine[Any, Any, T]) -> T:
    async def scenario() -> T:
        try:
            return await work
        finally:
            await p.aclose()

    return asyncio.run(scenario())


def sent_key(headers: dict[str, str]) -> str | None:
    """The SDK sends the key as ``x-api-key`` or as a bearer token, depending on version."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    return headers.get("authorization", "").removeprefix("Bearer ") or None


# -- success ---------------------------------------------------------------------------------


def test_streamed_text_reaches_on_text_in_order(messages_server):
    messages_server.reply_text("The quick brown fox jumps.", chunk=5)
    plain = provider(messages_server, api_context=ApiContext(cache=False))
    reply, texts = complete(plain, system="be brief", max_tokens=123)
    assert texts == ["The q", "uick ", "brown", " fox ", "jumps", "."]
    assert reply.content == [{"type": "text", "text": "The quick brown fox jumps."}]
    assert reply.stop_reason == "end_turn"
    (request,) = messages_server.requests_to()
    assert request.body["stream"] is True
    assert request.body["model"] == "claude-test" and request.body["max_tokens"] == 123
    assert request.body["system"] == "be brief" and request.body["messages"] == USER
    assert sent_key(request.headers) == "test-key"


def test_text_is_delivered_while_the_stream_is_still_arriving(messages_server):
    messages_server.reply_text("abcdefgh", chunk=2, event_delay=0.05)
    stamps: list[float] = []
    p = provider(messages_server)
    in_loop(p, p.complete(ModelCall("main", USER), lambda _: stamps.append(time.monotonic())))
    assert len(stamps) == 4
    assert stamps[-1] - stamps[0] >= 0.1  # not handed over in one piece at the end


def test_tool_use_blocks_become_plain_dicts(messages_server):
    messages_server.reply_tool_use(
        "read_file", {"path": "src/app.py", "limit": 40}, id="toolu_1", text="Reading it."
    )
    tools = [
        {
            "name": "read_file",
            "description": "Read file contents.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    reply, texts = complete(provider(messages_server), tools=tools)
    assert reply.content == [
        {"type": "text", "text": "Reading it."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "read_file",
            "input": {"path": "src/app.py", "limit": 40},
        },
    ]
    assert reply.stop_reason == "tool_use" and "".join(texts) == "Reading it."
    assert messages_server.requests_to()[0].body["tools"] == tools


def test_usage_is_recorded_as_a_plain_dict(messages_server):
    usage = {"input_tokens": 1200, "output_tokens": 34, "cache_read_input_tokens": 1000}
    messages_server.reply_text("ok", usage=usage)
    reply, _ = complete(provider(messages_server))
    assert reply.usage == usage


def test_side_purposes_do_not_stream(messages_server):
    messages_server.reply_text("- a fact")
    reply, _ = complete(provider(messages_server), purpose="summary", max_tokens=2000)
    assert reply.text == "- a fact" and reply.usage == {"input_tokens": 25, "output_tokens": 12}
    assert "stream" not in messages_server.requests_to()[0].body


def test_model_comes_from_ctxlab_model_or_defaults(monkeypatch):
    monkeypatch.setenv("CTXLAB_MODEL", "claude-from-env")
    assert AnthropicProvider().model == "claude-from-env"
    assert AnthropicProvider("explicit").model == "explicit"
    monkeypatch.delenv("CTXLAB_MODEL")
    assert AnthropicProvider().model == DEFAULT_MODEL


def test_base_url_and_key_come_from_the_environment(messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    messages_server.reply_text("hi")
    complete(AnthropicProvider("m"))
    assert sent_key(messages_server.requests[0].headers) == "env-key"


def test_the_provider_is_reusable_across_event_loops(messages_server):
    p = provider(messages_server)
    messages_server.reply_text("one")
    messages_server.reply_text("two")
    assert complete(p)[0].text == "one"
    assert complete(p)[0].text == "two"  # a second asyncio.run: a fresh client


# -- overflow: the one error compaction can fix ---------------------------------------------


def test_prompt_too_long_is_context_overflow_and_not_retried(messages_server):
    messages_server.overflow()
    with pytest.raises(ContextOverflow) as caught:
        complete(provider(messages_server))
    assert caught.value.status == 400 and caught.value.kind == "overflow"
    assert "prompt is too long" in str(caught.value)
    assert len(messages_server.requests_to()) == 1


def test_413_is_context_overflow(messages_server):
    messages_server.too_large()
    with pytest.raises(ContextOverflow) as caught:
        complete(provider(messages_server))
    assert caught.value.status == 413


def test_compatible_servers_overflow_wording_is_recognised(messages_server):
    messages_server.error(
        400, "invalid_request_error", "This model's maximum context length is 128000 tokens"
    )
    with pytest.raises(ContextOverflow):
        complete(provider(messages_server), purpose="summary")


def test_a_rate_limit_about_tokens_is_not_overflow(messages_server):
    messages_server.error(
        429, "rate_limit_error", "too many tokens per minute", headers={"x-should-retry": "false"}
    )
    with pytest.raises(ProviderError) as caught:
        complete(provider(messages_server))
    assert not isinstance(caught.value, ContextOverflow) and caught.value.status == 429


# -- retries, made visible -------------------------------------------------------------------


def test_overloaded_is_retried_and_reported_before_the_retry(messages_server):
    seen: list[tuple[Retry, int]] = []
    sink = lambda event: seen.append((event, len(messages_server.requests_to())))  # noqa: E731
    messages_server.overloaded()
    messages_server.reply_text("recovered")
    reply, texts = complete(provider(messages_server, on_retry=sink))
    assert reply.text == "recovered" and texts == ["reco", "vere", "d"]
    ((event, requests_so_far),) = seen
    assert event.purpose == "main" and event.attempt == 1
    assert "529" in event.reason and "overloaded_error" in event.reason
    assert requests_so_far == 1  # reported before the second attempt was sent
    second = messages_server.requests_to()[1]
    assert second.headers.get("x-stainless-retry-count") == "1"


def test_rate_limit_is_retried_then_succeeds(messages_server):
    retries: list[Retry] = []
    messages_server.rate_limited()
    messages_server.reply_text("ok")
    reply, _ = complete(provider(messages_server, on_retry=retries.append), purpose="select")
    assert reply.text == "ok"
    assert [(r.purpose, r.attempt) for r in retries] == [("select", 1)]
    assert "429 rate_limit_error" in retries[0].reason


def test_exhausted_retries_end_in_provider_error(messages_server):
    retries: list[Retry] = []
    for _ in range(3):
        messages_server.overloaded()
    with pytest.raises(ProviderError) as caught:
        complete(provider(messages_server, on_retry=retries.append))
    assert caught.value.status == 529 and caught.value.kind == "api"
    assert [r.attempt for r in retries] == [1, 2]  # no report for a retry that never comes
    assert len(messages_server.requests_to()) == 3


def test_a_failing_retry_sink_does_not_break_the_call(messages_server):
    def broken(event: Retry) -> None:
        raise RuntimeError("display gone")

    messages_server.overloaded()
    messages_server.reply_text("fine")
    assert complete(provider(messages_server, on_retry=broken))[0].text == "fine"


# -- errors that compaction cannot fix -------------------------------------------------------


def test_401_is_auth_error_at_once_without_retry(messages_server):
    retries: list[Retry] = []
    messages_server.unauthorized()
    started = time.monotonic()
    with pytest.raises(AuthError) as caught:
        complete(provider(messages_server, on_retry=retries.append))
    assert time.monotonic() - started < 1.0
    assert caught.value.status == 401 and "\n" not in str(caught.value)
    assert retries == [] and len(messages_server.requests_to()) == 1


def test_403_is_auth_error(messages_server):
    messages_server.error(403, "permission_error", "key lacks access")
    with pytest.raises(AuthError):
        complete(provider(messages_server))


def test_connection_refused_is_network_error():
    p = AnthropicProvider("m", api_key="test-key", base_url=unused_port_url(), max_retries=0)
    with pytest.raises(NetworkError) as caught:
        complete(p)
    assert caught.value.kind == "network" and "cannot reach" in str(caught.value)


def test_connection_failures_are_retried_visibly():
    retries: list[Retry] = []
    p = AnthropicProvider(
        "m", api_key="k", base_url=unused_port_url(), max_retries=1, on_retry=retries.append
    )
    with pytest.raises(NetworkError):
        complete(p)
    assert len(retries) == 1 and retries[0].reason.startswith("connection failed")


def test_a_slow_server_is_a_network_timeout(messages_server):
    messages_server.reply_text("late", delay=1.0)
    p = provider(messages_server, max_retries=0, timeout=anthropic.Timeout(0.2, connect=1.0))
    with pytest.raises(NetworkError) as caught:
        complete(p, purpose="summary")
    assert "timed out" in str(caught.value)


# -- broken streams --------------------------------------------------------------------------


def test_a_stream_cut_mid_way_is_provider_error(messages_server):
    messages_server.cut_stream("a long answer that never finishes", after_events=5)
    with pytest.raises(ProviderError) as caught:
        complete(provider(messages_server))
    assert "stream" in str(caught.value)


def test_a_stream_that_ends_without_message_stop_is_provider_error(messages_server):
    messages_server.cut_stream("half an answer", after_events=4, clean_end=True)
    with pytest.raises(ProviderError, match="before message_stop"):
        complete(provider(messages_server))


def test_a_malformed_event_is_provider_error(messages_server):
    messages_server.reply_text("text", malformed_at=3)
    with pytest.raises(ProviderError, match="malformed"):
        complete(provider(messages_server))


def test_an_error_event_mid_stream_is_provider_error(messages_server):
    messages_server.stream_error("partial", after_events=4)
    with pytest.raises(ProviderError) as caught:
        complete(provider(messages_server))
    assert type(caught.value) is ProviderError and "overloaded_error" in str(caught.value)


def test_errors_in_the_text_sink_keep_their_own_type(messages_server):
    def sink(_: str) -> None:
        raise KeyError("ui bug")

    messages_server.reply_text("hello")
    p = provider(messages_server)
    with pytest.raises(KeyError):
        in_loop(p, p.complete(ModelCall("main", USER), sink))


# -- count_tokens ----------------------------------------------------------------------------


def test_count_tokens_asks_the_api(messages_server):
    messages_server.count(321)
    tools = [{"name": "glob", "description": "d", "input_schema": {"type": "object"}}]
    p = provider(messages_server)
    assert in_loop(p, p.count_tokens("system text", USER, tools)) == 321
    (request,) = messages_server.requests_to("/v1/messages/count_tokens")
    assert request.body == {
        "model": "claude-test",
        "messages": USER,
        "system": "system text",
        "tools": tools,
    }


def test_count_tokens_returns_none_on_any_failure(messages_server):
    messages_server.count_error()
    p = provider(messages_server)
    assert in_loop(p, p.count_tokens(None, USER)) is None
    closed = AnthropicProvider("m", api_key="k", base_url=unused_port_url())
    assert in_loop(closed, closed.count_tokens(None, USER)) is None
