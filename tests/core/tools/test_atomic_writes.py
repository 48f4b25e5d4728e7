"""write_file and edit_file replace a file whole or not at all, and keep its mode.

The failures are real OS failures, not mocked tool internals: a file-size limit
(``RLIMIT_FSIZE``) in a child process makes the kernel refuse the write part-way with
EFBIG, exactly as a full disk refuses it with ENOSPC; the ENOSPC case itself fails the
``os.write`` call after part of the data went down.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import core
from core.tools.confine import workspace_root
from core.tools.edit_file import edit_file
from core.tools.write_file import write_file

REPO = Path(core.__file__).resolve().parents[1]

# Run one tool call in a child whose files may not grow past 4096 bytes.
_LIMITED_CALL = """
import json, resource, signal, sys
from pathlib import Path
from core.tools.confine import workspace_root
from core.tools.edit_file import edit_file
from core.tools.write_file import write_file
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
root = workspace_root(Path(sys.argv[1]))
args = json.loads(sys.argv[2])
tool = write_file if args.pop("tool") == "write_file" else edit_file
out = tool(root, **args)
print(json.dumps({"is_error": out.is_error, "content": out.content, "meta": out.meta}))
"""


def _call_with_size_limit(workspace: Path, **args: object) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _LIMITED_CALL, str(workspace), json.dumps(args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_file_that_hits_a_size_limit_leaves_the_old_file_intact(workspace):
    old = "original line\n" * 100  # 1,400 bytes, under the limit
    (workspace / "notes.txt").write_text(old)
    result = _call_with_size_limit(
        workspace, tool="write_file", path="notes.txt", content="new text\n" * 2000
    )
    assert result["is_error"] and result["meta"]["error"] == "os_error"
    assert "File too large" in result["content"] and "unchanged" in result["content"]
    assert (workspace / "notes.txt").read_text() == old
    assert _leftovers(workspace) == []


def test_edit_file_that_hits_a_size_limit_leaves_the_old_file_intact(workspace):
    old = "header\nMARKER\nfooter\n"
    (workspace / "cfg.txt").write_text(old)
    result = _call_with_size_limit(
        workspace, tool="edit_file", path="cfg.txt", old_text="MARKER", new_text="x" * 10_000
    )
    assert result["is_error"] and "File too large" in result["content"]
    assert (workspace / "cfg.txt").read_text() == old
    assert _leftovers(workspace) == []


def test_a_full_disk_part_way_through_keeps_the_old_file_and_says_why(workspace, monkeypatch):
    target = workspace / "data.txt"
    target.write_text("keep me\n")
    real_write = os.write

    def disk_fills_up(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[:10]))  # some bytes reach the disk, then it is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", disk_fills_up)
    result = write_file(workspace_root(workspace), "data.txt", "replacement " * 1000)
    edit = edit_file(workspace_root(workspace), "data.txt", "keep", "lose")
    monkeypatch.undo()
    for outcome in (result, edit):
        assert outcome.is_error and "No space left on device" in outcome.content
        assert "unchanged" in outcome.content
    assert target.read_text() == "keep me\n"
    assert _leftovers(workspace) == []


def test_writes_keep_the_file_mode(run, workspace):
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o750)
    assert not run("edit_file", path="run.sh", old_text="one", new_text="two").is_error
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not run("write_file", path="run.sh", content="#!/bin/sh\necho three\n").is_error
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text() == "#!/bin/sh\necho three\n"
    assert _leftovers(workspace) == []


def test_a_write_through_a_symlink_updates_the_real_file_and_keeps_the_link(run, workspace):
    (workspace / "real.txt").write_text("old\n")
    (workspace / "link.txt").symlink_to("real.txt")
    assert not run("write_file", path="link.txt", content="new\n").is_error
    assert (workspace / "link.txt").is_symlink()
    assert (workspace / "real.txt").read_text() == "new\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write read-only files")
def test_a_read_only_file_stays_refused(run, workspace):
    locked = workspace / "locked.txt"
    locked.write_text("frozen\n")
    locked.chmod(0o444)
    result = run("write_file", path="locked.txt", content="thawed\n")
    assert result.is_error and locked.read_text() == "frozen\n"
