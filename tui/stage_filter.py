"""The Stages panel's filter: one stage name at a time, chosen by key or from the palette.

A long replay lists hundreds of stages; a learner asking "what did the summaries do?" should
not scroll past every ``fit_tool_results`` to find them. The filter is one stage name (or
none); ``f`` steps through the names in the order they first fired and then back to all, and
the palette lists each name so a presenter can type it. The border always says what is
shown, so a filtered panel never passes for the whole run.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Protocol

from tui.i18n import t


def next_filter(current: str | None, names: list[str]) -> str | None:
    """The name after ``current`` (the first after none), and none after the last."""
    if current not in names:
        return names[0] if names else None
    at = names.index(current) + 1
    return names[at] if at < len(names) else None


def filter_note(only: str | None, shown: int, total: int, names: list[str]) -> str:
    """The border's word on the filter: which stage and how many of all, or the key that
    filters (only once there is more than one name to choose from)."""
    if only is not None:
        return t("stages.filter", stage=only, n=shown, total=total)
    return t("stages.filter_hint") if len(names) > 1 else ""


class Filterable(Protocol):
    """What the palette needs of the Stages panel (kept as a protocol: the panel imports
    this module, so this module must not import the panel)."""

    only: str | None

    def stage_names(self) -> list[str]: ...

    def set_filter(self, name: str | None) -> None: ...


def palette_entries(timeline: Filterable) -> list[tuple[str, Any, str]]:
    """``(title, callback, help)`` per stage name shown, and "every stage" when filtered."""
    out = [(t("palette.stage_filter", stage=name), partial(timeline.set_filter, name),
            t("palette.stage_filter_help", stage=name))
           for name in timeline.stage_names() if name != timeline.only]
    if timeline.only is not None:
        out.append((t("palette.stage_filter_all"), partial(timeline.set_filter, None),
                    t("palette.stage_filter_all_help")))
    return out
