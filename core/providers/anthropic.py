"""The Anthropic provider: the official SDK's ``AsyncAnthropic`` behind the Provider protocol.

Why it looks the way it does:

* **Plain dicts out.** Replies are converted to Messages-API dicts at once, so the size
  measure, transcripts and events never see SDK objects (the course stringifies them).
* **One client per provider, made lazily in the running loop.** ``AsyncAnthropic`` is bound
  to the event loop that first uses it; if the provider is reused under a new loop (tests,
  a restarted worker) a fresh client is made for it.
* **The SDK retries; ctxlab shows it.** 429, 5xx and 529-overloaded are retried by the SDK's
  own policy. A client middleware (the SDK's public extension point, run once per HTTP
  attempt inside its retry loop) notices a failed attempt that will be retried and reports
  a :class:`~core.events.Retry` *before* the back-off sleep, so the UI can say why it waits.
* **Typed failures.** Every SDK or transport error becomes a :class:`ProviderError`
  subclass the loop can act on (:mod:`core.providers.anthropic_errors`).
* **Always encodable.** A lone surrogate in a request is replaced before the SDK encodes
  it (:mod:`core.providers.unicode_safe`): one cannot fail every later call of a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import anthropic
import httpx2

from core.events import Retry
from core.providers.anthropic_errors import (
    SinkFailure,
    describe_cause,
    guarded,
    map_error,
)
from core.providers.api_context import COMPACTION_BETA, ApiContext
from core.providers.base import (
    BaseProvider,
    ModelCall,
    ModelReply,
    ProviderError,
    TextSink,
)
from core.providers.prompt_cache import cached_messages, cached_system
from core.providers.unicode_safe import valid_unicode

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = anthropic.Timeout(120.0, connect=10.0)
COUNT_TIMEOUT = anthropic.Timeout(30.0, connect=10.0)

RetrySink = Callable[[Retry], object]  # what it returns is ignored

# The purpose of the call in flight in this task; ``None`` means "do not report retries".
_PURPOSE: ContextVar[str | None] = ContextVar("ctxlab_call_purpose", default=None)


# -- retries made visible --------------------------------------------------------------------


def sdk_would_retry(response: httpx2.Response) -> bool:
    """The SDK's documented retry policy: an explicit ``x-should-retry`` wins, else
    408, 409, 429 and every 5xx (529 overloaded included) are retried."""
    explicit = response.headers.get("x-should-retry")
    if explicit in ("true", "false"):
        return explicit == "true"
    status = response.status_code
    return status in (408, 409, 429) or status >= 500


def retry_after(headers: httpx2.Headers) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        with contextlib.suppress(ValueError):
            return float(value) / scale
    return None


async def status_reason(response: httpx2.Response) -> str:
    """``HTTP 529 overloaded_error: Overloaded`` from an Anthropic-shaped error body."""
    detail = ""
    with contextlib.suppress(Exception):
        await response.aread()
        error = json.loads(response.text).get("error", {})
        detail = f" {error.get('type', '')}: {error.get('message', '')}".rstrip(": ")
    return f"HTTP {response.status_code}{detail}"


class RetryReporter(anthropic.Middleware):
    """Reports each retry the SDK is about to make, with the reason and the wait."""

    def __init__(self, sink: RetrySink | None, max_retries: int) -> None:
        self.sink = sink
        self.max_retries = max_retries

    async def handle_async(
        self, request: anthropic.APIRequest, call_next: anthropic.AsyncCallNext
    ) -> anthropic.AsyncAPIResponse[Any]:
        try:
            response = await call_next(request)
        except anthropic.APIConnectionError as exc:
            self.report(request, f"connection failed: {describe_cause(exc)}")
            raise
        raw = response.http_response
        if not raw.is_success and sdk_would_retry(raw):
            wait = retry_after(raw.headers)
            reason = await status_reason(raw)
            if wait is not None:
                reason += f" (server asks to wait {wait:g} s)"
            self.report(request, reason)
        return response

    def report(self, request: anthropic.APIRequest, reason: str) -> None:
        purpose = _PURPOSE.get()
        limit = request.max_retries if isinstance(request.max_retries, int) else self.max_retries
        if self.sink is None or purpose is None or request.retries_taken >= limit:
            return
        try:
            self.sink(Retry(purpose=purpose, attempt=request.retries_taken + 1, reason=reason))
        except Exception:  # a broken display must not break the call being retried
            log.exception("retry sink failed")


# -- reply conversion ------------------------------------------------------------------------


def plain_block(block: Any) -> dict[str, Any]:
    """A content block as the plain dict the API accepts back (no SDK-only fields)."""
    data = block.model_dump(mode="json", exclude_none=True)
    kind = data.get("type")
    if kind == "text":
        text = {"type": "text", "text": data.get("text", "")}
        return {**text, "citations": data["citations"]} if data.get("citations") else text
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": data["id"],
            "name": data["name"],
            "input": data.get("input") or {},
        }
    if kind == "compaction":
        # Sent back verbatim, a failed compaction's null content included (the API treats
        # such a block as a no-op, but it must still travel).
        data.setdefault("content", None)
    data.pop("parsed_output", None)
    return data


def reply_from_message(message: Any) -> ModelReply:
    usage = message.usage.model_dump(mode="json", exclude_none=True) if message.usage else None
    extras: dict[str, Any] = {"id": message.id, "model": message.model}
    managed = getattr(message, "context_management", None)
    if managed is not None:  # the beta API's report of the edits it applied
        extras["context_management"] = managed.model_dump(mode="json", exclude_none=True)
    return ModelReply(
        content=[plain_block(b) for b in message.content],
        stop_reason=message.stop_reason,
        usage=usage,
        extras=extras,
    )


def has_compaction(messages: list[dict[str, Any]]) -> bool:
    """Whether a server compaction block is in the history (it must be sent back)."""
    return any(
        isinstance(b, dict) and b.get("type") == "compaction"
        for m in messages if isinstance(m.get("content"), list) for b in m["content"]
    )


# -- the provider ----------------------------------------------------------------------------


class AnthropicProvider(BaseProvider):
    """Answers model calls through the Anthropic Messages API (or a compatible server)."""

    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: anthropic.Timeout | float = DEFAULT_TIMEOUT,
        on_retry: RetrySink | None = None,
        api_context: ApiContext | None = None,
    ) -> None:
        self.model: str | None = model or os.environ.get("CTXLAB_MODEL") or DEFAULT_MODEL
        self.api_key = api_key  # None: the SDK reads ANTHROPIC_API_KEY
        self.base_url = base_url  # None: the SDK reads ANTHROPIC_BASE_URL
        self.max_retries = max_retries
        self.timeout = timeout
        self.on_retry = on_retry
        # Server-side context management and prompt caching for main calls.
        self.api_context = (api_context or ApiContext()).validate()
        self._client: anthropic.AsyncAnthropic | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- client ----------------------------------------------------------------------------

    def client(self) -> anthropic.AsyncAnthropic:
        """The client for the running loop, made on first use there."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = anthropic.AsyncAnthropic(
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                middleware=[RetryReporter(self.on_retry, self.max_retries)],
            )
            self._loop = loop
        return self._client

    @property
    def endpoint(self) -> str:
        """Where calls go, for error messages."""
        if self._client is not None:
            return str(self._client.base_url)
        return self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._loop = None

    # -- calls -----------------------------------------------------------------------------

    def params(self, call: ModelCall) -> dict[str, Any]:
        """The request; a main call also gets cache breakpoints and, when configured, the
        API's context management (the betas it needs ride along as ``betas``)."""
        main = call.purpose == "main"
        cache = main and self.api_context.cache
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": call.max_tokens,
            "messages": cached_messages(call.messages) if cache else call.messages,
        }
        if call.system:
            params["system"] = cached_system(call.system, call.system_stable) if cache \
                else call.system
        if call.tools:
            params["tools"] = call.tools
        betas = self.api_context.betas() if main else []
        if has_compaction(call.messages) and COMPACTION_BETA not in betas:
            betas.append(COMPACTION_BETA)  # a history holding a compaction block needs it
        if betas:
            params["betas"] = betas
        managed = self.api_context.context_management() if main else None
        if managed:
            params["context_management"] = managed
        return params

    def messages_api(self, client: anthropic.AsyncAnthropic, params: dict[str, Any]) -> Any:
        """The beta surface when the request names betas, else the stable one."""
        return client.beta.messages if "betas" in params else client.messages

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        """Stream the main call (text reaches ``on_text`` as it arrives); side calls are
        plain requests unless a text sink asks for streaming."""
        token = _PURPOSE.set(call.purpose)
        try:
            client = self.client()
            params = valid_unicode(self.params(call))
            if call.purpose == "main" or on_text is not None:
                return await self.stream(client, params, on_text)
            message = await self.messages_api(client, params).create(**params)
            return reply_from_message(message)
        except SinkFailure as failure:
            raise failure.error from None  # the caller's own bug, with its own type
        except ProviderError:
            raise
        except Exception as exc:
            raise map_error(exc, self.endpoint) from exc
        finally:
            _PURPOSE.reset(token)

    async def stream(
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any], on_text: TextSink | None
    ) -> ModelReply:
        finished = False
        async with (
            self.messages_api(client, params).stream(**params) as stream,
            contextlib.aclosing(guarded(stream)) as events,
        ):
            async for event in events:
                if event.type == "text" and on_text is not None and event.text:
                    try:
                        on_text(event.text)
                    except Exception as exc:
                        raise SinkFailure(exc) from exc
                elif event.type == "message_stop":
                    finished = True
            if not finished:
                raise ProviderError("the response stream ended before message_stop")
            return reply_from_message(stream.current_message_snapshot)

    async def count_tokens(
        self,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> int | None:
        """The API's own input-token count, or ``None`` when it cannot be had.

        Advisory only (the meter shows it beside the char measure), so it is never retried
        and never raises.
        """
        token = _PURPOSE.set(None)
        try:
            client = self.client().with_options(max_retries=0, timeout=COUNT_TIMEOUT)
            extra: dict[str, Any] = {"messages": messages}
            if system:
                extra["system"] = system
            if tools:
                extra["tools"] = tools
            if self.model is None:  # nothing to count against
                return None
            result = await client.messages.count_tokens(model=self.model, **valid_unicode(extra))
            return int(result.input_tokens)
        except Exception:
            log.debug("count_tokens failed", exc_info=True)
            return None
        finally:
            _PURPOSE.reset(token)
