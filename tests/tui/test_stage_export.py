"""The Markdown export of a stage folds a long run of unchanged messages as the inspector
does: the first and last of the run, and the count between them. It is written whole, and
stays valid UTF-8 whatever a tool's output held."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tui.screens.stage_export import side_markdown, write_export
from tui.stage_diff import Row, Side


def _rows(kinds: str) -> list[Row]:
    return [Row(i, {"role": "user", "content": f"message {i}"},
                "kept" if k == "k" else "changed") for i, k in enumerate(kinds)]


def test_a_long_run_of_kept_messages_is_folded_to_its_ends_and_a_count() -> None:
    rows = _rows("kkkkkkkc")  # seven kept, then one changed
    text = side_markdown("Before", Side([r.message for r in rows], "snapshot"), rows)
    assert "*… 5 unchanged messages …*" in text
    for shown in ("message 0", "message 6", "message 7"):
        assert shown in text
    assert "message 3" not in text


def test_a_short_run_is_shown_whole() -> None:
    rows = _rows("kkkkc")
    text = side_markdown("After", Side([r.message for r in rows], "snapshot"), rows)
    assert "unchanged messages" not in text
    assert all(f"message {i}" in text for i in range(5))


def test_an_export_is_written_whole_in_a_new_folder_and_stays_valid_utf8(tmp_path: Path) -> None:
    """A lone surrogate (a tool's output may hold one) is spelt as its escape: the export
    used to fail on it, and a handout that is not UTF-8 opens nowhere."""
    path = write_export(tmp_path / "slides", "stage.md", "a lone \udc80 half\n")
    assert path == tmp_path / "slides" / "stage.md"
    assert path.read_text(encoding="utf-8") == "a lone \\udc80 half\n"
    assert [p.name for p in path.parent.iterdir()] == ["stage.md"]


def test_an_export_gets_an_ordinary_files_mode_under_the_users_umask(tmp_path: Path) -> None:
    """The .svg is an ordinary file (0666 less the umask); the .md went through a temp file
    made 0644 whatever the umask said, so the two exports of one stage differed."""
    old = os.umask(0o002)
    try:
        ordinary = tmp_path / "ordinary.svg"
        ordinary.write_text("<svg/>")
        path = write_export(tmp_path, "stage.md", "# stage\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(ordinary.stat().st_mode) == 0o664
