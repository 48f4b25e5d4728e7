"""Small builders for Messages-format histories used across the compaction tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from core.compact.pipeline import Compactor
from core.config import Thresholds
from core.events import Recorder


def use(tid: str, name: str = "read_file", **inp) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"path": f"{tid}.py"}}


def result(tid: str, content) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def assistant(*uses: dict, text: str | None = None) -> dict:
    content = ([{"type": "text", "text": text}] if text else []) + list(uses)
    return {"role": "assistant", "content": content}


def results(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def turns(n: int, per_turn: int = 1, size: int = 2000, prefix: str = "t") -> list[dict]:
    """A request, then ``n`` assistant tool batches each answered by its results."""
    out = [user("refactor the auth module")]
    for t in range(n):
        ids = [f"{prefix}{t}_{i}" for i in range(per_turn)]
        out.append(assistant(*(use(i) for i in ids), text=f"turn {t}"))
        out.append(results(*(result(i, f"{i}:" + "x" * size) for i in ids)))
    return out


def chars(messages: list[dict]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


def make(tmp_path: Path, **limits) -> tuple[Compactor, Recorder]:
    rec = Recorder()
    return Compactor(tmp_path, Thresholds(**limits), emit=rec), rec


def prepare(compactor: Compactor, messages: list[dict], request: str = "refactor") -> list[dict]:
    return asyncio.run(compactor.prepare(messages, request))


def stages(rec: Recorder) -> list[str]:
    return [e.stage for e in rec.events if e.type == "stage"]
