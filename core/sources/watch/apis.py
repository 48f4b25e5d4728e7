"""Which API a watched request speaks, where it goes, and how an error is said in it.

The proxy serves the Anthropic Messages API and three OpenAI endpoints on one port, and
tells them apart by path alone (a body can be anything a hostile client sends): a client's
base URL may end in ``/v1`` or not, so ``/v1/responses`` and ``/responses`` are the same
endpoint. The names are the ones the recording's ``api`` field carries.

Without ``--upstream`` each request goes to its own API's host, decided per request
(:func:`speaks_openai`): a Messages path to ``https://api.anthropic.com``; an OpenAI path —
the three model endpoints and the rest of ``/responses`` and ``/chat`` (a stored response,
its cancel, its input items) — to ``https://api.openai.com``; any other path (``/v1/models``,
``/v1/files``, ``count_tokens``…) by the client's headers, since both APIs have such paths:
Anthropic's ``x-api-key`` or ``anthropic-version`` to Anthropic, an OpenAI key (``authorization:
Bearer`` alone, or Azure's ``api-key``) to OpenAI, nothing telling to Anthropic. OpenAI
calls go under ``/v1`` as that API lives (a client whose base URL left ``/v1`` out still
reaches it). With ``--upstream`` every request goes there, its path as sent — one ``/v1``
dropped when the upstream ends in ``/v1`` and the path starts with it (:func:`_join`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from yarl import URL

MESSAGES = "messages"
RESPONSES = "responses"
RESPONSES_COMPACT = "responses.compact"
CHAT = "chat.completions"
OPENAI_APIS = (RESPONSES, RESPONSES_COMPACT, CHAT)

ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
OPENAI_UPSTREAM = "https://api.openai.com"

# Path endings of each API (longest first: ``/responses/compact`` ends in neither other).
_ENDINGS = (("/responses/compact", RESPONSES_COMPACT), ("/chat/completions", CHAT),
            ("/responses", RESPONSES), ("/v1/messages", MESSAGES))


def api_of(path: str) -> str | None:
    """The API a request path belongs to (see the module's names), ``None`` for any other
    path (``count_tokens``, a model list…: forwarded, not analysed as a model call)."""
    stripped = path.rstrip("/")
    for ending, api in _ENDINGS:
        if stripped.endswith(ending):
            return api
    return None


def is_openai(api: str | None) -> bool:
    return api in OPENAI_APIS


_OPENAI_TREES = ("/v1/responses", "/v1/chat", "/responses", "/chat")  # paths only OpenAI has
# Paths only Anthropic has: Message Batches, the legacy completions, Claude Code's /api/…
_ANTHROPIC_TREES = ("/v1/messages", "/v1/complete", "/api")


def _under(path: str, trees: tuple[str, ...]) -> bool:
    stripped = path.rstrip("/")
    return any(stripped == tree or stripped.startswith(tree + "/") for tree in trees)


def speaks_openai(path: str, headers: Mapping[str, str] | None = None) -> bool:
    """Is this request for OpenAI's API rather than Anthropic's? By its path when only
    OpenAI has it, else by the client's credentials (``headers``, read case-insensitively
    as aiohttp's are): a call beside the model endpoints (``GET /v1/models``) sent to the
    wrong host would carry the client's key there."""
    api = api_of(path)
    if api is not None:
        return is_openai(api)
    if _under(path, _OPENAI_TREES):
        return True
    if _under(path, _ANTHROPIC_TREES):
        return False
    given = {k.lower(): v for k, v in (headers or {}).items()}
    if "x-api-key" in given or "anthropic-version" in given:
        return False
    return "api-key" in given or given.get("authorization", "").lower().startswith("bearer ")


def error_body(openai: bool, message: str, kind: str = "api_error",
               code: str = "upstream_unavailable") -> bytes:
    """An error of the proxy's own in the shape the client's SDK reads (``openai``: the
    request speaks OpenAI's API, :func:`speaks_openai`): OpenAI's ``{"error": {message,
    type, param, code}}``, else Anthropic's ``{"type": "error", "error": {type, message}}``
    (which has no ``code``); ``kind``: the error's type."""
    if openai:
        return json.dumps({"error": {"message": message, "type": kind, "param": None,
                                     "code": code}}).encode()
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


@dataclass(frozen=True)
class Upstreams:
    """Where requests go: ``fixed`` (``--upstream``) for all, else per API."""

    fixed: URL | None = None
    messages: URL = field(default_factory=lambda: URL(ANTHROPIC_UPSTREAM))
    openai: URL = field(default_factory=lambda: URL(OPENAI_UPSTREAM))

    @classmethod
    def of(cls, upstream: str | None, messages: str = ANTHROPIC_UPSTREAM) -> Upstreams:
        fixed = URL(upstream.rstrip("/")) if upstream else None
        return cls(fixed=fixed, messages=URL(messages.rstrip("/")))

    def target(self, raw_path: str, headers: Mapping[str, str] | None = None) -> URL:
        """The upstream URL of a request (``raw_path``: as sent, query and all; ``headers``:
        the client's, which tell the API of a path both have)."""
        if self.fixed is not None:
            return _join(self.fixed, raw_path)
        path = raw_path.partition("?")[0]
        if not speaks_openai(path, headers):
            return _join(self.messages, raw_path)
        if not path.startswith("/v1/"):
            raw_path = "/v1" + raw_path
        return _join(self.openai, raw_path)

    def describe(self) -> str:
        """What ``watch_start.upstream`` says."""
        if self.fixed is not None:
            return str(self.fixed)
        return f"{self.messages} (Messages), {self.openai}/v1 (OpenAI)"


def _join(base: URL, raw_path: str) -> URL:
    """``base`` + the path as sent, but for one ``/v1`` when both have it: an upstream given
    as ``https://host/openai/v1`` and a client whose base URL ends in ``/v1`` (the OpenAI
    SDK's does) would meet at ``…/v1/v1/responses``, which no API serves. A query the
    upstream was given (Azure's ``?api-version=…``) goes on every request, before the
    client's own."""
    prefix = base.path.rstrip("/")
    path, _, query = raw_path.partition("?")
    if prefix.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        path = path[len("/v1"):]
    queries = "&".join(q for q in (base.query_string, query) if q)
    # the client's path and query go on as sent, bytes unchanged (encoded=True)
    return base.with_query(None).with_path(prefix + path + ("?" + queries if queries else ""),
                                           encoded=True)
