"""The API's context editing played offline: ``clear_tool_uses_20250919``, done locally.

Context editing is deterministic and documented, so the teaching lab can play it offline
beside truncate and the s08 pipeline, on the same scenario and the same budget (the engine of
the ``api-edit`` manager, :mod:`core.compact.managers`; ``ctxlab compare`` calls the strategy
``api-clear-tool-uses``). Its clears are ``api_clear_tool_uses`` stages by ``api-edit``, as
the server's are:

* **trigger** — the *whole* prompt, as the client sends it, is over the trigger (the API
  measures the request before editing it; a client keeps sending everything, so what was
  cleared still counts). Here the trigger is the run's ``context_limit``, in tokens, unless
  a ``trigger_tokens`` is given (a what-if run uses the API's 100,000); chars become tokens
  at ``chars_per_token``, plus ``overhead_tokens`` for the system prompt and tools every
  request carries. Given a session's measured ratio, the conversion is the what-if
  table's (rounded, as :func:`core.whatif.cache.request_tokens` and ``api-compaction``
  count), so a request is past the trigger exactly when the tokens shown for it are;
  without one, ctxlab's 4 chars a token rounded up, as a scenario's budget is counted.
* **keep** — the most recent ``keep`` tool uses (``keep_recent``, 3 like the API's default)
  keep their results; every older result is replaced by a placeholder, oldest first.
* **exclude_tools** — results of these tools are never cleared.
* **clear_at_least** — nothing is cleared unless at least this many tokens would go.

The model then sees the placeholder, exactly as with the API. Unlike the API, ctxlab's
client is this engine: the original is saved byte-exact in the tool-results folder first
(ledger ``where`` names the file), so nothing leaves the context unrecoverably. It never
summarises and never drops a message; ``compact`` and overflow recovery fall back to the
s08 engine's (a real client would get a prompt-too-long error instead).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.archive.store import content_size
from core.compact.api_compaction import input_tokens
from core.compact.context import StageRun
from core.compact.sent import FollowingCompactor
from core.compact.stages import API_CLEAR_TOOL_USES
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import Event
from core.measure import CHARS_PER_TOKEN, Measured
from core.messages import blocks, is_block

PLACEHOLDER = "[tool result cleared by context editing]"


@dataclass(frozen=True)
class ClearRule:
    """The edit's parameters, in the API's units (tokens, tool uses)."""

    trigger_tokens: int
    keep: int = 3
    clear_at_least: int | None = None
    exclude_tools: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Clearable:
    msg_idx: int
    block_idx: int
    tool_use_id: str
    chars: int


def clearable(messages: list[dict[str, Any]], rule: ClearRule) -> list[Clearable]:
    """Results older than the ``keep`` most recent tool uses, oldest first, not excluded
    and not already cleared."""
    names = {b.get("id"): b.get("name") for m in messages for b in blocks(m)
             if is_block(b, "tool_use")}
    results = [(i, j, b) for i, m in enumerate(messages) for j, b in enumerate(blocks(m))
               if is_block(b, "tool_result")]
    older = results[:-rule.keep] if rule.keep else results
    return [Clearable(i, j, b.get("tool_use_id", ""), content_size(b.get("content", "")))
            for i, j, b in older
            if names.get(b.get("tool_use_id")) not in rule.exclude_tools
            and b.get("content") != PLACEHOLDER]


def tokens(chars: int, chars_per_token: float = CHARS_PER_TOKEN,
           overhead_tokens: int = 0) -> int:
    """``chars`` as tokens, rounded up, plus the fixed overhead every request carries: a
    scenario's conversion, which never counts a budget as smaller than it is."""
    return math.ceil(chars / chars_per_token) + overhead_tokens


class ApiClearToolUses(FollowingCompactor):
    """Same interface as the s08 :class:`Compactor`; ``prepare`` clears instead of compacting."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset(),
                 exclude_tools: Iterable[str] = (), *,
                 chars_per_token: float | None = None, overhead_tokens: int = 0,
                 trigger_tokens: int | None = None) -> None:
        super().__init__(workspace, thresholds, summarizer, emit, frozenset())
        if chars_per_token is not None and chars_per_token <= 0:
            raise ValueError(f"chars per token must be above 0, not {chars_per_token}")
        self.exclude_tools = frozenset(exclude_tools)
        self.cleared_chars = 0  # what clearing saved: the client still "sends" it
        # A what-if run prices a recorded session at its own measured ratio and overhead
        # and at the API's trigger; a scenario run keeps the course's budget in tokens.
        self.chars_per_token = chars_per_token
        self.overhead_tokens = overhead_tokens
        self.trigger_tokens = trigger_tokens
        self._reading: Reading | None = None  # the history last returned, as far as read

    @property
    def rule(self) -> ClearRule:
        limits = self.ctx.thresholds
        trigger = self.trigger_tokens
        if trigger is None:
            trigger = self._tokens(limits.context_limit)
        return ClearRule(trigger_tokens=trigger, keep=limits.keep_recent,
                         exclude_tools=self.exclude_tools)

    async def prepare(self, messages: list[dict], active_request: str) -> list[dict]:
        """Clear what is clearable past the trigger. A what-if run calls this once per
        recorded request, so the history it returned is followed, not read again: when
        it comes back with messages appended, only those are read (:class:`Reading`)."""
        await self.list_archive()
        rule = self.rule
        history, start = self.followed.follow(messages)
        reading = self._reading
        if reading is None or reading.rule != rule or start == 0:
            reading = self._reading = Reading(rule)  # read from the start
            start = 0
        reading.read(history.messages, start)
        if self._over(history, rule):
            targets = reading.take_clearable()
            if not self._clear(history, rule, targets):
                reading.pending = targets  # not enough to clear: they wait for the next call
        return self.followed.returned(history)

    def _over(self, history: Measured, rule: ClearRule) -> bool:
        """Is the whole request, as the client sends it, over the trigger?"""
        sent = self._tokens(history.chars + self.cleared_chars, self.overhead_tokens)
        return sent > rule.trigger_tokens

    def _tokens(self, chars: int, overhead_tokens: int = 0) -> int:
        """Chars as tokens: at the session's ratio as the what-if table shows them, else at
        ctxlab's 4 chars a token rounded up (a scenario's figures, unchanged)."""
        if self.chars_per_token is None:
            return tokens(chars, CHARS_PER_TOKEN, overhead_tokens)
        return input_tokens(chars, self.chars_per_token, overhead_tokens)

    def clear(self, history: Measured, rule: ClearRule) -> None:
        """Clear ``history`` in one pass (read from the start)."""
        if self._over(history, rule):
            self._clear(history, rule, clearable(history.messages, rule))

    def _clear(self, history: Measured, rule: ClearRule, targets: list[Clearable]) -> bool:
        """Clear ``targets``; False when there are none or too few to clear."""
        if not targets:
            return False
        cleared = self._tokens(sum(t.chars for t in targets))
        if rule.clear_at_least and cleared < rule.clear_at_least:
            return False  # the API clears nothing rather than too little
        run = StageRun(API_CLEAR_TOOL_USES, self.ctx, history)
        try:
            for target in targets:
                block = history.messages[target.msg_idx]["content"][target.block_idx]
                path = self.ctx.archive.persist(target.tool_use_id, block.get("content", ""))
                self.cleared_chars -= history.set_content(target.msg_idx, target.block_idx,
                                                          PLACEHOLDER)
                run.took(target.tool_use_id, target.chars, path)
        except BaseException:
            run.abandon()
            raise
        run.finish()
        return True

    async def compact(self, messages: list[dict], active_request: str) -> list[dict]:
        self.cleared_chars = 0  # the summary replaces what was cleared
        self._reading = None
        return await super().compact(messages, active_request)

    async def reactive(self, messages: list[dict], active_request: str,
                       refusal: BaseException | None = None) -> list[dict]:
        self.cleared_chars = 0
        self._reading = None
        return await super().reactive(messages, active_request, refusal)


@dataclass
class Reading:
    """The followed history, read as far as it goes: tool names by id, the newest ``keep``
    results (every result counts toward them, cleared or not), and the older ones not
    cleared yet — exactly what :func:`clearable` finds, without a rescan."""

    rule: ClearRule
    names: dict[str, Any] = field(default_factory=dict)
    recent: deque[Clearable] = field(default_factory=deque)
    pending: list[Clearable] = field(default_factory=list)

    def read(self, messages: list[dict[str, Any]], start: int) -> None:
        """Read ``messages[start:]`` (what was appended since the last call)."""
        for i in range(start, len(messages)):
            for j, block in enumerate(blocks(messages[i])):
                if is_block(block, "tool_use"):
                    self.names[block.get("id")] = block.get("name")
                elif is_block(block, "tool_result"):
                    self.recent.append(Clearable(i, j, block.get("tool_use_id", ""),
                                                 content_size(block.get("content", ""))))
                    self._age(messages)

    def _age(self, messages: list[dict[str, Any]]) -> None:
        """Results past the newest ``keep`` become clearable (unless excluded or cleared)."""
        while len(self.recent) > self.rule.keep:
            older = self.recent.popleft()
            if self.names.get(older.tool_use_id) in self.rule.exclude_tools:
                continue
            block = messages[older.msg_idx]["content"][older.block_idx]
            if block.get("content") != PLACEHOLDER:
                self.pending.append(older)

    def take_clearable(self) -> list[Clearable]:
        taken, self.pending = self.pending, []
        return taken
