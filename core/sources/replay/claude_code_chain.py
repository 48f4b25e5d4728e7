"""Rebuilding the conversation Claude Code sent from the tree its transcript is.

Records with a ``uuid`` point at their parent through ``parentUuid``; the conversation is
the chain walked up from the last main record. Three shapes of the real file make that walk
alone wrong:

* **Parallel tool calls fork.** Since 2.1 an assistant reply is written one record per
  content block (thinking, text, each ``tool_use``) chained one after the other, and each
  ``tool_result`` record hangs off *its own* ``tool_use`` record
  (``sourceToolAssistantUUID``). Two parallel calls are therefore two branches, and the walk
  from the leaf keeps one. :func:`merge_forks` puts every block of the reply (same
  ``message.id``) back together, followed by all its results in file order: the one
  assistant message and one user message Claude Code sent.
* **A compaction starts a new root.** ``compact_boundary`` has ``parentUuid: null`` and
  names the record it followed as ``logicalParentUuid``. When that record is not in the
  file (a resumed or rewritten session), the boundary is joined to the record written just
  before it, with a notice, rather than losing everything before it.
* **Any other broken link** (a hand-edited file): the longest chain is followed, with a
  notice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.sources.replay.model import Recording
from core.sources.replay.reading import Line

MAIN_TYPES = frozenset({"user", "assistant"})
LINKED_TYPES = MAIN_TYPES | {"system", "attachment"}  # what a conversation chain holds


@dataclass
class Tree:
    """The linked records of one transcript, by uuid, and where each boundary is joined."""

    nodes: dict[str, Line] = field(default_factory=dict)
    # a boundary whose logical parent is missing -> the record just before it in the file
    joined: dict[str, str] = field(default_factory=dict)

    def parent(self, data: dict[str, Any]) -> str | None:
        parent = data.get("parentUuid")
        if parent is None and data.get("subtype") == "compact_boundary":
            logical = data.get("logicalParentUuid")
            parent = logical if isinstance(logical, str) and logical in self.nodes else \
                self.joined.get(str(data.get("uuid")))
        return parent if isinstance(parent, str) else None


def is_boundary(data: dict[str, Any]) -> bool:
    return data.get("type") == "system" and data.get("subtype") == "compact_boundary"


def join_boundaries(tree: Tree, lines: list[Line], recording: Recording,
                    sidechain: bool) -> None:
    """Join each boundary whose logical parent is missing to the linked conversation
    record written just before it (same side: main or sidechain)."""
    previous: Line | None = None
    for line in lines:
        data = line.data
        if bool(data.get("isSidechain")) != sidechain:
            continue
        logical = data.get("logicalParentUuid")
        if is_boundary(data) and data.get("parentUuid") is None and \
                isinstance(logical, str) and logical not in tree.nodes:
            if previous is not None:
                tree.joined[str(data["uuid"])] = str(previous.data["uuid"])
                recording.note("boundary-joined", f"line {line.number}: the compaction's "
                               f"logical parent {logical[:8]}… is not in the file; joined to "
                               f"line {previous.number}, the record before it", line.number)
            else:
                recording.note("boundary-joined", f"line {line.number}: the compaction's "
                               f"logical parent {logical[:8]}… is not in the file and "
                               "nothing precedes it: the session starts there", line.number)
        if str(data.get("type")) in LINKED_TYPES:
            previous = line


def walk(start: Line, tree: Tree) -> tuple[list[Line], str | None]:
    """The chain from ``start`` up to its root (root first) and the missing parent, if any."""
    chain: list[Line] = []
    seen: set[str] = set()
    current: Line | None = start
    missing = None
    while current is not None:
        chain.append(current)
        seen.add(current.data.get("uuid", ""))
        parent = tree.parent(current.data)
        if parent is None or parent in seen:
            break
        current = tree.nodes.get(parent)
        if current is None:
            missing = parent
    chain.reverse()
    return chain, missing


def main_chain(leaf: Line, tree: Tree, recording: Recording,
               sidechain: bool = False) -> list[Line]:
    """The conversation ending at ``leaf``; if its parent chain is broken, the longest one.
    (``sidechain``: the file is a subagent's transcript, whose lines are all sidechain.)"""
    chain, missing = walk(leaf, tree)
    if missing is None:
        return chain
    depth: dict[str, int] = {}
    for uuid in tree.nodes:
        _depth(uuid, tree, depth)
    candidates = [u for u, line in tree.nodes.items()
                  if str(line.data.get("type")) in MAIN_TYPES
                  and bool(line.data.get("isSidechain")) == sidechain]
    # None at all when a later line of another kind took the leaf's uuid: keep the leaf's.
    best = max(candidates, key=lambda u: (depth[u], tree.nodes[u].number), default=None)
    if best is not None and depth[best] > len(chain):
        chain, _ = walk(tree.nodes[best], tree)
    recording.note("broken-chain", f"the parent chain is broken at line {chain[0].number} "
                   f"(its parent {missing[:8]}… is not in the file): following the longest "
                   f"chain, {len(chain):,} of {len(tree.nodes):,} linked lines",
                   chain[0].number)
    return chain


def _depth(uuid: str, tree: Tree, depth: dict[str, int]) -> int:
    """Chain length up from ``uuid`` (iterative: real sessions are thousands deep)."""
    path: list[str] = []
    current: str | None = uuid
    while current is not None and current in tree.nodes and current not in depth:
        if current in path:
            break  # a cycle: cut it here
        path.append(current)
        current = tree.parent(tree.nodes[current].data)
    base = depth.get(current, 0) if current is not None else 0
    for u in reversed(path):
        base += 1
        depth[u] = base
    return depth[uuid]


def message_id(data: dict[str, Any]) -> str | None:
    message = data.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if data.get("type") == "assistant" and isinstance(value, str) else None


def _is_result(data: dict[str, Any]) -> bool:
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return data.get("type") == "user" and isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def merge_forks(chain: list[Line], tree: Tree) -> tuple[list[Line], int]:
    """``chain`` with the sibling branches of each assistant reply merged back in: all the
    reply's blocks (file order), then all its tool results (file order). Also the number of
    records taken in from other branches."""
    by_message: dict[str, list[Line]] = {}
    children: dict[str, list[Line]] = {}
    for line in tree.nodes.values():
        mid = message_id(line.data)
        if mid is not None:
            by_message.setdefault(mid, []).append(line)
        parent = line.data.get("parentUuid")
        if isinstance(parent, str) and _is_result(line.data):
            children.setdefault(parent, []).append(line)
    on_chain = {id(line) for line in chain}
    out: list[Line] = []
    done: set[int] = set()
    for line in chain:
        if id(line) in done:
            continue
        mid = message_id(line.data)
        group = [line]
        if mid is not None:
            # (the line itself too: a later record reusing its uuid hides it from the tree)
            siblings = [g for g in by_message.get(mid, []) if g is not line and
                        bool(g.data.get("isSidechain")) == bool(line.data.get("isSidechain"))]
            group = sorted([line, *siblings], key=lambda g: g.number)
            results = [r for g in group for r in children.get(str(g.data.get("uuid")), [])]
            group += sorted(results, key=lambda r: r.number)
        for member in group:
            if id(member) not in done:
                done.add(id(member))
                out.append(member)
    return out, sum(1 for line in out if id(line) not in on_chain)
