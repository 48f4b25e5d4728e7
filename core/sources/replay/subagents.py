"""A session's subagents: what each one was, and what its own requests cost.

Claude Code writes a subagent's conversation (a Task/Agent tool call) to
``<session>/subagents/agent-<id>.jsonl``, every record ``isSidechain: true``, beside
``agent-<id>.meta.json`` (``agentType``, ``description``, ``toolUseId`` of the call that
started it, ``spawnDepth``). Its requests are not in the main transcript, yet they were
made and paid for; so a replay lists each subagent with its requests, compactions and
tokens, to be added to the main session's (``ctxlab replay --with-subagents``) or opened
as a session of its own (``ctxlab replay <session>/subagents/agent-<id>.jsonl``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from core.sources.replay.model import Recording, ReplayError
from core.untrusted import UntrustedFileError, parse_json, read_limited
from core.usage import context_tokens

META_BYTES = 64_000  # a meta file is a few hundred bytes


@dataclass(frozen=True)
class SubagentTotals:
    """One subagent transcript: who it was (its meta file) and what it used."""

    path: str
    agent_type: str | None = None
    description: str | None = None
    tool_use_id: str | None = None  # the main session's call that started it
    spawn_depth: int | None = None
    requests: int = 0
    compactions: int = 0
    input_tokens: int = 0  # the context tokens of every request, added up
    output_tokens: int = 0
    error: str | None = None  # why it could not be read (then the counts are 0)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_meta(transcript: Path) -> dict[str, Any]:
    """``agent-<id>.meta.json`` beside ``transcript`` ({} when absent or unreadable: the
    transcript is still a subagent's, only unnamed)."""
    meta = transcript.with_name(transcript.name.removesuffix(".jsonl") + ".meta.json")
    try:
        data = parse_json(read_limited(meta, META_BYTES), str(meta))
    except (OSError, UntrustedFileError):
        return {}
    return data if isinstance(data, dict) else {}


def named(path: Path) -> SubagentTotals:
    """The subagent as its meta file names it, nothing counted yet."""
    meta = read_meta(path)
    depth = meta.get("spawnDepth")
    return SubagentTotals(path=str(path), agent_type=_text(meta.get("agentType")),
                          description=_text(meta.get("description")),
                          tool_use_id=_text(meta.get("toolUseId")),
                          spawn_depth=depth if isinstance(depth, int)
                          and not isinstance(depth, bool) else None)


def totals(path: Path, recording: Recording) -> SubagentTotals:
    output = 0
    for exchange in recording.exchanges:
        given = exchange.usage.get("output_tokens") if exchange.usage else None
        output += given if isinstance(given, int) else 0
    return replace(
        named(path), requests=len(recording.exchanges),
        compactions=len(recording.compactions),
        input_tokens=sum(context_tokens(e.usage) or 0 for e in recording.exchanges),
        output_tokens=output)


def read_subagents(paths: list[Path], load: Callable[[Path], Recording]
                   ) -> list[SubagentTotals]:
    """Every subagent transcript read with ``load``; one that cannot be read is listed
    with its reason, and the others still count."""
    out = []
    for path in paths:
        try:
            out.append(totals(path, load(path)))
        except ReplayError as exc:
            out.append(replace(named(path), error=str(exc)))
    return out
