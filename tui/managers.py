"""Who manages the context, in the reader's words.

Core names each manager once (:class:`core.events.Manager`: ``ctxlab``, ``api-compact``,
``claude-code``…), and those names are what a script reads in ``--json``. The workbench says
them in the reader's language instead — the status line, the stage timeline, the inspector,
the compare screen — from ``manager.<name>`` in the locales. A name this version does not
know (a log written by a newer one) is shown as it is rather than hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.i18n import t

AND = " + "  # several managers at once, as the status line says them


def manager_label(name: str) -> str:
    """One manager in words: ``API compaction`` for ``api-compact``."""
    key = f"manager.{name}"
    text = t(key)
    return name if text == key else text


def managers_label(managers: Sequence[str]) -> str:
    """``run_start``'s managers in words: ``s08 pipeline + API compaction``."""
    return AND.join(manager_label(name) for name in managers)


def by_label(name: str) -> str:
    """Whose stage it is, as a stage row or the inspector says it: ``by Claude Code``."""
    return t("manager.by", manager=manager_label(name))
