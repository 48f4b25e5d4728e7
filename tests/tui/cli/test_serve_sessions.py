"""Served demos end: when their browser drops mid-frame, and when the server is stopped.

Each test runs the real ``ctxlab serve`` on a free port with ``TMPDIR`` pointing at the
test's directory, opens the websocket with aiohttp the way textual.js does, waits for the
demo to draw, then drops the connection in the middle of a frame (half a frame header and
payload written on the raw socket, then an abortive close) or stops the server with
SIGTERM. Afterwards no demo process and no temporary directory may be left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.cli.test_cmd_serve import BOOT_TIMEOUT, ROOT, free_port

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("textual_serve")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

END_TIMEOUT = 20.0


def served_demos(tmp: Path) -> list[int]:
    """Pids of demo processes whose TMPDIR lies under ``tmp`` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"\x00tui\x00demo" in cmdline and f"TMPDIR={tmp}".encode() in environ:
            pids.append(int(entry.name))
    return pids


def leftovers(tmp: Path) -> list[str]:
    """Demo workspaces (``ctxlab-<scenario>-…``) anywhere under ``tmp``."""
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("ctxlab-*")
                  if not p.name.startswith("ctxlab-serve-"))


def start_server(tmp: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-m", "tui", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def open_session(port: int) -> tuple[object, object]:
    """Connect like the page does and wait until the demo has drawn something."""
    session = aiohttp.ClientSession(trust_env=False)
    url = f"ws://127.0.0.1:{port}/ws?width=100&height=30"
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:
        try:
            ws = await session.ws_connect(url)
            break
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    received = 0
    while received < 2_000:  # the demo's first screens
        message = await asyncio.wait_for(ws.receive(), BOOT_TIMEOUT)
        assert message.type == aiohttp.WSMsgType.BINARY, message
        received += len(message.data)
    return session, ws


def drop_mid_frame(ws) -> None:
    """Half a masked text frame (its header promises 1,000 bytes, 20 follow), then a reset.

    The connection's own transport writes the bytes (aiohttp has no public call for a
    partial frame); SO_LINGER 0 makes the close an abortive one, as a killed browser's is.
    """
    transport = ws._writer.transport
    ws.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
    transport.write(bytes([0x81, 0x80 | 126]) + struct.pack(">H", 1000) + b"mask" + b"x" * 20)
    transport.abort()


def wait_until(predicate, timeout: float = END_TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def stop(process: subprocess.Popen[bytes], tmp: Path) -> int:
    """SIGTERM the server; whatever happens, no demo of this test outlives it."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=END_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
    finally:
        reap(tmp)


def reap(tmp: Path) -> None:
    """Kill this test's demos by pid, so a failing test leaves nothing running."""
    for pid in served_demos(tmp):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_client_dropping_mid_frame_ends_its_demo_and_workspace(tmp_path):
    port = free_port()
    server = start_server(tmp_path, port)

    async def scenario() -> None:
        session, ws = await open_session(port)
        assert served_demos(tmp_path), "the demo runs while its browser is connected"
        assert wait_until(lambda: leftovers(tmp_path), 5), "and has its workspace"
        drop_mid_frame(ws)
        await session.close()

    try:
        asyncio.run(scenario())
        assert wait_until(lambda: not served_demos(tmp_path)), served_demos(tmp_path)
        assert wait_until(lambda: not leftovers(tmp_path)), leftovers(tmp_path)
        assert server.poll() is None, "the server keeps serving other browsers"
    finally:
        code = stop(server, tmp_path)
    assert code == 0


def test_sigterm_on_the_server_ends_every_demo_and_its_workspace(tmp_path):
    port = free_port()
    server = start_server(tmp_path, port)
    sessions = []

    async def connect_two() -> None:
        for _ in range(2):
            sessions.append(await open_session(port))

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(connect_two())
        assert len(served_demos(tmp_path)) == 2
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=END_TIMEOUT)
    finally:
        for session, _ws in sessions:
            loop.run_until_complete(session.close())
        loop.close()
        if server.poll() is None:
            server.kill()
        remaining = served_demos(tmp_path)
        reap(tmp_path)
    assert code == 0
    assert not remaining, "every demo ended with the server"
    assert not leftovers(tmp_path) and not list(tmp_path.iterdir())


ORPHANING_PARENT = """
import os, subprocess, sys, time
from pathlib import Path
tmp = Path(sys.argv[1])
child = subprocess.Popen([sys.executable, "-m", "tui", "demo"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
deadline = time.monotonic() + 20
while not list(tmp.glob("ctxlab-*")) and time.monotonic() < deadline:
    time.sleep(0.1)
time.sleep(0.5)
os._exit(0)  # like a server killed outright: no cleanup, the demo is reparented
"""


def test_a_served_demo_whose_server_vanishes_ends_and_removes_its_workspace(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path),
           "CTXLAB_SERVED": "1", "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver"}
    parent = subprocess.run([sys.executable, "-c", ORPHANING_PARENT, str(tmp_path)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60, check=True)
    pid = int(parent.stdout.split()[0])
    try:
        assert wait_until(lambda: not Path(f"/proc/{pid}").exists()
                          or b"(Z)" in _stat(pid)), "the orphaned demo ended"
        assert wait_until(lambda: not leftovers(tmp_path)), leftovers(tmp_path)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _stat(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().replace(b") Z", b"(Z)")
    except OSError:
        return b"(Z)"
