"""The Transcripts panel lists files newest first, also when two share a timestamp.

File times on ext4 advance by the kernel's clock tick (a few milliseconds), so two results
one stage writes back to back often carry the same mtime; the order the stages reported
them in must then decide, not the names.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.compact.archive import RESULTS_DIR
from tui.widgets.transcript_list import scan_archive


def test_files_with_the_same_mtime_are_listed_in_reverse_write_order(tmp_path: Path) -> None:
    folder = tmp_path / RESULTS_DIR
    folder.mkdir(parents=True)
    written = [f"{RESULTS_DIR.as_posix()}/{name}" for name in ("toolu_b.txt", "toolu_a.txt")]
    for rel in written:
        (tmp_path / rel).write_text("x")
        os.utime(tmp_path / rel, ns=(1_000_000_000, 1_000_000_000))
    assert [f.rel for f in scan_archive(tmp_path, written)] == written[::-1]
    # without the write order, names still give one stable order
    assert [f.rel for f in scan_archive(tmp_path)] == sorted(written, reverse=True)
