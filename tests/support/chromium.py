"""Headless Chromium for the tests, driven over the Chrome DevTools Protocol.

The browser check needs a real browser drawing the served page, and nothing more than one
page: load it at a given viewport, press a key, run a little JavaScript, take a screenshot.
The protocol is JSON over a websocket, which aiohttp (already a dependency) speaks, so this
is a small client rather than a browser-automation package with its own browser download.

Chromium runs in its own process group with its profile and ``TMPDIR`` in a folder the caller
gives (and this module empties), so closing it ends every helper process it started and
leaves no files behind.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
START_TIMEOUT = 20.0
CALL_TIMEOUT = 20.0


class Unavailable(RuntimeError):
    """No Chromium on this machine (``CTXLAB_CHROMIUM`` or one of :data:`NAMES` on PATH)."""


def chromium_binary() -> Path:
    configured = os.environ.get("CTXLAB_CHROMIUM")
    if configured:
        if not Path(configured).is_file():
            raise Unavailable(f"CTXLAB_CHROMIUM={configured}: no such file")
        return Path(configured)
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise Unavailable(f"no Chromium on PATH (looked for {', '.join(NAMES)}); "
                      "install it, e.g. apt-get install -y chromium")


@dataclass
class Page:
    """One page target: send a protocol command, get its result (errors raise)."""

    socket: aiohttp.ClientWebSocketResponse
    folder: Path  # the browser's profile and temporary files, removed when it closes
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # the protocol's events (``Network.requestWillBeSent``…) read while awaiting answers
    events: list[dict[str, Any]] = field(default_factory=list)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        call_id = next(self.ids)
        await self.socket.send_json({"id": call_id, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self.socket.receive_json(), CALL_TIMEOUT)
            if "method" in message:
                self.events.append(message)
                continue
            if message.get("id") != call_id:
                continue  # the answer to a call abandoned by a timeout
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result: dict[str, Any] = message.get("result", {})
            return result

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited if it is a promise)."""
        result = await self.call("Runtime.evaluate", expression=expression,
                                 returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}…: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def press(self, key: str, code: int) -> None:
        """A key pressed and released, as the keyboard delivers it to the focused element."""
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key,
                            windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)

    async def screenshot(self, path: Path) -> None:
        shot = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))


@contextlib.asynccontextmanager
async def headless(width: int, height: int) -> AsyncIterator[Page]:
    """A headless Chromium whose page has a ``width``×``height`` viewport; ended on exit.

    Its profile, temporary files and output live in one new folder (:attr:`Page.folder`),
    removed afterwards. The folder is in the system's temporary directory rather than the
    caller's, whose path can be long: Chromium's singleton socket lives in it, and a Unix
    socket's path has a length limit (about 100 bytes) Chromium dies on.
    """
    binary = chromium_binary()
    folder = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    args = [str(binary), "--headless=new", "--remote-debugging-port=0",
            f"--user-data-dir={folder}", f"--window-size={width},{height}",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage",
            "--hide-scrollbars", "--mute-audio", "about:blank"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    env = {**os.environ, "TMPDIR": str(folder)}
    log = folder / "chromium.log"
    with log.open("wb") as output:
        process = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=output, start_new_session=True)
    try:
        endpoint = await asyncio.wait_for(_endpoint(process, folder, log), START_TIMEOUT)
        async with aiohttp.ClientSession(trust_env=False) as session:
            page_url = await _page_url(session, endpoint)
            async with session.ws_connect(page_url, max_msg_size=0) as socket:
                page = Page(socket, folder)
                await page.call("Emulation.setDeviceMetricsOverride", width=width,
                                height=height, deviceScaleFactor=1, mobile=False)
                yield page
    finally:
        _end(process)
        shutil.rmtree(folder, ignore_errors=True)


async def _endpoint(process: subprocess.Popen[bytes], profile: Path, log: Path) -> str:
    """The browser's DevTools address: Chromium writes its port to ``DevToolsActivePort``
    in the profile once it listens (``--remote-debugging-port=0`` picks a free one)."""
    active = profile / "DevToolsActivePort"
    while True:
        if process.poll() is not None:
            said = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"Chromium exited before listening "
                               f"(exit {process.returncode}):\n{said}")
        with contextlib.suppress(OSError, ValueError):
            lines = active.read_text(encoding="utf-8").splitlines()
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
        await asyncio.sleep(0.1)


async def _page_url(session: aiohttp.ClientSession, endpoint: str) -> str:
    host = endpoint.split("/")[2]
    async with session.get(f"http://{host}/json/list") as response:
        targets = await response.json()
    for target in targets:
        if target.get("type") == "page":
            return str(target["webSocketDebuggerUrl"])
    raise RuntimeError(f"Chromium has no page: {targets}")


def _end(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the browser's whole process group, then SIGKILL what is left of it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # helpers that outlived the main process


def processes_under(folder: Path) -> list[int]:
    """Pids of processes whose command line names ``folder`` (a browser's profile lies in
    it); read from ``/proc``, so empty where there is none."""
    marker = str(folder).encode()
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if marker in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
    return pids
