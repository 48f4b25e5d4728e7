"""The "Stages" panel: every compaction stage that changed something, in firing order.

One row per ``stage`` event, named as in the course (``snip_compact``, ``micro_compact``…),
with chars and messages before → after and how many files it wrote — the one timeline of
all stages that peers lack. Selecting a row asks the app to open the inspector on it.

With a break switch on, a stage can do harm, and the harm belongs on its row: ledger
entries whose output went nowhere (``"where": "lost"``) and API violations the validator
traced back to the stage are counted there in the error colour, and in the panel's footer.
Stage names are the course's identifiers in every language; only the hint is prose.

A long replay lists hundreds of stages, and a learner usually wants one kind (the summaries,
one stage): ``f`` shows only one stage name, cycling through the names in the order they
first fired and back to all (see :mod:`tui.stage_filter`); the border names the filter.
Rows keep their numbers and their records whatever is shown.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from core.events import Manager, PairViolation, Stage
from tui.i18n import localize_bindings, t
from tui.managers import by_label
from tui.nav_search import Query, stage_row_matches
from tui.routing import Routed, RunInfo, handles
from tui.stage_diff import StageRecord
from tui.stage_filter import filter_note, next_filter
from tui.why import stage_hint
from tui.widgets.fixed_table import FixedWidthTable

# (key, label id, width): every column but the hint has a fixed width.
COLUMNS = (("n", "#", 2), ("stage", "stages.col.stage", 18), ("chars", "stages.col.chars", 15),
           ("msgs", "stages.col.msgs", 7), ("files", "stages.col.files", 5),
           ("hint", "stages.col.hint", 12))


def whose(event: Stage) -> Content:
    """Another manager's stage (truncation, the API's, a replay's original, a watched
    client): by whom, set off how and at how many tokens; Enter opens its summary when it
    wrote one."""
    at = f" ({event.trigger})" if event.trigger else ""
    at += f" at {event.pre_tokens:,} tok" if event.pre_tokens else ""
    return Content.assemble((by_label(event.by), "bold $warning"), at,
                            " · Enter: summary" if event.files else "")


def lost_count(record: StageRecord) -> int:
    return sum(1 for entry in record.event.ledger if entry.get("where") == "lost")


class StageTimeline(Routed, FixedWidthTable[str | Content]):
    """A row per stage; Enter (or a click) inspects it; ``f`` filters by stage name."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f", "cycle_filter", "key.stage_filter")]

    class Inspect(Message):
        def __init__(self, record: StageRecord) -> None:
            super().__init__()
            self.record = record

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        localize_bindings(self)
        self.border_title = t("panel.stages")
        self.only: str | None = None  # the one stage name shown; None: every stage
        self.search = Query()  # the search box's query: rows that do not match are hidden
        self.records: dict[str, StageRecord] = {}
        # kept as the stages come, so the footer is not a walk of every record per routing
        # (a long replay lists thousands): chars saved, lost outputs, names in firing order
        self._saved = 0
        self._lost = 0
        self._names: dict[str, None] = {}
        self.violations: dict[str, int] = {}  # row key → violations traced to that stage
        self.untraced = 0  # violations no stage is known to have caused
        self._unlisted: list[str] = []  # rows of this batch's stages, added at its end

    def on_mount(self) -> None:
        for key, label, width in COLUMNS:
            self.add_column(t(label) if label != "#" else "#", key=key, width=width)
        self.fit_hint()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_hint()

    def fit_hint(self) -> None:
        """The hint column takes the width the others leave (a cut hint says nothing)."""
        room = self.scrollable_content_region.width
        if not room:
            return
        widths = [c.width for key, c in self.columns.items() if key.value != "hint"]
        fixed = sum(widths or [w for _, _, w in COLUMNS[:-1]]) + \
            2 * self.cell_padding * len(COLUMNS)
        column = self.columns.get(ColumnKey("hint"))
        width = max(COLUMNS[-1][2], room - fixed - 1)
        if column is not None and column.width != width:
            column.width = width
            self._require_update_dimensions = True
            self.refresh()

    def widen_number(self, digits: int) -> None:
        """The ``#`` column grows with the row numbers (at two digits, rows 100–109 all read
        "10"); the hint column gives up the room."""
        column = self.columns.get(ColumnKey("n"))
        if column is not None and column.width < digits:
            column.width = digits
            self._require_update_dimensions = True
            self.fit_hint()

    def reset(self, run: RunInfo | None = None) -> None:
        self.clear()
        self._unlisted.clear()
        self.records.clear()
        self._saved = self._lost = 0
        self._names.clear()
        self.violations.clear()
        self.untraced = 0
        self.only = None
        self.border_subtitle = ""

    @property
    def stages(self) -> list[StageRecord]:
        """Every stage shown, in firing order."""
        return list(self.records.values())

    @handles(Stage)
    def add_stage(self, event: Stage) -> StageRecord:
        record = StageRecord(len(self.records) + 1, event)
        key = str(record.index)
        self.records[key] = record
        self._saved += event.before_chars - event.after_chars
        self._lost += lost_count(record)
        self._names.setdefault(event.stage, None)
        self.widen_number(len(key))
        if self.shows(record):
            self._unlisted.append(key)
        self.redraw_once(self.follow_newest)
        return record

    def list_new_rows(self) -> None:
        """The batch's rows, added together at its end: every row added invalidates all of
        the table's rendered lines, and a long batch lets frames be drawn meanwhile (each
        would draw the table again)."""
        keys, self._unlisted = self._unlisted, []
        self.add_keyed_rows([(key, self.cells(key)) for key in keys
                             if key in self.records and key not in self.rows])

    def cells(self, key: str) -> tuple[str | Content, ...]:
        """The row of the stage numbered ``key``."""
        e = self.records[key].event
        return (key, e.stage, f"{e.before_chars:>7,}→{e.after_chars:<7,}",
                f"{e.before_messages}→{e.after_messages}", str(len(e.files)),
                self.hint_cell(key))

    # -- the filter ---------------------------------------------------------------------------

    def stage_names(self) -> list[str]:
        """Every stage name shown so far, in the order each first fired."""
        return list(self._names)

    def action_cycle_filter(self) -> None:
        self.set_filter(next_filter(self.only, self.stage_names()))

    def set_filter(self, only: str | None) -> None:
        """Show only the stages named ``only`` (None: all); the cursor stays on its stage
        when that stage is still shown."""
        self.only = only
        self.refill()

    def set_search(self, query: Query) -> int:
        """Show only the rows matching the search too; how many rows are shown."""
        self.search = query
        self.refill()
        return self.row_count

    def shows(self, record: StageRecord) -> bool:
        """The record passes the filter and the search."""
        e = record.event
        if self.only is not None and e.stage != self.only:
            return False
        return self.search.empty or stage_row_matches(
            self.search, e.stage, str(self.hint_cell(str(record.index))))

    def shown_records(self) -> list[StageRecord]:
        """The records of the rows shown, in order (what ``]``/``[`` and the inspector's
        ``n``/``p`` step through)."""
        return [self.records[str(row.key.value)] for row in self.ordered_rows]

    def refill(self) -> None:
        """The rows again from the records kept (the rows are cells, not widgets: cheap)."""
        current = self.current_record()
        self.clear()
        self._unlisted.clear()
        self.add_keyed_rows([(key, self.cells(key)) for key, record in self.records.items()
                             if self.shows(record)])
        if current is not None and str(current.index) in self.rows:
            self.move_cursor(row=self.get_row_index(str(current.index)))
        elif self.row_count:
            self.move_cursor(row=self.row_count - 1)
        self.update_subtitle()

    def current_record(self) -> StageRecord | None:
        """The stage under the cursor (None: no row shown)."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self.records.get(str(key))

    def follow_newest(self) -> None:
        """The cursor on the newest row and the totals in the footer: once per burst of
        stages (the totals walk every row); the burst's rows first."""
        self.list_new_rows()
        self.move_cursor(row=self.row_count - 1)
        self.update_subtitle()

    @handles(PairViolation)
    def add_violation(self, event: PairViolation) -> None:
        """Count a violation on the latest row of the stage that caused it."""
        key = next((k for k, r in reversed(self.records.items())
                    if event.stage and r.event.stage == event.stage), None)
        if key is None:
            self.untraced += 1
        else:
            self.violations[key] = self.violations.get(key, 0) + 1
            if key in self.rows:  # a filter may hide its row
                self.update_cell(key, "hint", self.hint_cell(key))
        self.redraw_once(self.update_subtitle)

    def hint_cell(self, key: str) -> str | Content:
        """The stage's hint, led by its harm (LOST n, ⚠ n violations) when it did any."""
        record = self.records[key]
        harm: list[tuple[str, str] | str] = []
        if lost := lost_count(record):
            harm += [(f"{t('lost')} {lost}", "bold $error"), " "]
        if bad := self.violations.get(key, 0):
            harm += [(f"⚠ {t('stages.violations', n=bad)}", "bold $error"), " "]
        hint = stage_hint(record.event) if record.event.by == Manager.PIPELINE else \
            whose(record.event)
        return Content.assemble(*harm, hint) if harm else hint

    def update_subtitle(self) -> None:
        parts = [t("stages.subtitle", n=len(self.records), saved=self._saved)]
        lost = self._lost
        bad = sum(self.violations.values()) + self.untraced
        if lost:
            parts.append(f"{t('lost')} {lost}")
        if bad:
            parts.append("⚠ " + t("stages.violations", n=bad))
        note = filter_note(self.only, self.row_count, len(self.records), self.stage_names())
        if not self.search.empty and self.only is None:
            note = t("search.rows", n=self.row_count, total=len(self.records))
        if note:
            parts.append(note)
        self.border_subtitle = " · ".join(parts)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        record = self.records.get(str(event.row_key.value))
        if record is not None:
            self.post_message(self.Inspect(record))
