"""The "Diff" tab: what the shown request changed against the one before it.

Per-stage before/after says what one compaction did; between two calls more happens — the
reply and the new turn appended, results cleared, context re-injected — and this view
shows it for any source (:mod:`core.views.turn_diff`, the comparison the watch's counts
come from): the ``+3 −0 ~1`` line, then each entry with its role, kind, size and a
preview, coloured by what happened to it. A replay's two sides are switched with ``x``.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from core.views.turn_diff import DiffBlock, TurnDiff, diff
from tui.i18n import localize_bindings, t
from tui.routing import RunInfo
from tui.widgets.side_panel import SWITCH_SIDE, SidePanel, side_label

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


class TurnDiffPanel(SidePanel, VerticalScroll):
    """The header line, then the diff of the shown request of the side chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [*SWITCH_SIDE]
    DEFAULT_CSS = """
    TurnDiffPanel { padding: 0 1; }
    TurnDiffPanel #diff-head { color: $text-muted; }
    """
    can_focus = True
    track_ages = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.follow_sides()
        self.shown: TurnDiff | None = None

    def compose(self) -> ComposeResult:
        yield Static(t("diff.empty"), id="diff-head", markup=False)
        yield Static("", id="diff-body")

    def reset(self, run: RunInfo | None = None) -> None:
        self.shown = None
        super().reset(run)

    def draw(self) -> None:
        side = self.shown_side()
        head, body = self.query_one("#diff-head", Static), self.query_one("#diff-body", Static)
        if side is None or side.cur is None:
            self.shown = None
            head.update(t("diff.empty"))
            body.update("")
            return
        prev, cur = side.prev, side.cur
        head.update(t("diff.head", side=side_label(self.side), n=side.number,
                      before=prev.messages if prev else 0, after=cur.messages,
                      before_chars=prev.chars if prev else 0, after_chars=cur.chars,
                      others=self.others()))
        self.shown = diff(list(prev.sent or ()) if prev else [], list(cur.sent or ()))
        body.update(diff_content(self.shown))
