"""A read-only viewer for files and long texts: archive files, tool results, whole messages.

Large values are the reason the workbench exists, so the viewer must not choke on them: it
shows at most :data:`MAX_CHARS` characters and says how much it left out. Transcripts (JSONL,
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
from textual.widgets import Footer, Static, TextArea

from tui.i18n import localize_bindings, t
from tui.widgets.readable import readable_message

MAX_CHARS = 300_000
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


def read_for_viewer(path: Path) -> tuple[str, str | None, str]:
    """``(text, language, note)`` for a file, cut to :data:`MAX_CHARS`."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read(MAX_CHARS + 1)
    size = path.stat().st_size
    note = t("viewer.bytes", n=size)
    if path.suffix == ".jsonl" and len(text) <= MAX_CHARS:
        return pretty_jsonl(text), None, note + " · " + t("viewer.jsonl")
    language = "json" if path.suffix in (".json", ".jsonl") else (
        "markdown" if path.suffix == ".md" else None)
    return clip(text, note, language)


def clip(text: str, note: str, language: str | None) -> tuple[str, str | None, str]:
    if len(text) > MAX_CHARS:
        return text[:MAX_CHARS], None, note + " · " + t("viewer.clipped", n=MAX_CHARS)
    return text, language, note


class Viewer(ModalScreen[None]):
    """Title, a note (size, what is shown), and the text, read-only."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "key.close")]

    def __init__(self, title: str, text: str, language: str | None = None,
                 note: str = "") -> None:
        super().__init__()
        localize_bindings(self)
        self.title_text = title
        self.text, self.language, self.note = clip(text, note or t("viewer.chars", n=len(text)),
                                                   language)

    @classmethod
    def for_file(cls, workspace: Path, rel: str) -> Viewer:
        try:
            text, language, note = read_for_viewer(workspace / rel)
        except OSError as exc:
            text, language, note = t("viewer.cannot_read", path=rel,
                                     error=exc.strerror or exc), None, ""
        return cls(rel, text, language, note)

    def compose(self) -> ComposeResult:
        with Vertical(id="viewer-box") as box:
            box.border_title = self.title_text
            yield Static(self.note, id="viewer-note")
            area = TextArea(self.text, read_only=True, show_line_numbers=True,
                            soft_wrap=True, id="viewer-text")
            if self.language:
                try:
                    area.language = GRAMMAR.get(self.language, self.language)
                except Exception:  # grammar missing: plain text is fine
                    pass
            yield area
        yield Footer()

    def action_dismiss(self) -> None:  # type: ignore[override]  # no result, and not async
        self.dismiss(None)
