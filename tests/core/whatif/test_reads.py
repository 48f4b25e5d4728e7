"""Which file a tool call reads or writes, for the re-read facts."""

from __future__ import annotations

from typing import Any

import pytest

from core.whatif.reads import Read, lines_returned, names, read_of, shell_named, written_by


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


@pytest.mark.parametrize("command", [
    "sed -i 's/x = 1/x = 2/' a.py",
    "echo 'x = 2' > a.py",
    "printf 'x\\n' | tee a.py",
    "cp /tmp/new.py a.py",
    "mv b.py /w/a.py",
    "git checkout -- a.py",
    "git apply fix.diff",
    "patch -p1 < fix.diff",
    "python tools/rewrite.py a.py",
    "sed -i 's/x/y/' *.py",
])
def test_a_shell_call_that_is_no_plain_read_and_names_the_file_writes_it(command: str) -> None:
    for given in ({"command": command}, {"cmd": command, "workdir": "/w"},
                  {"command": ["bash", "-lc", command]}):
        assert names(shell_named("Bash", given), "/w/a.py"), (command, given)


@pytest.mark.parametrize("command", [
    "cat a.py", "sed -n '1,80p' a.py", "grep -n check_token a.py", "wc -l a.py",
    "git diff a.py", "ls -la", "echo done > b.py", "sed -i 's/x/y/' b.py"])
def test_a_plain_read_or_a_command_naming_another_file_writes_nothing_here(
        command: str) -> None:
    assert not names(shell_named("Bash", {"command": command, "workdir": "/w"}), "/w/a.py")
    assert shell_named("Grep", {"pattern": "a.py"}) == frozenset()  # no shell


def test_a_capped_whole_read_covers_only_the_lines_it_returned() -> None:
    whole = read_of("Read", {"file_path": "/w/a.py"})
    past = read_of("Read", {"file_path": "/w/a.py", "offset": 2001, "limit": 100})
    inside = read_of("Read", {"file_path": "/w/a.py", "offset": 10, "limit": 20})
    assert whole is not None and past is not None and inside is not None
    assert whole.covers(past, returned=1200)  # under the cap: the whole file came back
    assert not whole.covers(past, returned=2000) and whole.covers(inside, returned=2000)
    tail = read_of("exec_command", {"cmd": "tail -n 50 /w/a.py"})
    assert tail is not None and not whole.covers(tail, returned=2000)  # lines it can't place
    assert lines_returned("  1999\tx\n  2000\ty\n") == 2000
