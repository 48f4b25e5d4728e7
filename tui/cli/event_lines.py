"""One human line per event, for the headless log (``ctxlab run`` and ``ctxlab replay``).

A table keyed by event type instead of one long switch: a new event type gets its line by
one more entry (:func:`line`), and an event without an entry prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.compact.managers import Manager
from core.wording import plural

Describe = Callable[[Any], "str | None"]
LINES: dict[str, Describe] = {}


def line(*types: str) -> Callable[[Describe], Describe]:
    """Register the describing function of these event types."""

    def register(describe: Describe) -> Describe:
        for kind in types:
            LINES[kind] = describe
        return describe

    return register


def describe_event(e: Any) -> str | None:
    """One human line per event (None for events not worth a line)."""
    describe = LINES.get(e.type)
    return describe(e) if describe is not None else None


@line("run_start")
def _run_start(e: Any) -> str:
    return f"run start: {e.provider} in {e.workspace}" + (
        f" (scenario {e.scenario})" if e.scenario else "") + (
        f", context managed by {e.context_manager}"
        if e.context_manager != Manager.PIPELINE else "")


@line("session_start")
def _session_start(e: Any) -> str:
    return f"── session {e.session} of {e.sessions} ──"


@line("turn_start")
def _turn_start(e: Any) -> str:
    return f"user: {e.request}"


@line("model_request")
def _model_request(e: Any) -> str:
    counted = f" ({e.counted_tokens:,} counted by the API)" if e.counted_tokens else ""
    return f"→ {e.purpose} call: {e.chars:,} chars, ~{e.est_tokens:,} tokens{counted}, " \
           f"{plural(e.messages, 'message')}"


@line("tool_call")
def _tool_call(e: Any) -> str:
    return f"tool {e.name} {e.input}"


@line("tool_result")
def _tool_result(e: Any) -> str:
    return f"  ← {e.name}: {e.chars:,} chars" + (" (error)" if e.is_error else "")


@line("stage")
def _stage(e: Any) -> str:
    files = f", wrote {plural(len(e.files), 'file')}" if e.files else ""
    by = f" (by {e.by})" if e.by != Manager.PIPELINE else ""
    return (f"{e.stage}{by}: {e.before_chars:,} → {e.after_chars:,} chars, "
            f"{e.before_messages} → {plural(e.after_messages, 'message')}{files}")


@line("archive_listing")
def _archive_listing(e: Any) -> str:
    kinds = [record.get("kind") for record in e.files]
    return (f"archive already holds {plural(kinds.count('transcript'), 'transcript')} and "
            f"{plural(kinds.count('result'), 'result file')}")


@line("memory_selected")
def _memory_selected(e: Any) -> str:
    return f"memory recalled ({e.method}): {', '.join(e.files) or 'none'}"


@line("memory_written")
def _memory_written(e: Any) -> str:
    return f"memory written: {e.file} ({e.record_type})"


@line("memory_rejected")
def _memory_rejected(e: Any) -> str:
    return f"memory rejected: {e.name} — {e.reason}"


@line("memory_consolidated")
def _memory_consolidated(e: Any) -> str:
    dropped = f" (removed: {', '.join(e.dropped)})" if e.dropped else ""
    return f"memory consolidated: {e.before} → {plural(e.after, 'record')}{dropped}"


@line("memory_consolidation_failed", "pointer_broken")
def _with_reason(e: Any) -> str:
    return f"{e.type}: {e.reason}"


@line("retry")
def _retry(e: Any) -> str:
    return f"retrying {e.purpose} call (attempt {e.attempt}): {e.reason}"


@line("error")
def _error(e: Any) -> str:
    return f"error ({e.kind}): {e.message}"


@line("violation")
def _violation(e: Any) -> str:
    return f"API violation: {e.kind} {e.tool_use_id} at message {e.message_index}" + (
        f" (after {e.stage})" if e.stage else "")


@line("probe")
def _probe(e: Any) -> str:
    where = f" in {', '.join(e.found_in)}" if e.found_in else ""
    return f"probe {'answerable' if e.answerable else 'NOT answerable'}{where}: {e.ask}"


@line("turn_end")
def _turn_end(e: Any) -> str:
    return f"turn end: {e.chars:,} chars in context"


@line("run_end")
def _run_end(e: Any) -> str:
    return f"run end: {'ok' if e.ok else 'failed'} after {plural(e.turns, 'turn')}"
