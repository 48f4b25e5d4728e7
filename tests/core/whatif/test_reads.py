"""Which file a tool call reads or writes, for the re-read facts."""

from __future__ import annotations

from typing import Any

import pytest

from core.whatif.reads import Read, read_of, written_by


@pytest.mark.parametrize(("tool", "given", "read"), [
    ("Read", {"file_path": "/w/a.py"}, Read("/w/a.py")),
    ("Read", {"file_path": "/w/a.py", "offset": 100, "limit": 50}, Read("/w/a.py", "100:50")),
    ("read_file", {"path": "src/../a.py"}, Read("a.py")),
    ("exec_command", {"cmd": "cat a.py", "workdir": "/w"}, Read("/w/a.py")),
    ("exec_command", {"cmd": "nl -ba /w/a.py"}, Read("/w/a.py")),
    ("shell", {"command": ["bash", "-lc", "sed -n '1,80p' a.py"]}, Read("a.py", "1,80p")),
    ("exec_command", {"cmd": "head -n 40 a.py"}, Read("a.py", "head -n40")),
    ("exec_command", {"cmd": "bash -lc 'cat a.py'"}, Read("a.py")),
    ("exec_command", {"cmd": "cat a.py b.py"}, None),  # two files: no one file's content
    ("exec_command", {"cmd": "cat a.py | grep x"}, None),  # a pipe prints something else
    ("exec_command", {"cmd": "cat 'a.py"}, None),  # unbalanced quote
    ("Bash", {"command": "pytest -q"}, None),
    ("Grep", {"pattern": "check_token"}, None),
])
def test_what_a_call_reads(tool: str, given: dict[str, Any], read: Read | None) -> None:
    assert read_of(tool, given) == read


def test_a_whole_read_covers_any_span_and_a_span_only_itself() -> None:
    whole, head = Read("/w/a.py"), Read("/w/a.py", "head -n40")
    assert whole.covers(head) and head.covers(head)
    assert not head.covers(whole) and not whole.covers(Read("/w/b.py"))


def test_what_a_call_writes() -> None:
    assert written_by("Edit", {"file_path": "/w/a.py", "old_string": "x"}) == ["/w/a.py"]
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: b.py\n+z\n"
    assert written_by("apply_patch", {"input": patch, "workdir": "/w"}) == \
        ["/w/a.py", "/w/b.py"]
    assert written_by("Read", {"file_path": "/w/a.py"}) == []
