"""Which API a watched request speaks, where it goes, and how an error is said in it.

The proxy serves the Anthropic Messages API and three OpenAI endpoints on one port, and
tells them apart by path alone (a body can be anything a hostile client sends): a client's
base URL may end in ``/v1`` or not, so ``/v1/responses`` and ``/responses`` are the same
endpoint. The names are the ones the recording's ``api`` field carries.

Without ``--upstream`` each request goes to its own API's host, decided per request by its
path: a Messages path (and any path no API here owns) to ``https://api.anthropic.com``, an
OpenAI path to ``https://api.openai.com``, under ``/v1`` as that API lives (a client whose
base URL left ``/v1`` out still reaches it). With ``--upstream`` every request goes there,
its path as sent.
"""

from __future__ import annotations

import json
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


def error_body(api: str | None, message: str) -> bytes:
    """A gateway error in the shape the client's SDK reads: OpenAI's ``{"error": {message,
    type, param, code}}`` for an OpenAI path, Anthropic's ``{"type": "error", ...}`` else."""
    if is_openai(api):
        return json.dumps({"error": {"message": message, "type": "api_error",
                                     "param": None, "code": "upstream_unavailable"}}).encode()
    return json.dumps({"type": "error", "error": {"type": "api_error", "message": message}}
                      ).encode()


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

    def target(self, raw_path: str) -> URL:
        """The upstream URL of a request path (``raw_path``: as sent, query and all)."""
        if self.fixed is not None:
            return _join(self.fixed, raw_path)
        path = raw_path.partition("?")[0]
        if not is_openai(api_of(path)):
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
    return base.with_path(base.path.rstrip("/") + raw_path, encoded=True)
