"""The model's tools: the course's five base tools plus the ``compact`` schema.

:data:`TOOL_SCHEMAS` is what the main call offers the model (Anthropic tool format).
:class:`ToolRunner` executes a ``tool_use`` inside one workspace and always answers with a
:class:`ToolOutcome`: a model's mistake (a missing file, a path outside, an ambiguous edit)
is a result the model can read and correct, never an exception that ends the turn.

``compact`` is listed but never run here: the loop answers it and compacts after the batch
(the course's deferred semantics), so asking the runner for it is an error.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from pathlib import Path
from typing import Any

from core.tools import bash, edit_file, glob, read_file, write_file
from core.tools.confine import workspace_root
from core.tools.outcome import ToolOutcome, error

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
            return await asyncio.to_thread(
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
            return await self._glob(input.get("pattern"))
        return error(f"unknown tool: {name}", "unknown_tool")

    async def _glob(self, pattern: object) -> ToolOutcome:
        """A worker thread cannot be cancelled from outside, so a cancelled turn sets the
        walk's ``stop`` event and the walk ends at its next step instead of running on."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(
                glob.glob_files, self.workspace, pattern, self.glob_limit, stop=stop
            )
        except asyncio.CancelledError:
            stop.set()
            raise
