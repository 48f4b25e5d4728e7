"""bash: cwd, exit codes, timeouts that kill the whole group, cancellation, output cap."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from core.tools import ToolRunner
from core.tools.bash import CappedText


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a killed child may linger as a zombie until its parent reaps it
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def wait_dead(pid: int, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_runs_in_the_workspace(run, workspace):
    result = run("bash", command="pwd")
    assert result.content == str(workspace.resolve())
    assert result.meta["exit_code"] == 0 and not result.is_error


def test_stdout_and_stderr_and_exit_code(run):
    result = run("bash", command="echo out; echo err >&2; exit 3")
    assert result.content == "out\nerr\n[exit code 3]"
    assert result.meta["exit_code"] == 3
    assert not result.is_error  # the command ran; its failure is information


def test_no_output_is_said(run):
    assert run("bash", command="true").content == "(no output)"


def test_stdin_is_closed_so_reads_do_not_hang(run):
    result = run("bash", command="cat; echo done")
    assert result.content == "done"


def test_timeout_kills_the_whole_process_group(workspace):
    runner = ToolRunner(workspace, bash_timeout=1)
    started = time.monotonic()
    result = asyncio.run(runner.run("bash", {"command": "sleep 30 & echo $! > pid; wait"}))
    assert time.monotonic() - started < 5
    assert result.is_error and "Timeout (1s)" in result.content
    assert result.meta["timed_out"] is True and result.meta["error"] == "timeout"
    assert wait_dead(int((workspace / "pid").read_text()))


def test_timeout_keeps_the_output_seen_so_far(workspace):
    runner = ToolRunner(workspace, bash_timeout=1)
    result = asyncio.run(runner.run("bash", {"command": "echo partial; sleep 30"}))
    assert result.content.startswith("partial\n") and "Timeout" in result.content


def test_cancelling_the_call_kills_the_child(workspace):
    runner = ToolRunner(workspace, bash_timeout=60)

    async def scenario() -> None:
        task = asyncio.create_task(runner.run("bash", {"command": "echo $$ > pid; sleep 30"}))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if (workspace / "pid").exists() and (workspace / "pid").read_text().strip():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert wait_dead(int((workspace / "pid").read_text()))


def test_background_child_holding_the_output_is_stopped_after_a_grace(workspace):
    runner = ToolRunner(workspace, bash_timeout=30)
    started = time.monotonic()
    result = asyncio.run(runner.run("bash", {"command": "sleep 30 & echo $! > pid; echo up"}))
    assert time.monotonic() - started < 5
    assert result.content.startswith("up\n") and "were stopped" in result.content
    assert not result.is_error and result.meta["stopped_children"] is True
    assert wait_dead(int((workspace / "pid").read_text()))


def test_binary_output_is_decoded_with_replacement(run):
    command = "python3 -c \"import sys; sys.stdout.buffer.write(b'\\xff\\xfe\\x00ok\\x80')\""
    result = run("bash", command=command)
    assert not result.is_error
    assert result.content == "\ufffd\ufffd\x00ok\ufffd"


def test_truncation_is_announced_with_head_and_tail(workspace):
    runner = ToolRunner(workspace, output_cap=1_000)
    command = "python3 -c \"print('HEAD' + 'x' * 5000 + 'TAIL', end='')\""
    result = asyncio.run(runner.run("bash", {"command": command}))
    assert "[output truncated: 1000 of 5008 chars shown]" in result.content
    assert result.content.startswith("HEAD") and result.content.endswith("TAIL")
    assert result.meta["truncated"] is True and result.meta["chars"] == 5008


def test_output_under_the_cap_is_untouched(workspace):
    runner = ToolRunner(workspace, output_cap=1_000)
    result = asyncio.run(runner.run("bash", {"command": "printf 'a%.0s' $(seq 1000)"}))
    assert result.content == "a" * 1000 and result.meta["truncated"] is False


def test_capped_text_counts_multibyte_chars_split_across_chunks():
    sink = CappedText(cap=10)
    data = ("é" * 20).encode()
    for i in range(0, len(data), 3):  # cut inside multi-byte sequences
        sink.feed(data[i : i + 3])
    sink.feed(b"", final=True)
    text, cut = sink.render()
    assert cut and sink.total == 20
    assert text.replace("\n[output truncated: 10 of 20 chars shown]\n", "") == "é" * 10


def test_empty_command_is_an_error(run):
    assert run("bash", command="  ").is_error
    assert run("bash").is_error


def test_default_limits_match_the_course(tmp_path: Path):
    runner = ToolRunner(tmp_path)
    assert runner.bash_timeout == 120 and runner.output_cap == 50_000 and runner.glob_limit == 200


def test_an_output_over_the_cap_is_spooled_whole(workspace):
    """Issue 11: the middle of a long output was lost for good; now a file holds all of it."""
    spool = workspace / ".task_outputs" / "tool-results"
    runner = ToolRunner(workspace, output_cap=1_000, spool_dir=spool)
    command = "python3 -c \"print('HEAD' + 'é' * 200000 + 'MIDDLE' + 'x' * 5000 + 'TAIL')\""
    result = asyncio.run(runner.run("bash", {"command": command}))
    assert result.full_output is not None and result.full_output.parent == spool
    whole = result.full_output.read_text(encoding="utf-8")
    assert whole == "HEAD" + "é" * 200000 + "MIDDLE" + "x" * 5000 + "TAIL\n"
    assert "MIDDLE" not in result.content  # the preview is unchanged
    assert result.full_output.name.startswith(".")  # hidden until the archive adopts it


def test_an_output_under_the_cap_writes_no_file(workspace):
    spool = workspace / "spool"
    runner = ToolRunner(workspace, output_cap=1_000, spool_dir=spool)
    result = asyncio.run(runner.run("bash", {"command": "echo short"}))
    assert result.full_output is None and not spool.exists()


def test_a_cancelled_command_leaves_no_spool(workspace):
    spool = workspace / "spool"
    runner = ToolRunner(workspace, output_cap=100, spool_dir=spool)

    async def go():
        command = "yes | head -c 100000; sleep 30"
        task = asyncio.create_task(runner.run("bash", {"command": command}))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert list(spool.iterdir()) == []
