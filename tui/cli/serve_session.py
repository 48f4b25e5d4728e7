"""The browser server behind ``ctxlab serve``: every served demo ends, and leaves nothing.

textual-serve starts one process per browser tab and, when the tab goes away, asks it to
quit over its stdin. A demo busy drawing never reads that request (nor its SIGTERM, which
Textual's web driver turns into the same queued message), so it kept spinning after its
browser left, survived the server, and its temporary workspace stayed on disk. Here:

* each demo runs in its own process group (``start_new_session``) with its own ``TMPDIR``,
  a directory this server created, so its workspace lands inside it;
* a session ends in three steps — the polite quit, then SIGTERM to the whole group, then
  SIGKILL — each given a few seconds, and its ``TMPDIR`` is removed after the process is
  gone, whatever the process did or did not clean up;
* the server tracks its sessions and ends all of them when it shuts down (SIGTERM/SIGINT);
  a server killed outright cannot, so each demo also watches its parent and exits, with its
  workspace removed, once the server is gone (:func:`tui.cli.temp_workspaces.exit_when_orphaned`);
* the page loads no web fonts from the internet: the Google Fonts link of textual-serve's
  template is replaced by an ``@font-face`` on the Roboto Mono it ships, so a classroom
  without internet gets the same page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from tui.cli.temp_workspaces import SERVED_ENV

log = logging.getLogger("textual-serve")
QUIT_GRACE = 3.0  # seconds a demo gets to quit when asked
TERM_GRACE = 3.0  # seconds it gets after SIGTERM before SIGKILL
TEMPLATE = "app_index.html"
_WEB_FONT_LINK = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*/>", re.DOTALL)
LOCAL_FONT = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf");
        font-style: normal;
      }
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf");
        font-style: italic;
      }
    </style>"""


def offline_template(source: str) -> str:
    """textual-serve's page with its web-font link replaced by the fonts it ships."""
    return _WEB_FONT_LINK.sub(lambda _: LOCAL_FONT, source)


class SessionService(AppService):
    """One served demo: its own process group and ``TMPDIR``, ended for sure by ``stop``."""

    def __init__(self, command: str, tmpdir: Path, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self.tmpdir = tmpdir
        self.stopped = False

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        env = super()._build_environment(width, height)
        env["TMPDIR"] = str(self.tmpdir)
        env[SERVED_ENV] = "1"
        return env

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width, height),
            start_new_session=True)
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """Quit politely, then SIGTERM, then SIGKILL the group; then remove ``TMPDIR``."""
        if self.stopped:
            return
        self.stopped = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(super().stop(), QUIT_GRACE)
        process = self._process
        if process is not None and process.returncode is None:
            for sig, grace in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, TERM_GRACE)):
                _signal_group(process.pid, sig)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), grace)
                    break
        if process is not None:
            _signal_group(process.pid, signal.SIGKILL)  # stragglers the shell left behind
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # the group id is the leader's pid (start_new_session)


class SessionServer(Server):
    """textual-serve's server with tracked, always-ended sessions and an offline page."""

    def __init__(self, command: str, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self.root = Path(tempfile.mkdtemp(prefix="ctxlab-serve-"))
        self.sessions: set[SessionService] = set()
        self.sockets: set[web.WebSocketResponse] = set()
        self.count = 0

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        source = (self.templates_path / TEMPLATE).read_text(encoding="utf-8")
        aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({TEMPLATE: offline_template(source)}))
        return app

    async def on_shutdown(self, app: web.Application) -> None:
        await asyncio.gather(*(s.stop() for s in list(self.sessions)))
        for socket in list(self.sockets):
            with contextlib.suppress(Exception):
                await socket.close()
        shutil.rmtree(self.root, ignore_errors=True)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with the session tracked and ended on any way out."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        self.count += 1
        service = SessionService(
            self.command, self.root / f"session-{self.count}",
            write_bytes=websocket.send_bytes, write_str=websocket.send_str,
            close=websocket.close, download_manager=self.download_manager, debug=self.debug)
        self.sessions.add(service)
        self.sockets.add(websocket)
        try:
            await websocket.prepare(request)
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except (asyncio.CancelledError, ConnectionError):
            pass  # the browser went away: the session ends below
        except Exception as error:  # a malformed message must not leave the demo running
            log.warning("session %s: %s", self.count, error)
        finally:
            await asyncio.shield(service.stop())
            self.sessions.discard(service)
            self.sockets.discard(websocket)
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket


def _int(value: str | None, default: int) -> int:
    try:
        return int(value or default)
    except ValueError:
        return default
