"""The compaction bench's table: one line per case, for the console and for Markdown."""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]


def _cell(value: Any, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:,.1f}{unit}" if value >= 10 else f"{value:,.2f}{unit}"
    return f"{value}{unit}"


def table(rows: list[Row]) -> list[list[str]]:
    """Header plus one line per row, as strings (shared by the console and Markdown)."""
    lines = [["case", "ctxlab", "course", "speed ×", "floor", "of floor", "target", "ok"]]
    for row in rows:
        unit = " ms" if row["unit"] == "ms" else row["unit"]
        lines.append([row["name"], _cell(row["value"], unit), _cell(row["baseline"], " ms"),
                      _pair(row.get("ratio"), row.get("ratio_best")),
                      _cell(row.get("floor"), " ms"),
                      _pair(row.get("of_floor"), row.get("of_floor_best")),
                      _cell(row["target"]), _cell(row["ok"])])
    return lines


def _pair(median: Any, best: Any) -> str:
    """A per-round ratio: its median, and its best round in brackets."""
    if median is None:
        return "—"
    return f"{_cell(median)} ({_cell(best)})" if best is not None else _cell(median)


def markdown(rows: list[Row]) -> str:
    head, *body = table(rows)
    align = ["---"] + ["--:"] * 5 + ["---", ":-:"]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [head, align, *body])


def print_table(rows: list[Row], load: float) -> None:
    from rich.console import Console
    from rich.table import Table

    head, *body = table(rows)
    out = Table(title="prepare() vs the course's cost model, interleaved rounds, CPU time "
                      f"(load average {load}; ratios: median (best round))",
                title_justify="left")
    for i, name in enumerate(head):
        out.add_column(name, justify="left" if i in (0, 6) else "right")
    for cells in body:
        out.add_row(*cells)
    console = Console()
    console.width = max(console.width, 100)
    console.print(out)
