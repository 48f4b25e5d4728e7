"""A headless ``--json`` replay prints, and writes, exactly what it did before it was made faster.

The goldens under ``tests/fixtures/replay/golden`` were produced by the replay as it was
before the headless path stopped re-measuring the history, kept category totals running
and ran the stages without a worker thread. Each holds the event lines and a digest of
every file the replay wrote (tool results, manifest, transcripts, the agent's summaries).
Only what differs between two identical runs is normalised: each event's ``t``, the
temporary workdir's path, the checkout's path, and the transcripts' random names (numbered in
order of first mention instead) and, in the archive's manifest, a transcript's BLAKE3 (its
text names earlier transcripts; its normalised digest is compared instead). Anything else that
changes — a size, a stage, a file's bytes — fails.

Regenerate (only when the output is meant to change): ``CTXLAB_GOLDEN=write python -m
pytest tests/core/sources/replay/test_replay_golden.py``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from bench.sessions import claude_code_session
from tests.core.sources.replay.conftest import CLAUDE, CODEX, REQUESTS, WATCHED_CODEX
from tui.cli import main

REPO = Path(__file__).resolve().parents[4]
GOLDEN = REPO / "tests" / "fixtures" / "replay" / "golden"
GENERATED = 700_000  # enough requests for Claude Code's own auto-compact
TRANSCRIPT = re.compile(r"transcript_[0-9a-f]{32}")
MANIFEST_TRANSCRIPT_HASH = re.compile(r'"blake3": "[0-9a-f]+"(, "format": "transcript")')

CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "generated-course": ("generated", ("--course-limits",)),
    "generated-window": ("generated", ()),
    "generated-summary": ("generated", ("--context-limit", "30000", "--keep-recent", "1",
                                        "--max-messages", "200")),
    "generated-budget": ("generated", ("--context-limit", "60000", "--batch-limit", "5000",
                                       "--large-result", "4000")),
    "claude-fixture": (str(CLAUDE), ()),
    "codex-fixture": (str(CODEX), ()),
    "requests-fixture": (str(REQUESTS), ()),
    "watched-codex-fixture": (str(WATCHED_CODEX), ("--course-limits",)),
}


def normalised(stdout: str, workdir: Path) -> list[str]:
    """The run's event lines and file digests with only run-to-run noise replaced."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"transcript_{len(names):04d}")

    lines = []
    for raw in stdout.splitlines():
        event = json.loads(raw)
        event.pop("t", None)
        line = json.dumps(event, ensure_ascii=False).replace(str(workdir), "WORKDIR")
        lines.append(TRANSCRIPT.sub(rename, line))
    files = []
    for path in sorted(p for p in workdir.rglob("*") if p.is_file()):
        data = TRANSCRIPT.sub(rename, path.read_bytes().decode("utf-8", "surrogateescape"))
        if path.name == "manifest.jsonl":
            data = MANIFEST_TRANSCRIPT_HASH.sub(r"\1", data)
        digest = hashlib.sha256(data.encode("utf-8", "surrogateescape")).hexdigest()
        rel = TRANSCRIPT.sub(rename, path.relative_to(workdir).as_posix())
        files.append(f"file {rel} {digest}")
    return lines + sorted(files)  # in the order of the normalised names


@pytest.mark.parametrize("case", sorted(CASES))
def test_headless_json_replay_matches_its_golden(case, tmp_path, capsys):
    source, flags = CASES[case]
    if source == "generated":
        path = tmp_path / "session.jsonl"
        path.write_text(claude_code_session(GENERATED), encoding="utf-8")
    else:
        path = Path(source)
    workdir = tmp_path / "w"
    assert main(["replay", str(path), "--headless", "--json", "--workdir", str(workdir),
                 *flags]) == 0
    out = capsys.readouterr().out.replace(str(path), "SESSION").replace(str(REPO), "REPO")
    got = normalised(out, workdir)  # a fixture's subagent files are named by their full path
    golden = GOLDEN / f"{case}.txt.gz"
    if os.environ.get("CTXLAB_GOLDEN") == "write":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(gzip.compress("\n".join(got).encode("utf-8"), mtime=0))
    want = gzip.decompress(golden.read_bytes()).decode("utf-8").split("\n")
    assert len(got) == len(want)
    for n, (line, expected) in enumerate(zip(got, want, strict=True)):
        assert line == expected, f"line {n + 1} differs"
