"""``ctxlab demo`` / ``ctxlab``: options, routing to demo or live mode, lazy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tui.cli.cmd_app as cmd_app
from tui.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The UI language follows the locale when --lang is not given: pin it."""
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, str | None]]:
    """Capture what would be opened instead of opening a terminal UI."""
    calls: list[tuple[Any, str | None]] = []
    monkeypatch.setattr(cmd_app, "launch", lambda config, theme: calls.append((config, theme))
                        or 0)
    return calls


def test_demo_options_reach_the_app_config(launched: list, tmp_path: Path) -> None:
    args = build_parser().parse_args([
        "demo", "long-chat", "--workspace", str(tmp_path), "--theme", "projector",
        "--speed", "4", "--paused", "--context-limit", "9000", "--break", "unseen-guard"])
    assert args.handler(args) == 0
    config, theme = launched[0]
    assert (config.scenario, config.workspace, config.speed, config.paused) == \
        ("long-chat", tmp_path, 4.0, True)
    assert config.thresholds.context_limit == 9000
    assert config.breaks == frozenset({"unseen-guard"}) and theme == "projector"


def test_demo_defaults_to_refactor_auth_in_a_temporary_copy(launched: list) -> None:
    args = build_parser().parse_args(["demo"])
    args.handler(args)
    config, theme = launched[0]
    assert config.scenario == "refactor-auth" and config.workspace is None
    assert config.lang == "en"
    assert config.thresholds is None and theme is None  # the scenario's own budget applies


def test_a_demo_opens_paused_on_the_welcome_card_with_auto_pause(launched: list) -> None:
    args = build_parser().parse_args(["demo"])
    args.handler(args)
    config, _ = launched[-1]
    assert config.welcome and config.paused and config.auto_pause and not config.demo_reason
    args = build_parser().parse_args(["demo", "--no-welcome", "--no-auto-pause"])
    args.handler(args)
    config, _ = launched[-1]
    assert not (config.welcome or config.paused or config.auto_pause)


def test_plain_ctxlab_without_a_key_says_why_it_is_a_demo(
        launched: list, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cmd_app.run_default(build_parser().parse_args([]))
    config, _ = launched[-1]
    assert config.scenario == "refactor-auth" and config.welcome and config.demo_reason


def test_lang_zh_opens_a_chinese_workbench_on_the_chinese_scenario(
        launched: list, monkeypatch: pytest.MonkeyPatch) -> None:
    for argv in (["demo", "--lang", "zh"], ["--lang", "zh", "demo"]):
        args = build_parser().parse_args(argv)
        args.handler(args)
        config = launched[-1][0]
        assert (config.lang, config.scenario) == ("zh", "refactor-auth-zh"), argv
    args = build_parser().parse_args(["demo", "long-chat", "--lang", "zh"])
    args.handler(args)
    assert (launched[-1][0].lang, launched[-1][0].scenario) == ("zh", "long-chat")
    # Without --lang the locale decides; --lang overrides it.
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    args = build_parser().parse_args(["demo"])
    args.handler(args)
    assert (launched[-1][0].lang, launched[-1][0].scenario) == ("zh", "refactor-auth-zh")
    cmd_app.run_default(build_parser().parse_args([]))
    assert launched[-1][0].lang == "zh"
    args = build_parser().parse_args(["demo", "--lang", "en"])
    args.handler(args)
    assert (launched[-1][0].lang, launched[-1][0].scenario) == ("en", "refactor-auth")


def test_options_before_the_subcommand_are_kept(launched: list) -> None:
    args = build_parser().parse_args(["--theme", "projector", "--break", "stage-order", "demo"])
    args.handler(args)
    config, theme = launched[-1]
    assert theme == "projector" and config.breaks == frozenset({"stage-order"})


def test_plain_ctxlab_is_the_demo_without_a_key_and_live_with_one(
        launched: list, monkeypatch: pytest.MonkeyPatch) -> None:
    args = build_parser().parse_args([])
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cmd_app.run_default(args)
    assert launched[-1][0].scenario == "refactor-auth"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    cmd_app.run_default(args)
    live = launched[-1][0]
    assert live.scenario is None and live.provider == "anthropic"
    assert live.workspace == Path.cwd()


@pytest.mark.parametrize("argv", [
    [], ["demo"], ["run", "--headless"], ["compact", "--workdir", "w", "in.json"], ["serve"],
])
def test_a_bad_break_switch_is_one_line_and_exit_2_from_every_command(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``ctxlab --break nonsense`` used to end in a traceback: one validator for all."""
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([*argv, "--break", "nonsense"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(" ".join(["ctxlab", *argv[:1]]) + ": --break 'nonsense': ")
    assert "pair-protection" in err
    args = build_parser().parse_args([*argv, "--break", "pair-protection",
                                      "--break", "stage-order"])
    assert args.breaks == ["pair-protection", "stage-order"]


def test_unknown_theme_or_scenario_is_refused_before_the_ui_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tui.app import AppConfig

    assert cmd_app.launch(AppConfig(), "no-such-theme") == 2
    assert "unknown theme" in capsys.readouterr().err
    assert cmd_app.launch(AppConfig(scenario="no-such-scenario"), None) == 2
    assert "no scenario" in capsys.readouterr().err


def test_version_and_help_do_not_import_textual() -> None:
    code = ("import sys; from tui.cli import build_parser; build_parser(); "
            "print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("speed", ["0", "0.1", "-2", "nan"])
def test_a_speed_below_the_slowest_step_is_refused_in_one_line(
        launched: list, capsys: pytest.CaptureFixture[str], speed: str) -> None:
    args = build_parser().parse_args(["demo", "--speed", speed])
    assert args.handler(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ctxlab demo: --speed ")
    assert "at least 0.25" in err
    assert launched == []  # nothing opened, nothing frozen


def test_the_slowest_step_itself_is_accepted(launched: list) -> None:
    args = build_parser().parse_args(["demo", "--speed", "0.25"])
    assert args.handler(args) == 0 and launched[0][0].speed == 0.25
