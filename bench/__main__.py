"""``python -m bench``: every benchmark in one run, one table, and the machine it ran on.

Each ``bench_*`` module's ``run()`` returns rows (``name``, ``value``, ``unit``, ``target``,
``baseline``, ``ratio``, ``ok``); every baseline is measured in the same run as the value it
is compared with. Targets are reported, not enforced: each row says ``ok`` or ``MISSED`` and
the command exits 0 (a failing bench is a row saying so, and the others still run).

    python -m bench                     # a table in the terminal
    python -m bench --markdown          # the same as Markdown (for docs/PERFORMANCE.md)
    python -m bench --update docs/PERFORMANCE.md   # replace the generated block in a page
    python -m bench --only load,memory  # a subset

Where the machine is shared, rows are best of N runs (or CPU time, where a bench says so):
the best run is the one least disturbed by other processes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import platform
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from bench import rounds

BENCHES = ("compact", "archive", "memory", "tui", "load", "replay", "watch", "watch_soak",
           "claude_code", "codex", "report", "whatif")
# What "ratio" means in each bench's rows.
RATIO_MEANS = {
    "compact": "baseline ÷ ctxlab: times faster than the course's cost model (below 1: "
               "slower), the median of interleaved rounds (CPU); floor: the same files "
               "hashed and written with temp + rename, ctxlab ÷ floor in brackets",
    "archive": "value ÷ baseline: times the course compactor's start (creating its folder)",
    "memory": "baseline ÷ ctxlab: times faster than a cache-less rebuild",
    "tui": "value ÷ baseline: times the idle app's jitter / an empty Textual app's start; "
           "big replay: the workbench's wall time ÷ the headless replay's, interleaved",
    "load": "value ÷ baseline: times the same measure for a 10-turn run; the headless "
            "scenario: times python -m tui --help (interpreter start and CLI imports)",
    "replay": "value ÷ baseline: cost per MB against the 1 MB session (flat is 1); the "
              "floor rows' value is itself a ratio: headless replay CPU ÷ json.loads of the "
              "same file's lines, and the whole peak RSS ÷ the file size",
    "watch": "proxied ÷ direct time to first byte (the value is the difference); big "
             "bodies: floor is a bare relay's added time (value ÷ floor in brackets), "
             "streams: proxied ÷ direct throughput",
    "claude_code": "watched ÷ straight to the scripted server (wall time; floor: the CLI's own "
                   "start-up); proxied ÷ direct time to first byte",
    "codex": "watched ÷ straight to the scripted server (wall time; floor: the CLI's own "
             "start-up); proxied ÷ direct time to first byte on /v1/responses",
    "report": "value ÷ baseline: the report's build ÷ the plain headless replay of the same "
              "file (CPU); floor: the page's bytes hashed and written once, value ÷ floor in "
              "brackets; size: the page ÷ the session",
    "watch_soak": "value ÷ baseline: peak RSS ÷ idle RSS; growth: RSS at the 200th "
                  "conversation ÷ at the 50th (flat is 1)",
    "whatif": "value ÷ baseline: the what-if comparison ÷ the plain headless replay of the "
              "same file (CPU)",
}
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

Row = dict[str, Any]


# -- the machine -----------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith(("model name", "hardware", "processor\t: ")):
                value = line.split(":", 1)[1].strip()
                if value and not value.isdigit():
                    return value
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GB"
    except (OSError, ValueError):
        pass
    return "unknown"


def load_text() -> str:
    """The 1/5/15-minute load: on a shared machine, what the other processes were doing.

    Ratios are measured in one run and interleaved so that load touches both sides alike, but
    absolute times still move with it; the table says how busy the machine was.
    """
    load = rounds.load_average()
    return "unknown" if load is None else " / ".join(f"{value:.2f}" for value in load)


def machine() -> dict[str, str]:
    """CPU model, cores, memory, Python, OS, date and load: what a reader needs to compare."""
    return {
        "CPU model": _cpu_model(),
        "cores": str(os.cpu_count() or "?"),
        "memory": _memory(),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": platform.platform(terse=True),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load at start (1/5/15 min)": load_text(),
    }


# -- running ---------------------------------------------------------------------------------

def run_bench(name: str) -> tuple[list[Row], float]:
    """The rows of one bench (or one row saying it failed) and its wall time."""
    start = time.perf_counter()
    try:
        module = importlib.import_module(f"bench.bench_{name}")
        rows = list(module.run())
    except Exception as exc:  # a broken bench is reported, the others still run
        traceback.print_exc(file=sys.stderr)
        rows = [{"name": f"bench failed: {type(exc).__name__}: {exc}", "value": None,
                 "unit": "", "target": None, "baseline": None, "ratio": None, "ok": False}]
    return [{**row, "bench": name} for row in rows], time.perf_counter() - start


# -- formatting ------------------------------------------------------------------------------

def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value >= 100 and value.is_integer():
            return f"{int(value):,}"
        if value >= 100:
            return f"{value:,.0f}" if value >= 10_000 else f"{value:,.1f}"
        return f"{value:.2f}" if value < 10 else f"{value:.1f}"
    return str(value)


def _with_unit(value: Any, unit: str) -> str:
    text = _number(value)
    if text == "—" or not unit:
        return text
    return f"{text}{unit}" if unit == "×" else f"{text} {unit}"


def _target(row: Row) -> str:
    target = row.get("target")
    if target is None:
        return "—"
    if isinstance(target, str):
        return target
    return f"< {_with_unit(target, row.get('unit', ''))}"


def cells(row: Row) -> list[str]:
    unit = row.get("unit", "")
    ratio = row.get("ratio")
    floor = _with_unit(row.get("floor"), unit)
    if row.get("of_floor") is not None:
        floor += f" ({_number(row['of_floor'])}×)"
    return [row["bench"], row["name"].strip(), _with_unit(row.get("value"), unit),
            _target(row), _with_unit(row.get("baseline"), unit),
            "—" if ratio is None else f"{_number(ratio)}×", floor,
            "ok" if row.get("ok") else "MISSED"]


HEADER = ["bench", "case", "value", "target", "baseline", "ratio", "floor", "ok"]


def markdown(rows: list[Row], info: dict[str, str], timings: dict[str, float]) -> str:
    lines = ["| | |", "|---|---|"]
    lines += [f"| {key} | {value} |" for key, value in info.items()]
    lines += ["", "| " + " | ".join(HEADER) + " |",
              "| " + " | ".join(["---", "---", "--:", "---", "--:", "--:", "--:", ":-:"]) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(row)) + " |")
    lines += ["", "Ratios:", ""]
    lines += [f"* **{name}** — {RATIO_MEANS[name]}." for name in timings]
    took = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timings.items())
    lines += ["", f"Wall time per bench: {took}."]
    return "\n".join(lines)


def print_table(rows: list[Row], info: dict[str, str], timings: dict[str, float]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 140))
    console.print(" · ".join(f"{key}: {value}" for key, value in info.items()))
    table = Table(title="ctxlab benchmarks", title_justify="left")
    for i, name in enumerate(HEADER):
        table.add_column(name, justify="left" if i in (0, 1, 3) else "right")
    for row in rows:
        values = cells(row)
        style = None if row.get("ok") else "bold red"
        table.add_row(*values, style=style)
    console.print(table)
    for name in timings:
        console.print(f"ratio, {name}: {RATIO_MEANS[name]}", style="dim")


def kept_rows(text: str, chosen: list[str]) -> list[str]:
    """The table lines of the page's current block for benches not run this time: a run of
    a few benches refreshes their rows and keeps the others' (their date is the block's
    previous one, said under the table)."""
    match = re.search(re.escape(BEGIN) + r"(.*?)" + re.escape(END), text, re.S)
    if match is None:
        return []
    kept = []
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == len(HEADER) and cells[0] in BENCHES and cells[0] not in chosen:
            kept.append(line)
    return kept


def with_kept(block: str, kept: list[str], earlier: str | None) -> str:
    """``block`` with the kept lines after its own rows (before the ratios' legend)."""
    if not kept:
        return block
    head, legend = block.split("\n\nRatios:\n", 1)
    names = sorted({line.split("|")[1].strip() for line in kept}, key=BENCHES.index)
    when = f" {earlier}" if earlier else ""
    note = f"\n\nRows of {', '.join(names)} are kept from earlier runs (this block's previous " \
           f"date{when}; the notes under it may date them more closely), not measured in this one."
    meanings = "".join(f"\n* **{name}** — {RATIO_MEANS[name]}." for name in names
                       if f"* **{name}** —" not in legend)
    before, after = legend.split("\n\nWall time", 1)
    return (head + "\n" + "\n".join(kept) + note + "\n\nRatios:\n" + before + meanings
            + "\n\nWall time" + after)


def previous_date(text: str) -> str | None:
    """The date line of the page's current block."""
    found = re.search(re.escape(BEGIN) + r".*?\| date \| ([^|]+) \|", text, re.S)
    return found.group(1).strip() if found else None


def update_page(path: Path, block: str) -> None:
    """Replace what lies between the bench markers of ``path`` (or append a block)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    generated = f"{BEGIN}\n{block}\n{END}"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: generated, text, count=1)
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + generated + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)  # a reader never sees half a page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--update", type=Path, metavar="PAGE",
                        help=f"write the Markdown between {BEGIN} and {END} in PAGE")
    parser.add_argument("--only", default=",".join(BENCHES),
                        help=f"comma-separated subset of {', '.join(BENCHES)}")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in BENCHES]
    if unknown:
        parser.error(f"unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    info = machine()
    rows: list[Row] = []
    timings: dict[str, float] = {}
    for name in chosen:
        print(f"running bench_{name} …", file=sys.stderr, flush=True)
        bench_rows, timings[name] = run_bench(name)
        rows += bench_rows
    info["load at end (1/5/15 min)"] = load_text()
    block = markdown(rows, info, timings)
    if args.update is not None:
        page = args.update.read_text(encoding="utf-8") if args.update.exists() else ""
        update_page(args.update, with_kept(block, kept_rows(page, chosen), previous_date(page)))
    if args.markdown:
        print(block)
    else:
        print_table(rows, info, timings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
