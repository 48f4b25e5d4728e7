"""What the API's own context management did to a call, as ``stage`` events.

A beta response reports its context edits in ``context_management.applied_edits``
(``BetaClearToolUses20250919EditResponse``: ``cleared_tool_uses``, ``cleared_input_tokens``;
``BetaClearThinking20251015EditResponse``: ``cleared_thinking_turns``) and a server
compaction as a ``compaction`` content block (``BetaCompactionBlock``), with the separately
billed summarisation step as a ``compaction`` entry of ``usage.iterations``. Each becomes one
stage in the Stages panel beside ctxlab's own:

* ``api_clear_tool_uses`` / ``api_clear_thinking`` (by ``api-edit``) — the server cleared
  part of the prompt it was sent; the client's history is unchanged, so nothing is lost
  (ledger ``"where": "client"``);
* ``api_compaction`` (by ``api-compact``) — the server summarised everything before the
  block; the messages it will ignore from now on are saved as a transcript, and the summary
  as a text file, both listed in ``files`` (the block itself stays in the history: the API
  requires it back).
"""

from __future__ import annotations

from typing import Any

from core.archive.atomic import atomic_write_text
from core.archive.listing import archive_records
from core.archive.store import Archive
from core.compact.managers import Manager
from core.compact.stages import API_CLEAR_THINKING, API_CLEAR_TOOL_USES, API_COMPACTION
from core.events import Stage, StageSnapshot
from core.measure import CHARS_PER_TOKEN, json_chars, list_chars
from core.providers.api_context import CLEAR_THINKING, CLEAR_TOOL_USES
from core.usage import context_tokens

EDIT_STAGES = {  # the edit's type → its row of the stage table
    CLEAR_TOOL_USES: API_CLEAR_TOOL_USES,
    CLEAR_THINKING: API_CLEAR_THINKING,
}


def applied_edits(extras: dict[str, Any]) -> list[dict[str, Any]]:
    managed = extras.get("context_management") or {}
    return [e for e in managed.get("applied_edits") or [] if isinstance(e, dict)]


def compaction_iterations(usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The billed summarisation steps (``usage.iterations`` of type ``compaction``)."""
    iterations = (usage or {}).get("iterations") or []
    return [i for i in iterations if isinstance(i, dict) and i.get("type") == "compaction"]


def edit_stages(sent: list[dict[str, Any]], extras: dict[str, Any],
                usage: dict[str, Any] | None) -> list[Stage]:
    """One stage per applied edit; sizes are the sent history's, less what was cleared."""
    edits = applied_edits(extras)
    sizes = [json_chars(message) for message in sent] if edits else []
    chars = list_chars(sizes)
    stages = []
    for edit in edits:
        row = EDIT_STAGES.get(str(edit.get("type")))  # an edit type the table does not know
        name = row.name if row is not None else f"api_{edit.get('type')}"  # …is named for it
        cleared = int(edit.get("cleared_input_tokens") or 0)
        entry = {"stage": name, "where": "client", **edit}
        stages.append(Stage(
            stage=name, by=Manager.API_EDIT, trigger="auto",
            before_chars=chars, after_chars=max(chars - cleared * CHARS_PER_TOKEN, 0),
            before_messages=len(sent), after_messages=len(sent),
            pre_tokens=context_tokens(usage), ledger=(entry,),
            # what it cleared is not said: the same list on both sides
            snapshot=StageSnapshot(list(sent), list(sent), sizes, sizes),
            # the server cleared inside this very request: what it wrote to the cache
            # again is this call's own cache creation
            rewrite_tokens=(usage or {}).get("cache_creation_input_tokens"),
        ))
    return stages


def compaction_stage(sent: list[dict[str, Any]], content: list[dict[str, Any]],
                     usage: dict[str, Any] | None, archive: Archive) -> Stage | None:
    """The server compacted: the block replaces everything sent before it."""
    block = next((b for b in content if b.get("type") == "compaction"), None)
    if block is None:
        return None
    files = [archive.write_transcript(sent)]  # what the server will ignore from now on
    summary = block.get("content")
    if summary:
        path = archive.transcript_dir / f"{API_COMPACTION.name}_{len(archive.ledger):04d}_" \
            f"{abs(hash(summary)) % 10**8:08d}.md"
        atomic_write_text(path, summary)
        files.append(archive.rel(path))
    steps = compaction_iterations(usage)
    reply = {"role": "assistant", "content": content}
    sizes = [json_chars(message) for message in sent]
    entry = {"stage": API_COMPACTION.name, "where": files[0], "chars": list_chars(sizes),
             "summary_chars": len(summary or ""), "failed": summary is None,
             "iterations": steps}
    archive.ledger.append(entry)
    return Stage(
        stage=API_COMPACTION.name, by=API_COMPACTION.manager, trigger="auto",
        before_chars=list_chars(sizes), after_chars=json_chars([block]),
        before_messages=len(sent), after_messages=1, files=tuple(files),
        archived=archive_records(archive, files),
        pre_tokens=context_tokens(usage), ledger=(entry,),
        first_changed=0, rewrite_tokens=len(summary or "") // CHARS_PER_TOKEN,
        snapshot=StageSnapshot(list(sent), [reply], sizes, [json_chars(reply)]),
    )


def api_stages(sent: list[dict[str, Any]], content: list[dict[str, Any]],
               usage: dict[str, Any] | None, extras: dict[str, Any],
               archive: Archive) -> list[Stage]:
    """Every stage the API reported for one main call, edits first."""
    stages = edit_stages(sent, extras, usage)
    compacted = compaction_stage(sent, content, usage, archive)
    if compacted is not None:
        stages.append(compacted)
    return stages
