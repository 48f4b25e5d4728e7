"""Numeric flags given values no command can use: ``nan``, ``inf``, ``1e400``, 400 digits.

Each is one line naming the flag (exit 2), never a traceback from deep inside the run,
and a replay speed so slow that one step would wait forever is refused, or capped when it
is set from outside the command line.
"""

from __future__ import annotations

import asyncio

import pytest

from core.events import Emitter, Recorder
from core.sources.controls import MAX_DELAY
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CODEX
from tests.reliability.within import main_within

HUGE = "1" + "0" * 400  # 10**400: int() takes it, float() and every int → float refuse it

REPLAY = ["replay", str(CODEX), "--headless", "--json"]
RUN = ["run", "--headless", "--json", "--scenario", "big-log"]
BAD_FLAGS = {
    # case: (argv before the flag, flag, value)
    "replay --max-mb nan": (REPLAY, "--max-mb", "nan"),
    "replay --max-mb inf": (REPLAY, "--max-mb", "inf"),
    "replay --max-mb 1e400": (REPLAY, "--max-mb", "1e400"),
    "replay --context-limit-tokens 10**400": (REPLAY, "--context-limit-tokens", HUGE),
    "replay --speed nan": (REPLAY, "--speed", "nan"),
    "replay --speed inf": (REPLAY, "--speed", "inf"),
    "replay --context-limit 10**400": (REPLAY, "--context-limit", HUGE),
    "run --keep-recent 10**400": (RUN, "--keep-recent", HUGE),
    "run --context-limit 1e400": (RUN, "--context-limit", "1e400"),
    "run --api-clear-trigger 10**400": (RUN, "--api-clear-trigger", HUGE),
    "run --api-compaction-trigger inf": (RUN, "--api-compaction-trigger", "inf"),
    "compact --max-messages 10**400": (["compact", "in.json", "--workdir", "w"],
                                       "--max-messages", HUGE),
    "demo --speed nan": (["demo"], "--speed", "nan"),
    "demo --context-limit 10**400": (["demo"], "--context-limit", HUGE),
    "serve --port 99999": (["serve"], "--port", "99999"),
    "serve --port 0": (["serve"], "--port", "0"),
}


@pytest.mark.parametrize("case", sorted(BAD_FLAGS))
def test_a_numeric_flag_out_of_range_is_one_line_naming_the_flag(tmp_path, capsys,
                                                                     monkeypatch, case):
    argv, flag, value = BAD_FLAGS[case]
    monkeypatch.chdir(tmp_path)
    code = main_within([*argv, flag, value])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"ctxlab {argv[0]}: {flag} "), err
    said = line.removesuffix(f" (try 'ctxlab {argv[0]} --help')")
    assert len(said) < 120, line  # the value is cut short, never 400 digits


def test_a_replay_speed_of_1e_300_is_refused_at_once(tmp_path, capsys):
    code = main_within([*REPLAY, "--workdir", str(tmp_path / "w"), "--speed", "1e-300"],
                       seconds=10)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("ctxlab replay: --speed 1e-300: must be 0 (as fast as possible) or at "
                   "least 0.01 (one request every 100 s)\n")


def test_a_speed_set_from_outside_never_waits_past_the_bound(tmp_path):
    source = ReplaySource(load_recording(CODEX), ReplayOptions(workdir=tmp_path / "w",
                                                               speed=1e-300))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    source.controls.sleep = sleep
    assert asyncio.run(source.run(Emitter(sinks=[Recorder()])))
    assert waits and max(waits) == MAX_DELAY == 100.0
