"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is one record with a ``type``. Conversation records (``user``, ``assistant``,
``system``) carry ``uuid`` and ``parentUuid``: the file is a tree, not a list — rewinding
starts a branch, sidechains (``isSidechain``) hang off it, and a compaction starts a new
root (``system``/``compact_boundary`` with ``parentUuid: null``) that points back through
``logicalParentUuid``. The main chain is rebuilt by walking parents up from the last main
message. An assistant message is written one content block per line under the same
``message.id``; those lines are merged back into one message.

Read: ``type``, ``uuid``, ``parentUuid``, ``logicalParentUuid``, ``isSidechain``,
``isMeta``, ``isCompactSummary``, ``isApiErrorMessage``, ``subtype``, ``compactMetadata``
(``trigger``, ``preTokens``), ``microcompactMetadata`` (``trigger``, ``preTokens``,
``compactedToolIds``: those results are cleared in the original's history), ``timestamp``,
``message`` (``role``, ``content``, ``id``, ``model``, ``usage``). Ignored: ``toolUseResult``
(the UI's copy of a result; the API copy is in ``message.content``), ``cwd``,
``gitBranch``, ``version``, ``sessionId``, ``userType``, ``requestId``, ``slug``, ``agentId``
and every other key. Skipped and counted: ``progress``,
``file-history-snapshot``, ``queue-operation``, ``summary``, other ``system`` records, meta
and sidechain lines, lines of abandoned branches, and any type not listed here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.messages import message_text
from core.sources.replay.model import Compaction, Recording
from core.sources.replay.reading import Line, jsonl_objects, skip
from core.sources.replay.shape import content_problem, text_or_none, usage_problem
from core.sources.replay.steps import StepBuilder

AGENT = Manager.CLAUDE_CODE
MAIN_TYPES = frozenset({"user", "assistant"})
TRIGGER = re.compile(r"[a-z][a-z0-9_]{0,31}")
KNOWN_SKIPPED = frozenset({"progress", "file-history-snapshot", "queue-operation", "summary",
                           "attachment", "custom-title", "last-prompt"})


def looks_like(first: Any) -> bool:
    """A Claude Code record: a ``type`` among its kinds and its bookkeeping keys."""
    if not isinstance(first, dict):
        return False
    kind = first.get("type")
    if not isinstance(kind, str):
        return False
    keys = {"uuid", "parentUuid", "sessionId", "leafUuid", "messageId", "isSidechain"}
    return "payload" not in first and bool(keys & set(first)) and (
        kind in MAIN_TYPES or kind == "system" or kind in KNOWN_SKIPPED)


def subagent_files(path: Path) -> list[Path]:
    """Subagent transcripts of this session: ``<session>/subagents/agent-*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    try:
        return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return []


def load(path: Path, text: str) -> Recording:
    recording = Recording(format="claude-code", path=path, agent=AGENT)
    recording.subagents = subagent_files(path)
    nodes: dict[str, Line] = {}
    leaf: Line | None = None
    side_leaf: Line | None = None  # a subagent transcript is sidechain lines only
    for line in jsonl_objects(text, recording):
        data = line.data
        uuid = data.get("uuid")
        if isinstance(uuid, str):
            if uuid in nodes:
                recording.note("duplicate-uuid", f"line {line.number} reuses the uuid of line "
                               f"{nodes[uuid].number}; the later line is kept", line.number)
            nodes[uuid] = line
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
    chain = main_chain(leaf, nodes, recording, sidechain)
    on_chain = {id(line) for line in chain}
    for line in nodes.values():
        if id(line) not in on_chain:
            recording.skipped[_skip_kind(line.data, off_chain=True, sidechain=sidechain)] += 1
    _build(chain, recording, sidechain)
    return recording


def _parent(data: dict[str, Any]) -> str | None:
    parent = data.get("parentUuid")
    if parent is None and data.get("subtype") == "compact_boundary":
        parent = data.get("logicalParentUuid")
    return parent if isinstance(parent, str) else None


def _walk(start: Line, nodes: dict[str, Line]) -> tuple[list[Line], str | None]:
    """The chain from ``start`` up to its root (root first) and the missing parent, if any."""
    chain: list[Line] = []
    seen: set[str] = set()
    current: Line | None = start
    missing = None
    while current is not None:
        chain.append(current)
        seen.add(current.data.get("uuid", ""))
        parent = _parent(current.data)
        if parent is None or parent in seen:
            break
        current = nodes.get(parent)
        if current is None:
            missing = parent
    chain.reverse()
    return chain, missing


def main_chain(leaf: Line, nodes: dict[str, Line], recording: Recording,
               sidechain: bool = False) -> list[Line]:
    """The conversation ending at ``leaf``; if its parent chain is broken, the longest one.
    (``sidechain``: the file is a subagent's transcript, whose lines are all sidechain.)"""
    chain, missing = _walk(leaf, nodes)
    if missing is None:
        return chain
    depth: dict[str, int] = {}
    for uuid in nodes:
        _depth(uuid, nodes, depth)
    candidates = [u for u in nodes if str(nodes[u].data.get("type")) in MAIN_TYPES
                  and bool(nodes[u].data.get("isSidechain")) == sidechain]
    # None at all when a later line of another kind took the leaf's uuid: keep the leaf's.
    best = max(candidates, key=lambda u: (depth[u], nodes[u].number), default=None)
    if best is not None and depth[best] > len(chain):
        chain, _ = _walk(nodes[best], nodes)
    recording.note("broken-chain", f"the parent chain is broken at line {chain[0].number} "
                   f"(its parent {missing[:8]}… is not in the file): following the longest "
                   f"chain, {len(chain):,} of {len(nodes):,} linked lines", chain[0].number)
    return chain


def _depth(uuid: str, nodes: dict[str, Line], depth: dict[str, int]) -> int:
    """Chain length up from ``uuid`` (iterative: real sessions are thousands deep)."""
    path: list[str] = []
    current: str | None = uuid
    while current is not None and current in nodes and current not in depth:
        if current in path:
            break  # a cycle: cut it here
        path.append(current)
        current = _parent(nodes[current].data)
    base = depth.get(current, 0) if current is not None else 0
    for u in reversed(path):
        base += 1
        depth[u] = base
    return depth[uuid]


def _skip_kind(data: dict[str, Any], off_chain: bool = False, sidechain: bool = False) -> str:
    kind = data.get("type")
    if not isinstance(kind, str):
        return f"unknown type {kind!r}"
    if kind not in MAIN_TYPES and kind != "system" and kind not in KNOWN_SKIPPED:
        return f"unknown type {kind!r}"
    if data.get("isSidechain") and not sidechain:
        return "sidechain"
    if data.get("isMeta"):
        return "meta"
    if kind in MAIN_TYPES and off_chain:
        return "off-chain"
    if kind == "system":
        return f"system:{data.get('subtype') or '?'}"
    return str(kind)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _trigger(value: Any) -> str:
    """The recorded trigger (``auto``, ``manual``) when it is a plain word, else ``auto``:
    it names the stage and the summary file, so a path or a space never gets through."""
    return value if isinstance(value, str) and TRIGGER.fullmatch(value) else "auto"


def _problem(message: dict[str, Any]) -> str | None:
    """Why a conversation line's ``message`` cannot be replayed (wrong field types)."""
    return content_problem(message.get("content"), "message.content") or \
        usage_problem(message.get("usage"), "message.usage")


def _build(chain: list[Line], recording: Recording, sidechain: bool = False) -> None:
    steps = StepBuilder(recording)
    compaction: Compaction | None = None
    for line in chain:
        data = line.data
        kind = data.get("type") if isinstance(data.get("type"), str) else None
        message = given if isinstance(given := data.get("message"), dict) else {}
        stamp = text_or_none(data.get("timestamp"))
        problem = _problem(message) if kind in MAIN_TYPES else None
        if problem:
            skip(recording, line.number, f"line {line.number}: {problem}; skipped")
        elif kind == "system" and data.get("subtype") == "compact_boundary":
            meta = _mapping(data.get("compactMetadata"))
            pre = meta.get("preTokens")
            compaction = steps.compaction(Compaction(
                by=AGENT, trigger=_trigger(meta.get("trigger")),
                pre_tokens=pre if isinstance(pre, int) else None,
                line=line.number, timestamp=stamp))
        elif kind == "system" and data.get("subtype") == "microcompact_boundary":
            meta = _mapping(data.get("microcompactMetadata"))
            ids = meta.get("compactedToolIds")
            pre = meta.get("preTokens")
            steps.compaction(Compaction(
                by=AGENT, trigger=_trigger(meta.get("trigger")),
                pre_tokens=pre if isinstance(pre, int) else None,
                cleared=[i for i in ids if isinstance(i, str)] if isinstance(ids, list) else [],
                line=line.number, timestamp=stamp))
        elif kind not in MAIN_TYPES or data.get("isMeta"):
            recording.skipped[_skip_kind(data, sidechain=sidechain)] += 1
        elif kind == "user" and data.get("isCompactSummary"):
            summary = {"role": "user", "content": message.get("content", "")}
            if compaction is not None and not compaction.kept:
                compaction.summary = message_text(summary)
                compaction.kept = [summary]
            else:
                steps.user(summary["content"])
        elif kind == "user":
            steps.user(message.get("content", ""))
        elif data.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            recording.skipped["api-error"] += 1
        else:
            content = message.get("content")
            steps.assistant(content if isinstance(content, list) else
                            [{"type": "text", "text": str(content or "")}],
                            message_id=text_or_none(message.get("id")),
                            usage=message.get("usage"),
                            model=text_or_none(message.get("model")), line=line.number,
                            stop_reason=text_or_none(message.get("stop_reason")),
                            timestamp=stamp)
    steps.finish()
