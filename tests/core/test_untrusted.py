"""Reading files ctxlab did not write: no hang, no unbounded read, no traceback."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from core.untrusted import UntrustedFileError, parse_json, read_limited, too_deep


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_limited(fifo, 1000)
        except UntrustedFileError as exc:
            done.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(5)
    assert done and "FIFO" in str(done[0])


def test_dev_zero_is_a_device_not_an_endless_read() -> None:
    with pytest.raises(UntrustedFileError, match="character device"):
        read_limited("/dev/zero", 1000)


def test_a_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 11)
    assert read_limited(path, 11) == b"x" * 11
    with pytest.raises(UntrustedFileError, match="larger than 10 bytes"):
        read_limited(path, 10)


def test_links_are_refused_when_asked(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("[]")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_limited(tmp_path / "link", 10) == b"[]"
    with pytest.raises(UntrustedFileError, match="symbolic link"):
        read_limited(tmp_path / "link", 10, follow_links=False)


@pytest.mark.parametrize("depth", [150, 1_000, 100_000])
def test_deep_nesting_is_one_clear_error(depth: int) -> None:
    text = "[" * depth + "]" * depth
    if depth <= 200:
        assert parse_json(text, "x.json") is not None
        return
    with pytest.raises(UntrustedFileError, match=r"x\.json: is nested"):
        parse_json(text, "x.json")


def test_bad_json_names_the_file_and_place() -> None:
    with pytest.raises(UntrustedFileError, match=r"a\.json: is not valid JSON: .*line 2"):
        parse_json('{\n"a": }', "a.json")


def test_too_deep_counts_levels_without_recursing() -> None:
    value: object = 1
    for _ in range(5):
        value = [value]
    assert not too_deep(value, 5)
    assert too_deep([value], 5)
    assert not too_deep({"a": {"b": [1, 2]}}, 3)
