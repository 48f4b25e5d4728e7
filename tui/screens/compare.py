"""Compare strategies: the current scenario replayed once per way of keeping context small.

"Compared to what?" is the question a learner asks after watching the pipeline work. This
screen answers with :mod:`core.compare` — the same engine and numbers as ``ctxlab
compare`` — for the scenario on screen: a table of who manages the context in each, then
the command line's own columns (:mod:`tui.compare_columns`: size per main call, side work,
losses, probes still answerable, billed input, cache read, estimated cost), and a chart of
chars per call, one line per strategy on a shared scale.

Every strategy is a full scripted run in its own temporary workspace, so the runs happen in
a thread worker (group ``compare``, exclusive) that posts one result at a time: the demo
keeps playing, the progress bar moves, and leaving the screen cancels what is left.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static

from core.compare import STRATEGIES, Strategy, StrategyResult, compare_sync
from core.config import Thresholds, scenario_thresholds
from core.scenarios import Scenario
from tui.compare_columns import COLUMNS, Column, strategy_names
from tui.i18n import has, localize_bindings, t
from tui.managers import manager_label
from tui.widgets.compare_chart import CompareChart
from tui.widgets.keys_footer import KeysFooter


def strategies() -> list[Strategy]:
    """Every strategy the engine has, in teaching order — the rows ``ctxlab compare`` can
    print, so the screen never lacks one the command line shows."""
    return [STRATEGIES[name] for name in strategy_names()]


def describe(strategy: StrategyResult) -> str:
    key = f"strategy.{strategy.name}"
    return t(key) if has(key) else strategy.description


def cell(column: Column, result: StrategyResult) -> str | Content:
    """The command line's cell, in the error colour where it alarms (a loss, a lost probe)."""
    text = "—" if column.key == "probes" and not result.probes else column.cell(result)
    return Content.styled(text, "bold $error") if column.alarm(result) else text


def stand_in_notes(result: StrategyResult) -> list[str]:
    """The localized form of ``result.notes``: ctxlab's summaries for a manager without."""
    return [t(f"compare.note.{stage}", n=n, name=result.name,
              manager=manager_label(result.manager))
            for stage, n in result.stand_in.items()]


class CompareScreen(Screen[None]):
    """Progress, then a table and a chart; ``r`` runs the comparison again."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "key.back"),
        Binding("r", "rerun", "key.rerun"),
    ]

    class Progress(Message):
        """One strategy finished (posted from the worker thread)."""

        def __init__(self, result: StrategyResult) -> None:
            super().__init__()
            self.result = result

    class Failed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, scenario: Scenario, thresholds: Thresholds | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.scenario = scenario
        self.thresholds = thresholds
        self.strategies = strategies()
        self.results: list[StrategyResult] = []
        self.done = False

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(
            (f" {t('compare.title')} ", "bold reverse"), "  ", (self.scenario.name, "bold"),
            ("  " + t("compare.subtitle"), "dim")), id="compare-title")
        with Horizontal(id="compare-progress"):
            yield ProgressBar(total=len(self.strategies), show_eta=False, id="compare-bar")
            yield Static(id="compare-status")
        with VerticalScroll(id="compare-body"):
            table: DataTable[str | Content] = DataTable(id="compare-table", cursor_type="row",
                                                        zebra_stripes=True)
            yield table
            yield Static(id="compare-notes")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(t("compare.col.strategy"), key="strategy", width=22)
        table.add_column(t("compare.col.manager"), key="manager", width=19)
        for column in COLUMNS:
            table.add_column(t(f"compare.col.{column.key}"), key=column.key)
        self.start()

    def start(self) -> None:
        self.results = []
        self.done = False
        self.query_one(DataTable).clear()
        self.query_one("#compare-notes", Static).update("")
        for chart in self.query(CompareChart):
            chart.remove()
        self.query_one(ProgressBar).update(progress=0)
        self.show_status()
        self.run_compare()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def run_compare(self) -> None:
        """Each strategy in turn (``compare`` never runs two at once either)."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        for strategy in self.strategies:
            if worker.is_cancelled:
                return
            try:
                result = compare_sync(self.scenario, [strategy], self.thresholds).strategies[0]
            except Exception as exc:  # a broken strategy must not leave the screen spinning
                self.post_message(self.Failed(f"{strategy.name}: {type(exc).__name__}: {exc}"))
                return
            self.post_message(self.Progress(result))

    def on_compare_screen_progress(self, message: Progress) -> None:
        result = message.result
        self.results.append(result)
        self.query_one(DataTable).add_row(
            Content.styled(result.name, "bold") if result.ok else
            Content.styled(f"{result.name} ✖", "bold $error"),
            manager_label(result.manager), *(cell(column, result) for column in COLUMNS),
            key=result.name)
        self.query_one(ProgressBar).advance(1)
        self.done = len(self.results) == len(self.strategies)
        self.show_status()
        if self.done:
            self.finish()

    def on_compare_screen_failed(self, message: Failed) -> None:
        self.query_one("#compare-status", Static).update(
            Content.styled(t("compare.failed", error=message.error), "bold $error"))

    def show_status(self) -> None:
        n, total = len(self.results), len(self.strategies)
        text = t("compare.done", n=total) if self.done else t(
            "compare.running", name=self.strategies[n].name, n=n + 1, total=total)
        self.query_one("#compare-status", Static).update(text)

    def finish(self) -> None:
        notes: list[Content] = [Content.assemble((f"{r.name}: ", "bold"), (describe(r), "dim"))
                                for r in self.results]
        for r in self.results:
            notes.extend(Content.styled(note, "italic") for note in stand_in_notes(r))
            for probe in r.probes:
                if not probe.answerable:
                    notes.append(Content.styled(t("compare.probe_lost", name=r.name,
                                                  ask=probe.ask, expect=probe.expect),
                                                "$error"))
            if r.error:
                notes.append(Content.styled(f"{r.name}: {r.error}", "$error"))
        notes.append(Content.styled(t("compare.legend"), "dim italic"))
        self.query_one("#compare-notes", Static).update(Content("\n").join(notes))
        chart = CompareChart([(r.name, r.chars_per_call) for r in self.results],
                             self.context_limit())
        self.query_one("#compare-body").mount(chart)

    def context_limit(self) -> int:
        """The limit the runs compacted against: the given thresholds, else the scenario's
        teaching budget, else the default (as ``AgentSession.thresholds`` decides)."""
        if self.thresholds is not None:
            return self.thresholds.context_limit
        return scenario_thresholds(self.scenario.thresholds,
                                   self.scenario.source).context_limit

    def action_rerun(self) -> None:
        if self.done:
            self.start()
