"""The "Diff" tab: what the shown request changed against the one before it.

Per-stage before/after says what one compaction did; between two calls more happens — the
reply and the new turn appended, results cleared, context re-injected — and this view
shows it for any source (:mod:`core.views.turn_diff`, the comparison the watch's counts
come from): the ``+3 −0 ~1`` line, then each entry with its role, kind, size and a
preview, coloured by what happened to it. A replay's two sides are switched with ``x``.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from core.events import Event
from core.views.sides import Sides
from core.views.turn_diff import DiffBlock, TurnDiff, diff
from tui.i18n import localize_bindings, t
from tui.routing import Routed, RunInfo, handles
from tui.widgets.items_panel import FOLDED, side_label

STYLES = {"+": "$success", "-": "$error", "~": "$warning", "^": "$success"}
SIGNS = {"+": "+", "-": "−", "~": "~", "^": "↳"}  # ↳: inserted among the entries kept
PREVIEW = 100


def counts_content(found: TurnDiff) -> Content:
    """``+3 −0 ~1``, each count in its colour (and the entries inserted, when any)."""
    inserted = ("  " + t("diff.inserted", n=found.inserted), STYLES["^"]) \
        if found.inserted else ""
    return Content.assemble((f"+{found.appended}", f"bold {STYLES['+']}"), " ",
                            (f"−{found.removed}", f"bold {STYLES['-']}"), " ",
                            (f"~{found.changed}", f"bold {STYLES['~']}"), inserted)


def block_content(block: DiffBlock) -> Content:
    """One entry: sign, index, role, kind, size (a changed one's before → after), preview."""
    size = f"{block.chars:,}" if block.before_chars is None else \
        f"{block.before_chars:,} → {block.chars:,}"
    preview = " ".join(block.preview.split())[:PREVIEW]
    return Content.assemble((f"{SIGNS[block.sign]} #{block.index:<3} ", STYLES[block.sign]),
                            (f"{block.role} · {block.kind} · ", "bold"),
                            t("diff.chars", size=size), "  ", (preview, "dim"))


def diff_content(found: TurnDiff) -> Content:
    lines = [counts_content(found)]
    lines += [block_content(b) for b in found.blocks] or [Content.styled(t("diff.same"),
                                                                         "dim")]
    return Content("\n").join(lines)


class TurnDiffPanel(Routed, VerticalScroll):
    """The header line, then the diff of the shown request of the side chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "switch_side", "key.switch_side")]
    DEFAULT_CSS = """
    TurnDiffPanel { padding: 0 1; }
    TurnDiffPanel #diff-head { color: $text-muted; }
    """
    can_focus = True

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.sides = Sides(ages=False)
        self.side = ""
        self.shown: TurnDiff | None = None
        self._stale = False

    def compose(self) -> ComposeResult:
        yield Static(t("diff.empty"), id="diff-head", markup=False)
        yield Static("", id="diff-body")

    def reset(self, run: RunInfo | None = None) -> None:
        self.sides, self.side, self.shown = Sides(ages=False), "", None
        self._stale = True
        self.redraw_once(self.redraw)

    @handles(*FOLDED)
    def follow(self, event: Event) -> None:
        known = len(self.sides.names())
        name = self.sides.see(event)
        if name is None:
            return
        if len(self.sides.names()) != known:  # a second side: ``x`` now switches
            self.refresh_bindings()
        self.side = self.side or name
        self._stale = True
        self.redraw_once(self.redraw)

    def on_show(self, event: events.Show) -> None:
        self.redraw()

    def redraw(self) -> None:
        if not self._stale or not self.is_mounted or not all(
                node.display for node in self.ancestors_with_self if hasattr(node, "display")):
            return
        self._stale = False
        side = self.sides.get(self.side)
        head, body = self.query_one("#diff-head", Static), self.query_one("#diff-body", Static)
        if side is None or side.cur is None:
            self.shown = None
            head.update(t("diff.empty"))
            body.update("")
            return
        prev, cur = side.prev, side.cur
        others = [n for n in self.sides.names() if n != self.side]
        switch = t("items.switch", side=side_label(others[0])) if others else ""
        head.update(t("diff.head", side=side_label(self.side), n=side.number,
                      before=prev.messages if prev else 0, after=cur.messages,
                      before_chars=prev.chars if prev else 0, after_chars=cur.chars,
                      others=switch))
        self.shown = diff(list(prev.sent or ()) if prev else [], list(cur.sent or ()))
        body.update(diff_content(self.shown))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_side":  # only a replay has two sides
            return len(self.sides.names()) > 1
        return True

    def action_switch_side(self) -> None:
        names = self.sides.names()
        if len(names) < 2:
            return
        self.side = names[(names.index(self.side) + 1) % len(names)]
        self._stale = True
        self.redraw()
