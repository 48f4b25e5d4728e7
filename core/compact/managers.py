"""Who manages the context: one name for each thing that can keep a conversation in its window.

ctxlab shows several of them side by side — its own pipeline, plain truncation, the
Messages API's two server-side managers, a client seen through ``ctxlab watch``, a recorded
agent in a replay — and each has exactly one name, used everywhere the question "whose work
is this?" comes up: a row of the stage table says whose stage it is, a ``stage`` event's
``by`` and ``run_start``'s ``context_manager`` carry the name on the wire, and a
``ctxlab compare`` strategy says which one it plays. The words a reader sees for each are the
UI's business (its locales), never these identifiers.

Older logs spelled some of them differently; :func:`manager_names` and :func:`read_by` read
those spellings in today's names, so a log written before this vocabulary still means what
it meant.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Manager(StrEnum):
    """One way of keeping the context small; the value is the wire name."""

    PIPELINE = "ctxlab"  # ctxlab's staged pipeline: the course's s08
    TRUNCATE = "truncate"  # plain truncation: a pair-aware sliding window, nothing kept
    API_EDIT = "api-edit"  # the Messages API's context editing (clear tool uses / thinking)
    API_COMPACT = "api-compact"  # the Messages API's server compaction
    OBSERVATION_MASKING = "observation-masking"  # old tool results → placeholders, always
    CLIENT = "client"  # a client seen through ctxlab watch (what it did is inferred)
    CLAUDE_CODE = "claude-code"  # a recorded Claude Code session, replayed
    CODEX = "codex"  # a recorded Codex rollout, replayed
    AGENT = "agent"  # a recorded agent of no known make (a messages file, a request log)

    @property
    def recorded(self) -> bool:
        """An agent ctxlab replays from a recording: it only reports what that agent did."""
        return self in RECORDED

    @property
    def server(self) -> bool:
        """One of the Messages API's own managers (it acts inside the request)."""
        return self in SERVER


RECORDED = frozenset({Manager.CLAUDE_CODE, Manager.CODEX, Manager.AGENT})
SERVER = frozenset({Manager.API_EDIT, Manager.API_COMPACT})
JOIN = "+"  # run_start.context_manager: several managers at once, ``ctxlab+api-compact``

# Names older logs (and callers) used for a whole manager: ``s08`` for the pipeline in
# ``context_manager``, and the offline engine's own name for the API's context editing.
OLDER_NAMES: dict[str, Manager] = {"s08": Manager.PIPELINE,
                                   "api-clear-tool-uses": Manager.API_EDIT}

# ``stage.by`` as logs wrote it before truncation and the API's two managers had names of
# their own: ``api`` stood for both of the API's managers, ``ctxlab`` also for truncation and
# for the offline play of context editing. (by, stage) → today's name.
OLDER_BY: dict[tuple[str, str], Manager] = {
    ("api", "api_compaction"): Manager.API_COMPACT,
    ("ctxlab", "sliding_window"): Manager.TRUNCATE,
    ("ctxlab", "api_clear_tool_uses"): Manager.API_EDIT,
}
OLDER_API_BY = "api"  # any other stage it named was one of the API's edits


def parse_manager(name: str) -> Manager:
    """``name`` as a manager, older names read as today's; a ValueError lists the known ones."""
    try:
        return OLDER_NAMES.get(name) or Manager(name)
    except ValueError:
        known = ", ".join(m.value for m in Manager)
        raise ValueError(f"unknown context manager {name!r}; one of {known}") from None


def manager_names(text: str) -> tuple[str, ...]:
    """The managers of a ``context_manager`` value, in order: older names read as today's,
    a name this version does not know kept as it is (a newer log still reads)."""
    names = (OLDER_NAMES.get(part, part) for part in text.split(JOIN) if part)
    return tuple(dict.fromkeys(str(name) for name in names))


def joined(managers: Iterable[str]) -> str:
    """``context_manager`` on the wire: each manager once, in order, joined by ``+``."""
    return JOIN.join(manager_names(JOIN.join(managers)))


def read_by(by: str, stage: str) -> str:
    """A stage event's ``by`` in today's names (an older log's spelling included)."""
    older = OLDER_BY.get((by, stage))
    if older is not None:
        return older.value
    return Manager.API_EDIT.value if by == OLDER_API_BY else by
