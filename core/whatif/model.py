"""The results of a what-if comparison: plain dataclasses, the same for the table, ``--json``,
the workbench's compare screen and the HTML report.

A :class:`RequestCost` is one recorded request as one strategy would have sent it; a
:class:`StrategyRun` is a strategy over the whole session, with totals that are sums (or
maxima) of its requests, so a reader can check every total against the rows; a
:class:`WhatIf` is every strategy over one session, with what the session itself measured
(its chars-per-token ratio, the fixed overhead its requests carried, its window).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.usage import Usage

TRAJECTORY_NOTE = ("The trajectory is the recorded one: each strategy changes only what would "
                   "have been sent. The model's behaviour under another policy is not "
                   "simulated.")


def usage_json(usage: Usage) -> dict[str, int]:
    """Billed tokens by kind, as the per-request rows spell them."""
    return {"input": usage.input, "cache_write": usage.cache_write_5m + usage.cache_write_1h,
            "cache_read": usage.cache_read, "output": usage.output}


@dataclass(frozen=True)
class RequestCost:
    """One recorded request (1-based ``index``) as a strategy would have sent it."""

    index: int
    chars: int  # the messages' JSON chars (the contract's size measure)
    tokens: int  # input tokens: chars at the session's ratio + the recorded fixed overhead
    usage: Usage  # billed: input (uncached), cache_write_5m, cache_read, output
    timestamp: str | None = None
    stages: tuple[str, ...] = ()  # what the strategy did before this request
    counted: bool = False  # tokens and usage are the API's own (``original`` only)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "chars": self.chars, "tokens": self.tokens,
                **usage_json(self.usage), "timestamp": self.timestamp,
                "stages": list(self.stages), "counted": self.counted}


@dataclass(frozen=True)
class Fact:
    """Something the session later relied on: a tool result a later request quotes, or
    whose file a later tool call reads again."""

    result_id: str  # the tool_use id of the result
    tool: str  # the tool that produced it
    produced_at: int  # the request that first sent it
    needed_at: int  # the request that relied on it
    kind: str  # "quote" or "reread"
    detail: str  # the quoted line, or the file read again
    # A re-read's earlier result, as a digest of its text: the strategy kept the fact when
    # what it sends under that id still hashes the same (not a placeholder or a preview).
    digest: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"result_id": self.result_id, "tool": self.tool,
                "produced_at": self.produced_at, "needed_at": self.needed_at,
                "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class FactCheck:
    """One fact under one strategy: was it still visible when the session relied on it?"""

    fact: Fact
    visible: bool

    def to_json(self) -> dict[str, Any]:
        return {**self.fact.to_json(), "visible": self.visible}


@dataclass(frozen=True)
class StrategyRun:
    """One strategy over the whole session."""

    name: str
    description: str
    requests: tuple[RequestCost, ...]
    side: Usage = field(default_factory=Usage)  # the strategy's own calls (summaries)
    side_calls: int = 0
    compactions: int = 0  # requests the strategy rewrote or cleared the history before
    results_left: int = 0  # tool results that left the context at some point
    results_recoverable: int = 0  # of those, byte-exact in ctxlab's archive (or the file)
    facts: tuple[FactCheck, ...] = ()
    lesson: str = ""  # one line: what this session teaches about the strategy
    notes: tuple[str, ...] = ()
    cost: float | None = None  # USD, requests + side calls; None without a price
    error: str | None = None
    over_window: int = 0  # requests larger than the model's window (the API would refuse them)
    first_over_window: int | None = None  # the first of them

    @property
    def billed(self) -> Usage:
        """Every request's usage and the side calls', added."""
        total = self.side
        for request in self.requests:
            total = total + request.usage
        return total

    @property
    def billed_input(self) -> int:
        return self.billed.billed_input

    @property
    def cache_read_share(self) -> float:
        return self.billed.cache_share

    @property
    def peak_tokens(self) -> int:
        return max((r.tokens for r in self.requests), default=0)

    @property
    def facts_kept(self) -> int:
        return sum(1 for check in self.facts if check.visible)

    @property
    def rereads_after_drop(self) -> int:
        """Re-reads of a file whose earlier result this strategy had dropped: a likely cost
        of the strategy (the recorded agent read it again for its own reasons)."""
        return sum(1 for c in self.facts if c.fact.kind == "reread" and not c.visible)

    def to_json(self, requests: bool = True) -> dict[str, Any]:
        billed = self.billed
        data: dict[str, Any] = {
            "name": self.name, "description": self.description, "error": self.error,
            "requests": len(self.requests), "billed_input_tokens": billed.billed_input,
            "input_tokens": billed.input, "cache_write_tokens": billed.cache_write_5m
            + billed.cache_write_1h, "cache_read_tokens": billed.cache_read,
            "output_tokens": billed.output, "cache_read_share": round(billed.cache_share, 4),
            "cost": None if self.cost is None else round(self.cost, 6),
            "peak_tokens": self.peak_tokens, "compactions": self.compactions,
            "side_calls": self.side_calls, "side": usage_json(self.side),
            "over_window": self.over_window, "first_over_window": self.first_over_window,
            "results_left": self.results_left,
            "results_recoverable": self.results_recoverable,
            "facts": len(self.facts), "facts_kept": self.facts_kept,
            "rereads_after_drop": self.rereads_after_drop,
            "lesson": self.lesson, "notes": list(self.notes),
            "fact_checks": [c.to_json() for c in self.facts],
        }
        if requests:
            data["per_request"] = [r.to_json() for r in self.requests]
        return data


@dataclass(frozen=True)
class WhatIf:
    """Every strategy over one recorded session."""

    path: str
    format: str
    model: str | None
    requests: int
    chars_per_token: float
    ratio_source: str  # "usage" (fitted) or "estimate"
    overhead_tokens: int  # the fixed part every request carried (system prompt, tools)
    window_tokens: int | None
    strategies: tuple[StrategyRun, ...]
    price_model: str | None = None  # whose prices the costs use; None: no price known
    summary_line: str = ""  # the recording's "read N of M lines: …"
    partial: bool = False  # some of the file could not be read
    note: str = TRAJECTORY_NOTE

    def strategy(self, name: str) -> StrategyRun | None:
        return next((s for s in self.strategies if s.name == name), None)

    def to_json(self, requests: bool = True) -> dict[str, Any]:
        return {"session": self.path, "format": self.format, "model": self.model,
                "requests": self.requests, "chars_per_token": round(self.chars_per_token, 3),
                "ratio_source": self.ratio_source, "overhead_tokens": self.overhead_tokens,
                "window_tokens": self.window_tokens, "price_model": self.price_model,
                "read": self.summary_line, "partial": self.partial, "note": self.note,
                "strategies": [s.to_json(requests) for s in self.strategies]}
