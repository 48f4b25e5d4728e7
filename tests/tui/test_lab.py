"""Teaching lab in the workbench: break switches, the compare screen, the system prompt view."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import DataTable, Switch

from core.compare import compare
from core.events import PairViolation
from core.pricing import money
from core.scenarios import find_scenario
from core.scenarios.workspaces import generate
from core.sources.agent.session import AgentSession
from tests.tui.conftest import PAIRS, TINY, TINY_ZH, play_to_end, wait_for
from tui.app import CtxlabApp
from tui.cli import main
from tui.managers import manager_label
from tui.screens.breaks import BreaksScreen
from tui.screens.compare import CompareScreen, strategies
from tui.screens.inspector import Inspector
from tui.screens.system_prompt import SectionBlock, SystemPromptScreen
from tui.widgets.compare_chart import ScaledSparkline
from tui.widgets.context_meter import ContextMeter
from tui.widgets.run_status import RunStatus
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


class Violations:
    """Collects the violation events the app receives (a message hook)."""

    def __init__(self) -> None:
        self.messages: list[object] = []

    def __call__(self, message: object) -> None:
        self.messages.append(message)

    @property
    def events(self) -> list[PairViolation]:
        """Read at the end: a burst's message keeps growing until the app routes it
        (tui/pacer.py), after the hook has seen it arrive."""
        return [event for message in self.messages for event in getattr(message, "events", ())
                if isinstance(event, PairViolation)]


async def test_a_break_switch_is_announced_and_each_violation_is_marked(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=PAIRS, breaks=frozenset({"pair-protection"}))
    seen = Violations()
    async with app.run_test(size=(200, 55), message_hook=seen) as pilot:
        await play_to_end(pilot)
        status = str(app.query_one(RunStatus).render())
        assert "broken: pair-protection" in status
        assert "broken: pair-protection" in app.sub_title
        # One red line per violation, naming the tool_use id and the stage that caused it.
        assert seen.events and {v.stage for v in seen.events} == {"snip_compact"}
        markers = [str(w.render()) for w in app.query(".msg-violation")]
        assert len(markers) == len(seen.events)
        for line, violation in zip(markers, seen.events, strict=True):
            assert violation.tool_use_id in line and "caused by snip_compact" in line
        # Counted on the snip's row and in the panel's footer.
        timeline = app.query_one(StageTimeline)
        assert sum(timeline.violations.values()) == len(seen.events)
        snip_rows = [i for i in range(timeline.row_count)
                     if timeline.get_row_at(i)[1] == "snip_compact"]
        counted = [int(str(timeline.get_row_at(i)[5]).split("⚠ ")[1].split()[0])
                   for i in snip_rows if "⚠" in str(timeline.get_row_at(i)[5])]
        assert counted and sum(counted) == len(seen.events)  # on the snip that preceded them
        assert f"⚠ {len(seen.events)} violations" in str(timeline.border_subtitle)


async def test_a_run_the_api_refused_fails_in_the_workbench_as_it_does_headless(
        make_app: Callable[..., CtxlabApp], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without pair protection the API refuses the history with HTTP 400: the command line
    exits 1 with the API's words, and the workbench says "failed" with the same words —
    one verdict (core.events.outcome), never "■ finished"."""
    headless = ["run", "--headless", "--scenario", PAIRS, "--break", "pair-protection",
                "--workspace", str(tmp_path / "headless")]
    assert await asyncio.to_thread(main, headless) == 1  # its own event loop
    reason = capsys.readouterr().err.strip().removeprefix("ctxlab run: ")
    assert reason.startswith("HTTP 400 invalid_request_error")
    app = make_app(scenario=PAIRS, breaks=frozenset({"pair-protection"}))
    async with app.run_test(size=(100, 30)) as pilot:  # the reason cut, the switch whole
        await play_to_end(pilot)
        status = str(app.query_one(RunStatus).render())
        assert status.startswith("✖ failed: HTTP 400") and "finished" not in status
        assert "   ⚠ broken: pair-protection" in status  # set apart from the reason
        assert app.outcome.failure() == reason
        assert "broken: pair-protection" in status
        notices = [str(n.message) for n in app._notifications]
        assert any("the run failed" in text for text in notices)
        assert not any("has ended" in text for text in notices)


@pytest.mark.parametrize("width", [80, 100, 120, 160])
async def test_the_status_line_keeps_the_broken_switch_whole(
        make_app: Callable[..., CtxlabApp], width: int) -> None:
    app = make_app(scenario=PAIRS, breaks=frozenset({"pair-protection"}), paused=True)
    async with app.run_test(size=(width, 40)) as pilot:
        await pilot.pause(0.2)
        status = app.query_one(RunStatus)
        text = str(status.render())
        assert "⚠ broken: pair-protection" in text
        assert len(text.rstrip()) <= status.content_size.width
        assert text.startswith("‖ paused")  # the state still leads the line


async def test_in_chinese_at_80_columns_the_broken_switch_is_whole_too(
        make_app: Callable[..., CtxlabApp]) -> None:
    """The state and the switch in Chinese are wider than in English: at 80 columns there
    was no room for a word of the state beside the switch, and the switch was cut
    (``pair-prote…``) to keep the state's first word, the one thing never to cut."""
    app = make_app(scenario=TINY_ZH, lang="zh", breaks=frozenset({"pair-protection"}),
                   paused=True)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause(0.2)
        status = app.query_one(RunStatus)
        text = str(status.render())
        assert "已关闭保护：pair-protection" in text, text
        assert text.startswith("‖") and cell_len(text.rstrip()) <= status.content_size.width


async def test_switches_chosen_in_the_modal_restart_the_scenario_and_show_lost_output(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        first = app.workspace
        await pilot.press("b")
        await pilot.pause(0.2)
        modal = app.screen
        assert isinstance(modal, BreaksScreen)
        # Each switch is the protection: on while it protects, and said so in words.
        assert all(s.value for s in modal.query(Switch))
        state = modal.query_one("#state-persist-before-placeholder")
        assert "protected" in str(state.render())  # in words, not by colour alone
        modal.query_one("#protect-persist-before-placeholder", Switch).value = False
        await pilot.pause(0.05)
        assert "BROKEN" in str(state.render()) and "protected" not in str(state.render())
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert app.config.breaks == frozenset({"persist-before-placeholder"})
        assert app.workspace != first and app.workspace in app.temp_workspaces  # fresh copy
        app.source.resume()
        await play_to_end(pilot)
        assert "broken: persist-before-placeholder" in str(app.query_one(RunStatus).render())
        timeline = app.query_one(StageTimeline)
        lost_rows = [i for i in range(timeline.row_count)
                     if "LOST" in str(timeline.get_row_at(i)[5])]
        assert lost_rows
        assert "LOST" in str(timeline.border_subtitle)
        # The inspector names the lost entries as such.
        timeline.focus()
        timeline.move_cursor(row=lost_rows[0])
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Inspector)
        ledger = app.screen.query_one("#inspector-ledger", DataTable)
        wheres = [str(ledger.get_row_at(i)[2]) for i in range(ledger.row_count)]
        assert "LOST" in wheres and "lost" not in wheres


async def test_compare_screen_fills_the_table_and_one_chart_line_per_strategy(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        await pilot.press("c")
        await pilot.pause(0.1)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: screen.done, timeout=30.0)
        await pilot.pause(0.1)
        expected = await compare(find_scenario(TINY), strategies())
        table = screen.query_one("#compare-table", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[0] for row in rows] == [s.name for s in expected.strategies]
        assert {"truncate", "compact", "compact+memory"} <= {row[0] for row in rows}
        for row, result in zip(rows, expected.strategies, strict=True):
            assert row[1:8] == [manager_label(result.manager), str(result.calls),
                                f"{result.peak_chars:,}",
                                f"{result.mean_chars:,}", f"{result.mean_system_chars:,}",
                                str(result.side_calls), str(result.losses)]
            assert row[8] == "—"  # the tiny scenario asks no probes
        assert [row[1] for row in rows][:2] == ["truncation", "s08 pipeline"]
        # the command line's rows and columns: billed input, cache read, cost, and the API's
        # context editing, which the screen once lacked
        headers = [str(column.label) for column in table.columns.values()]
        assert headers[-3:] == ["billed input", "cache read", "est. cost"]
        assert "api-clear-tool-uses" in [row[0] for row in rows]
        for row, result in zip(rows, expected.strategies, strict=True):
            assert row[9:] == [f"{result.billed_input_tokens:,}",
                               f"{result.cache_read_share:.0%}", money(result.est_cost)]
        lines = list(screen.query(ScaledSparkline))
        assert len(lines) == len(rows)
        ceiling = {line.ceiling for line in lines}
        assert len(ceiling) == 1  # one shared scale
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, CompareScreen)


async def test_system_prompt_view_lists_the_pinned_rules_file(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    generate("refactor_auth", workspace)  # a workspace that is not empty is used as it is
    (workspace / "CTXLAB.md").write_text("# House rules\n\nRun the tests before saying done.\n",
                                         encoding="utf-8")
    app = make_app(paused=True, workspace=workspace)
    async with app.run_test(size=(200, 55)) as pilot:
        app.source.step()
        await wait_for(pilot, lambda: app.calls >= 1)
        await pilot.pause(0.2)
        meter = app.query_one(ContextMeter)
        assert meter.breakdown["pinned"] > len("Run the tests before saying done.")
        assert "pinned: rules+log" in str(app.query_one("#meter-breakdown").render())
        await pilot.press("p")
        await pilot.pause(0.2)
        screen = app.screen
        assert isinstance(screen, SystemPromptScreen)
        blocks = {b.section.name: b for b in screen.query(SectionBlock)}
        assert list(blocks)[:3] == ["identity", "request_rules", "tool_rules"]
        rules = blocks["rules:CTXLAB.md"]
        assert "pinned" in str(rules.title) and "CTXLAB.md" in str(rules.title)
        assert "Run the tests before saying done." in rules.section.text
        assert isinstance(app.source, AgentSession) and app.source.agent is not None
        sent = [s.name for s in app.source.agent.last_system if s.text.strip()]
        assert sent == list(blocks)  # every section the call rendered, in its order
