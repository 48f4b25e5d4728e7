"""Benchmark of the workbench's responsiveness: event-loop stalls and cold start.

* **stall** — the longest gap between ticks of a 5 ms interval timer while the real agent
  loop reads a 10 MB file and compacts it (tool_result_budget persists it, micro/fit and a
  snip follow). The engine runs on the app's own event loop, so any synchronous work in it
  (``prepare()``, a JSON dump of the history) is time the UI cannot draw. Target < 33 ms
  (two frames at 60 Hz).
  Baseline: the same app idle, for the timer's own jitter.
* **cold start** — ``python -c`` launching the workbench headless until its first
  ``Ready`` (first frame). Target < 1.5 s. Baseline: an empty Textual app the same way.
* **big replay** — a generated 10 MB Claude Code session (:func:`bench.sessions.
  claude_code_session`) replayed to its end at top speed in the workbench, against the
  headless replay of the same recording, interleaved (:mod:`bench.tui_replay`): the
  wall-time ratio, what a user waits for (target ≤ 1.5×, median and best of the per-round
  ratios; the CPU ratio beside it), the per-request cost's
  growth along the session (last tenth ÷ first tenth, target ≤ 1.2) and the longest
  event-loop stall meanwhile (target < 33 ms). ``--big`` adds the 60 MB session (minutes).
* **big-log demo** — the longest stall while ``ctxlab demo big-log`` plays through at top
  speed (target < 33 ms).

Run: ``python bench/bench_tui.py [--big]``; ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}`` for an aggregating runner.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
Row = dict[str, Any]
STALL_TARGET_MS = 33.0  # two frames at 60 Hz
COLD_TARGET_S = 1.5
BIG_MB = 10
REPLAY_RATIO_TARGET = 1.5  # workbench replay wall time ÷ headless replay wall time
GROWTH_TARGET = 1.2  # per-request cost, last tenth ÷ first tenth
REPLAY_MB = (10,)  # in the default run
BIG_REPLAY_MB = 60  # with --big
# single rounds spread widely on a shared machine (1.25–2.04× within one run): the median
# of three moved by a third from one run of the bench to the next
REPLAY_ROUNDS = 5

SCENARIO = """
name: ten-megabytes
title: One 10 MB tool result, then a few more calls
workspace: long_chat
thresholds: {context_limit: 20000, max_messages: 8}
sessions:
  - turns:
      - user: "Read the big log and tell me what is in it."
        replies:
          - say: "Reading it."
            tools: [{read_file: {path: big.log}}]
          - say: "And the notes module."
            tools: [{read_file: {path: notes.py}}]
          - say: "Once more the notes."
            tools: [{read_file: {path: notes.py}}]
          - say: "Listing."
            tools: [{glob: {pattern: "*"}}]
          - say: "It is a log of repeated lines."
"""


def make_workspace(root: Path) -> tuple[Path, Path]:
    """A workspace holding a 10 MB log (pre-filled, so no generator runs) and the scenario."""
    ws = root / "ws"
    ws.mkdir()
    line = "2026-11-02T10:00:00Z INFO ingest batch=000000 rows=1000 ok\n"
    (ws / "big.log").write_text(line * int(BIG_MB * 1_000_000 // len(line)), encoding="utf-8")
    (ws / "notes.py").write_text("def note(text):\n    return text.strip()\n" * 40)
    scenario = root / "ten-megabytes.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    return ws, scenario


class PrepareClock:
    """Records when the engine's ``prepare()`` ran, without changing it (a wrapper)."""

    def __init__(self) -> None:
        from core.compact.pipeline import Compactor

        self.spans: list[tuple[float, float]] = []
        self.cls = Compactor
        self.original = Compactor.prepare
        clock = self

        async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await clock.original(self, *args, **kwargs)
            finally:
                clock.spans.append((start, time.perf_counter()))

        Compactor.prepare = timed  # type: ignore[method-assign]

    def restore(self) -> None:
        self.cls.prepare = self.original  # type: ignore[method-assign]

    def longest(self) -> float:
        return max((end - start for start, end in self.spans), default=0.0)

    def outside(self, start: float, end: float) -> float:
        """How much of the gap ``start..end`` no ``prepare()`` explains."""
        covered = sum(max(0.0, min(end, e) - max(start, s)) for s, e in self.spans)
        return end - start - covered


async def measure_stall(play: bool) -> tuple[float, float, float, int]:
    """Max gap (ms) between 5 ms ticks while the scenario plays (or while idle); also the
    longest ``prepare()`` and the longest gap left once ``prepare()`` time is taken out."""
    from tui.app import AppConfig, CtxlabApp
    from tui.widgets.stage_timeline import StageTimeline

    with tempfile.TemporaryDirectory() as tmp:
        ws, scenario = make_workspace(Path(tmp))
        app = CtxlabApp(AppConfig(scenario=str(scenario), workspace=ws, speed=1000.0,
                                  paused=True, display_workspace="bench"))
        gaps: list[tuple[float, float]] = []
        last = [0.0]
        clock = PrepareClock()

        def tick() -> None:
            now = time.perf_counter()
            if last[0]:
                gaps.append((last[0], now))
            last[0] = now

        async with app.run_test(size=(200, 55)) as pilot:
            await pilot.pause(0.3)
            app.set_interval(0.005, tick)
            await pilot.pause(0.1)
            gaps.clear()
            if play:
                await play_through(app, pilot, polls=1500)
            else:
                await asyncio.sleep(1.0)
            stages = len(app.query_one(StageTimeline).stages)
        clock.restore()
        worst = max((end - start for start, end in gaps), default=0.0)
        ui_only = max((clock.outside(start, end) for start, end in gaps), default=0.0)
        return worst * 1000, clock.longest() * 1000, ui_only * 1000, stages


CHILD = textwrap.dedent("""
    import sys, tempfile
    from pathlib import Path
    {body}
""")
CTXLAB_CHILD = """
from tui.app import AppConfig, CtxlabApp

class Probe(CtxlabApp):
    def on_ready(self) -> None:
        print("READY", flush=True)
        self.exit()

ws = Path(tempfile.mkdtemp()) / "ws"
Probe(AppConfig(workspace=ws, paused=True)).run(headless=True, size=(200, 55))
"""
EMPTY_CHILD = """
from textual.app import App
from textual.widgets import Footer, Header

class Probe(App):
    def compose(self):
        yield Header()
        yield Footer()

    def on_ready(self) -> None:
        print("READY", flush=True)
        self.exit()

Probe().run(headless=True, size=(200, 55))
"""


def cold_start(body: str, repeats: int = 3) -> float:
    """Best of ``repeats`` wall times (s) from spawning Python to the app's first Ready."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD.format(body=body)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "READY":
                best = min(best, time.perf_counter() - start)
                break
        proc.wait(timeout=30)
    return best


def row(name: str, value: float, unit: str, target: float | None,
        baseline: float | None) -> Row:
    ratio = value / baseline if baseline else None
    return {"name": name, "value": round(value, 3), "unit": unit, "target": target,
            "baseline": None if baseline is None else round(baseline, 3),
            "ratio": None if ratio is None else round(ratio, 2),
            "ok": target is None or value < target}


async def play_through(app: Any, pilot: Any, polls: int) -> None:
    """Play the paused app's source on to its end (polled every 10 ms, ``polls`` times at
    most), then let the last events be drawn."""
    assert app.source is not None
    app.source.resume()
    for _ in range(polls):
        if app.finished:
            break
        await asyncio.sleep(0.01)
    await pilot.pause(0.3)


async def demo_stall(scenario: str = "big-log") -> float:
    """The longest gap (ms) between 5 ms ticks while a bundled demo plays through at top
    speed (as ``ctxlab demo`` plays it, opened paused and then played)."""
    from tui.app import AppConfig, CtxlabApp

    with tempfile.TemporaryDirectory() as tmp:
        app = CtxlabApp(AppConfig(scenario=scenario, workspace=Path(tmp) / "ws",
                                  speed=1000.0, paused=True, display_workspace="bench"))
        ticks: list[float] = []
        async with app.run_test(size=(200, 55)) as pilot:
            await pilot.pause(0.3)
            app.set_interval(0.005, lambda: ticks.append(time.perf_counter()))
            await pilot.pause(0.1)
            ticks.clear()
            await play_through(app, pilot, polls=3000)
    return max((b - a for a, b in itertools.pairwise(ticks)), default=0.0) * 1000


def replay_rows(mb: int, rounds: int) -> list[Row]:
    """The big-replay rows of one session size (see the module docstring)."""
    from bench.sessions import write_session
    from bench.tui_replay import replay_rounds

    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-tui-") as tmp:
        path = write_session(Path(tmp), mb * 1_000_000)
        got = replay_rounds(path, Path(tmp), rounds)
    wall = statistics.median(got.walls)
    ratio = statistics.median(got.ratios)
    growth = statistics.median(got.growth)
    stall = max(got.stalls) * 1000
    name = f"workbench replay to the end, {mb} MB session"
    return [
        {"name": f"{name}: wall time ÷ headless (median of {rounds}; best "
                 f"{min(got.walls):.2f}×; CPU {ratio:.2f}×, best {min(got.ratios):.2f}×)",
         "value": round(wall, 2), "unit": "×", "target": REPLAY_RATIO_TARGET,
         "baseline": None, "ratio": round(wall, 2), "ok": wall <= REPLAY_RATIO_TARGET},
        row("  workbench CPU (s), headless as baseline", statistics.median(got.workbench),
            "s", None, statistics.median(got.headless)),
        {"name": "  per-request cost, last tenth ÷ first tenth (median)",
         "value": round(growth, 2), "unit": "×", "target": GROWTH_TARGET, "baseline": None,
         "ratio": None, "ok": growth <= GROWTH_TARGET},
        row("  max event-loop stall meanwhile (worst round)", stall, "ms", STALL_TARGET_MS,
            None),
    ]


def run(big: bool = False) -> list[Row]:
    idle, _, _, _ = asyncio.run(measure_stall(play=False))
    stall, prepare, ui_only, stages = asyncio.run(measure_stall(play=True))
    demo = asyncio.run(demo_stall())
    ctxlab = cold_start(CTXLAB_CHILD)
    empty = cold_start(EMPTY_CHILD)
    replays = [r for mb in (*REPLAY_MB, *((BIG_REPLAY_MB,) if big else ()))
               for r in replay_rows(mb, REPLAY_ROUNDS if mb < BIG_REPLAY_MB else 1)]
    return [
        row(f"max event-loop stall, {BIG_MB} MB result compacted ({stages} stages)", stall,
            "ms", STALL_TARGET_MS, idle),
        row("  of which: longest engine prepare() (synchronous CPU)", prepare, "ms", None,
            None),
        row("  stall with prepare() time taken out (the UI's own share)", ui_only, "ms",
            STALL_TARGET_MS, idle),
        row("max event-loop stall, ctxlab demo big-log played through", demo, "ms",
            STALL_TARGET_MS, idle),
        row("cold start to first frame (python -c … Ready)", ctxlab, "s", COLD_TARGET_S,
            empty),
        *replays,
    ]


def print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="workbench responsiveness", title_justify="left")
    for column in ("name", "value", "unit", "target", "baseline", "ratio", "ok"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for r in rows:
        table.add_row(*("—" if r[k] is None else ("yes" if r[k] is True else "NO")
                        if isinstance(r[k], bool) else str(r[k])
                        for k in ("name", "value", "unit", "target", "baseline", "ratio",
                                  "ok")))
    Console(width=120).print(table)


def main() -> int:
    rows = run(big="--big" in sys.argv[1:])
    print_table(rows)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
