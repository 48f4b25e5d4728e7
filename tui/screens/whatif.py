"""What if: the recorded session on screen, replayed under every context strategy.

The compare key on a replay opens this screen instead of the scenario comparison
(:mod:`tui.screens.compare`, which needs a script to run again): the recording's trajectory
is kept as it was and each strategy of :mod:`core.whatif` changes only what would have been
sent (``ctxlab compare --session``'s engine and numbers). It shows the table (the columns of
the report and the command line, :mod:`core.whatif.columns`), every strategy's fullness on
one plot with the model's window, the note that the trajectory is the recorded one, each
strategy's lesson, and, on Enter, the facts the session relied on and whether that strategy
still showed each.

The comparison runs in a worker (group ``whatif``, exclusive) on a thread of its own: the
strategies take a while on a long session, the progress bar follows them, and leaving the
screen stops them. The runner is a parameter so a test can hand the screen a fixed result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from core.whatif.columns import RUN_COLUMNS, cell
from core.whatif.model import TRAJECTORY_NOTE, StrategyRun, WhatIf
from core.whatif.palette import colour_of
from tui.i18n import localize_bindings, t
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.whatif_plot import WhatIfPlot, legend

if TYPE_CHECKING:
    from core.sources.replay.model import Recording

Progress = Callable[[str, int, int], None]  # (strategy, request, requests)
Runner = Callable[["Recording", tuple[str, ...], Progress], Awaitable[WhatIf]]
FACTS_SHOWN = 200  # fact lines listed; the rest counted (every one is in --json)


async def run_strategies(recording: Recording, names: tuple[str, ...],
                         progress: Progress) -> WhatIf:
    """``ctxlab compare --session``'s comparison, with ``progress`` told as it goes."""
    from core.whatif.run import compare_session_async
    from core.whatif.strategies import WhatIfOptions

    return await compare_session_async(recording, WhatIfOptions(strategies=names,
                                                                progress=progress))


def default_strategies() -> tuple[str, ...]:
    from core.whatif.strategies import STRATEGIES

    return tuple(STRATEGIES)


def fact_lines(run: StrategyRun) -> list[Content]:
    """The facts ``run`` was judged on, each visible (✔) or not (✖, in the error colour)."""
    if not run.facts:
        return [Content.styled(t("whatif.facts_none", name=run.name), "dim")]
    lines = [Content.styled(t("whatif.facts_title", name=run.name, kept=run.facts_kept,
                              n=len(run.facts)), "bold")]
    for check in run.facts[:FACTS_SHOWN]:
        fact = check.fact
        text = t("whatif.fact", needed=fact.needed_at, tool=fact.tool, id=fact.result_id,
                 produced=fact.produced_at, kind=t(f"whatif.kind.{fact.kind}"),
                 detail=fact.detail)
        lines.append(Content.assemble(("✔ ", "bold $success"), text) if check.visible else
                     Content.assemble(("✖ ", "bold $error"), (text, "$error")))
    if len(run.facts) > FACTS_SHOWN:
        lines.append(Content.styled(t("whatif.facts_more", n=len(run.facts) - FACTS_SHOWN),
                                    "dim"))
    return lines


def lesson_lines(whatif: WhatIf) -> list[Content]:
    """Each strategy's lesson (or why it failed), its name in its plot colour."""
    lines = [Content.styled(t("whatif.lessons"), "bold")]
    for n, run in enumerate(whatif.strategies):
        name = (run.name + ": ", f"bold {colour_of(run.name, n)}")
        if run.error:
            lines.append(Content.assemble(name, (t("whatif.error", error=run.error),
                                                 "$error")))
        else:
            lines.append(Content.assemble(name, run.lesson or run.description))
    return lines


def header_line(whatif: WhatIf) -> str:
    price = (t("whatif.price", model=whatif.price_model) if whatif.price_model
             else t("whatif.no_price"))
    return t("whatif.measured", requests=whatif.requests, ratio=whatif.chars_per_token,
             source=whatif.ratio_source, overhead=whatif.overhead_tokens, price=price)


def note_text(whatif: WhatIf) -> str:
    """The trajectory note in the active language (the result's own, if it says more)."""
    return t("whatif.note") if whatif.note == TRAJECTORY_NOTE else whatif.note


class WhatIfScreen(Screen[None]):
    """Progress, then the table, the plot and the lessons; Enter lists a row's facts."""

    DEFAULT_CSS = """
    #whatif-title { height: 1; background: $panel; padding: 0 1; }
    #whatif-progress { height: auto; margin: 1 1 0 1; }
    #whatif-bar { width: auto; margin: 0 2 0 0; }
    #whatif-status { width: 1fr; height: auto; }
    #whatif-body { height: 1fr; padding: 0 1; }
    #whatif-note, #whatif-legend { height: auto; margin: 1 0 0 0; }
    #whatif-table { height: auto; margin: 1 0 0 0; border: round $panel-lighten-2; }
    #whatif-facts, #whatif-lessons { height: auto; margin: 0 0 1 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "key.back"),
        Binding("enter", "facts", "key.facts"),
        Binding("r", "rerun", "key.rerun"),
    ]

    class Advanced(Message):
        """A strategy reached a request (posted by the runner's progress callback)."""

        def __init__(self, strategy: str, request: int, requests: int) -> None:
            super().__init__()
            self.strategy, self.request, self.requests = strategy, request, requests

    class Done(Message):
        def __init__(self, whatif: WhatIf) -> None:
            super().__init__()
            self.whatif = whatif

    class Failed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, recording: Recording, strategies: Sequence[str] | None = None,
                 runner: Runner | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.recording = recording
        # each name once, in the order first given: a repeat would run a strategy twice
        # and make the progress bar's total (one step per strategy) too large
        names = tuple(strategies) if strategies is not None else default_strategies()
        self.names = tuple(dict.fromkeys(names))
        self.runner = runner or run_strategies
        self.whatif: WhatIf | None = None
        self.failed = False  # the last run stopped on an error: ``r`` may start another
        self.facts_of: str | None = None  # the strategy whose facts are listed
        self._told = ("", -1)  # the last progress posted: (strategy, percent)
        self._shares: dict[str, float] = {}  # each strategy's share of its requests done

    @property
    def done(self) -> bool:
        return self.whatif is not None

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(
            (f" {t('whatif.title')} ", "bold reverse"), "  ", (self.recording.path.name, "bold"),
            ("  " + t("whatif.subtitle"), "dim")), id="whatif-title")
        with Horizontal(id="whatif-progress"):
            yield ProgressBar(total=len(self.names), show_eta=False, id="whatif-bar")
            yield Static(id="whatif-status")
        with VerticalScroll(id="whatif-body"):
            yield Static(id="whatif-note")
            table: DataTable[str | Content] = DataTable(id="whatif-table", cursor_type="row",
                                                        zebra_stripes=True)
            yield table
            yield Static(id="whatif-facts")
            yield Static(id="whatif-legend")
            yield Static(id="whatif-lessons")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        header = t("whatif.col.strategy")  # wide enough for every name and a failure's ✖
        table.add_column(header, key="strategy",
                         width=max(len(header), *(len(name) + 2 for name in self.names)))
        for column in RUN_COLUMNS:
            table.add_column(t(f"whatif.col.{column.key}"), key=column.key)
        self.start()

    def start(self) -> None:
        self.whatif = None
        self.failed = False
        self.facts_of = None
        self.query_one(DataTable).clear()
        for static in ("#whatif-note", "#whatif-facts", "#whatif-legend", "#whatif-lessons"):
            self.query_one(static, Static).update("")
        for plot in self.query(WhatIfPlot):
            plot.remove()
        self.query_one(ProgressBar).update(progress=0)
        self._shares = {}
        self.query_one("#whatif-status", Static).update(t(
            "whatif.starting", n=len(self.names)))
        self.run_whatif()

    @work(thread=True, exclusive=True, group="whatif", exit_on_error=False)
    async def run_whatif(self) -> None:
        """In a thread of its own (a long session keeps the strategies busy for seconds,
        and the screen must keep drawing the progress); the result comes back as a
        message. Leaving the screen cancels the worker: the next progress report stops
        the strategies (a cancellation, which no strategy takes for its own failure)."""
        worker = get_current_worker()

        def progress(strategy: str, request: int, requests: int) -> None:
            if worker.is_cancelled:
                raise asyncio.CancelledError
            self.progress(strategy, request, requests)

        try:
            whatif = await self.runner(self.recording, self.names, progress)
        except asyncio.CancelledError:
            return
        except Exception as exc:  # a bad strategy must not leave the screen spinning
            self.post_message(self.Failed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Done(whatif))

    def progress(self, strategy: str, request: int, requests: int) -> None:
        """Told for every request of every strategy: posted only when the strategy or the
        whole percent changes, so a long session does not flood the queue."""
        percent = request * 100 // max(requests, 1)
        if (strategy, percent) != self._told:
            self._told = (strategy, percent)
            self.post_message(self.Advanced(strategy, request, requests))

    def on_what_if_screen_done(self, message: Done) -> None:
        self.show(message.whatif)

    def on_what_if_screen_failed(self, message: Failed) -> None:
        self.failed = True
        self.query_one("#whatif-status", Static).update(Content.styled(
            t("whatif.failed", error=message.error), "bold $error"))

    def on_what_if_screen_advanced(self, message: Advanced) -> None:
        if self.done:
            return
        names = self.names
        n = names.index(message.strategy) if message.strategy in names else 0
        # strategies run side by side: the bar is the sum of each one's own share
        self._shares[message.strategy] = message.request / max(message.requests, 1)
        self.query_one(ProgressBar).update(progress=sum(self._shares.values()))
        self.query_one("#whatif-status", Static).update(t(
            "whatif.running", name=message.strategy, n=n + 1, total=len(names),
            request=message.request, requests=message.requests))

    def show(self, whatif: WhatIf) -> None:
        """The whole result: table, note, plot, legend and lessons."""
        self.whatif = whatif
        self.query_one(ProgressBar).update(total=len(whatif.strategies),
                                           progress=len(whatif.strategies))
        self.query_one("#whatif-status", Static).update(t(
            "whatif.done", n=len(whatif.strategies)))
        table = self.query_one(DataTable)
        for run in whatif.strategies:
            name = (Content.styled(f"{run.name} ✖", "bold $error") if run.error else
                    Content.styled(run.name, "bold"))
            table.add_row(name, *(cell(column, run) for column in RUN_COLUMNS), key=run.name)
        self.query_one("#whatif-note", Static).update(Content.assemble(
            (note_text(whatif), "italic"), "\n", (header_line(whatif), "dim")))
        self.query_one("#whatif-legend", Static).update(Content.assemble(
            (t("whatif.plot_title"), "bold"), "  ", legend(whatif)))
        self.query_one("#whatif-body").mount(WhatIfPlot(whatif, id="whatif-plot"),
                                             before="#whatif-lessons")
        self.query_one("#whatif-lessons", Static).update(Content("\n").join(
            lesson_lines(whatif)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.show_facts(event.row_key.value)

    def action_facts(self) -> None:
        table = self.query_one(DataTable)
        if self.done and table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                self.show_facts(key)

    def show_facts(self, name: str) -> None:
        """List ``name``'s facts under the table (the same row again hides them)."""
        run = self.whatif.strategy(name) if self.whatif is not None else None
        facts = self.query_one("#whatif-facts", Static)
        if run is None or self.facts_of == name:
            self.facts_of = None
            facts.update("")
            return
        self.facts_of = name
        facts.update(Content("\n").join(fact_lines(run)))

    def action_rerun(self) -> None:
        """Run the strategies again once the last run ended, done or failed (while one is
        running, the key waits: the worker is exclusive and would be restarted)."""
        if self.done or self.failed:
            self.start()
