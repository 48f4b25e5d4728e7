"""``ctxlab serve``: the workbench page answers on 127.0.0.1, and the server stops cleanly.

The end-to-end test starts the real command as a subprocess on a free port, polls the page
(bounded), and terminates it with SIGTERM, the way a classroom machine would stop it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tui.cli import build_parser, main
from tui.cli.cmd_serve import demo_command

ROOT = Path(__file__).resolve().parents[3]
BOOT_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
    with opener.open(url, timeout=2) as response:
        return response.status, response.read().decode("utf-8", "replace")


def serve(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "tui", "serve", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM semantics")
def test_serve_answers_with_the_workbench_page_then_stops_cleanly():
    pytest.importorskip("textual_serve")
    port = free_port()
    process = serve("--port", str(port))
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT
        status, page = 0, ""
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr \
                else "exited"
            try:
                status, page = fetch(f"http://127.0.0.1:{port}/")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        assert status == 200, f"no answer on port {port} within {BOOT_TIMEOUT}s"
        assert "<html" in page.lower() and f"ws://127.0.0.1:{port}/ws" in page
        # offline classroom: nothing is loaded from the internet, the font is served here
        loaded = [a or b for a, b in re.findall(r'(?:href|src)="([^"]+)"|url\("?([^")]+)', page)]
        assert loaded and all(u.startswith(f"http://127.0.0.1:{port}/") for u in loaded), loaded
        assert "googleapis" not in page
        fonts = [u for u in loaded if u.endswith(".ttf")]
        assert fonts and all(fetch(u)[0] == 200 for u in fonts)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    assert code == 0


def test_the_served_command_is_the_demo_with_theme_lang_and_breaks_passed_through():
    args = build_parser().parse_args(["serve", "--theme", "projector", "--lang", "zh",
                                      "--break", "unseen-guard"])
    argv = shlex.split(demo_command(args))
    assert argv[:5] == ["exec", sys.executable, "-m", "tui", "demo"]  # the shell becomes it
    assert argv[5:] == ["--theme", "projector", "--lang", "zh", "--break", "unseen-guard"]
    plain = shlex.split(demo_command(build_parser().parse_args(["serve"])))
    assert plain == ["exec", sys.executable, "-m", "tui", "demo"]
    assert args.host == "127.0.0.1"  # localhost unless asked


@pytest.mark.parametrize(("args", "needle"), [
    (["--theme", "no-such-theme"], "no-such-theme"),
    (["--port", "0"], "--port"),
])
def test_bad_options_are_one_line_and_exit_2(capsys, args, needle):
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ctxlab serve: ") and needle in err


def test_without_textual_serve_it_says_how_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.delitem(sys.modules, "tui.cli.serve_session", raising=False)
    assert main(["serve", "--port", str(free_port())]) == 2
    assert "pip install" in capsys.readouterr().err


def test_a_taken_port_is_one_line_and_exit_1():
    pytest.importorskip("textual_serve")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        process = serve("--port", str(sock.getsockname()[1]))
        try:
            _, err = process.communicate(timeout=BOOT_TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 1
    assert "ctxlab serve: cannot listen on 127.0.0.1" in err.decode()
