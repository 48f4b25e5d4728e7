"""read_file reads a bounded amount, streaming, and says how to read on.

The huge file is sparse (3 GiB of holes, a few kilobytes on disk) and is read in a child
whose address space is capped at 1 GiB: reading it whole fails there with MemoryError
instead of bringing the OOM killer onto a shared machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import core
from core.tools.confine import workspace_root
from core.tools.read_file import MAX_READ_BYTES, read_file

REPO = Path(core.__file__).resolve().parents[1]

_READ_IN_CHILD = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from core.tools.confine import workspace_root
from core.tools.read_file import read_file
root = workspace_root(Path(sys.argv[1]))
first = read_file(root, sys.argv[2])
out = read_file(root, sys.argv[2], offset=first.meta.get("next_offset"))
# VmHWM, not ru_maxrss: the latter keeps the forked parent's peak across exec
peak_kib = next(int(line.split()[1]) for line in open("/proc/self/status")
                if line.startswith("VmHWM:"))
print(json.dumps({"first": first.content, "first_meta": first.meta, "tail": out.content[-400:],
                  "meta": out.meta, "is_error": out.is_error, "peak_mib": peak_kib / 1024}))
"""


def test_a_3_gib_file_is_read_up_to_the_cap_in_bounded_memory(workspace):
    huge = workspace / "huge.log"
    with open(huge, "wb") as fh:
        fh.write(b"start of the log\n")
        fh.truncate(3 * 1024**3)  # sparse: no newline after the first line
    proc = subprocess.run(
        [sys.executable, "-c", _READ_IN_CHILD, str(workspace), "huge.log"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert not out["is_error"]
    # the first call shows the whole first line and stops before the 3 GiB one
    assert out["first"].startswith("start of the log\n... (read_file shows at most")
    assert out["first_meta"]["next_offset"] == 2 and out["first_meta"]["capped"]
    # the next call shows the first 4 MiB of that line and says where the rest starts
    assert out["meta"]["capped"] is True and out["meta"]["bytes"] == MAX_READ_BYTES
    assert out["meta"]["file_bytes"] == 3 * 1024**3
    assert out["peak_mib"] < 200
    assert "read_file shows at most 4,194,304 bytes per call" in out["tail"]
    assert "line 2 is longer than that and was cut" in out["tail"]
    assert "3,221,225,472 bytes in all" in out["tail"]


def _write_lines(workspace: Path, lines: list[str]) -> Path:
    path = workspace / "f.txt"
    path.write_bytes("".join(lines).encode("utf-8"))
    return path


def test_offset_continues_a_capped_read_where_it_stopped(workspace):
    lines = [f"line {i} {'é' * (i % 7)}\n" for i in range(1, 401)]
    _write_lines(workspace, lines)
    root = workspace_root(workspace)
    first = read_file(root, "f.txt", max_bytes=1000)
    assert first.meta["capped"] and first.meta["next_offset"] > 1
    assert f"continue with offset={first.meta['next_offset']}" in first.content
    second = read_file(root, "f.txt", offset=first.meta["next_offset"], max_bytes=1000)
    assert second.content.startswith(lines[first.meta["next_offset"] - 1])
    assert second.meta["offset"] == first.meta["next_offset"]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(blacklist_categories=("Cs",),
                                         blacklist_characters="\n\r"), max_size=12),
                   max_size=60),
    cap=st.integers(min_value=60, max_value=400),
    trailing_newline=st.booleans(),
)
def test_reading_on_by_offset_gives_back_every_byte(tmp_path_factory, lines, cap, trailing_newline):
    workspace = tmp_path_factory.mktemp("ws")
    text = "\n".join(lines) + ("\n" if trailing_newline and lines else "")
    (workspace / "f.txt").write_text(text, encoding="utf-8", newline="")
    root = workspace_root(workspace)
    got, offset = [], 1
    for _ in range(1000):
        out = read_file(root, "f.txt", offset=offset, max_bytes=cap)
        if out.is_error:  # offset past the end: the previous window was the last
            break
        if "next_offset" not in out.meta:
            got.append(out.content)
            break
        got.append(out.content[: out.content.rindex("... (read_file shows")])
        offset = out.meta["next_offset"]
    assert "".join(got) == text


def test_a_cut_line_names_the_byte_where_the_rest_starts(workspace):
    data = b"short\n" + "€".encode() * 600 + b"\nafter\n"  # 1,800 bytes in one line
    (workspace / "f.txt").write_bytes(data)
    root = workspace_root(workspace)
    first = read_file(root, "f.txt", max_bytes=1001)
    assert first.content.startswith("short\n... (") and first.meta["next_offset"] == 2
    out = read_file(root, "f.txt", offset=2, max_bytes=1001)
    shown = out.content[: out.content.index("\n... (")]
    assert "\ufffd" not in shown  # the euro sign split by the cap is held back, not mangled
    assert shown == "€" * 333
    assert "Shown: part of line 2 of f.txt (1,813 bytes in all)" in out.content
    resume = int(out.content.split("tail -c +")[1].split()[0])
    assert resume == 6 + 333 * 3 + 1  # the byte after the last one shown, 1-based
    assert data[resume - 1 :].startswith("€".encode())
    assert out.meta["next_offset"] == 3


def test_an_offset_past_the_end_is_a_clear_error(run, workspace):
    (workspace / "a.txt").write_text("one\ntwo\n")
    result = run("read_file", path="a.txt", offset=9)
    assert result.is_error and "offset 9 is past the end of a.txt" in result.content
    assert run("read_file", path="a.txt", offset=2).content == "two\n"
    assert run("read_file", path="a.txt", offset=0).content == "one\ntwo\n"
    assert run("read_file", path="a.txt", offset=2, limit=1).content == "two\n"


def test_a_limited_read_of_a_huge_file_does_not_count_all_its_lines(workspace):
    with open(workspace / "big.txt", "wb") as fh:
        fh.write(b"a\nb\n")
        fh.truncate(64 * 1024**2)
    out = read_file(workspace_root(workspace), "big.txt", limit=1)
    assert out.content == "a\n... (more lines follow; continue with offset=2)"
