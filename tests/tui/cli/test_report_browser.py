"""``ctxlab report`` in a real browser: headless Chromium opens the written page offline.

The page must draw and work with no network at all: the browser is told it is offline and
every request it tries is recorded (the protocol's ``Network.requestWillBeSent``), so one
asset fetched from anywhere but the file itself fails the test. Then the timeline is read
from the drawn SVG (one polyline point per request of each side), the search box is typed
into as a person does (a tool result's text: the match count and the matching request
shown, the rest hidden), and a stage's ``<details>`` is clicked open (its before/after table
visible).

Two sources: a Claude Code session with two compactions, replayed; and the bundled
scenario a demo plays. Skipped only where Chromium is not installed; ``CTXLAB_REQUIRE_BROWSER``
turns that skip into a failure.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.report import build, collect
from tests.support.chromium import Unavailable, chromium_binary, headless
from tests.support.required import require
from tui.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CLAUDE_CODE = FIXTURES / "claude-code-2.1.197" / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"
SOURCES = {  # source -> text of one tool result in it
    "claude-code": (str(CLAUDE_CODE), "file unchanged since your last Read"),
    "scenario": ("refactor-auth", "auth/passwords — generated sample"),
}
LOAD_TIMEOUT = 15.0


@dataclass
class Seen:
    source: str
    expected: dict[str, int]  # requests per side, from the events
    stages: int
    requests: list[str]  # every request the browser tried: the page's own file only
    points: dict[str, int]  # polyline points per side, as drawn
    drawn: dict[str, float]  # each polyline's drawn length (0: not drawn)
    matches: str  # the count the search box shows
    shown: list[str]  # ids of the requests left visible by the search
    hidden: int  # items the search hid
    stage_open: bool
    stage_table: str  # the opened stage's before/after table, as rendered text
    stage_visible: bool


async def _look(page_file: Path, query: str) -> dict[str, Any]:
    async with headless(1280, 900) as page:
        await page.call("Network.enable")
        await page.call("Network.emulateNetworkConditions", offline=True, latency=0,
                        downloadThroughput=-1, uploadThroughput=-1)
        await page.call("Page.navigate", url=page_file.as_uri())
        for _ in range(int(LOAD_TIMEOUT / 0.1)):
            if await page.evaluate("document.readyState") == "complete":
                break
            await asyncio.sleep(0.1)
        facts: dict[str, Any] = await page.evaluate("""(() => {
            const lines = [...document.querySelectorAll('svg.timeline polyline.series')];
            return {
              points: Object.fromEntries(lines.map(l => [l.dataset.side, l.points.length])),
              drawn: Object.fromEntries(lines.map(l => [l.dataset.side, l.getTotalLength()])),
            };
        })()""")
        await page.evaluate("document.getElementById('q').focus()")
        await page.call("Input.insertText", text=query)
        facts |= await page.evaluate("""(() => ({
            matches: document.getElementById('count').textContent,
            shown: [...document.querySelectorAll('details.request')]
                     .filter(d => d.offsetParent !== null).map(d => d.id),
            hidden: document.querySelectorAll('details.item[hidden]').length,
        }))()""")
        # clear the search, then click the first stage open as a person would
        await page.evaluate("const q = document.getElementById('q'); q.value = '';"
                            "q.dispatchEvent(new Event('input'));")
        box = await page.evaluate("""(() => {
            const s = document.querySelector('details.stage > summary');
            s.scrollIntoView({block: 'center'}); const r = s.getBoundingClientRect();
            return {x: r.left + 10, y: r.top + r.height / 2};
        })()""")
        for kind in ("mousePressed", "mouseReleased"):
            await page.call("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                            button="left", clickCount=1)
        facts |= await page.evaluate("""(() => {
            const d = document.querySelector('details.stage');
            const t = d.querySelector('table.beforeafter');
            return {stage_open: d.open, stage_table: t.innerText,
                    stage_visible: t.checkVisibility()};
        })()""")
        await page.call("Runtime.evaluate", expression="1")  # drain the last events
        facts["requests"] = [e["params"]["request"]["url"] for e in page.events
                             if e.get("method") == "Network.requestWillBeSent"]
        return facts


@pytest.fixture(scope="module")
def browser() -> None:
    require(chromium_binary, Unavailable, "CTXLAB_REQUIRE_BROWSER", "the browser check")


@pytest.fixture(scope="module", params=sorted(SOURCES))
def seen(request: pytest.FixtureRequest, browser: None,
         tmp_path_factory: pytest.TempPathFactory) -> Seen:
    source, query = SOURCES[request.param]
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", source, "-o", str(out)]) == 0
    report = build(collect(source))  # what the events say, to compare the page with
    expected = {side: len(report.log.side(side)) for side in report.log.sides()}
    facts = asyncio.run(_look(out, query))
    return Seen(source=source, expected=expected, stages=len(report.stages), **facts)


def test_the_page_loads_offline_and_asks_the_network_for_nothing(seen: Seen):
    assert seen.requests, "the browser's requests were recorded"
    assert all(url.startswith("file://") and url.endswith("report.html")
               for url in seen.requests), seen.requests


def test_the_timeline_draws_one_point_per_request_of_each_side(seen: Seen):
    assert seen.points == seen.expected
    assert all(length > 0 for length in seen.drawn.values()), seen.drawn


def test_search_finds_a_tool_result_and_shows_its_request(seen: Seen):
    count = int(seen.matches.split()[0])
    assert count > 0 and "match" in seen.matches
    assert seen.shown, "the request holding the tool result is visible"
    assert seen.hidden > 0, "what does not match is hidden"


def test_a_stage_opens_on_a_click_with_its_before_and_after(seen: Seen):
    assert seen.stages > 0
    assert seen.stage_open
    assert "before" in seen.stage_table and "after" in seen.stage_table
    assert "chars" in seen.stage_table and seen.stage_visible
