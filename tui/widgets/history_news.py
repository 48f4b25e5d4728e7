"""What the History says of the events that are news in the conversation: a stored
result's pointer broken, a retry, memories recalled or written, an error; a history that
breaks the API's pairing rule; whether a probe's question is still answerable."""

from __future__ import annotations

from textual.content import Content

from core import events as ev
from core.events import PairViolation, ProbeChecked
from tui.i18n import t


def news_line(event: ev.Event) -> tuple[str, str] | None:
    """The line an event is told in, and its style (None: not news)."""
    if isinstance(event, ev.PointerBroken):
        return t("conv.pointer_broken", id=event.tool_use_id, path=event.path), "bold $warning"
    if isinstance(event, ev.Retry):
        return t("conv.retry", purpose=event.purpose, attempt=event.attempt,
                 reason=event.reason), "$warning"
    if isinstance(event, ev.MemorySelected) and event.files:
        return t("conv.recalled", method=event.method, files=", ".join(event.files)), \
            "$recalled"
    if isinstance(event, ev.MemoryWritten):
        return t("conv.memory_written", file=event.file, type=event.record_type), \
            "bold $recalled"
    if isinstance(event, ev.MemoryConsolidated):
        return t("conv.consolidated", before=event.before, after=event.after,
                 n=event.after), "$recalled"
    if isinstance(event, ev.MemoryConsolidationFailed):
        return t("conv.consolidation_failed", reason=event.reason), "$error"
    if isinstance(event, ev.Error) and event.kind != "cancelled":
        return t("conv.error", kind=event.kind, message=event.message), "bold $error"
    return None


def violation_line(event: PairViolation) -> Content:
    """A red marker: this history breaks tool_use/tool_result pairing (a break switch)."""
    kind = t(f"violation.{event.kind}") if event.kind in (
        "orphan_tool_result", "unanswered_tool_use") else event.kind
    cause = t("violation.cause", stage=event.stage) if event.stage else \
        t("violation.no_cause")
    return Content.assemble(
        ("✖ ", "bold $error"), (t("violation.title"), "bold $error"), "  ",
        (kind, "$error"), " ", (event.tool_use_id, "bold"),
        (" " + t("violation.at", index=event.message_index), "dim"),
        "  ", (cause, "$error"))


def probe_line(event: ProbeChecked) -> Content:
    """Could the model still answer a question about something said early on?"""
    where = ", ".join(event.found_in)
    verdict = (t("probe.ok", where=where), "bold $success") if event.answerable else \
        (t("probe.lost"), "bold $error")
    return Content.assemble(("? ", "bold $accent"), (t("probe.title"), "bold"),
                            " ", event.ask, "  → ", verdict)
