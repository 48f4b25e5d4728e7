"""The mark a stage leaves in the History (its own module: the History and its search both
know it, and neither needs the other for it)."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content

from core.events import Stage
from tui.i18n import t
from tui.widgets.history_item import HistoryItem

Part = tuple[str, str]  # a piece of the mark's text, and its style


def stage_parts(event: Stage, why: str) -> list[Part]:
    """A stage mark's text in pieces: the stage, chars and messages before → after, files
    written, and (when given) why it fired, on a line of its own."""
    saved = event.before_chars - event.after_chars
    parts = [
        ("▌ ", "$warning"), (event.stage, "bold $warning"),
        ("  " + t("conv.stage_chars", before=event.before_chars, after=event.after_chars)
         + " ", ""),
        (f"(−{saved:,})" if saved >= 0 else f"(+{-saved:,})", "dim"),
        ("  " + t("conv.stage_msgs", before=event.before_messages,
                  after=event.after_messages, n=event.after_messages), ""),
    ]
    if event.files:
        parts.append((t("conv.files_written", n=len(event.files)), "dim"))
    if why:
        parts += [("\n", ""), ("  " + t("conv.why", why=why), "dim italic")]
    return parts


class StageMark(HistoryItem):
    """The line a stage leaves in the history (and why it fired, under it); Enter on it
    opens the inspector. Its text is worked out when first measured, and drawn only when
    first shown (a fast replay measures hundreds at a time and draws a screenful)."""

    def __init__(self, event: Stage, why: Callable[[], str] = lambda: "") -> None:
        super().__init__()
        self.event = event
        self.why = why
        self._parts: list[Part] | None = None

    def parts(self) -> list[Part]:
        if self._parts is None:
            self._parts = stage_parts(self.event, self.why())
        return self._parts

    def plain(self) -> str:
        return "".join(text for text, _style in self.parts())

    def make(self) -> Content:
        return Content.assemble(*self.parts())
