"""A file name as long as the filesystem allows can be written, edited and archived.

Every write goes through a hidden temp file beside its target, and the temp name adds
``.<pid>.<n>.tmp`` and a leading dot to the target's name: a legal 254- or 255-byte name
became an illegal temp name, and the write failed with "File name too long". The temp name
is now shortened to fit the folder's ``NAME_MAX``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.archive.atomic import atomic_write_bytes, atomic_write_text, name_max, temp_name
from core.tools.confine import workspace_root
from core.tools.edit_file import edit_file
from core.tools.write_file import write_file

LONG = [
    pytest.param("a" * 254, id="254 chars"),
    pytest.param("b" * 255, id="255 chars"),
    pytest.param("é" * 127, id="254 bytes of 2-byte chars"),
    pytest.param("x" + "€" * 84, id="253 bytes ending in 3-byte chars"),
]


@pytest.fixture(autouse=True)
def _name_max_255(tmp_path):
    if name_max(str(tmp_path)) != 255:
        pytest.skip("the temporary folder's filesystem does not allow 255-byte names")


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("name", LONG)
def test_write_file_and_edit_file_take_a_name_of_the_longest_legal_length(tmp_path, name):
    root = workspace_root(tmp_path)
    out = write_file(root, name, "hello world\n")
    assert not out.is_error, out.content
    assert (tmp_path / name).read_text() == "hello world\n"
    out = edit_file(root, name, "world", "there")
    assert not out.is_error, out.content
    assert (tmp_path / name).read_text() == "hello there\n"
    assert _only(tmp_path) == [name]  # no temp file left beside it


@pytest.mark.parametrize("name", LONG)
def test_the_archive_writes_a_name_of_the_longest_legal_length(tmp_path, name):
    atomic_write_text(tmp_path / name, "text")
    atomic_write_bytes(str(tmp_path / f"{name[:-1]}z"), b"bytes")
    assert (tmp_path / name).read_text() == "text"
    assert (tmp_path / f"{name[:-1]}z").read_bytes() == b"bytes"
    assert len(_only(tmp_path)) == 2


@pytest.mark.parametrize("name", LONG)
def test_a_temp_name_is_within_name_max_and_still_unique(tmp_path, name):
    names = {os.path.basename(temp_name(tmp_path / name)) for _ in range(50)}
    assert len(names) == 50
    for temp in names:
        raw = os.fsencode(temp)
        assert len(raw) <= 255 and raw.decode("utf-8")  # cut at a character boundary
        assert temp.startswith(".") and temp.endswith(".tmp")
