"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is one record with a ``type``. Conversation records (``user``, ``assistant``,
``attachment``, ``system``) carry ``uuid`` and ``parentUuid``: the file is a tree, not a
list — rewinding starts a branch, sidechains (``isSidechain``) hang off it, parallel tool
calls fork, and a compaction starts a new root (``system``/``compact_boundary``) that points
back through ``logicalParentUuid``. :mod:`~core.sources.replay.claude_code_chain` rebuilds
the conversation from that tree; this module turns its records into what Claude Code sent.

What Claude Code sends is more than the prompts and replies: attachments become
``<system-reminder>`` text in the user message
(:mod:`~core.sources.replay.claude_code_attachments`), ``isMeta`` prompts (the
local-command caveat, "Continue from where you left off.") are sent as written, and a
``<synthetic>`` assistant reply ("No response requested.") enters the history without any
request. After a ``compact_boundary`` the history is the ``isCompactSummary`` message
followed by the messages its ``compactMetadata.preservedMessages`` names.

docs/replay/claude-code.md lists every record type and field, read or ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.messages import message_text
from core.sources.replay.claude_code_attachments import (
    attachment_blocks,
    takes_system_messages,
    unwrapped,
)
from core.sources.replay.claude_code_chain import (
    LINKED_TYPES,
    MAIN_TYPES,
    Tree,
    join_boundaries,
    main_chain,
    merge_forks,
    message_id,
)
from core.sources.replay.file_rows import Rows
from core.sources.replay.model import Compaction, Message, Recording
from core.sources.replay.reading import Line, jsonl_objects, row_objects, skip
from core.sources.replay.shape import content_problem, text_or_none, usage_problem
from core.sources.replay.steps import StepBuilder, merge_into
from core.sources.replay.subagents import read_meta

AGENT = Manager.CLAUDE_CODE
TRIGGER = re.compile(r"[a-z][a-z0-9_]{0,31}")
SYNTHETIC = "<synthetic>"  # the model name of a reply Claude Code wrote itself
# Records with no place in the conversation: session bookkeeping and the UI's state.
KNOWN_SKIPPED = frozenset({
    "progress", "file-history-snapshot", "queue-operation", "summary", "custom-title",
    "last-prompt", "mode", "permission-mode", "ai-title", "tag", "agent-name",
    "agent-setting", "pr-link", "worktree-state", "content-replacement",
    "marble-origami-commit", "marble-origami-snapshot", "speculation-accept"})


def looks_like(first: Any) -> bool:
    """A Claude Code record: a ``type`` among its kinds and its bookkeeping keys."""
    if not isinstance(first, dict):
        return False
    kind = first.get("type")
    if not isinstance(kind, str):
        return False
    keys = {"uuid", "parentUuid", "sessionId", "leafUuid", "messageId", "isSidechain"}
    # A record of a kind not listed here still has its ``sessionId``: Claude Code adds
    # bookkeeping kinds often, and an interactive session opens with them.
    return "payload" not in first and bool(keys & set(first)) and (
        kind in LINKED_TYPES or kind in KNOWN_SKIPPED or "sessionId" in first)


def subagent_files(path: Path) -> list[Path]:
    """Subagent transcripts of this session: ``<session>/subagents/agent-*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    try:
        return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return []


def load(path: Path, text: str | Rows) -> Recording:
    """The session in ``text``, or in the rows of its file as they are read (its lines'
    records are all held until the chain is known: the text need not be too)."""
    recording = Recording(format="claude-code", path=path, agent=AGENT)
    recording.subagents = subagent_files(path)
    tree = Tree()
    linked: list[Line] = []
    leaf: Line | None = None
    side_leaf: Line | None = None  # a subagent transcript is sidechain lines only
    for line in _objects(text, recording):
        data = line.data
        uuid = data.get("uuid")
        if isinstance(uuid, str) and uuid in tree.nodes and _rewritten(tree.nodes[uuid].data,
                                                                       data):
            # Claude Code wrote the same record twice, the second time perhaps with a field
            # added (2.1.197 adds the session's ``slug`` to its first prompt): one record
            recording.skipped["duplicate"] += 1
            tree.nodes[uuid].data.update(data)
            continue
        if isinstance(uuid, str):
            if uuid in tree.nodes:
                recording.note("duplicate-uuid", f"line {line.number} reuses the uuid of line "
                               f"{tree.nodes[uuid].number}; the later line is kept",
                               line.number)
            tree.nodes[uuid] = line
            linked.append(line)
        kind = data.get("type") if isinstance(data.get("type"), str) else None
        if not isinstance(uuid, str):
            recording.skipped[_skip_kind(data)] += 1  # snapshots, queue operations…
        elif kind in MAIN_TYPES and not data.get("isSidechain"):
            leaf = line
        elif kind in MAIN_TYPES:
            side_leaf = line
    sidechain = leaf is None
    leaf = leaf or side_leaf
    if leaf is None:
        return recording
    if sidechain:
        recording.note("subagent", _subagent_words(path))
    join_boundaries(tree, linked, recording, sidechain)
    chain, _ = merge_forks(main_chain(leaf, tree, recording, sidechain), tree)
    on_chain = {id(line) for line in chain}
    for line in tree.nodes.values():
        if id(line) not in on_chain:
            recording.skipped[_skip_kind(line.data, off_chain=True, sidechain=sidechain)] += 1
    builder = _Builder(recording, tree, sidechain)
    builder.system_notes = takes_system_messages(_first_model(chain))
    builder.build(chain)
    return recording


def _objects(text: str | Rows, recording: Recording) -> Iterator[Line]:
    if isinstance(text, str):
        return jsonl_objects(text, recording)
    return row_objects(text, lambda: text.ends_with_newline, recording)


def _rewritten(first: dict[str, Any], again: dict[str, Any]) -> bool:
    """Is ``again`` the record ``first`` written anew: every field of it the same, perhaps
    with fields added?"""
    return all(k in again and again[k] == v for k, v in first.items())


def _first_model(chain: list[Line]) -> str | None:
    """The model the session's replies came from (the API answers with the model asked
    for; Claude Code's own ``<synthetic>`` replies say nothing of it)."""
    for line in chain:
        model = _message(line.data).get("model") if line.data.get("type") == "assistant" \
            else None
        if isinstance(model, str) and model != SYNTHETIC:
            return model
    return None


def _subagent_words(path: Path) -> str:
    """Whose transcript this is, when it is a subagent's (every record a sidechain)."""
    meta = read_meta(path)
    kind, about, call = (meta.get(k) for k in ("agentType", "description", "toolUseId"))
    words = "a subagent's transcript (every record isSidechain)"
    if isinstance(kind, str):
        words += f": {kind}"
    if isinstance(about, str):
        words += f" “{about}”"
    if isinstance(call, str):
        words += f", started by the session's tool call {call}"
    return words


def _skip_kind(data: dict[str, Any], off_chain: bool = False, sidechain: bool = False) -> str:
    kind = data.get("type")
    if not isinstance(kind, str) or (kind not in LINKED_TYPES and kind not in KNOWN_SKIPPED):
        return f"unknown type {kind!r}"
    if data.get("isSidechain") and not sidechain:
        return "sidechain"
    if kind in MAIN_TYPES and off_chain:
        return "off-chain"
    if kind == "system":
        return f"system:{data.get('subtype') or '?'}"
    if kind == "attachment":
        attachment = _mapping(data.get("attachment"))
        return f"attachment:{attachment.get('type') or '?'}"
    return str(kind)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _trigger(value: Any) -> str:
    """The recorded trigger (``auto``, ``manual``) when it is a plain word, else ``auto``:
    it names the stage and the summary file, so a path or a space never gets through."""
    return value if isinstance(value, str) and TRIGGER.fullmatch(value) else "auto"


def _problem(message: dict[str, Any]) -> str | None:
    """Why a conversation line's ``message`` cannot be replayed (wrong field types)."""
    return content_problem(message.get("content"), "message.content") or \
        usage_problem(message.get("usage"), "message.usage")


def _message(data: dict[str, Any]) -> dict[str, Any]:
    return given if isinstance(given := data.get("message"), dict) else {}


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else \
        [{"type": "text", "text": str(content or "")}]


class _Builder:
    """Walks the rebuilt chain and feeds the step builder what Claude Code sent."""

    def __init__(self, recording: Recording, tree: Tree, sidechain: bool) -> None:
        self.recording = recording
        self.tree = tree
        self.sidechain = sidechain
        self.steps = StepBuilder(recording)
        self.compaction: Compaction | None = None
        self.preserved: list[Message] = []
        self.system_notes = False  # attachments sent as role:system messages

    def build(self, chain: list[Line]) -> None:
        for line in chain:
            self.line(line)
        self.steps.finish()

    def line(self, line: Line) -> None:
        data = line.data
        kind = data.get("type") if isinstance(data.get("type"), str) else None
        message = _message(data)
        problem = _problem(message) if kind in MAIN_TYPES else None
        if problem:
            skip(self.recording, line.number, f"line {line.number}: {problem}; skipped")
        elif kind == "system" and data.get("subtype") == "compact_boundary":
            self.boundary(line)
        elif kind == "system" and data.get("subtype") == "microcompact_boundary":
            self.microcompact(line)
        elif kind == "attachment":
            blocks = attachment_blocks(data.get("attachment"))
            if blocks is None:
                self.recording.skipped[_skip_kind(data)] += 1
            elif self.system_notes:
                self.steps.system_note(unwrapped(blocks))
            else:
                self.steps.attachment(blocks)
        elif kind not in MAIN_TYPES:
            self.recording.skipped[_skip_kind(data, sidechain=self.sidechain)] += 1
        elif kind == "user" and data.get("isCompactSummary"):
            self.summary(message)
        elif kind == "user":
            self.steps.user(message.get("content", ""))
        elif data.get("isApiErrorMessage"):
            self.recording.skipped["api-error"] += 1  # Claude Code never sends these back
        elif message.get("model") == SYNTHETIC:
            self.steps.sent_without_request({"role": "assistant", "content": _blocks(message)})
        else:
            self.steps.assistant(
                _blocks(message), message_id=text_or_none(message.get("id")),
                usage=message.get("usage"), model=text_or_none(message.get("model")),
                line=line.number, stop_reason=text_or_none(message.get("stop_reason")),
                timestamp=text_or_none(data.get("timestamp")))

    def boundary(self, line: Line) -> None:
        meta = _mapping(line.data.get("compactMetadata"))
        self.compaction = self.steps.compaction(Compaction(
            by=AGENT, trigger=_trigger(meta.get("trigger")),
            pre_tokens=_int(meta.get("preTokens")), post_tokens=_int(meta.get("postTokens")),
            line=line.number, timestamp=text_or_none(line.data.get("timestamp"))))
        self.preserved = self.preserved_messages(meta, line.number)

    def microcompact(self, line: Line) -> None:
        meta = _mapping(line.data.get("microcompactMetadata"))
        ids = meta.get("compactedToolIds")
        self.steps.compaction(Compaction(
            by=AGENT, trigger=_trigger(meta.get("trigger")),
            pre_tokens=_int(meta.get("preTokens")),
            cleared=[i for i in ids if isinstance(i, str)] if isinstance(ids, list) else [],
            line=line.number, timestamp=text_or_none(line.data.get("timestamp"))))

    def summary(self, message: dict[str, Any]) -> None:
        """The compaction's summary: the history restarts from it and the preserved
        messages (it is never a user turn)."""
        summary: Message = {"role": "user", "content": message.get("content", "")}
        if self.compaction is not None and not self.compaction.kept:
            self.compaction.summary = message_text(summary)
            self.compaction.kept = [summary, *self.preserved]
            self.preserved = []
        else:
            self.recording.note("stray-summary", "a compaction summary with no boundary "
                                "before it is replayed as a user message")
            self.steps.user(summary["content"])

    def preserved_messages(self, meta: dict[str, Any], number: int) -> list[Message]:
        """The messages a compaction kept after its summary, as Claude Code sends them:
        ``preservedMessages.uuids`` (older files: the ``preservedSegment`` walked from its
        tail up to its head), in the order they were written."""
        uuids = _mapping(meta.get("preservedMessages")).get("uuids")
        if not isinstance(uuids, list):
            uuids = self.segment(_mapping(meta.get("preservedSegment")))
        uuids = list(dict.fromkeys(u for u in uuids if isinstance(u, str)))  # each once
        lines = [self.tree.nodes[u] for u in uuids if u in self.tree.nodes]
        if len(lines) < len(uuids):
            self.recording.note("preserved-missing", f"line {number}: {len(uuids) - len(lines)}"
                                f" of the {len(uuids)} messages the compaction kept are not in "
                                "the file; the history after it lacks them", number)
        kept: list[Message] = []
        last_id: str | None = None
        for line in sorted(lines, key=lambda x: x.number):
            data, message = line.data, _message(line.data)
            if str(data.get("type")) not in MAIN_TYPES or _problem(message):
                continue
            role = str(data["type"])
            content: Any = _blocks(message) if role == "assistant" else message.get("content", "")
            mid = message_id(data)
            if kept and kept[-1]["role"] == role and (role == "user" or mid == last_id):
                kept[-1] = merge_into(kept[-1], content)
            else:
                kept.append({"role": role, "content": content})
            last_id = mid
        return kept

    def segment(self, segment: dict[str, Any]) -> list[str]:
        head, tail = segment.get("headUuid"), segment.get("tailUuid")
        uuids: list[str] = []
        current = tail if isinstance(tail, str) else None
        while current is not None and current in self.tree.nodes and current not in uuids:
            uuids.append(current)
            if current == head:
                break
            current = self.tree.parent(self.tree.nodes[current].data)
        return uuids[::-1]
