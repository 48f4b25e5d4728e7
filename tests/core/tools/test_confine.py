"""Confinement: no tool may read or write outside the workspace, however the path is spelled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.tools.confine import PathRefused, check_glob_pattern, resolve_in_workspace


def outside(workspace: Path) -> Path:
    return workspace.parent / "outside"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "a/../../outside/secret.txt", ".."])
def test_parent_paths_are_refused(run, path):
    result = run("read_file", path=path)
    assert result.is_error and "outside the workspace" in result.content
    assert result.meta["error"] == "outside_workspace"


def test_absolute_path_outside_is_refused_and_inside_is_allowed(run, workspace):
    refused = run("read_file", path=str(outside(workspace) / "secret.txt"))
    assert refused.is_error and "outside the workspace" in refused.content
    (workspace / "inside.txt").write_text("hello")
    allowed = run("read_file", path=str(workspace / "inside.txt"))
    assert not allowed.is_error and allowed.content == "hello"


def test_writes_outside_are_refused_and_leave_nothing_behind(run, workspace):
    target = outside(workspace) / "new.txt"
    result = run("write_file", path="../outside/new.txt", content="x")
    assert result.is_error
    assert not target.exists()


def test_symlinked_directory_pointing_outside_is_refused(run, workspace):
    (workspace / "link").symlink_to(outside(workspace), target_is_directory=True)
    read = run("read_file", path="link/secret.txt")
    assert read.is_error and "symlink" in read.content
    write = run("write_file", path="link/planted.txt", content="x")
    assert write.is_error
    assert not (outside(workspace) / "planted.txt").exists()


def test_symlinked_file_pointing_outside_is_refused(run, workspace):
    (workspace / "innocent.txt").symlink_to(outside(workspace) / "secret.txt")
    assert run("read_file", path="innocent.txt").is_error
    assert run("write_file", path="innocent.txt", content="pwned").is_error
    assert run("edit_file", path="innocent.txt", old_text="top", new_text="no").is_error
    assert (outside(workspace) / "secret.txt").read_text() == "top secret\n"


def test_dangling_symlink_pointing_outside_cannot_be_written_through(run, workspace):
    (workspace / "dangling").symlink_to(outside(workspace) / "not-yet.txt")
    assert run("write_file", path="dangling", content="x").is_error
    assert not (outside(workspace) / "not-yet.txt").exists()


def test_symlink_inside_the_workspace_is_fine(run, workspace):
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("A")
    (workspace / "alias").symlink_to(workspace / "real", target_is_directory=True)
    assert run("read_file", path="alias/a.txt").content == "A"


def test_workspace_given_through_a_symlink_still_works(tmp_path):
    real = tmp_path / "real-ws"
    real.mkdir()
    (real / "f.txt").write_text("ok")
    link = tmp_path / "ws-link"
    link.symlink_to(real, target_is_directory=True)
    root = link.resolve()
    assert resolve_in_workspace(root, "f.txt") == real / "f.txt"


def test_symlink_loop_is_refused_not_raised(run, workspace):
    os.symlink("loop-b", workspace / "loop-a")
    os.symlink("loop-a", workspace / "loop-b")
    result = run("read_file", path="loop-a")
    assert result.is_error


@pytest.mark.parametrize("pattern", ["../*", "../outside/*", "src/../../*", "**/../../*"])
def test_glob_patterns_with_parent_parts_are_refused(run, pattern):
    result = run("glob", pattern=pattern)
    assert result.is_error and "'..'" in result.content


def test_absolute_glob_patterns_are_refused(run, workspace):
    result = run("glob", pattern=str(outside(workspace)) + "/*")
    assert result.is_error and "absolute" in result.content


def test_glob_results_that_lead_outside_are_filtered(run, workspace):
    (workspace / "mine.txt").write_text("m")
    (workspace / "link").symlink_to(outside(workspace), target_is_directory=True)
    result = run("glob", pattern="**/*.txt")
    assert not result.is_error
    assert result.content.splitlines() == ["mine.txt"]


def test_check_glob_pattern_accepts_ordinary_patterns():
    assert check_glob_pattern("src/**/*.py") == "src/**/*.py"
    with pytest.raises(PathRefused):
        check_glob_pattern("")


@pytest.mark.parametrize(
    "path",
    [
        ".memory/note.md",
        ".memory/MEMORY.md",
        "./.memory/x.md",
        ".MEMORY/x.md",
        ".ctxlab/state.json",
        ".task_outputs/tool-results/toolu_1-abc.txt",
        ".Task_Outputs/new.txt",
        ".transcripts/transcript_1.jsonl",
        "./.transcripts/../.transcripts/x.jsonl",
    ],
)
def test_harness_directories_are_refused_for_writes(run, path):
    result = run("write_file", path=path, content="x")
    assert result.is_error and result.meta["error"] == "protected"
    assert "may not write" in result.content


def test_memory_can_be_read_but_not_edited(run, workspace):
    (workspace / ".memory").mkdir()
    (workspace / ".memory" / "prefs.md").write_text("tabs\n")
    assert run("read_file", path=".memory/prefs.md").content == "tabs\n"
    edit = run("edit_file", path=".memory/prefs.md", old_text="tabs", new_text="spaces")
    assert edit.is_error and edit.meta["error"] == "protected"
    assert (workspace / ".memory" / "prefs.md").read_text() == "tabs\n"


def test_a_symlink_into_memory_is_refused_for_writes(run, workspace):
    (workspace / ".memory").mkdir()
    (workspace / "notes").symlink_to(workspace / ".memory", target_is_directory=True)
    assert run("write_file", path="notes/x.md", content="x").is_error
    assert not (workspace / ".memory" / "x.md").exists()


def test_writing_the_workspace_itself_is_refused(run):
    assert run("write_file", path=".", content="x").is_error


def test_archived_results_and_transcripts_cannot_be_overwritten_or_edited(run, workspace):
    """The archive is ctxlab's proof that nothing left the context for good: a file tool
    rewriting it would make a pointer lead to different bytes."""
    results = workspace / ".task_outputs" / "tool-results"
    results.mkdir(parents=True)
    (results / "toolu_1-abc.txt").write_text("original output\n")
    (workspace / ".transcripts").mkdir()
    (workspace / ".transcripts" / "t.jsonl").write_text('{"role": "user"}\n')
    (workspace / "out").symlink_to(results, target_is_directory=True)
    for path in (".task_outputs/tool-results/toolu_1-abc.txt", "out/toolu_1-abc.txt"):
        write = run("write_file", path=path, content="forged")
        assert write.is_error and write.meta["error"] == "protected", path
        assert "may not write" in write.content
    edit = run("edit_file", path=".transcripts/t.jsonl", old_text="user", new_text="x")
    assert edit.is_error and edit.meta["error"] == "protected"
    assert (results / "toolu_1-abc.txt").read_text() == "original output\n"
    assert (workspace / ".transcripts" / "t.jsonl").read_text() == '{"role": "user"}\n'
    assert run("read_file", path=".task_outputs/tool-results/toolu_1-abc.txt").content == (
        "original output\n"
    )
