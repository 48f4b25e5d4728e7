"""Compaction: a stage that changed the context, what it archived, and what broke."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.compact.managers import Manager, read_by
from core.events.base import LOCAL_ONLY, Event


@dataclass(frozen=True)
class StageSnapshot:
    """The message lists one stage received and produced, recorded by the stage itself.

    Stages never mutate a message in place (:class:`~core.measure.Measured` copies what it
    changes), so two shallow copies of the list are exact and cheap. Recorded only when a
    front end asks (``record_stages``): the inspector shows what the stage saw, not a guess.
    ``before_sizes`` and ``after_sizes`` are each message's JSON chars as the stage measured
    them, so the inspector states sizes without measuring.
    """

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    before_sizes: list[int] = field(default_factory=list)
    after_sizes: list[int] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Stage(Event):
    """A compaction stage changed something. ``ledger`` holds this stage's ledger entries.

    ``by`` says whose stage it is, in the vocabulary of :mod:`core.compact.managers`:
    ``ctxlab`` for this pipeline, and the other managers by their names (truncation, the
    Messages API's context editing or compaction, a watched client, a recorded agent in a
    replay), so one timeline can show them side by side; an older log's spelling reads as
    today's name.
    Such a stage may also say what set it off (``trigger``) and at how many tokens
    (``pre_tokens``, and ``post_tokens`` when it reported what it kept); its summary, when
    there is one, is a file listed in ``files``.

    Its cache cost: ``first_changed`` is the index of the first message it changed (the
    cached prefix ends there) and ``rewrite_tokens`` the estimated tokens from that point on
    that the next call must write to the prompt cache again (``None``: not known).
    ``archived`` is the archive's own record of each of ``files`` it lists
    (:mod:`core.archive.listing`). ``snapshot`` (in-process only, never printed) holds the
    before and after lists. A ``reactive_compact`` says which refusal set it off
    (``refusal``) and whether a scenario scripted it (``refusal_scripted``): a scripted
    "prompt is too long" on a history far under the limit must not read as an API's.
    """

    type: ClassVar[str] = "stage"
    stage: str
    before_chars: int
    after_chars: int
    before_messages: int
    after_messages: int
    files: tuple[str, ...] = ()
    tool_use_ids: tuple[str, ...] = ()
    ledger: tuple[dict[str, Any], ...] = ()
    by: str = Manager.PIPELINE.value
    trigger: str | None = None  # another agent's own compaction: "auto", "manual"…
    pre_tokens: int | None = None  # …and the tokens it reported before compacting
    post_tokens: int | None = None  # …and after (Claude Code's ``postTokens``)
    first_changed: int | None = None  # cache cost: first message index changed…
    rewrite_tokens: int | None = None  # …and the tokens after it to write to the cache again
    archived: tuple[dict[str, Any], ...] = ()
    # a recorded agent's compaction: the usage of its own compaction call, when recorded
    usage: dict[str, Any] | None = None
    # reactive_compact: the refusal that set it off, in the provider's words, and whether a
    # scenario's script made it up (the scripted provider; no API was asked)
    refusal: str | None = None
    refusal_scripted: bool = False
    snapshot: StageSnapshot | None = field(default=None, repr=False, compare=False,
                                           metadata=LOCAL_ONLY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by", read_by(self.by, self.stage))


@dataclass(frozen=True, kw_only=True)
class ArchiveListing(Event):
    """What the workspace's archive already held when this run's compaction first used it
    (a resumed session, a scenario run again in the same workspace): one record per file its
    manifest lists, as ``stage.archived`` has them. Emitted once per compactor, before its
    first stage, and only when there is something to list."""

    type: ClassVar[str] = "archive_listing"
    files: tuple[dict[str, Any], ...]


@dataclass(frozen=True, kw_only=True)
class PointerBroken(Event):
    """A pointer ctxlab wrote no longer resolves (its file was moved or deleted)."""

    type: ClassVar[str] = "pointer_broken"
    tool_use_id: str
    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class PairViolation(Event):
    """The history about to be sent breaks tool_use/tool_result pairing (a break switch did it).

    Emitted just before a main model call, once per violation the API validator reports;
    ``stage`` names the compaction stage that introduced it, when one is known.
    """

    type: ClassVar[str] = "violation"
    kind: str  # "orphan_tool_result" | "unanswered_tool_use"
    message_index: int
    tool_use_id: str
    stage: str | None = None
