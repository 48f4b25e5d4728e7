"""Per-widget event handling: each panel says which engine events it draws.

A widget (or the app) mixes in :class:`Routed` and marks methods with
:func:`handles`; the app hands every engine event to each routed widget it composed, and
each one calls its own handlers for that event's type. No central switch knows every
widget: adding a panel is its widget (with its handlers) plus one line in ``compose``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from core.events import Event

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "_ctxlab_handles"


def handles(*types: type[Event]) -> Callable[[F], F]:
    """Mark a method as the handler of these event types (sync or async)."""

    def mark(method: F) -> F:
        setattr(method, _MARK, types)
        return method

    return mark


class Routed:
    """A mixin: :meth:`route` calls the instance's handlers for one event, in class order."""

    _routes: ClassVar[dict[type[Event], tuple[str, ...]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        routes: dict[type[Event], list[str]] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                for kind in getattr(member, _MARK, ()):
                    names = routes.setdefault(kind, [])
                    if name not in names:
                        names.append(name)
        cls._routes = {kind: tuple(names) for kind, names in routes.items()}

    async def route(self, event: Event) -> None:
        for name in self._routes.get(type(event), ()):
            result = getattr(self, name)(event)
            if inspect.isawaitable(result):
                await result
