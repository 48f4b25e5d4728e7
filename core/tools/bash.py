"""``bash{command}``: run a shell command in the workspace, bounded in time and output.

The command runs as an asyncio subprocess in its own process group, so the agent loop stays
responsive and cancellable: a timeout or a cancelled turn kills the whole group (children
such as ``sleep`` in a pipeline included), not only the shell. stdout and stderr share one
pipe so the model sees them interleaved as a terminal would; stdin is closed so a command
waiting for input fails fast instead of hanging the turn.

Output beyond the cap is cut, never silently: the result says how much was shown. The head
and the tail are both kept, because the end of a long build log is where the error is.
Given a ``spool_dir``, the whole output is also written there as it arrives (from the
moment it outgrows the cap, so short commands touch no disk); the outcome names that file
in ``full_output`` and the loop moves it into the archive, so the middle is recoverable.

The command gets ctxlab's environment without its keys and tokens, and every known secret
value is replaced before the output is kept anywhere, the spool included
(:mod:`core.tools.secrets`): the model must not be able to print the provider key into the
history, the session file or the archive.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.archive.atomic import AtomicFile, open_atomic
from core.tools.outcome import ToolOutcome, error
from core.tools.secrets import Redactor, StreamRedactor, ToolSecrets
from core.tools.secrets import current as current_secrets

SCHEMA: dict[str, Any] = {
    "name": "bash",
    "description": "Run a shell command.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}

DEFAULT_TIMEOUT = 120.0
DEFAULT_OUTPUT_CAP = 50_000
# After the shell exits, how long a background child may keep the pipe open before the
# group is stopped (otherwise `server &` would hold the turn until the timeout).
DRAIN_GRACE = 1.0
CHUNK = 64 * 1024
POLL = 0.05  # how often the shell's exit is checked while output is open


@dataclass
class CappedText:
    """Decodes a byte stream incrementally, keeping a head and a tail within ``cap`` chars.

    Counting every char (not only the kept ones) lets the notice say "N of M". Secrets are
    redacted as the text is decoded, before the head, the tail or the spool see it."""

    cap: int
    spool_dir: Path | None = None
    redactor: Redactor = field(default_factory=Redactor)
    _redacting: StreamRedactor = field(init=False, repr=False)
    head: str = ""
    tail: str = ""
    total: int = 0
    spool: Path | None = None  # the whole output, once it outgrew the cap
    _spool_file: AtomicFile | None = None
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )

    @property
    def head_cap(self) -> int:
        return self.cap - self.cap // 5

    @property
    def tail_cap(self) -> int:
        return self.cap // 5

    def __post_init__(self) -> None:
        self._redacting = StreamRedactor(self.redactor)

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._redacting.feed(self._decoder.decode(data, final))
        if final:
            text += self._redacting.flush()
        if text and self.spool_dir is not None:
            try:
                self._spool_text(text)
            except OSError:  # e.g. a full disk: the output is cut as without a spool
                self.discard_spool()
                self.spool_dir = None
        if final:
            self.close_spool()
        if not text:
            return
        self.total += len(text)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text and self.tail_cap:
            self.tail = (self.tail + text)[-self.tail_cap :]

    def _spool_text(self, text: str) -> None:
        assert self.spool_dir is not None, "called only while spooling"
        if self._spool_file is None:
            if self.total + len(text) <= self.cap:
                return
            # Up to now head + tail is the whole output: start the file with it. It is a
            # locked temp file of the one atomic writer (another process's sweep leaves it
            # while it is written, and takes it if this process is killed); the archive
            # renames it into place.
            self.spool_dir.mkdir(parents=True, exist_ok=True)
            self._spool_file = open_atomic(self.spool_dir / "bash-output", durable=False)
            self.spool = Path(self._spool_file.tmp)
            self._spool_file.write((self.head + self.tail).encode("utf-8"))
        self._spool_file.write(text.encode("utf-8"))

    def close_spool(self) -> None:
        """Stop writing the file and hand it on by name (:attr:`spool`) to the archive."""
        if self._spool_file is not None:
            self._spool_file.release()

    def discard_spool(self) -> None:
        """Drop the file (a cancelled call hands nothing to the archive)."""
        if self._spool_file is not None:
            self._spool_file.abandon()
            self._spool_file = None
            self.spool = None

    def render(self) -> tuple[str, bool]:
        """The kept text and whether anything was cut (the tail only ever holds text that
        came after the head, so head + tail is the whole output when nothing was cut)."""
        kept = len(self.head) + len(self.tail)
        if kept >= self.total:
            return self.head + self.tail, False
        notice = f"\n[output truncated: {kept} of {self.total} chars shown]\n"
        return self.head + notice + self.tail, True


async def pump(stream: asyncio.StreamReader, sink: CappedText) -> None:
    while chunk := await stream.read(CHUNK):
        sink.feed(chunk)
    sink.feed(b"", final=True)


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's whole process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def reap(proc: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> None:
    """Kill, then collect the process and the reader so nothing is left running."""
    kill_group(proc)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), timeout=5)
    # asyncio.wait neither raises the reader's error nor swallows our own cancellation.
    done, _ = await asyncio.wait({reader}, timeout=1)
    if not done:
        reader.cancel()


async def run_bash(
    root: Path,
    command: object,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    spool_dir: Path | None = None,
    secrets: ToolSecrets | None = None,
) -> ToolOutcome:
    """``secrets`` (default: the calling run's, see :func:`core.tools.secrets.current`) gives the
    command's environment and the values redacted from its output."""
    if not isinstance(command, str) or not command.strip():
        return error("command must be a non-empty string", "bad_input")
    secrets = secrets or current_secrets()
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=root,
            env=dict(secrets.env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return error(f"cannot start the shell: {exc}", "os_error")
    assert proc.stdout is not None
    sink = CappedText(cap=max(output_cap, 1), spool_dir=spool_dir, redactor=secrets.redactor)
    reader = asyncio.create_task(pump(proc.stdout, sink))
    try:
        timed_out, stopped_children = await supervise(proc, reader, timeout)
    except asyncio.CancelledError:
        await asyncio.shield(reap(proc, reader))
        sink.discard_spool()
        raise
    sink.close_spool()
    return finish(sink, proc.returncode, timed_out, stopped_children, timeout)


async def supervise(
    proc: asyncio.subprocess.Process, reader: asyncio.Task[None], timeout: float
) -> tuple[bool, bool]:
    """Wait until the output closes; returns (timed_out, stopped_children).

    asyncio's ``proc.wait()`` only returns once every pipe is closed, so the shell's exit
    is watched through ``returncode`` instead: a background child that keeps the pipe open
    after the shell exits gets ``DRAIN_GRACE`` seconds, then its group is stopped, so
    ``server &`` cannot hold the turn until the timeout.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    exited_at: float | None = None
    while not reader.done():
        now = loop.time()
        if proc.returncode is not None and exited_at is None:
            exited_at = now
        if exited_at is not None and now - exited_at >= DRAIN_GRACE:
            await reap(proc, reader)
            return False, True
        if now >= deadline:
            shell_running = proc.returncode is None
            await reap(proc, reader)
            return shell_running, not shell_running
        await asyncio.wait({reader}, timeout=min(POLL, deadline - now))
    try:  # the output closed; the shell may still run (``exec >&-; sleep 99``)
        await asyncio.wait_for(proc.wait(), timeout=max(deadline - loop.time(), 0.0))
    except TimeoutError:
        await reap(proc, reader)
        return True, False
    return False, False


def finish(
    sink: CappedText, code: int | None, timed_out: bool, stopped_children: bool, timeout: float
) -> ToolOutcome:
    text, truncated = sink.render()
    text = text.rstrip()
    meta: dict[str, Any] = {
        "exit_code": code,
        "timed_out": timed_out,
        "truncated": truncated,
        "chars": sink.total,
    }
    if timed_out:
        note = f"Error: Timeout ({timeout:g}s): the command and its children were killed"
        body = f"{text}\n{note}" if text else note
        return ToolOutcome(content=body, is_error=True, meta={**meta, "error": "timeout"},
                           full_output=sink.spool if truncated else None)
    if not text:
        text = "(no output)"
    if code:
        text += f"\n[exit code {code}]"
    if stopped_children:
        text += "\n[background processes still held the output open and were stopped]"
    return ToolOutcome(content=text, meta={**meta, "stopped_children": stopped_children},
                       full_output=sink.spool if truncated else None)
