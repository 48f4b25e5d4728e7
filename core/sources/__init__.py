"""The event-source seam: anything that produces a stream of engine events for the workbench.

The workbench, ``ctxlab run --headless`` and ``compare`` never care *what* produces the
events they draw: ctxlab's own agent loop (:class:`core.sources.agent.session.AgentSession`) is one
source; a replay of a recorded session and a proxy watching another agent are others. A
source is anything with this shape:

* ``name`` (shown to people) and ``kind`` (``"ctxlab"``, ``"replay"``, ``"proxy"`` ...);
* ``capabilities``: which optional controls it honours (:data:`PAUSE`, :data:`STEP`,
  :data:`CANCEL`, :data:`SEND`, :data:`THRESHOLDS`, :data:`NEXT_STAGE`); a front end
  offers only those, so a replay that cannot take a prompt simply does not list :data:`SEND`;
* ``async run(emit)``: drive the source until it is done or its task is cancelled, handing
  every :class:`~core.events.Event` to ``emit`` and ending with exactly one ``run_end``.

Events from other sources use the same types; a ``stage`` event's ``by`` names whose
compaction it was, so stages of several sources can stand side by side.
"""

from __future__ import annotations

from typing import Final, Literal, Protocol, TypeGuard, overload, runtime_checkable

from core.events import Sink

PAUSE: Final = "pause"  # pause(), resume(), paused
STEP: Final = "step"  # step(): let one more model call (or recorded step) through
CANCEL: Final = "cancel"  # cancel(): stop at the next await; run_end still comes
SEND: Final = "send"  # send(prompt): a new user request in the same session
THRESHOLDS: Final = "thresholds"  # thresholds, set_thresholds(value)
NEXT_STAGE: Final = "next_stage"  # next_compaction(): play until a step with a stage, then pause


@runtime_checkable
class EventSource(Protocol):
    """What the workbench needs from a source; the controls are optional, by capability."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    async def run(self, emit: Sink) -> bool | None:
        """Play to the end (or until cancelled); a source that can tell says whether it
        ended normally (True), the others return None."""
        ...


class Pausable(EventSource, Protocol):
    """A source that lists :data:`PAUSE`."""

    @property
    def paused(self) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class Steppable(EventSource, Protocol):
    """A source that lists :data:`STEP`."""

    def step(self) -> None: ...


class StageSeeking(EventSource, Protocol):
    """A source that lists :data:`NEXT_STAGE`."""

    def next_compaction(self) -> None: ...


# ``can`` narrows the source to the protocol of the controls the capability names, so a
# caller that checked ``can(source, PAUSE)`` may call ``source.pause()`` as it is typed.
@overload
def can(source: object, capability: Literal["pause"]) -> TypeGuard[Pausable]: ...
@overload
def can(source: object, capability: Literal["step"]) -> TypeGuard[Steppable]: ...
@overload
def can(source: object, capability: Literal["next_stage"]) -> TypeGuard[StageSeeking]: ...
@overload
def can(source: object, capability: str) -> bool: ...
def can(source: object, capability: str) -> bool:
    """Whether ``source`` offers ``capability`` (a source without the attribute offers none)."""
    return capability in getattr(source, "capabilities", frozenset())
