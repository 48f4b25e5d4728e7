"""How the SDK's failures become the :class:`ProviderError` kinds the agent loop acts on.

Only :class:`ContextOverflow` is fixable by compaction; an auth or network error never is,
whatever its message says (a 401 whose text mentions "prompt is too long" is still an auth
error, and compacting would only throw context away). A cut or malformed stream is a
``ProviderError`` too, never a stray ``KeyError`` from deep inside a parser, and a body cut
after its headers is called an interrupted stream: the request did reach the model.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anthropic
import httpx2

from core.providers.base import (
    AuthError,
    ContextOverflow,
    NetworkError,
    ProviderError,
    is_overflow_message,
)


def one_line(text: str, limit: int = 300) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_cause(exc: BaseException) -> str:
    """The transport's own words (``Connection refused``) rather than the SDK's generic ones."""
    cause = exc.__cause__ or exc.__context__
    return one_line(str(cause) or type(cause).__name__) if cause else one_line(str(exc))


def map_status_error(exc: anthropic.APIStatusError) -> ProviderError:
    """By status first, then by wording: 413 and the overflow phrases (any 4xx but 429,
    whose "too many tokens" means a rate, not a prompt) are the fixable kind."""
    status = exc.status_code
    etype = getattr(exc, "type", None) or ""
    detail = one_line(getattr(exc, "api_message", None) or str(exc.message))
    # An SSE ``error`` event arrives after a 200: there is no HTTP status to report.
    http = status if status >= 400 else None
    label = f"HTTP {status} {etype}".rstrip() if http else f"stream error {etype}".rstrip()
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return AuthError(f"the API refused the credentials ({label}): {detail}", status=http)
    texts = (detail, etype, getattr(exc, "error_code", None) or "")
    fixable = status != 429 and status < 500 and any(is_overflow_message(t) for t in texts)
    if status == 413 or fixable:
        return ContextOverflow(f"the prompt is too long ({label}): {detail}", status=http)
    return ProviderError(f"{label}: {detail}", status=http)


def map_error(exc: Exception, base_url: str) -> ProviderError:
    """Turn anything the SDK raises into the ProviderError the loop understands."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        return map_status_error(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return NetworkError(f"the request to {base_url} timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return NetworkError(f"cannot reach {base_url}: {describe_cause(exc)}")
    if isinstance(exc, anthropic.CredentialsError) or (
        isinstance(exc, TypeError) and "authentication" in str(exc).lower()
    ):
        return AuthError(f"no usable API credentials (set ANTHROPIC_API_KEY): {one_line(str(exc))}")
    return ProviderError(f"{type(exc).__name__}: {one_line(str(exc))}")


async def guarded(stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """Yield stream events; a broken or malformed stream becomes a ProviderError.

    Errors raised by the consumer's own body (an ``on_text`` sink) do not pass through
    here; the consumer wraps them in :class:`SinkFailure` so they keep their type.
    """
    iterator = stream.__aiter__()
    while True:
        try:
            event = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except (anthropic.APITimeoutError, httpx2.TimeoutException) as exc:
            raise NetworkError(f"the response stream stalled: {one_line(str(exc))}") from exc
        except anthropic.APIConnectionError as exc:
            # Newer SDKs wrap a body cut after the headers as a connection error; the
            # request did reach the model, so it is an interrupted stream, not "cannot reach".
            raise ProviderError(
                f"interrupted response stream: {describe_cause(exc)}"
            ) from exc
        except anthropic.APIError:
            raise  # typed API errors (an SSE ``error`` event) are mapped by the caller
        except Exception as exc:
            raise ProviderError(
                f"malformed or interrupted response stream: {type(exc).__name__}: "
                f"{one_line(str(exc))}"
            ) from exc
        yield event


class SinkFailure(Exception):
    """Carries an exception raised by the caller's ``on_text`` past the error mapping."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error
