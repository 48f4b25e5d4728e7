"""What a report is drawn from: a SOURCE's events, their fold per request, and its stages.

Every figure a section prints is read here from the events (through
:func:`core.views.requests.fold`), never measured again, so the report says what a
``--json`` script reads. Each section (:mod:`core.report.sections`) is a small function of
one :class:`Report`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from core import events as ev
from core.measure import CHARS_PER_TOKEN
from core.report.caps import Budget
from core.views.collect import Collected
from core.views.requests import RequestLog, RequestPoint, Side, fold, side_of
from core.views.timeline import Timeline
from core.views.timeline import build as build_timeline
from core.views.window import Window, window_of
from core.whatif.model import WhatIf


@dataclass(frozen=True)
class StageRow:
    """One stage, whose it is, and the request it was made for (None: after the last)."""

    number: int  # 1-based, in the order the stages happened
    side: Side
    stage: ev.Stage
    request: int | None


@dataclass
class Report:
    collected: Collected
    log: RequestLog
    stages: list[StageRow]
    run_start: ev.RunStart | None = None
    replay_start: ev.ReplayStart | None = None
    system_prompts: list[ev.SystemPrompt] = field(default_factory=list)
    tools_used: Counter[str] = field(default_factory=Counter)
    errors: list[ev.Error] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    whatif: WhatIf | None = None  # a recorded session under other strategies, when asked

    @property
    def chars_per_token(self) -> float:
        """The session's measured ratio in a replay, else the estimate every source uses."""
        if self.replay_start is not None and self.replay_start.chars_per_token > 0:
            return self.replay_start.chars_per_token
        return float(CHARS_PER_TOKEN)

    def timeline(self) -> Timeline:
        """The fullness timeline, as the workbench's Timeline tab builds it."""
        return build_timeline(self.log, self.collected.thresholds)

    def window(self, point: RequestPoint) -> Window | None:
        """A request's window, as the workbench's Window tab and ``ctxlab context`` give it."""
        return window_of(self.log, point.side, point.index, limits=self.collected.thresholds)

    def stages_of(self, side: Side) -> list[StageRow]:
        return [row for row in self.stages if row.side == side]


def build(collected: Collected) -> Report:
    """Fold ``collected``'s events into a :class:`Report`."""
    events = collected.events
    log = fold(events)
    watching = any(isinstance(e, ev.WatchStart) for e in events)
    report = Report(collected=collected, log=log, stages=_stage_rows(events, log, watching))
    for event in events:
        if isinstance(event, ev.RunStart):
            report.run_start = event
        elif isinstance(event, ev.ReplayStart):
            report.replay_start = event
        elif isinstance(event, ev.SystemPrompt):
            report.system_prompts.append(event)
        elif isinstance(event, ev.ToolCall):
            report.tools_used[event.name] += 1
        elif isinstance(event, ev.Error):
            report.errors.append(event)
    return report


def _stage_rows(events: list[ev.Event], log: RequestLog, watching: bool) -> list[StageRow]:
    """Every stage in event order, with the request the fold put it on."""
    owner: dict[int, tuple[Side, int]] = {}
    for side in log.sides():
        point: RequestPoint
        for point in log.side(side):
            for stage in point.stages:
                owner[id(stage)] = (side, point.index)
    rows: list[StageRow] = []
    for event in events:
        if isinstance(event, ev.Stage):
            side, request = owner.get(id(event), (side_of(event, watching), None))
            rows.append(StageRow(len(rows) + 1, side, event, request))
    return rows
