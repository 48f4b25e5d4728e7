"""``ctxlab demo`` and plain ``ctxlab``: open the workbench.

Textual is imported only inside the handlers, so ``ctxlab --version`` and the other
subcommands stay fast. ``ctxlab`` with no subcommand opens the demo unless an API key is
configured, in which case it opens a live session in the current directory.

The UI language is ``--lang``, else the locale's (``LC_ALL``, ``LC_MESSAGES``, ``LANG``:
Chinese when it starts with ``zh``), else English. In Chinese the demo plays the Chinese
edition of the default scenario, so the conversation matches the chrome.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

THEMES_HELP = "ctxlab-dark (default), ctxlab-light, projector"
ZH_SUFFIX = "-zh"  # refactor-auth-zh: the Chinese edition of a bundled scenario


def add_common(parser: argparse.ArgumentParser, inherit: bool = False) -> None:
    """The options every workbench invocation takes.

    ``inherit`` (for the ``demo`` subcommand): an option left out there keeps the value given
    before the subcommand, so ``ctxlab --lang zh demo`` is Chinese too.
    """
    from tui.cli.flags import add_break_flag

    unset = argparse.SUPPRESS if inherit else None
    parser.add_argument("--theme", default=unset, metavar="NAME", help=THEMES_HELP)
    parser.add_argument("--lang", default=unset, choices=("en", "zh"),
                        help="UI language (default: from LC_ALL / LC_MESSAGES / LANG, else en)")
    add_break_flag(parser, "disable one protection (teaching lab; never on by default)",
                   argparse.SUPPRESS if inherit else None)
    if not inherit:  # plain `ctxlab` only: the demo's model is scripted, there is nothing to count
        parser.add_argument("--count-tokens", action="store_true",
                            help="live mode: ask the API to count input tokens before each call")
        from tui.cli.flags import add_api_flags

        add_api_flags(parser)  # live mode: the API's own context management


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from core.scenarios import DEFAULT_SCENARIO
    from tui.cli.flags import add_threshold_flags

    parser = subparsers.add_parser(
        "demo", help="open the workbench playing a bundled scenario",
        description="Open the workbench playing a bundled scenario in a fresh temporary copy "
                    "of its sample workspace (your directories are never touched).")
    parser.add_argument("scenario", nargs="?", default=None,
                        help=f"a bundled scenario name or a scenario file "
                             f"(default {DEFAULT_SCENARIO}, or {DEFAULT_SCENARIO}"
                             f"{ZH_SUFFIX} in Chinese)")
    parser.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                        help="play in DIR instead of a temporary copy")
    parser.add_argument("--speed", type=float, default=1.0, metavar="X",
                        help="pace multiplier (2 = twice as fast; 1000 = no pauses)")
    parser.add_argument("--paused", action="store_true",
                        help="start paused: s steps one model call, space plays")
    parser.add_argument("--no-welcome", dest="welcome", action="store_false",
                        help="start playing at once, without the welcome card")
    parser.add_argument("--no-auto-pause", dest="auto_pause", action="store_false",
                        help="do not pause the first time each kind of stage fires")
    add_threshold_flags(parser)
    add_common(parser, inherit=True)
    parser.set_defaults(handler=run_demo)
    return parser


def language_from_args(args: argparse.Namespace) -> str:
    """``--lang`` if given, else the locale's language."""
    from tui.i18n import detect_language

    return getattr(args, "lang", None) or detect_language()


def default_scenario(lang: str) -> str:
    """The default scenario, in the UI's language when a translation is bundled."""
    from core.scenarios import DEFAULT_SCENARIO, bundled_names

    translated = f"{DEFAULT_SCENARIO}{ZH_SUFFIX}"
    return translated if lang == "zh" and translated in bundled_names() else DEFAULT_SCENARIO


def run_demo(args: argparse.Namespace) -> int:
    from tui.app import AppConfig

    lang = language_from_args(args)
    try:
        config = AppConfig(scenario=args.scenario or default_scenario(lang),
                           workspace=args.workspace,
                           speed=check_speed(args.speed),
                           paused=args.paused or args.welcome, welcome=args.welcome,
                           auto_pause=args.auto_pause,
                           thresholds=thresholds_from_args(args, args.workspace,
                                                           args.scenario or default_scenario(lang)),
                           breaks=breaks_from_args(args), lang=lang)
    except ValueError as exc:
        print(f"ctxlab demo: {exc}", file=sys.stderr)
        return 2
    return launch(config, getattr(args, "theme", None))


def check_speed(speed: float) -> float:
    """``--speed`` within the workbench's steps: below the slowest one a call would wait
    minutes (at 0, forever), so it is refused rather than quietly freezing the demo."""
    from tui.widgets.run_status import SPEEDS

    slowest = SPEEDS[0]
    if not math.isfinite(speed) or speed < slowest:
        raise ValueError(f"--speed {speed:g}: must be at least {slowest:g} (the slowest step; "
                         f"1000 plays without pauses)")
    return speed


def run_default(args: argparse.Namespace) -> int:
    """``ctxlab``: live in the current directory with an API key, else the demo."""
    from tui.app import AppConfig

    theme = getattr(args, "theme", None)
    lang = language_from_args(args)
    from core.providers.registry import choose_provider

    provider = choose_provider(None, scenario=False)
    if provider != "scripted":
        try:
            thresholds = thresholds_from_args(args, Path.cwd())
            api_context = api_context_from_args(args, Path.cwd())
        except ValueError as exc:  # ConfigError: a bad ctxlab.toml names its key
            print(f"ctxlab: {exc}", file=sys.stderr)
            return 2
        config = AppConfig(scenario=None, workspace=Path.cwd(), provider=provider,
                           model=os.environ.get("CTXLAB_MODEL"), thresholds=thresholds,
                           count_tokens=bool(getattr(args, "count_tokens", False)),
                           breaks=breaks_from_args(args), lang=lang, api_context=api_context)
    else:
        # No key: the demo, and the welcome card says why and how to go live.
        config = AppConfig(scenario=default_scenario(lang), breaks=breaks_from_args(args),
                           lang=lang, paused=True, welcome=True, auto_pause=True,
                           demo_reason=True)
    return launch(config, theme)


def launch(config: Any, theme: str | None) -> int:
    from tui.app import CtxlabApp
    from tui.themes import load_themes

    if theme:
        names = list(load_themes())
        if theme not in names:
            print(f"ctxlab: unknown theme {theme!r}; one of {', '.join(names)}",
                  file=sys.stderr)
            return 2
        config.theme = theme
    from core.scenarios import ScenarioError, find_scenario

    if config.scenario:
        try:
            find_scenario(config.scenario)
        except ScenarioError as exc:
            print(f"ctxlab: {exc}", file=sys.stderr)
            return 2
    from tui.cli.temp_workspaces import SERVED_ENV, install_signal_cleanup

    install_signal_cleanup()  # closing the terminal (SIGHUP) must not leave /tmp/ctxlab-…
    if os.environ.get(SERVED_ENV):
        from tui.cli.temp_workspaces import exit_when_orphaned

        exit_when_orphaned()  # a served demo ends with its server, however the server ends
    result = CtxlabApp(config).run()
    return int(result or 0)


def thresholds_from_args(args: argparse.Namespace, workspace: Path | None,
                         scenario: str | None = None) -> Any:
    """The scenario's teaching budget, then a ``ctxlab.toml`` in the workspace, then flags —
    each layer changing only the keys it names (as ``ctxlab run`` does); None when no layer
    beyond the scenario's own has anything to say."""
    from core.config import has_toml, resolve_thresholds
    from core.scenarios import find_scenario
    from tui.cli.flags import threshold_overrides

    overrides = threshold_overrides(args)
    if not overrides and not (workspace is not None and has_toml(workspace)):
        return None  # let the scenario's own teaching budget apply (no scenario lookup)
    found = find_scenario(scenario) if scenario else None
    return resolve_thresholds(workspace, overrides, found.thresholds if found else None,
                              found.source if found else "scenario")


def api_context_from_args(args: argparse.Namespace, workspace: Path) -> Any:
    """``[api]`` of the workspace's ``ctxlab.toml``, then the ``--api-*`` flags."""
    from core.config import load_toml
    from core.providers.api_context import load_api_context
    from tui.cli.flags import api_overrides

    return load_api_context(load_toml(workspace), api_overrides(args),
                            str(workspace / "ctxlab.toml"))


def breaks_from_args(args: argparse.Namespace) -> frozenset[str]:
    """The switches given (already checked by the ``--break`` flag itself)."""
    return frozenset(getattr(args, "breaks", None) or [])
