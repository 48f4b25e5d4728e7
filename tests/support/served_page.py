"""``ctxlab serve`` as a browser sees it: the page loaded in headless Chromium, the terminal
it draws read back as text, a PNG of the window, and what was left once it all stopped.

textual-serve draws the demo with xterm.js on a canvas, so the words on screen are not in the
page's DOM; they are in xterm's buffer. The page keeps its ``Terminal`` in a closure, so it is
found the way a debugger finds it: the DevTools protocol lists the page's objects
(``Runtime.queryObjects``) and the one with xterm's buffer API is the terminal.

``python -m tests.support.served_page DIR`` saves the two PNGs (1280×720 and 1920×1080) in
``DIR``, e.g. ``screenshots/``; the test keeps its own in its temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.chromium import Page, headless, processes_under
from tests.tui.cli.test_cmd_serve import BOOT_TIMEOUT, free_port
from tests.tui.cli.test_serve_sessions import served_demos, start_server, stop
from tui.i18n import t

PROJECTOR = (1280, 720)
MONITOR = (1920, 1080)
DRAW_TIMEOUT = 20.0
_FIND_TERMINAL = """function () {
  const terminal = this.find(o => {
    try { return typeof o.cols === "number" && typeof o.buffer.active.getLine === "function"; }
    catch (e) { return false; }
  });
  window.ctxlabTerminal = terminal;
  return terminal !== undefined;
}"""
_READ_TERMINAL = """(() => {
  const terminal = window.ctxlabTerminal, buffer = terminal.buffer.active, lines = [];
  for (let y = 0; y < terminal.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return {cols: terminal.cols, rows: terminal.rows, lines: lines};
})()"""


@dataclass(frozen=True)
class Screen:
    """What the browser's terminal shows: its size in cells and its rows of text."""

    cols: int
    rows: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Visit:
    """One page load at one window size, and what stopping everything left behind."""

    size: tuple[int, int]
    screen: Screen
    screenshot: Path
    server_exit: int
    demos_left: list[int]  # demo processes still running
    browser_left: list[int]  # Chromium processes still running
    files_left: list[str]  # anything in the folder but the screenshot
    profile_left: bool  # the browser's profile folder is still there


def visit(folder: Path, size: tuple[int, int]) -> Visit:
    """Serve the demo, open it at ``size`` (past its welcome card), read it, stop it all."""
    width, height = size
    shot = folder / f"browser-{width}x{height}.png"
    port = free_port()
    server = start_server(folder, port)
    try:
        screen, profile = asyncio.run(_look(size, port, shot))
    finally:
        code = stop(server, folder)
    left = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path != shot)
    return Visit(size, screen, shot, code, served_demos(folder), processes_under(profile), left,
                 profile.exists())


async def _look(size: tuple[int, int], port: int, shot: Path) -> tuple[Screen, Path]:
    """The workbench's screen, and the browser's profile folder (gone by now)."""
    async with headless(*size) as page:
        await _load(page, f"http://127.0.0.1:{port}/")
        await _find_terminal(page)
        screen = await _past_the_welcome(page)
        await page.screenshot(shot)
    return screen, page.folder


async def _load(page: Page, url: str) -> None:
    """Load the page once the server answers, and wait for the demo's first bytes."""
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:
        await page.call("Page.navigate", url=url)
        if await _until(page, "document.querySelector('#terminal') !== null", 2.0):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer within {BOOT_TIMEOUT}s")
    if not await _until(page, "document.body.classList.contains('-first-byte')", BOOT_TIMEOUT):
        raise TimeoutError("the served demo drew nothing")


async def _find_terminal(page: Page) -> None:
    prototype = await page.call("Runtime.evaluate", expression="Object.prototype")
    objects = await page.call("Runtime.queryObjects",
                              prototypeObjectId=prototype["result"]["objectId"])
    found = await page.call("Runtime.callFunctionOn", functionDeclaration=_FIND_TERMINAL,
                            objectId=objects["objects"]["objectId"], returnByValue=True)
    if not found["result"].get("value"):
        raise RuntimeError("no xterm.js terminal on the page")


async def read_screen(page: Page) -> Screen:
    value = await page.evaluate(_READ_TERMINAL)
    return Screen(value["cols"], value["rows"], tuple(value["lines"]))


async def _past_the_welcome(page: Page) -> Screen:
    """The demo opens on its welcome card; Esc ("look around") shows the workbench. Returns
    the workbench once two reads in a row agree (the demo waits, paused, behind the card)."""
    welcome = t("welcome.title", scenario="").rstrip(" ·")
    screen = await _wait_for(page, lambda s: welcome in s.text)
    await page.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
    await page.press("Escape", 27)
    previous: Screen | None = None
    deadline = time.monotonic() + DRAW_TIMEOUT
    while time.monotonic() < deadline:
        screen = await read_screen(page)
        if welcome not in screen.text and screen == previous:
            return screen
        previous = screen
        await asyncio.sleep(0.3)
    raise TimeoutError(f"the welcome card did not close:\n{screen.text}")


async def _wait_for(page: Page, drawn: Callable[[Screen], bool]) -> Screen:
    deadline = time.monotonic() + DRAW_TIMEOUT
    while True:
        screen = await read_screen(page)
        if drawn(screen):
            return screen
        if time.monotonic() > deadline:
            raise TimeoutError(f"not drawn within {DRAW_TIMEOUT}s:\n{screen.text}")
        await asyncio.sleep(0.2)


async def _until(page: Page, expression: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await page.evaluate(expression):
            return True
        await asyncio.sleep(0.1)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.served_page",
                                     description="PNGs of ctxlab serve in headless Chromium.")
    parser.add_argument("out", type=Path, help="folder for browser-WxH.png (e.g. screenshots)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for size in (PROJECTOR, MONITOR):
        with tempfile.TemporaryDirectory(prefix="ctxlab-browser-") as folder:
            seen = visit(Path(folder), size)
            target = out / seen.screenshot.name
            target.write_bytes(seen.screenshot.read_bytes())
        print(f"{target}: {seen.screen.cols}×{seen.screen.rows}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
