"""A file written with no name and linked once whole: exact bytes, never a replacement, no
leftovers, and the named-temporary-file way wherever the system cannot do it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import core.archive.unnamed as unnamed
from core.archive.atomic import atomic_write_bytes
from core.archive.unnamed import write_unnamed

needs_tmpfile = pytest.mark.skipif(not getattr(os, "O_TMPFILE", 0), reason="no O_TMPFILE")


@pytest.fixture(autouse=True)
def fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unnamed, "_unsupported", set())


@needs_tmpfile
def test_a_new_file_gets_its_bytes_and_name_and_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    st = write_unnamed(str(target), b"whole\n" * 1000)
    if st is None:
        pytest.skip("this filesystem has no O_TMPFILE")
    assert target.read_bytes() == b"whole\n" * 1000
    assert os.listdir(tmp_path) == ["a.txt"]  # no temporary name, ever
    there = os.lstat(target)
    assert (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mode) == \
        (there.st_ino, there.st_size, there.st_ctime_ns, there.st_mode)


@needs_tmpfile
def test_an_existing_name_is_never_replaced_by_it(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"old")
    assert write_unnamed(str(target), b"new") is None
    assert target.read_bytes() == b"old"
    atomic_write_bytes(str(target), b"new")  # the caller's way: a rename over it
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_where_the_filesystem_refuses_the_named_temp_file_is_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse(path, flags, *args):  # type: ignore[no-untyped-def]
        if flags & getattr(os, "O_TMPFILE", 0) == getattr(os, "O_TMPFILE", -1):
            raise OSError(errno.EOPNOTSUPP, "not here")
        return real_open(path, flags, *args)

    monkeypatch.setattr(unnamed, "_O_TMPFILE", getattr(os, "O_TMPFILE", 0) or 0o20000000)
    monkeypatch.setattr(unnamed, "_LINKAT", True)
    monkeypatch.setattr(unnamed.os, "open", refuse)
    target = tmp_path / "a.txt"
    assert atomic_write_bytes(str(target), b"bytes") is None
    assert target.read_bytes() == b"bytes"
    assert str(tmp_path) in unnamed._unsupported  # not asked again for this folder
    assert os.listdir(tmp_path) == ["a.txt"]


def test_a_missing_folder_is_made_first(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "a.txt"
    atomic_write_bytes(str(target), b"x")
    assert target.read_bytes() == b"x"
