"""How to open the workbench: its settings, and the names it shows for workspaces."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.config import Thresholds
from core.scenarios import DEFAULT_SCENARIO
from core.sources import Source
from tui.i18n import t
from tui.themes import DEFAULT_THEME

if TYPE_CHECKING:
    from core.providers.api_context import ApiContext


@dataclass
class AppConfig:
    """How to open the workbench (``ctxlab demo`` flags, or a test's fixed settings)."""

    scenario: str | None = DEFAULT_SCENARIO  # None: live mode with a prompt
    workspace: Path | None = None  # None: a fresh temporary copy per scenario
    theme: str = DEFAULT_THEME
    speed: float = 1.0
    paused: bool = False
    provider: str = "scripted"
    model: str | None = None
    display_workspace: str | None = None  # shown instead of the path (stable screenshots)
    thresholds: Thresholds | None = None
    breaks: frozenset[str] = field(default_factory=frozenset)
    lang: str = "en"
    count_tokens: bool = False  # live mode: the API's token count beside the estimate
    api_context: ApiContext | None = None  # live mode: the API's own context management
    welcome: bool = False  # open on the welcome card (the run waits behind it, paused)
    auto_pause: bool = False  # pause the first time each kind of stage fires
    demo_reason: bool = False  # plain `ctxlab` without a key: the card says why and how to go live
    # Another event source to show instead of ctxlab's own session (a replay, a proxy):
    # called with the workspace at each (re)start; see core/sources/__init__.py.
    source: Callable[[Path], Source] | None = None

    @property
    def live(self) -> bool:
        """ctxlab's own session taking prompts (no scenario, no other source)."""
        return self.scenario is None and self.source is None


def shorten(path: Path, temporary: bool = False) -> str:
    """``(temporary) name`` only for a workspace the app made itself; ``~/…`` under home."""
    text = str(path)
    home = str(Path.home())
    if temporary:
        return t("header.temporary", name=path.name)
    return "~" + text[len(home):] if text.startswith(home) else text


def slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)[:40] or "run"
