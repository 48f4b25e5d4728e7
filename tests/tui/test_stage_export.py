"""The Markdown export of a stage folds a long run of unchanged messages as the inspector
does: the first and last of the run, and the count between them."""

from __future__ import annotations

from tui.screens.stage_export import side_markdown
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
