"""Observation masking: the last turns' tool results stay whole, every older one is a placeholder.

JetBrains Research's "The Complexity Trap" (2025) found that this simplest of policies —
keep the agent's reasoning and actions, hide all but the last few turns' tool observations —
matches LLM summarisation on SWE-bench-style trajectories at about half the cost of a raw
agent. ctxlab plays it so a recorded session can be priced under it beside the others (the
``observation-masking`` manager; its one stage is ``observation_mask``).

* **keep** — the tool observations of the ``keep`` most recent turns (10, as in the paper)
  stay whole; every older one is replaced by a short placeholder naming the archive file
  that holds the original, saved byte-exact first, so nothing leaves the context
  unrecoverably. A turn is an assistant message with tool uses and the results that answer
  it, so a batch of parallel reads counts once: counting results instead would mask part of
  a batch before the model had read it. The latest turn is never masked, whatever ``keep``
  says (0 included): its results are what the model is about to see for the first time.
* **no trigger** — it applies on every ``prepare``, whatever the size: masking is cheap and
  keeps the context short from the start, which is the paper's point.
* it never drops a message and never summarises; ``compact`` and overflow recovery fall back
  to the s08 engine's, as :class:`~core.compact.clear_tool_uses.ApiClearToolUses` does.

A what-if run calls ``prepare`` once per recorded request on sessions with thousands of
them, so masking is incremental: the engine remembers the history it returned and the
turns whose results are still whole; when the caller sends that history back with new
messages appended (what an agent loop does), only the new messages are read and only the
results that just became old change — a new dict for each changed message, every other
message the same object, which a prefix-cache model relies on. Any other history is read
from the start (already masked results are recognised by their placeholder and left as
they are).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.archive.store import content_size
from core.compact.context import StageRun
from core.compact.sent import FollowingCompactor
from core.compact.stages import OBSERVATION_MASK
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import Event
from core.measure import Measured
from core.messages import blocks, is_block

MASK_PREFIX = "[old tool result masked; the original is saved at "


def placeholder(path: str) -> str:
    """What the model sees instead of an old result: short, and where to read it back."""
    return f"{MASK_PREFIX}{path}]"


def is_masked(content: Any) -> bool:
    return isinstance(content, str) and content.startswith(MASK_PREFIX)


@dataclass(frozen=True)
class Whole:
    """A tool result still whole: where it sits in the history."""

    msg_idx: int
    block_idx: int
    tool_use_id: str


@dataclass
class Turn:
    """One turn's results still whole. ``key`` is the index of the assistant message whose
    tool uses they answer (the result's own message when no tool use in view matches, as
    after a summary), so parallel results answering one message count as one turn."""

    key: int
    results: list[Whole] = field(default_factory=list)


@dataclass
class TurnReading:
    """The followed history read as far as it goes: which message asked for each tool use,
    and the turns whose results are still whole, oldest first."""

    asked_by: dict[str, int] = field(default_factory=dict)  # tool_use_id → assistant index
    turns: deque[Turn] = field(default_factory=deque)

    def read(self, messages: list[dict[str, Any]], start: int) -> None:
        """Read ``messages[start:]`` (what was appended since the last call)."""
        for i in range(start, len(messages)):
            for j, block in enumerate(blocks(messages[i])):
                if is_block(block, "tool_use"):
                    self.asked_by[block.get("id", "")] = i
                elif is_block(block, "tool_result") and not is_masked(block.get("content")):
                    tool_use_id = block.get("tool_use_id", "")
                    self._turn(self.asked_by.get(tool_use_id, i)).results.append(
                        Whole(i, j, tool_use_id))

    def _turn(self, key: int) -> Turn:
        """The turn ``key`` names: usually the newest; a new one when not in view."""
        for turn in reversed(self.turns):
            if turn.key == key:
                return turn
        self.turns.append(Turn(key))
        return self.turns[-1]

    def aged(self, keep: int) -> list[Whole]:
        """Take the results of every turn but the newest ``keep`` (at least the latest one)."""
        old: list[Whole] = []
        while len(self.turns) > max(keep, 1):
            old.extend(self.turns.popleft().results)
        return old


class ObservationMasking(FollowingCompactor):
    """Same interface as the s08 :class:`Compactor`; ``prepare`` masks instead of compacting."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset(), keep: int = 10) -> None:
        super().__init__(workspace, thresholds, summarizer, emit, frozenset())
        if keep < 0:
            raise ValueError(f"observation masking keeps a count of turns, not {keep}")
        self.keep = keep
        self._reading = TurnReading()  # the followed history's turns still whole

    async def prepare(self, messages: list[dict], active_request: str) -> list[dict]:
        """Mask every result of the turns older than the ``keep`` newest; the rest as it was."""
        await self.list_archive()
        history, start = self.followed.follow(messages)
        if start == 0:
            self._reading = TurnReading()  # read anew: masked results have their placeholder
        self._reading.read(history.messages, start)
        self._mask(history, self._reading.aged(self.keep))
        return self.followed.returned(history)

    def _mask(self, history: Measured, targets: list[Whole]) -> None:
        if not targets:
            return
        run = StageRun(OBSERVATION_MASK, self.ctx, history)
        try:
            for target in targets:
                block = history.messages[target.msg_idx]["content"][target.block_idx]
                original = block.get("content", "")
                path = self.ctx.archive.persist(target.tool_use_id, original)
                history.set_content(target.msg_idx, target.block_idx, placeholder(path))
                run.wrote(path)
                run.took(target.tool_use_id, content_size(original), path)
        except BaseException:
            run.abandon()
            raise
        run.finish()
