"""``python -m bench --only X --update PAGE`` refreshes X's rows and keeps the others'."""

from __future__ import annotations

from bench.__main__ import BEGIN, END, kept_rows, markdown, previous_date, update_page, with_kept


def _row(bench: str, name: str, value: float) -> dict:
    return {"bench": bench, "name": name, "value": value, "unit": "ms", "target": None,
            "baseline": None, "ratio": None, "ok": True}


def test_a_partial_run_replaces_its_benches_rows_and_keeps_the_others(tmp_path):
    page = tmp_path / "PERFORMANCE.md"
    first = markdown([_row("compact", "old compact row", 1.0), _row("report", "report row", 2.0)],
                     {"date": "2026-12-01 10:00 UTC"}, {"compact": 1.0, "report": 1.0})
    update_page(page, first)
    text = page.read_text(encoding="utf-8")
    second = markdown([_row("compact", "new compact row", 3.0)],
                      {"date": "2026-12-02 10:00 UTC"}, {"compact": 1.0})
    update_page(page, with_kept(second, kept_rows(text, ["compact"]), previous_date(text)))
    now = page.read_text(encoding="utf-8")
    block = now[now.index(BEGIN):now.index(END)]
    assert "new compact row" in block and "old compact row" not in block
    assert "report row" in block  # kept, and said to be from the earlier run
    assert "Rows of report are kept from earlier runs (this block's previous date " \
           "2026-12-01 10:00 UTC;" in block
    assert "* **report** —" in block and "* **compact** —" in block  # both legends
    assert block.index("report row") < block.index("Rows of report")
    assert list(tmp_path.iterdir()) == [page]  # written through a temporary file, replaced


def test_a_full_run_keeps_nothing(tmp_path):
    text = f"{BEGIN}\n| compact | a | 1 ms | — | — | — | — | ok |\n{END}\n"
    assert kept_rows(text, ["compact"]) == []
    assert with_kept("block\n\nRatios:\n\n* x\n\nWall time per bench: .", [], None) \
        == "block\n\nRatios:\n\n* x\n\nWall time per bench: ."
