"""File names that are not UTF-8, lone surrogates and overlapping edits.

A name with a byte that is not UTF-8 (``caf\\xff.txt`` on disk) is shown with a visible
``\\xff`` escape, and every file tool accepts that spelling back; a tool never returns a
string that cannot be encoded. Text the model writes must be encodable too: a lone
surrogate is refused, not silently written as ``?``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.tools import ToolOutcome, ToolRunner


def raw_name(workspace: Path, name: bytes, data: bytes | None = b"x\n") -> bytes:
    """Create ``name`` (bytes, not necessarily UTF-8) under ``workspace``: a file, or a
    directory when ``data`` is None."""
    path = os.fsencode(workspace) + b"/" + name
    if data is None:
        os.mkdir(path)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, data)
        os.close(fd)
    return path


def encodable(outcome: ToolOutcome) -> None:
    """Content and every string in meta survive a strict UTF-8 encode."""
    outcome.content.encode("utf-8")
    for key, value in outcome.meta.items():
        key.encode("utf-8")
        if isinstance(value, str):
            value.encode("utf-8")


def test_glob_shows_a_non_utf8_name_with_a_visible_escape(run, workspace):
    raw_name(workspace, b"caf\xff.txt")
    raw_name(workspace, b"d\xfe", None)
    raw_name(workspace, b"d\xfe/inner.txt")
    (workspace / "plain.txt").write_text("p")
    out = run("glob", pattern="**")
    encodable(out)
    assert out.content.splitlines() == ["caf\\xff.txt", "d\\xfe", "d\\xfe/inner.txt",
                                        "plain.txt"]
    assert run("glob", pattern="*.txt").content.splitlines() == ["caf\\xff.txt", "plain.txt"]
    # the escaped spelling works in a pattern too
    assert run("glob", pattern="caf\\xff*").content == "caf\\xff.txt"
    assert run("glob", pattern="d\\xfe/*").content == "d\\xfe/inner.txt"


def test_the_file_tools_accept_the_escaped_spelling_back(run, workspace):
    path = raw_name(workspace, b"caf\xff.txt", b"hello\n")
    raw_name(workspace, b"d\xfe", None)
    raw_name(workspace, b"d\xfe/inner.txt", b"inner\n")

    read = run("read_file", path="caf\\xff.txt")
    assert (read.is_error, read.content) == (False, "hello\n")
    assert read.meta["path"] == "caf\\xff.txt"
    edit = run("edit_file", path="caf\\xff.txt", old_text="hello", new_text="bye")
    assert (edit.is_error, edit.content) == (False, "Edited caf\\xff.txt")
    assert Path(os.fsdecode(path)).read_bytes() == b"bye\n"
    wrote = run("write_file", path="d\\xfe/new.txt", content="fresh\n")
    assert not wrote.is_error, wrote.content
    assert Path(os.fsdecode(os.fsencode(workspace) + b"/d\xfe/new.txt")).read_bytes() == b"fresh\n"
    assert run("read_file", path="d\\xfe/inner.txt").content == "inner\n"
    for out in (read, edit, wrote):
        encodable(out)


def test_a_name_that_really_holds_a_backslash_escape_is_taken_literally(run, workspace):
    (workspace / "caf\\xff.txt").write_text("literal\n")
    raw_name(workspace, b"caf\xff.txt", b"latin\n")
    assert run("read_file", path="caf\\xff.txt").content == "literal\n"
    # and a new file named with an escape is created as spelled, not as a raw byte
    assert not run("write_file", path="new\\xfa.txt", content="n").is_error
    assert (workspace / "new\\xfa.txt").read_text() == "n"


def test_errors_naming_an_unencodable_path_are_valid_unicode(run, workspace):
    for path in ("gone\udcff.txt", "half\ud800.txt", "d\udcfe/x"):
        for name, extra in (("read_file", {}), ("write_file", {"content": "x"}),
                            ("edit_file", {"old_text": "a", "new_text": "b"})):
            out = run(name, path=path, **extra)
            # a byte that is not UTF-8 can name a new file; one standing for no byte cannot
            assert out.is_error or (name == "write_file" and "\ud800" not in path), (name, path)
            encodable(out)
    out = run("glob", pattern="x\ud800*")
    encodable(out)


def test_read_file_of_non_utf8_content_returns_valid_unicode(run, workspace):
    (workspace / "bin.dat").write_bytes(b"ok \xff\xfe \xed\xa0\x80 end\n")
    out = run("read_file", path="bin.dat")
    encodable(out)
    assert out.content.startswith("ok ") and out.content.endswith(" end\n")


_PATHS = st.lists(
    st.characters(exclude_categories=()) | st.sampled_from(["\udcff", "\ud800", "/",
                                                            "\\xff", ".", "caf"]),
    min_size=1, max_size=12,
).map("".join)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_PATHS, text=_PATHS)
def test_every_file_tool_answers_with_encodable_text_whatever_the_path(workspace, path, text):
    raw_name(workspace, b"caf\xff.txt")
    runner = ToolRunner(workspace, bash_timeout=5)
    calls = [
        ("read_file", {"path": path}),
        ("glob", {"pattern": path}),
        ("write_file", {"path": path, "content": text}),
        ("edit_file", {"path": path, "old_text": "x", "new_text": text}),
    ]
    for name, tool_input in calls:
        encodable(asyncio.run(runner.run(name, tool_input)))


# -- text the model writes -------------------------------------------------------------------------


def test_write_file_refuses_a_lone_surrogate_instead_of_writing_a_question_mark(run, workspace):
    out = run("write_file", path="odd.txt", content="half \ud800 a pair")
    assert out.is_error and out.meta["error"] == "not_encodable"
    assert "character 5" in out.content and "\\ud800" in out.content
    encodable(out)
    assert not (workspace / "odd.txt").exists()
    (workspace / "kept.txt").write_text("old\n")
    assert run("write_file", path="kept.txt", content="new \udcff").is_error
    assert (workspace / "kept.txt").read_text() == "old\n"


def test_edit_file_refuses_a_lone_surrogate_in_the_new_text(run, workspace):
    (workspace / "a.txt").write_text("one two\n")
    out = run("edit_file", path="a.txt", old_text="two", new_text="t\udfffo")
    assert out.is_error and out.meta["error"] == "not_encodable"
    encodable(out)
    assert (workspace / "a.txt").read_text() == "one two\n"


def test_overlapping_occurrences_make_an_edit_ambiguous(run, workspace):
    (workspace / "a.txt").write_text("aaa\n")
    out = run("edit_file", path="a.txt", old_text="aa", new_text="b")
    assert out.is_error and out.meta["error"] == "not_unique"
    assert out.meta["occurrences"] == 2
    assert (workspace / "a.txt").read_text() == "aaa\n"
    (workspace / "b.txt").write_text("ababa x\n")
    assert run("edit_file", path="b.txt", old_text="aba", new_text="c").is_error
    assert not run("edit_file", path="b.txt", old_text="ababa", new_text="c").is_error
    assert (workspace / "b.txt").read_text() == "c x\n"
