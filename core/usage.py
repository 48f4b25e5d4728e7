"""One model call's tokens, read once from wherever the call's usage was recorded.

The meter, the cache line, the Stages panel, a replay and ``ctxlab compare`` all state the same
few facts about a call: how many tokens filled the context window, what input was billed, how
much of it the prompt cache served. Each used to add up the ``usage`` object its own way, and
they disagreed (the Codex import counted cache writes as plain input and left them out of a
compaction's size). :class:`Usage` is the one reading; the rest asks it and formats.

Three shapes are read:

* the Messages API's ``usage`` (:meth:`Usage.from_api`): ``input_tokens`` is the *uncached*
  input; ``cache_creation_input_tokens`` (split by TTL in
  ``cache_creation.ephemeral_1h_input_tokens``) and ``cache_read_input_tokens`` are counted
  apart. ``iterations`` lists the sampling steps of one request: the top-level fields add up
  the ``message`` steps (a server tool loop samples several times), so the context window is
  the *last* ``message`` step's input; a ``compaction`` step (a server compaction's own
  summarisation) is billed but in neither the top-level fields nor the window;
* a Claude Code transcript's ``message.usage`` (:meth:`Usage.from_transcript`): the API's
  object as the agent recorded it;
* a Codex ``token_count`` event's ``info.last_token_usage`` (:meth:`Usage.from_codex`), in
  OpenAI's terms: ``input_tokens`` *includes* ``cached_input_tokens`` and, in newer Codex
  versions, ``cache_write_input_tokens``.

A recorded file may say anything, so every reader counts only non-negative integers and
treats any other value as absent: a context size is never negative and never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Sampling steps whose input is the request's context (a fallback model's answer included);
# an ``advisor_message`` is another model's sub-call and a ``compaction`` the summariser's.
WINDOW_STEPS = ("message", "fallback_message")


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _has_count(data: dict[str, Any], key: str) -> bool:
    value = data.get(key)
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Usage:
    """One call's tokens by how they are billed, and the size of the context it read.

    ``input`` is uncached input, ``cache_write_*`` what was written to the prompt cache (by
    TTL: a one-hour write is dearer), ``cache_read`` what was read back from it. ``window``
    is the context the answering step read when the API listed its steps, and ``steps`` the
    billed steps outside the top-level fields (a server compaction's summarisation).
    Adding two gives the billed tally of both calls (what a turn or a session cost).
    """

    input: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0
    output: int = 0
    window: int | None = None
    steps: tuple[Usage, ...] = ()

    # -- reading ------------------------------------------------------------------------------

    @classmethod
    def from_api(cls, usage: Any) -> Usage | None:
        """The Messages API's ``usage``; None when there is none (a scripted model) or it
        reports no input count."""
        if not isinstance(usage, dict) or not _has_count(usage, "input_tokens"):
            return None
        top = cls._counts(usage)
        listed = usage.get("iterations")
        steps = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
        answering = [s for s in steps if s.get("type") in WINDOW_STEPS]
        window = cls._counts(answering[-1]).context_tokens if answering else None
        return cls(top.input, top.cache_write_5m, top.cache_write_1h, top.cache_read,
                   top.output, window=window,
                   steps=tuple(cls._counts(s) for s in steps if s.get("type") == "compaction"))

    @classmethod
    def from_transcript(cls, usage: Any) -> Usage | None:
        """A recorded Messages ``usage`` (Claude Code's ``message.usage``, a requests log's
        ``response.usage``): the API's own object, so it is read the same way."""
        return cls.from_api(usage)

    @classmethod
    def from_codex(cls, last: Any) -> Usage | None:
        """A Codex ``last_token_usage``: cached input and cache writes are parts of its
        ``input_tokens``, so they are taken out of it to leave the uncached input."""
        if not isinstance(last, dict) or not _has_count(last, "input_tokens"):
            return None
        read = _count(last, "cached_input_tokens")
        written = _count(last, "cache_write_input_tokens")
        return cls(input=max(_count(last, "input_tokens") - read - written, 0),
                   cache_write_5m=written, cache_read=read, output=_count(last, "output_tokens"))

    @classmethod
    def _counts(cls, data: dict[str, Any]) -> Usage:
        created = _count(data, "cache_creation_input_tokens")
        split = data.get("cache_creation")
        one_hour = min(_count(split, "ephemeral_1h_input_tokens"), created) \
            if isinstance(split, dict) else 0
        return cls(input=_count(data, "input_tokens"), cache_write_5m=created - one_hour,
                   cache_write_1h=one_hour, cache_read=_count(data, "cache_read_input_tokens"),
                   output=_count(data, "output_tokens"))

    def to_api(self) -> dict[str, int]:
        """The top-level fields in the Messages API's terms (how an import records a call
        whose agent spoke another API)."""
        return {"input_tokens": self.input, "cache_read_input_tokens": self.cache_read,
                "cache_creation_input_tokens": self.cache_write,
                "output_tokens": self.output}

    # -- the facts ----------------------------------------------------------------------------

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def context_tokens(self) -> int:
        """The tokens that filled the context window: input, cached or not, of the step that
        answered (never a compaction step's: that read what the window no longer holds)."""
        if self.window is not None:
            return self.window
        return self.input + self.cache_write + self.cache_read

    def billed(self) -> Usage:
        """Every billed token of the call by kind, the steps outside the top level added.
        A tally (no window, no steps) is its own: it is immutable, and a replay's meter
        adds every answer to two of them."""
        if self.window is None and not self.steps:
            return self
        total = Usage(self.input, self.cache_write_5m, self.cache_write_1h, self.cache_read,
                      self.output)
        for step in self.steps:
            total = _plus(total, step)
        return total

    @property
    def billed_input(self) -> int:
        """Input as billed: uncached, written and read, of every step."""
        billed = self.billed()
        return billed.input + billed.cache_write + billed.cache_read

    @property
    def billed_total(self) -> int:
        """Every billed token, input and output (a turn's size when it has no price)."""
        return self.billed_input + self.billed().output

    @property
    def cache_share(self) -> float:
        """The share of billed input read back from the cache (0 when nothing was billed)."""
        billed_input = self.billed_input
        return self.billed().cache_read / billed_input if billed_input else 0.0

    def __add__(self, other: Usage) -> Usage:
        return _plus(self.billed(), other.billed())


def _plus(a: Usage, b: Usage) -> Usage:
    """The sum of two calls' top-level counts (a tally has no window of its own)."""
    return Usage(a.input + b.input, a.cache_write_5m + b.cache_write_5m,
                 a.cache_write_1h + b.cache_write_1h, a.cache_read + b.cache_read,
                 a.output + b.output)


def context_tokens(usage: Any) -> int | None:
    """The context tokens of a Messages ``usage`` (live or recorded), None without one."""
    read = Usage.from_api(usage)
    return None if read is None else read.context_tokens
