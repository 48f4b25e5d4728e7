"""The model's tools: the course's five base tools plus the ``compact`` schema.

:data:`TOOL_SCHEMAS` is what the main call offers the model (Anthropic tool format).
:class:`ToolRunner` executes a ``tool_use`` inside one workspace and always answers with a
:class:`ToolOutcome`: a model's mistake (a missing file, a path outside, an ambiguous edit)
is a result the model can read and correct, never an exception that ends the turn.

Whatever goes wrong inside a tool — a ``MemoryError`` on a huge file, an ``OSError`` no
tool expected, a ``RecursionError`` — the runner answers with an error outcome too, and
every string of the outcome is made valid Unicode (a lone surrogate would break the next
API request and every one after it).

``compact`` is listed but never run here: the loop answers it and compacts after the batch
(the course's deferred semantics), so asking the runner for it is an error.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.tools import bash, edit_file, glob, read_file, write_file
from core.tools.confine import workspace_root
from core.tools.encoding import shown, shown_value
from core.tools.outcome import ToolOutcome, error

log = logging.getLogger(__name__)

__all__ = ["COMPACT_SCHEMA", "TOOL_NAMES", "TOOL_SCHEMAS", "ToolOutcome", "ToolRunner"]

COMPACT_SCHEMA: dict[str, Any] = {
    "name": "compact",
    "description": "Summarize earlier conversation to free context space.",
    "input_schema": {"type": "object", "properties": {}},
}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    bash.SCHEMA,
    read_file.SCHEMA,
    write_file.SCHEMA,
    edit_file.SCHEMA,
    glob.SCHEMA,
    COMPACT_SCHEMA,
]

TOOL_NAMES: tuple[str, ...] = tuple(s["name"] for s in TOOL_SCHEMAS)


def tool_schemas() -> list[dict[str, Any]]:
    """A private copy of the schemas, for callers that want to adjust descriptions."""
    return copy.deepcopy(TOOL_SCHEMAS)


class ToolRunner:
    """Runs the five base tools confined to ``workspace``.

    File tools run in a worker thread so a large read or a deep glob never stalls the event
    loop the UI and the stream share; ``bash`` is an asyncio subprocess, killed on timeout
    or when the awaiting task is cancelled.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        bash_timeout: float = bash.DEFAULT_TIMEOUT,
        output_cap: int = bash.DEFAULT_OUTPUT_CAP,
        glob_limit: int = glob.DEFAULT_LIMIT,
        spool_dir: Path | None = None,
    ) -> None:
        self.workspace = workspace_root(workspace)
        # Where bash spools an output that outgrows its cap (the archive's folder), so the
        # whole output can be kept; None keeps only the head and the tail.
        self.spool_dir = spool_dir
        self.bash_timeout = bash_timeout
        self.output_cap = output_cap
        self.glob_limit = glob_limit

    async def run(self, name: str, input: dict[str, Any]) -> ToolOutcome:
        """One call's outcome; never raises (but for the turn's own cancellation)."""
        try:
            outcome = await self._dispatch(name, input)
        except Exception as exc:  # MemoryError and RecursionError are Exceptions too
            log.debug("tool %s failed", name, exc_info=True)
            outcome = unexpected(name, exc)
        return valid_unicode(outcome)

    async def _dispatch(self, name: str, input: dict[str, Any]) -> ToolOutcome:
        if not isinstance(input, dict):
            return error(f"{name} input must be an object", "bad_input")
        if name == "compact":
            return error("compact is handled by the agent loop, not the tool runner", "bad_input")
        if name == "bash":
            return await bash.run_bash(
                self.workspace,
                input.get("command"),
                timeout=self.bash_timeout,
                output_cap=self.output_cap,
                spool_dir=self.spool_dir,
            )
        root = self.workspace
        if name == "read_file":
            return await self._stoppable(
                read_file.read_file,
                root,
                input.get("path"),
                input.get("limit"),
                input.get("offset"),
            )
        if name == "write_file":
            return await asyncio.to_thread(
                write_file.write_file, root, input.get("path"), input.get("content")
            )
        if name == "edit_file":
            return await asyncio.to_thread(
                edit_file.edit_file,
                root,
                input.get("path"),
                input.get("old_text"),
                input.get("new_text"),
            )
        if name == "glob":
            return await self._stoppable(
                glob.glob_files, self.workspace, input.get("pattern"), self.glob_limit
            )
        return error(f"unknown tool: {name}", "unknown_tool")

    async def _stoppable(self, func: Callable[..., ToolOutcome], *args: Any) -> ToolOutcome:
        """Run ``func(*args, stop=event)`` in a worker thread. A thread cannot be cancelled
        from outside, so a cancelled turn sets ``stop`` and the work (a glob walk, a scan
        to a read offset) ends at its next step instead of running on."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(func, *args, stop=stop)
        except asyncio.CancelledError:
            stop.set()
            raise


def unexpected(name: str, exc: BaseException) -> ToolOutcome:
    """The outcome of a tool that raised: the turn goes on, and the model hears why."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__ + (f": {detail[:200]}" if detail else "")
    return error(f"{name} failed unexpectedly ({kind}); it did not finish", "internal",
                 exception=type(exc).__name__)


def valid_unicode(outcome: ToolOutcome) -> ToolOutcome:
    """The outcome with every lone surrogate in its text shown as an escape: whatever a
    tool missed, nothing it returns can make the next request unencodable."""
    content = shown(outcome.content)
    meta = {shown(str(k)): shown_value(v) for k, v in outcome.meta.items()}
    if content == outcome.content and meta == outcome.meta:
        return outcome
    # (``dataclasses.replace``: the name ``replace`` here is the submodule core.tools.replace)
    return dataclasses.replace(outcome, content=content, meta=meta)
