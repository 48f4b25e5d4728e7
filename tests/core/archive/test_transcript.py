"""A transcript is each message as one JSON line, byte-exact (lone surrogates and all), and
the manifest's chars and digest are the file's own, also when a later transcript reuses the
lines of an earlier one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.archive.content_hash import digest_bytes
from core.archive.store import Archive


def expected(messages: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(m, default=str, ensure_ascii=False) + "\n" for m in messages)


def test_transcripts_are_the_messages_lines_and_the_manifest_their_figures(
        tmp_path: Path) -> None:
    archive = Archive(tmp_path)
    first = [{"role": "user", "content": "héllo 你好 \ud800 lone"},
             {"role": "assistant", "content": [{"type": "text", "text": "ok ✔"}]}]
    later = [*first[1:], {"role": "user", "content": "more"}]
    for messages in (first, later, first):
        rel = archive.write_transcript(messages)
        archive.flush()
        data = (tmp_path / rel).read_bytes()
        text = expected(messages)
        assert data == text.encode("utf-8", "surrogatepass")
        entry = archive.manifest(transcripts=True)[rel]
        assert entry.chars == len(text) and entry.format == "transcript"
        assert entry.digest == digest_bytes(data)
