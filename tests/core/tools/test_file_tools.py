"""read_file, write_file, edit_file and glob: results, errors and the facts in ``meta``."""

from __future__ import annotations

import os


def test_read_file_returns_the_whole_file_without_a_cap(run, workspace):
    text = "".join(f"line {i}\n" for i in range(20_000))  # well over 50,000 chars
    (workspace / "big.txt").write_text(text)
    result = run("read_file", path="big.txt")
    assert not result.is_error
    assert result.content == text
    assert result.meta["path"] == "big.txt"


def test_read_file_limit_keeps_the_first_lines_and_says_how_many_more(run, workspace):
    (workspace / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    result = run("read_file", path="a.txt", limit=2)
    assert result.content == "one\ntwo\n... (2 more lines)"
    assert result.meta["omitted_lines"] == 2
    assert run("read_file", path="a.txt", limit=10).content == "one\ntwo\nthree\nfour\n"
    assert run("read_file", path="a.txt", limit="1").content.startswith("one\n...")


def test_read_file_rejects_a_bad_limit(run, workspace):
    (workspace / "a.txt").write_text("x")
    for bad in (0, -3, "many", True):
        result = run("read_file", path="a.txt", limit=bad)
        assert result.is_error and "limit" in result.content


def test_read_file_missing_and_directory_are_errors(run, workspace):
    missing = run("read_file", path="nope.txt")
    assert missing.is_error and missing.content == "Error: file not found: nope.txt"
    (workspace / "d").mkdir()
    assert "is a directory" in run("read_file", path="d").content


def test_read_file_refuses_a_fifo_instead_of_blocking(run, workspace):
    os.mkfifo(workspace / "pipe")
    result = run("read_file", path="pipe")
    assert result.is_error and "not a regular file" in result.content


def test_read_file_decodes_non_utf8_with_replacement(run, workspace):
    (workspace / "bin.dat").write_bytes(b"\xff\xfe\x00ok\x80")
    result = run("read_file", path="bin.dat")
    assert not result.is_error
    assert result.content == "\ufffd\ufffd\x00ok\ufffd"


def test_write_file_creates_parents_and_reports_the_relative_path(run, workspace):
    result = run("write_file", path="src/pkg/mod.py", content="print('hé')\n")
    assert not result.is_error
    assert (workspace / "src/pkg/mod.py").read_text(encoding="utf-8") == "print('hé')\n"
    assert result.meta == {"path": "src/pkg/mod.py", "bytes": 13, "created": True}
    assert result.content == "Wrote 13 bytes to src/pkg/mod.py"
    again = run("write_file", path=str(workspace / "src/pkg/mod.py"), content="")
    assert again.meta["created"] is False and again.meta["path"] == "src/pkg/mod.py"


def test_write_file_needs_string_content(run):
    result = run("write_file", path="a.txt")
    assert result.is_error and "content must be a string" in result.content


def test_edit_file_replaces_a_unique_match(run, workspace):
    (workspace / "a.py").write_text("def f():\n    return 1\n")
    result = run("edit_file", path="a.py", old_text="return 1", new_text="return 2")
    assert not result.is_error and result.content == "Edited a.py"
    assert result.meta == {"path": "a.py", "replacements": 1}
    assert (workspace / "a.py").read_text() == "def f():\n    return 2\n"


def test_edit_file_refuses_ambiguous_text_and_changes_nothing(run, workspace):
    (workspace / "a.py").write_text("x = 1\nx = 1\nx = 1\n")
    result = run("edit_file", path="a.py", old_text="x = 1", new_text="x = 2")
    assert result.is_error and result.meta["error"] == "not_unique"
    assert "occurs 3 times" in result.content
    assert (workspace / "a.py").read_text() == "x = 1\nx = 1\nx = 1\n"


def test_edit_file_missing_text_and_missing_file(run, workspace):
    (workspace / "a.py").write_text("hello\n")
    miss = run("edit_file", path="a.py", old_text="bye", new_text="x")
    assert miss.is_error and miss.content == "Error: old_text not found in a.py"
    gone = run("edit_file", path="b.py", old_text="a", new_text="b")
    assert gone.is_error and gone.meta["error"] == "not_found"
    empty = run("edit_file", path="a.py", old_text="", new_text="x")
    assert empty.is_error and "must not be empty" in empty.content


def test_edit_file_refuses_non_utf8_files_instead_of_corrupting_them(run, workspace):
    (workspace / "blob").write_bytes(b"abc\xffdef")
    result = run("edit_file", path="blob", old_text="abc", new_text="xyz")
    assert result.is_error and result.meta["error"] == "not_text"
    assert (workspace / "blob").read_bytes() == b"abc\xffdef"


def test_glob_lists_sorted_matches(run, workspace):
    for name in ("b.py", "a.py", "sub/c.py", "sub/d.txt"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("")
    assert run("glob", pattern="**/*.py").content.splitlines() == ["a.py", "b.py", "sub/c.py"]
    assert run("glob", pattern="*.rs").content == "(no matches)"


def test_glob_shows_at_most_200_and_says_how_many_more(run, workspace):
    for i in range(230):
        (workspace / f"f{i:03d}.txt").write_text("")
    result = run("glob", pattern="*.txt")
    lines = result.content.splitlines()
    assert len(lines) == 201
    assert lines[-1] == "... (30 more matches not shown; narrow the pattern)"
    assert result.meta == {"pattern": "*.txt", "matches": 230, "shown": 200}
