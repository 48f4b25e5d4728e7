"""The system prompt exactly as the last main model call sent it, section by section.

Compaction only ever touches the message list; what survives every stage lives in the
system prompt — ctxlab's own rules, the memory catalog and recalled records, and the pinned
context (project rules files such as ``CTXLAB.md``, and the harness's work log). Seeing the
actual text, with each section's category and size, is how a learner checks that a rule
really reaches the model. The sections come from the last ``system_prompt`` event (the
very list the agent rendered for that call, texts included), so nothing here is
reconstructed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Collapsible, Static

from core.events import SystemPrompt
from tui.i18n import localize_bindings, t
from tui.widgets.keys_footer import KeysFooter

CATEGORY_STYLE = {"system": "bold $primary", "memory": "bold $recalled",
                  "pinned": "bold $accent"}
OPEN_UP_TO = 3_000  # sections longer than this start collapsed, so the list stays scannable


@dataclass(frozen=True)
class Section:
    """One section as the event described it, with its text."""

    name: str
    text: str
    category: str
    source: str = ""

    @property
    def chars(self) -> int:
        return len(self.text)

    @classmethod
    def of(cls, described: dict[str, Any], text: str) -> Section:
        return cls(str(described.get("name", "")), text,
                   str(described.get("category") or "system"), str(described.get("source", "")))


def sections_of(event: SystemPrompt | None) -> list[Section]:
    """The sections of a ``system_prompt`` event (none before the first main call)."""
    if event is None:
        return []
    return [Section.of(d, text) for d, text in zip(event.sections, event.texts, strict=False)]


def section_title(section: Section) -> str:
    """``rules:CTXLAB.md · pinned · 1,234 chars · CTXLAB.md`` (Collapsible titles are text)."""
    parts = [section.name, t(f"category.{section.category}"),
             f"{section.chars:,} {t('unit.chars')}"]
    if section.source:
        parts.append(section.source)
    return " · ".join(parts)


class SectionBlock(Collapsible):
    """One section: its title line, and its text when opened."""

    def __init__(self, section: Section) -> None:
        self.section = section
        super().__init__(Static(Content(section.text), classes="sysprompt-text"),
                         title=section_title(section), collapsed=section.chars > OPEN_UP_TO,
                         classes=f"sysprompt-section -{section.category}")


class SystemPromptScreen(Screen[None]):
    """A collapsible block per section, in the order the model read them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "key.back"),
        Binding("plus,equals_sign", "expand(True)", "key.expand_all", key_display="+"),
        Binding("minus", "expand(False)", "key.collapse_all", key_display="-"),
    ]

    def __init__(self, event: SystemPrompt | None) -> None:
        super().__init__()
        localize_bindings(self)
        self.sections = sections_of(event)

    def compose(self) -> ComposeResult:
        yield Static(self.summary(), id="sysprompt-title")
        with VerticalScroll(id="sysprompt-list"):
            if not self.sections:
                yield Static(t("sysprompt.empty"), id="sysprompt-empty")
            for section in self.sections:
                yield SectionBlock(section)
        yield KeysFooter()

    def summary(self) -> Content:
        totals: dict[str, int] = {}
        for section in self.sections:
            totals[section.category] = totals.get(section.category, 0) + section.chars
        parts: list[str | tuple[str, str]] = [
            (f" {t('sysprompt.title')} ", "bold reverse"), "  ",
            t("sysprompt.count", n=len(self.sections),
              chars=sum(s.chars for s in self.sections))]
        for category, chars in totals.items():
            parts += ["  ", (t(f"category.{category}"), CATEGORY_STYLE.get(category, "bold")),
                      f" {chars:,}"]
        return Content.assemble(*parts)

    def action_expand(self, value: bool) -> None:
        for block in self.query(SectionBlock):
            block.collapsed = not value
