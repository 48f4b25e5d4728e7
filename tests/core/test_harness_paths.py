"""The harness folders are reached without following links out of the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.harness_paths import HarnessPathError, check_harness_file, harness_dir, open_no_follow


def test_missing_folders_are_created_inside_the_workspace(tmp_path: Path) -> None:
    folder = harness_dir(tmp_path, ".task_outputs/tool-results")
    assert folder.is_dir() and folder == tmp_path.resolve() / ".task_outputs" / "tool-results"


@pytest.mark.parametrize("linked", [".task_outputs", ".task_outputs/tool-results"])
def test_a_linked_component_is_refused_and_nothing_is_written_outside(
        tmp_path: Path, linked: str) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / linked).parent.mkdir(parents=True, exist_ok=True)
    (ws / linked).symlink_to(outside, target_is_directory=True)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        harness_dir(ws, ".task_outputs/tool-results")
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_belongs_is_refused_and_kept(tmp_path: Path) -> None:
    (tmp_path / ".memory").write_text("mine")
    with pytest.raises(HarnessPathError, match="not a folder"):
        harness_dir(tmp_path, ".memory")
    assert (tmp_path / ".memory").read_text() == "mine"


def test_a_workspace_reached_through_a_link_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    assert harness_dir(tmp_path / "link", ".ctxlab/sessions").is_dir()
    assert (real / ".ctxlab" / "sessions").is_dir()


def test_a_linked_file_is_refused_by_both_checks(tmp_path: Path) -> None:
    target = tmp_path / "bashrc"
    target.write_text("# mine\n")
    link = tmp_path / "manifest.jsonl"
    link.symlink_to(target)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        check_harness_file(link)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        open_no_follow(link, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    assert target.read_text() == "# mine\n"


def test_a_fifo_under_a_harness_name_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "manifest.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(HarnessPathError, match="not a regular file"):
        open_no_follow(fifo, os.O_RDONLY)
