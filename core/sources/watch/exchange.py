"""One exchange through the proxy, and the events it makes: pure functions.

:class:`Exchange` is what the proxy hands its observers: bodies and timing, and of the
headers only the client's session and agent ids (what tells its conversations apart) and
Codex's window id and turn metadata (what kind of request it is) — never a key. A
Messages request is read by :mod:`core.sources.watch.analysis`, an OpenAI one by
:mod:`core.sources.watch.openai_requests`, each into the same ``watch_request``.
:func:`measure_request` and :func:`response_event` turn one into ``watch_request`` (plus the
client stages it reveals) and ``watch_response``; the live watch, its measuring process and
the tests all use these same two.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from core.events import Event, WatchRequest, WatchResponse
from core.measure import estimate_tokens
from core.sources.watch import openai_requests
from core.sources.watch.analysis import analyse_request, older_categories, response_facts
from core.sources.watch.apis import MESSAGES, RESPONSES_COMPACT, api_of, is_openai
from core.sources.watch.conversations import Asks, Conversations
from core.sources.watch.openai_stream import (
    final_facts,
    is_whole,
    messages_usage,
    read_openai_response,
    usage_in_tail,
)
from core.sources.watch.sse import DECODED_LIMIT, UnreadableBody, read_response

# Bytes of one response kept for reading once the exchange is over: the client gets every
# byte as it comes, the watch keeps the first RESPONSE_BUDGET and the last TAIL (where a
# stream's stop reason and usage are), so a 100 MB stream costs the proxy 16 MiB, not 100.
RESPONSE_BUDGET = 16 << 20
TAIL = 256 << 10
CLIENT_LEFT = "client disconnected"  # how the proxy's error for a client that hung up starts


@dataclass
class Exchange:
    """One request and its answer, as the observer sees them (no headers but the
    session and agent ids)."""

    id: int
    method: str
    path: str
    body: bytes
    started: float  # wall-clock seconds (time.time())
    session: str | None = None  # the client's session header (identity.SESSION_HEADERS)
    agent: str | None = None  # the client's agent header (identity.AGENT_HEADER)
    window: str | None = None  # Codex's ``x-codex-window-id`` (thread:compactions)
    turn_metadata: str | None = None  # Codex's ``x-codex-turn-metadata`` (JSON, no secret)
    status: int | None = None
    content_type: str | None = None
    content_encoding: str | None = None
    chunks: list[bytes] = field(default_factory=list)
    ttfb_ms: float | None = None
    duration_ms: float | None = None
    error: str | None = None

    kept: int = 0  # bytes in ``chunks`` (kept by :meth:`keep`)
    dropped: int = 0  # bytes past RESPONSE_BUDGET, of which ``tail`` holds the last
    tail: bytearray = field(default_factory=bytearray)

    def keep(self, chunk: bytes) -> None:
        """Hold a response chunk for reading, within the budget (the client already has it)."""
        room = RESPONSE_BUDGET - self.kept
        if room > 0:
            head = chunk[:room]
            self.chunks.append(head)
            self.kept += len(head)
            chunk = chunk[room:]
        if chunk:
            self.dropped += len(chunk)
            self.tail += chunk
            if len(self.tail) > 2 * TAIL:  # trimmed now and then: linear, not per chunk
                del self.tail[:-TAIL]

    @property
    def response(self) -> bytes:
        """What is kept of the response; past the budget, an SSE body's head and its last
        whole events (a compressed body cannot be read from the middle: its head only)."""
        head = b"".join(self.chunks)
        if not self.dropped or (self.content_encoding or "identity").lower() != "identity":
            return head
        tail = bytes(self.tail[-TAIL:])
        starts = [i for i in (tail.find(b"\n\n"), tail.find(b"\r\n\r\n")) if i >= 0]
        return head + b"\n\n" + tail[min(starts):] if starts else head



def is_messages_call(path: str) -> bool:
    return api_of(path) == MESSAGES


def is_model_call(path: str) -> bool:
    """A call of one of the APIs the watch reads and records (Messages or OpenAI's)."""
    return api_of(path) is not None


def iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="milliseconds")


def _error_text(error: dict[str, Any] | None) -> str | None:
    if not isinstance(error, dict):
        return None
    inner = given if isinstance(given := error.get("error"), dict) else error
    return f"{inner.get('type', 'error')}: {inner.get('message', '')}".strip()


def _parse(raw: bytes) -> Any:
    """The body as JSON; one that is not valid in its own encoding (a stray ``\\xff``) is
    read with each bad byte as U+FFFD, so it is still measured (and, re-encoded, recorded)."""
    try:
        return json.loads(raw) if raw else None
    except UnicodeDecodeError:
        try:
            return json.loads(raw.decode(json.detect_encoding(raw), errors="replace"))
        except ValueError:
            return None
    except ValueError:
        return None


def measure_request(x: Exchange, conversations: Conversations
                    ) -> tuple[Any, WatchRequest, tuple[Event, ...]]:
    """The parsed body, its ``watch_request`` and the client stages it reveals (pure but for
    ``conversations``, which remembers the previous request of each conversation)."""
    body = _parse(x.body)
    api = api_of(x.path)
    base = WatchRequest(id=x.id, method=x.method, path=x.path, time=iso(x.started),
                        body_bytes=len(x.body), api=api)
    if isinstance(body, dict) and is_openai(api):
        return body, *_measure_openai(x, body, str(api), conversations)
    if not isinstance(body, dict) or not x.path.rstrip("/").endswith(
            ("/v1/messages", "/count_tokens")):
        return body, base, ()
    facts = analyse_request(x.path, body)
    change = conversations.observe(x.id, body, x.session, x.agent) \
        if is_messages_call(x.path) else None
    event = dataclasses.replace(
        base, model=facts.model, purpose=facts.purpose, stream=facts.stream,
        conversation=change.conversation if change else None, messages=facts.messages,
        chars=facts.chars, est_tokens=facts.est_tokens, categories=facts.categories,
        breakdown=facts.breakdown,
        appended=change.appended if change else 0, removed=change.removed if change else 0,
        rewritten=change.rewritten if change else 0)
    return body, event, change.stages if change else ()


def openai_asks(api: str, body: dict[str, Any], metadata: dict[str, Any],
                window: str | None = None) -> Asks:
    """What an OpenAI request asks of its conversation (see :class:`Asks`); ``window``:
    Codex's ``x-codex-window-id``."""
    kind = metadata.get("request_kind")
    summary = (api == RESPONSES_COMPACT or kind == "compaction"
               or openai_requests.is_compaction_trigger(body)
               or openai_requests.is_checkpoint_request(body))
    return Asks(summary=summary, aside=kind == "prewarm",
                follows_response=bool(body.get("previous_response_id")),
                trigger=openai_requests.compaction_trigger(metadata) if summary else None,
                window=openai_requests.window_number(window))


def _measure_openai(x: Exchange, body: dict[str, Any], api: str,
                    conversations: Conversations) -> tuple[WatchRequest, tuple[Event, ...]]:
    metadata = openai_requests.turn_metadata(x.turn_metadata)
    measured = openai_requests.measure(body)
    change = conversations.observe(x.id, body, x.session, x.agent,
                                   asks=openai_asks(api, body, metadata, x.window))
    model = body.get("model")
    return WatchRequest(
        id=x.id, method=x.method, path=x.path, time=iso(x.started), body_bytes=len(x.body),
        api=api, model=model if isinstance(model, str) else None,
        purpose=openai_requests.guess_purpose(api, body, metadata),
        stream=bool(body.get("stream")), conversation=change.conversation,
        messages=measured.items, chars=measured.chars,
        est_tokens=estimate_tokens(measured.sent_text), breakdown=measured.breakdown,
        categories=older_categories(measured.breakdown), encrypted_chars=measured.encrypted,
        appended=change.appended, removed=change.removed, rewritten=change.rewritten,
    ), change.stages


def _problem(said: str | None, transport: str | None) -> str | None:
    """What the API said went wrong first, then what happened on the wire (a client that
    hangs up on an SSE ``error`` event is the usual end of that stream, not the news)."""
    if said and transport:
        return f"{said}; {transport}"
    return said or transport


def _read_body(x: Exchange, api: str | None
               ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool, str | None]:
    """(final object, error, cut at the decoding limit, why the body was not read)."""
    try:
        if is_openai(api):
            return (*read_openai_response(x.response, x.content_type, x.content_encoding,
                                          str(api)), None)
        return (*read_response(x.response, x.content_type, x.content_encoding), None)
    except UnreadableBody as exc:
        return None, None, False, str(exc)


def read_exchange(x: Exchange) -> tuple[dict[str, Any] | None, WatchResponse, list[str]]:
    """The final Message, Response or chat.completion (or error body), the
    ``watch_response``, and notes on what of the response the watch did not read (the
    client got it whole either way)."""
    api = api_of(x.path)
    message, error, cut, unread = _read_body(x, api)
    notes = []
    if x.dropped:
        notes.append(f"response truncated: {x.kept:,} of {x.kept + x.dropped:,} bytes read "
                     "(the client got them all)")
    if cut:
        notes.append(f"response truncated: decompressed to its first {DECODED_LIMIT:,} bytes "
                     f"({x.content_encoding}; the client got it whole)")
    if unread is not None:
        notes.append(f"response not read: {unread} (the client got it as sent)")
    if is_openai(api):
        stop_reason, usage, sent = final_facts(str(api), message)
        if usage is None and x.dropped and (found := usage_in_tail(bytes(x.tail))):
            sent, usage = found, messages_usage(found)
    else:
        (stop_reason, usage), sent = response_facts(message), None
    hung_up = x.error is not None and x.error.startswith(CLIENT_LEFT)
    said = x.error if x.error and not (hung_up and is_openai(api)
                                       and is_whole(str(api), message)) else None
    transport = "; ".join(([said] if said else []) + notes) or None
    return message, WatchResponse(
        id=x.id, status=x.status, stop_reason=stop_reason, usage=usage,
        duration_ms=round(x.duration_ms or 0.0, 3),
        ttfb_ms=None if x.ttfb_ms is None else round(x.ttfb_ms, 3),
        error=_problem(_error_text(error), transport), api=api, api_usage=sent), notes


def response_event(x: Exchange) -> tuple[dict[str, Any] | None, WatchResponse]:
    """The final Message (or error body) of a finished exchange, and its ``watch_response``."""
    message, event, _ = read_exchange(x)
    return message, event
