"""A read-only viewer for files and long texts: archive files, tool results, whole messages.

Large values are the reason the workbench exists, so the viewer must not choke on them: it
holds at most :data:`MAX_CHARS` characters at a time, and a longer text is read in parts
(``n`` / ``p``, see :mod:`tui.text_pages`), the note saying which chars are shown of how
many. Transcripts (JSONL,
one message per line) are shown message by message with their texts unescaped (see
:mod:`tui.widgets.readable`), so a learner can read the list a stage archived as a list —
a summary reads as the paragraphs it is, not as one line of ``\n`` and ``\"``. Long lines
wrap: a viewer is for reading, and nothing may run off the right edge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from tui.i18n import localize_bindings, t
from tui.text_pages import PART_CHARS, Parts, file_parts, text_parts
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.readable import readable_message

MAX_CHARS = PART_CHARS  # the most the TextArea holds at once
# JSON is highlighted with the YAML grammar (JSON is YAML): the tree-sitter-json 0.24 binding
# crashes the interpreter under tree-sitter 0.26, and a viewer must never take the app down.
GRAMMAR = {"json": "yaml"}


def pretty_jsonl(text: str) -> str:
    """Each line's message readable, under a ``// message N`` heading; bad lines as they are."""
    out: list[str] = []
    for n, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            body = readable_message(json.loads(line))
        except ValueError:
            body = line
        out.append(f"// message {n}\n{body}")
    return "\n".join(out)


def read_for_viewer(path: Path) -> tuple[str, str | None, str, Parts | None]:
    """``(text, language, note, parts)`` for a file: the whole text, or its first part and
    the parts when it is longer than :data:`MAX_CHARS` (then plain: a grammar over a part
    cut mid-token would mislead)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read(MAX_CHARS + 1)
    note = t("viewer.bytes", n=path.stat().st_size)
    if len(text) > MAX_CHARS:
        parts = file_parts(path)
        return parts.read(0), None, note, parts
    if path.suffix == ".jsonl":
        return pretty_jsonl(text), None, note + " · " + t("viewer.jsonl"), None
    language = "json" if path.suffix in (".json", ".jsonl") else (
        "markdown" if path.suffix == ".md" else None)
    return text, language, note, None


class Viewer(ModalScreen[None]):
    """Title, a note (size, what is shown), and the text, read-only; a long one in parts."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "key.close"),
        Binding("n", "page(1)", "key.next_part"),
        Binding("p", "page(-1)", "key.prev_part"),
    ]

    def __init__(self, title: str, text: str, language: str | None = None,
                 note: str = "", parts: Parts | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.title_text = title
        self.note = note or t("viewer.chars", n=len(text))
        if parts is None and len(text) > MAX_CHARS:
            parts, language = text_parts(text), None
            text = parts.read(0)
        self.text, self.language, self.parts, self.part = text, language, parts, 0

    @classmethod
    def for_file(cls, workspace: Path, rel: str) -> Viewer:
        try:
            text, language, note, parts = read_for_viewer(workspace / rel)
        except OSError as exc:
            text, language, note, parts = t("viewer.cannot_read", path=rel,
                                            error=exc.strerror or exc), None, "", None
        return cls(rel, text, language, note, parts)

    def compose(self) -> ComposeResult:
        with Vertical(id="viewer-box") as box:
            box.border_title = self.title_text
            yield Static(self.note_text(), id="viewer-note")
            area = TextArea(self.text, read_only=True, show_line_numbers=True,
                            soft_wrap=True, id="viewer-text")
            if self.language:
                try:
                    area.language = GRAMMAR.get(self.language, self.language)
                except Exception:  # grammar missing: plain text is fine
                    pass
            yield area
        yield KeysFooter()

    def note_text(self) -> str:
        if self.parts is None:
            return self.note
        first, last = self.parts.bounds(self.part)
        return self.note + " · " + t("viewer.part", n=self.part + 1, total=self.parts.count,
                                     first=first, last=last, chars=self.parts.total)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The part keys only where there are parts (elsewhere they stay the app's)."""
        if action == "page":
            return self.parts is not None and self.parts.count > 1
        return True

    def action_page(self, step: int) -> None:
        """Show the next (``step`` 1) or previous (-1) part in place of this one."""
        if self.parts is None:
            return
        at = self.part + step
        if not 0 <= at < self.parts.count:
            self.notify(t("viewer.no_more_parts"))
            return
        self.part = at
        self.query_one(TextArea).load_text(self.parts.read(at))
        self.query_one("#viewer-note", Static).update(self.note_text())

    def action_dismiss(self) -> None:  # type: ignore[override]  # no result, and not async
        self.dismiss(None)
