"""The one atomic writer's forms: a file written in pieces is committed whole or not at all,
stays locked (so no sweep takes it) while it is written, syncs exactly when it is durable, and
the sweep of a folder whose writers are all locked out does not wait for a temp file to age."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from core.archive import atomic
from core.archive.atomic import (
    STALE_AFTER,
    atomic_write_bytes,
    atomic_write_text,
    is_temp_name,
    open_atomic,
    rename_finished,
    sweep_stale_temp,
)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def age(path: Path | str, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_pieces_are_committed_as_one_file_and_no_temp_is_left(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old")
    with open_atomic(target, durable=False) as file:
        assert is_temp_name(os.path.basename(file.tmp))
        for piece in (b"one ", b"two ", b"three"):
            file.write(piece)
            assert target.read_bytes() == b"old"  # readers see the old file until the rename
        file.commit(target)
    assert target.read_bytes() == b"one two three"
    assert names(tmp_path) == ["notes.txt"]


def test_a_failure_part_way_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), open_atomic(target, durable=True) as file:
        file.write(b"half of the new")
        raise RuntimeError("the writer fails before committing")
    assert target.read_bytes() == b"old"
    assert names(tmp_path) == ["notes.txt"]


def test_leaving_the_block_uncommitted_keeps_nothing(tmp_path: Path) -> None:
    with open_atomic(tmp_path / "never.txt", durable=False) as file:
        file.write(b"written, never committed")
    assert names(tmp_path) == []


def test_a_refused_rename_removes_the_temp_and_leaves_the_target(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("the user's")
    with pytest.raises(OSError), open_atomic(target, durable=False) as file:
        file.write(b"data")
        file.commit(target)  # a folder with files in it cannot be replaced by a file
    assert names(tmp_path) == ["taken"] and names(target) == ["inside"]


def test_abandon_after_commit_keeps_the_committed_file(tmp_path: Path) -> None:
    target = tmp_path / "kept.txt"
    file = open_atomic(target, durable=False)
    file.write(b"kept")
    file.commit(target)
    file.abandon()
    assert target.read_bytes() == b"kept"
    with pytest.raises(ValueError):
        file.write(b"more")


def test_the_mode_is_the_new_file_s(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    with open_atomic(target, durable=False, mode=0o700) as file:
        file.write(b"#!/bin/sh\n")
        file.commit(target)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o700 & ~umask


def test_an_open_file_is_locked_against_any_sweep_and_swept_once_let_go(tmp_path: Path) -> None:
    file = open_atomic(tmp_path / "spool", durable=False)
    file.write(b"a long output")
    age(file.tmp, 10 * STALE_AFTER)
    assert sweep_stale_temp(tmp_path) == []
    assert sweep_stale_temp(tmp_path, writers_excluded=True) == []
    tmp = file.release()  # handed on by name: unlocked from now on
    assert sweep_stale_temp(tmp_path) == [os.path.basename(tmp)]


def test_a_released_file_is_renamed_into_place_by_name(tmp_path: Path) -> None:
    file = open_atomic(tmp_path / "spool", durable=False)
    file.write(b"the whole output")
    tmp = file.release()
    rename_finished(tmp, tmp_path / "result.txt")
    assert names(tmp_path) == ["result.txt"]
    assert (tmp_path / "result.txt").read_bytes() == b"the whole output"


def test_where_every_writer_is_locked_out_a_fresh_temp_is_swept(tmp_path: Path) -> None:
    fresh = tmp_path / ".record.md.4242.0.tmp"
    fresh.write_bytes(b"half")
    assert sweep_stale_temp(tmp_path) == []  # elsewhere it may be a writer about to lock
    assert sweep_stale_temp(tmp_path, writers_excluded=True) == [fresh.name]


def test_the_sweep_never_removes_a_folder_or_a_link(tmp_path: Path) -> None:
    (tmp_path / ".folder.1.0.tmp").mkdir()
    (tmp_path / ".link.1.1.tmp").symlink_to(tmp_path / "elsewhere")
    age(tmp_path / ".folder.1.0.tmp", 10 * STALE_AFTER)
    assert sweep_stale_temp(tmp_path, writers_excluded=True) == []
    assert names(tmp_path) == [".folder.1.0.tmp", ".link.1.1.tmp"]


@pytest.mark.parametrize("durable", [True, False])
def test_durable_writes_sync_the_file_and_its_folder_and_others_sync_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool) -> None:
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    atomic_write_text(tmp_path / "a.json", "{}", durable=durable)
    atomic_write_bytes(str(tmp_path / "b.bin"), b"\0", durable=durable)
    with open_atomic(tmp_path / "c.txt", durable=durable) as file:
        file.write(b"c")
        file.commit(tmp_path / "c.txt")
    assert synced == (["file", "folder"] * 3 if durable else [])
    assert names(tmp_path) == ["a.json", "b.bin", "c.txt"]


def test_text_is_kept_byte_exact_or_spelt_valid(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "exact.txt", "a\udc80b")
    atomic_write_text(tmp_path / "valid.txt", "a\udc80b", errors="backslashreplace")
    assert (tmp_path / "exact.txt").read_bytes() == "a\udc80b".encode("utf-8", "surrogatepass")
    assert (tmp_path / "valid.txt").read_text(encoding="utf-8") == "a\\udc80b"


def test_a_missing_folder_is_made(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "a" / "b" / "c.txt", "deep")
    atomic_write_bytes(str(tmp_path / "d" / "e.bin"), b"deep")
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "deep"
    assert (tmp_path / "d" / "e.bin").read_bytes() == b"deep"
