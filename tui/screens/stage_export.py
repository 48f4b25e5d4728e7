"""A stage's before and after as Markdown, for slides and handouts.

The export is the inspector on paper: the stage's rule, why it fired, the thresholds in
force and what it did; then both lists message by message — each marked kept, removed,
added or changed — with unchanged runs folded as on screen, and the ledger. Message texts
are written readable (not JSON-escaped) and each is cut to :data:`MESSAGE_CHARS`, with the
full size said, because a slide is not an archive: the transcripts and result files hold
every byte. The SVG export is the inspector's own screenshot (``App.save_screenshot``).
"""

from __future__ import annotations

from pathlib import Path

from core.archive.atomic import open_atomic
from core.config import Thresholds
from tui.stage_diff import Row, Side, StageRecord, fold
from tui.why import stage_rule, thresholds_in_force, what_it_did, why_fired
from tui.widgets.readable import readable_message

MESSAGE_CHARS = 1_500


def export_name(record: StageRecord, suffix: str) -> str:
    return f"ctxlab-stage-{record.index}-{record.event.stage}.{suffix}"


def fence(text: str) -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    ticks = "`" * max(3, longest + 1)
    while ticks in text:
        ticks += "`"
    return f"{ticks}text\n{text}\n{ticks}"


def message_block(row: Row) -> str:
    text = readable_message(row.message)
    note = ""
    if len(text) > MESSAGE_CHARS:
        note = f"\n\n*(first {MESSAGE_CHARS:,} of {len(text):,} chars)*"
        text = text[:MESSAGE_CHARS]
    return f"**#{row.index}** · {row.kind}\n\n{fence(text)}{note}"


def side_markdown(title: str, side: Side, rows: list[Row]) -> str:
    count = f"{len(side.messages)} messages" if side.messages is not None else "not observed"
    out = [f"## {title} — {count}", "", f"*{side.source}*", ""]
    for item in fold(rows):
        if isinstance(item, int):
            out.extend([f"*… {item} unchanged messages …*", ""])
        else:
            out.extend([message_block(item), ""])
    return "\n".join(out)


def stage_markdown(record: StageRecord, before: Side, after: Side, left: list[Row],
                   right: list[Row], limits: Thresholds) -> str:
    e = record.event
    lines = [
        f"# Stage #{record.index} · `{e.stage}`", "",
        f"**Rule.** {stage_rule(e)}", "",
        f"**Why it fired.** {why_fired(e, limits)}", "",
        f"**Thresholds in force.** {thresholds_in_force(e, limits)}", "",
        f"**What it did.** {what_it_did(e)}", "",
        side_markdown("Before", before, left), "",
        side_markdown("After", after, right), "",
        "## Ledger", "",
    ]
    if e.ledger:
        lines += ["| tool_use_id | chars | where | status |", "|---|---:|---|---|"]
        lines += [f"| {entry.get('tool_use_id', '')} | {int(entry.get('chars', 0)):,} | "
                  f"{'LOST' if entry.get('where') == 'lost' else entry.get('where', '')} | "
                  f"{entry.get('status', 'ok')} |" for entry in e.ledger]
    else:
        lines.append("(no ledger entries)")
    if e.files:
        lines += ["", "Files written: " + ", ".join(f"`{f}`" for f in e.files)]
    return "\n".join(lines) + "\n"


def write_export(directory: Path, name: str, text: str) -> Path:
    """Write atomically (a half-written handout is worse than none), not durably (it can be
    exported again). A lone surrogate from a tool's output is spelt as its escape, so the
    handout stays valid UTF-8. The file is the user's handout beside the ``.svg`` Textual
    writes as an ordinary file, so it gets an ordinary file's mode (0666 less the umask),
    not the archive's 0644."""
    path = directory / name
    directory.mkdir(parents=True, exist_ok=True)
    with open_atomic(path, durable=False, mode=0o666) as file:
        file.write(text.encode("utf-8", "backslashreplace"))
        file.commit(path)
    return path
