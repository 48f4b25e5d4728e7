"""Stage 4 — ``compact_history``: replace the whole history with one summary message.

The full list is written to a transcript first, then summarised, and the result is a single
user message in the course's exact layout (:func:`summary_message`): the current request,
the summary as reference data, and the transcript's path. ``manual_compact`` (the model's
``compact`` tool) is the same operation under its own stage name.
"""

from __future__ import annotations

import json

from core.archive.store import content_size
from core.compact.context import StageRun
from core.compact.summarizer import Summarizer
from core.compact.summary_facts import is_summary_message
from core.messages import iter_tool_results

OMITTED = "\n...[middle omitted; full transcript is on disk]...\n"


def summary_message(label: str, request: str, summary: str, transcript: str) -> dict:
    """The course's summary message, byte for byte (the summary is JSON-encoded)."""
    return {
        "role": "user",
        "content": (
            f"[{label}]\n\nCurrent user request:\n{request}\n\n"
            f"Conversation summary (reference only):\n{json.dumps(summary)}\n\n"
            f"Full transcript: {transcript}"
        ),
    }


def summary_input(messages: list[dict], limit: int = 80_000, head: int = 20_000,
                  tail: int = 60_000) -> str:
    """The history as JSON; past ``limit``, its first ``head`` and last ``tail`` chars."""
    dump = json.dumps(messages, default=str, ensure_ascii=False)
    if len(dump) <= limit:
        return dump
    return dump[:head] + OMITTED + dump[-tail:]


def ledger_to_transcript(run: StageRun, messages: list[dict], transcript: str) -> None:
    """Every result leaving with the history: its own file if it has one, else the transcript."""
    archive = run.ctx.archive
    for _, _, block in iter_tool_results(messages):
        tool_use_id = block.get("tool_use_id", "")
        content = block.get("content", "")
        trusted = archive.trusted_pointer(tool_use_id, content)
        if trusted:
            run.took(tool_use_id, archive.manifest_entry(trusted).chars, trusted)
        else:
            run.took(tool_use_id, content_size(content), transcript)


async def compact_history(run: StageRun, summarizer: Summarizer,
                          active_request: str) -> StageRun:
    """Transcript, then summary, then a one-message history (the run's row names the
    trigger: ``compact_history`` or the model's ``manual_compact``)."""
    history, ctx = run.history, run.ctx
    messages = history.messages
    if not messages or (len(messages) == 1 and is_summary_message(messages[0])):
        return run  # nothing left to compact: a summary of a summary only loses detail
    transcript = ctx.archive.write_transcript(messages)
    run.wrote(transcript)
    limits = ctx.thresholds
    text = await summarizer.summarize(
        messages, active_request,
        summary_input(messages, limits.summary_input_limit, limits.summary_head,
                      limits.summary_tail),
    )
    ledger_to_transcript(run, messages, transcript)
    history.replace_all([summary_message("Compacted", active_request, text, transcript)])
    run.changed = True
    return run
