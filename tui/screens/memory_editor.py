"""The built-in memory editor: a Markdown code editor that refuses to save an invalid record.

A hand-edited record with broken frontmatter silently drops out of recall, which is the
kind of invisible failure users complain about. So the document is validated with the
store's own parser *before* anything is written; an invalid one is refused with the reason
and the file on disk stays as it was. A valid one is saved through :class:`MemoryStore`
(atomic write under the store's lock, index rebuilt, ``memory_written`` emitted). Renaming a
record writes the new file first, then removes the old one.

Esc cancels, as the footer says — also from the code editor, which would otherwise take
Esc to move the focus — and asks first when the text was changed, so a stray key never
throws an edit away, and a blank template opened by accident is one key to leave.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from core.memory import FrontmatterError, MemoryStore, MemoryStoreError, record_from_text
from tui.i18n import localize_bindings, t
from tui.widgets.keys_footer import KeysFooter

# The frontmatter keys and the type value are the store's format: never translated.
NEW_RECORD = """---
name: ""
description: ""
type: project
---

{body}
"""


def new_record_text() -> str:
    """A blank record to start from, its placeholder body in the UI's language."""
    return NEW_RECORD.format(body=t("editor.template_body"))


class RecordArea(TextArea):
    """The code editor, except that Esc asks the screen to cancel instead of moving focus."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            await self.run_action("screen.cancel")
            return
        await super()._on_key(event)


class MemoryEditor(ModalScreen[str | None]):
    """Edit one record (``file``) or a new one (``file is None``); returns the saved file."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "key.save"),
        Binding("escape", "cancel", "key.cancel"),
    ]

    def __init__(self, store: MemoryStore, file: str | None, text: str) -> None:
        super().__init__()
        localize_bindings(self)
        self.store = store
        self.file = file
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="editor-box") as box:
            box.border_title = t("editor.title", file=self.file or t("editor.new"))
            yield Static(t("editor.help"), id="editor-help")
            yield RecordArea.code_editor(self.text, language="markdown", id="editor-text",
                                         soft_wrap=True)
            yield Static("", id="editor-error")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def refuse(self, reason: str) -> None:
        self.query_one("#editor-error", Static).update(
            "⚠ " + t("editor.refused", reason=reason))

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        try:
            record = record_from_text(self.file or "new.md", text)
        except FrontmatterError as exc:
            self.refuse(t("editor.invalid", error=exc))
            return
        same_name = self.store.get(record.name)
        if same_name is not None and same_name.name == record.name and \
                same_name.file != self.file:
            self.refuse(t("editor.exists", name=record.name, file=same_name.file))
            return
        try:
            saved = self.store.write(record.name, record.description, record.type, record.body)
            if self.file and saved.file != self.file:
                self.store.delete(self.file)
        except (MemoryStoreError, OSError) as exc:
            self.refuse(str(exc))
            return
        self.dismiss(saved.file)

    def action_cancel(self) -> None:
        """Leave without saving; with unsaved changes, only after the user says so."""
        from tui.screens.confirm import Confirm

        if self.query_one(TextArea).text == self.text:
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(Confirm(t("editor.discard"), t("editor.discard_yes"),
                                     t("editor.discard_no")), answered)
