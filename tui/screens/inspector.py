"""The stage inspector: the history before and after one stage, side by side, and its ledger.

Changed messages are highlighted on both sides (a result swapped for a pointer), removed
ones on the left (archived by snip, folded into a summary), added ones on the right (the
marker, the summary). Long runs of unchanged messages are folded, and each side opens
scrolled to its first change, so the change is on screen at any size. A row shows a
message's first lines; Enter on it reads the whole message in the viewer. Under the lists,
the stage's ledger says where every removed result went; Enter on a row opens that file.
Each side states where it came from — the lists the stage itself recorded (see
:mod:`tui.stage_diff`), or that this source recorded none. A ledger entry whose output was
saved nowhere (a break switch) reads LOST, in the error colour.

Above the lists, the "why" pane says the stage's rule in one sentence, why it fired (the
numbers that crossed), the thresholds in force and what it did. ``n`` / ``p`` step to the
next / previous stage without leaving, and ``m`` / ``g`` export the stage as Markdown or
SVG for slides. The ledger has the focus on opening: Enter opens a file at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.css.query import QueryType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Static

from core.config import Thresholds
from core.events import Manager
from tui.i18n import localize_bindings, t
from tui.managers import by_label
from tui.messages import OpenFile, OpenText
from tui.screens.stage_export import export_name, stage_markdown, write_export
from tui.stage_diff import Row, Side, StageRecord, diff_rows, fold, side_rows, sides
from tui.why import stage_hint, stage_rule, thresholds_in_force, what_it_did, why_fired
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.readable import readable_message
from tui.widgets.render import message_content, size_label


def cache_cost_parts(e: Any) -> tuple[Any, ...]:
    """`` · cache: from message #k, ~N tokens to write again`` when the stage knows it."""
    if e.rewrite_tokens is None:
        return ()
    if e.first_changed is None:
        text = t("inspector.cache_written", n=e.rewrite_tokens)
    else:
        text = t("inspector.cache_cost", index=e.first_changed, n=e.rewrite_tokens)
    return (" · ", (text, "$warning"))


def whose_parts(e: Any) -> tuple[Any, ...]:
    """`` by Claude Code`` when the stage is not the pipeline's: whose words the rest are."""
    return () if e.by == Manager.PIPELINE else (" ", (by_label(e.by), "$warning"))


class DiffRow(Static, can_focus=True):
    """One message of a side. The inspector shows only its first lines, so Enter (or a click)
    reads it whole in the viewer: a summary is often the very thing a learner came to read."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open", "key.open")]

    def __init__(self, row: Row, title: str) -> None:
        super().__init__(message_content(row.index, row.message, chars=row.chars),
                         classes=f"diff-row -{row.kind}")
        localize_bindings(self)
        self.row = row
        self.title_text = f"{title} · #{row.index} {row.message.get('role', '?')}"

    def action_open(self) -> None:
        self.post_message(OpenText(self.title_text, readable_message(self.row.message)))

    def on_click(self) -> None:
        self.action_open()


class Inspector(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "key.back"),
        Binding("n,right_square_bracket", "move(1)", "key.next_stage", key_display="n"),
        Binding("p,left_square_bracket", "move(-1)", "key.prev_stage", key_display="p"),
        Binding("m", "export_markdown", "key.export_md"),
        Binding("g", "export_svg", "key.export_svg"),
    ]

    def __init__(self, record: StageRecord, workspace: Path,
                 records: list[StageRecord] | None = None,
                 limits: Thresholds | None = None, export_dir: Path | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.record = record
        self.workspace = workspace
        self.records = records or [record]
        self.limits = limits or Thresholds()
        self.export_dir = export_dir
        self.before: Side | None = None
        self.after: Side | None = None
        self.rows: tuple[list[Row], list[Row]] = ([], [])

    def compose(self) -> ComposeResult:
        e = self.record.event
        yield Static(Content.assemble(
            (f" {t('inspector.stage', n=self.record.index)} ", "bold reverse"), " ",
            (e.stage, "bold $warning"), *whose_parts(e), "  ",
            t("inspector.summary", before=e.before_chars, after=e.after_chars,
              before_msgs=e.before_messages, after_msgs=e.after_messages,
              n=e.after_messages), " · ",
            (stage_hint(e), "italic"), *cache_cost_parts(e), "  ",
            (t("inspector.position", n=self.position() + 1, total=len(self.records)), "dim")),
            id="inspector-title")
        with VerticalScroll(id="inspector-why") as why:
            why.can_focus = False  # Tab goes from the ledger straight to the messages
            yield Static(self.why_text())
        with Horizontal(id="inspector-sides"):
            with Vertical(classes="inspector-side") as box:
                box.border_subtitle = t("inspector.read_hint")
                yield Static(id="before-source", classes="side-source")
                yield self.side_list("before-list")
            with Vertical(classes="inspector-side") as box:
                box.border_subtitle = t("inspector.read_hint")
                yield Static(id="after-source", classes="side-source")
                yield self.side_list("after-list")
        ledger: DataTable[str | Content] = DataTable(id="inspector-ledger", cursor_type="row")
        ledger.border_title = t("inspector.ledger_title")
        yield ledger
        yield KeysFooter()

    @staticmethod
    def side_list(id: str) -> VerticalScroll:
        """A side's list: its rows are the Tab stops (a focused row scrolls into view)."""
        lst = VerticalScroll(id=id, classes="side-list")
        lst.can_focus = False
        return lst

    async def on_mount(self) -> None:
        before, after = sides(self.record)
        self.query_one("#before-source", Static).update(
            self.source_line(t("inspector.before"), before))
        self.query_one("#after-source", Static).update(
            self.source_line(t("inspector.after"), after))
        if before.messages is not None and after.messages is not None:
            left, right = diff_rows(before, after)
        else:
            left, right = side_rows(before), side_rows(after)
        self.before, self.after, self.rows = before, after, (left, right)
        await self.query_one("#before-list").mount_all(self.widgets(left, t("inspector.before")))
        await self.query_one("#after-list").mount_all(self.widgets(right, t("inspector.after")))
        self.fill_ledger()
        self.query_one("#inspector-ledger").focus()
        self.call_after_refresh(self.show_first_change)

    def focus_next(self, selector: str | type[QueryType] = "*") -> Widget | None:
        """Tab into a side lands on its first change, not on its first row: that row is
        often an unchanged message, and focusing it scrolled the list back to the top, the
        change the inspector opened on out of view again."""
        came_from = self.focused
        target = super().focus_next(selector)
        if not isinstance(target, DiffRow) or target.row.kind != "kept" or (
                came_from is not None and target.parent in came_from.ancestors_with_self):
            return target
        rows = list(target.parent.query(DiffRow)) if target.parent is not None else []
        change = next((row for row in rows if row.row.kind != "kept"), None)
        if change is None or target is not rows[0]:
            return target
        change.focus()  # before the first row's scroll runs: it scrolls only a focused row
        return change

    def show_first_change(self) -> None:
        """Scroll each side to its first changed message: at 80 or 100 columns the rows
        above it fill the list, and a change below the edge reads as "nothing happened"."""
        for side in ("#before-list", "#after-list"):
            lst = self.query_one(side, VerticalScroll)
            first = next((r for r in lst.query(DiffRow) if r.row.kind != "kept"), None)
            if first is not None:
                lst.scroll_to_widget(first, animate=False, top=True)

    # -- why, neighbours, export --------------------------------------------------------------

    def why_text(self) -> Content:
        e = self.record.event
        rows = [("inspector.why_rule", stage_rule(e)),
                ("inspector.why_fired", why_fired(e, self.limits)),
                ("inspector.why_thresholds", thresholds_in_force(e, self.limits)),
                ("inspector.why_did", what_it_did(e))]
        return Content("\n").join(Content.assemble((t(label), "bold $accent"), " ", text)
                                   for label, text in rows if text)

    def position(self) -> int:
        return next((i for i, r in enumerate(self.records) if r is self.record), 0)

    def action_move(self, step: int) -> None:
        at = self.position() + step
        if not 0 <= at < len(self.records):
            self.notify(t("inspector.no_more"))
            return
        self.app.switch_screen(Inspector(self.records[at], self.workspace, self.records,
                                         self.limits, self.export_dir))

    def target_dir(self) -> Path:
        return self.export_dir or Path.cwd()

    def action_export_markdown(self) -> None:
        if self.before is None or self.after is None:
            return
        text = stage_markdown(self.record, self.before, self.after, *self.rows, self.limits)
        try:
            path = write_export(self.target_dir(), export_name(self.record, "md"), text)
        except OSError as exc:
            self.notify(t("inspector.export_failed", error=exc), severity="error")
            return
        self.notify(str(path), title=t("inspector.exported"), timeout=10)

    def action_export_svg(self) -> None:
        name = export_name(self.record, "svg")
        try:
            self.target_dir().mkdir(parents=True, exist_ok=True)
            path = self.app.save_screenshot(filename=name, path=str(self.target_dir()))
        except OSError as exc:
            self.notify(t("inspector.export_failed", error=exc), severity="error")
            return
        self.notify(str(path), title=t("inspector.exported"), timeout=10)

    @staticmethod
    def source_line(label: str, side: Side) -> Content:
        count = t("inspector.count", n=len(side.messages)) if side.messages is not None \
            else "—"
        return Content.assemble((label, "bold"), f"  {count}  ",
                                (t("inspector.source", source=side.source), "dim italic"))

    def widgets(self, rows: list[Row], side: str) -> list[Static]:
        title = f"{t('inspector.stage', n=self.record.index)} · {side}"
        out: list[Static] = []
        for item in fold(rows):
            if isinstance(item, int):
                out.append(Static(Content.styled(f"   … {t('inspector.fold', n=item)} …",
                                                 "dim"),
                                  classes="diff-fold"))
            else:
                out.append(DiffRow(item, title))
        return out

    def fill_ledger(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("tool_use_id", t("ledger.chars"), t("ledger.where"),
                          t("ledger.status"))
        e = self.record.event
        for n, entry in enumerate(e.ledger):
            where = str(entry.get("where", ""))
            shown: str | Content = Content.styled(t("lost"), "bold $error") \
                if where == "lost" else where
            table.add_row(str(entry.get("tool_use_id", "")), size_label(int(entry.get(
                "chars", 0))), shown, str(entry.get("status", "ok")), key=f"{n}:{where}")
        for rel in e.files:
            if not any(entry.get("where") == rel for entry in e.ledger):
                table.add_row(t("ledger.file_written"), "", rel, "", key=f"f:{rel}")
        if not table.row_count:
            table.add_row(t("ledger.none"), "", "", "")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value or "")
        where = key.split(":", 1)[1] if ":" in key else ""
        if where and where != "lost":
            self.app.post_message(OpenFile(where))
