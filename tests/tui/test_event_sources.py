"""The workbench shows any event source: a replay of a recorded session is an addition,
drawn by the same panels, with only the controls the source offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.replay import load_recording
from core.replay.source import ReplayOptions, ReplaySource
from tests.core.replay.conftest import CLAUDE
from tests.tui.conftest import play_to_end
from tui.app import AppConfig, CtxlabApp
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def replay_of(path: Path):  # type: ignore[no-untyped-def]
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(path), ReplayOptions(workdir=workspace))

    return make


async def test_a_replay_plays_in_the_workbench_with_its_own_and_ctxlabs_stages(
        tmp_path: Path) -> None:
    app = CtxlabApp(AppConfig(scenario=None, source=replay_of(CLAUDE),
                              workspace=tmp_path / "w", theme="ctxlab-dark",
                              display_workspace="~/replay"))
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        assert app.session is None and app.source is not None
        assert app.source.kind == "replay" and not app.query("#prompt")
        assert CLAUDE.name in app.title and "provider replay" in app.sub_title
        by = {record.event.by for record in app.query_one(StageTimeline).stages}
        assert "claude-code" in by  # the recorded agent's own compaction, on the timeline
        assert app.calls == 6  # ctxlab's main requests beside the original's
        app.action_step()  # a replay can step: offered, and harmless at the end
        app.action_compare()  # the compare lab needs ctxlab's own session: refused
        await pilot.pause(0.1)
