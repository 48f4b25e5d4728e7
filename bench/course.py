"""The course's cost model for s08 (budget → micro → fit, one full dump per block), and its snip.

A short re-implementation of s08's stages as the reference describes them, kept only to
time them next to ctxlab: the same files written, the same pointer checks, and
``len(json.dumps(messages))`` before every block micro and fit visit.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

COURSE_LIMIT, COURSE_TARGET = 50_000, 40_000
EARLIER = "[Earlier tool result saved at "


def course_chars(messages: list[dict]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


def course_prepare(messages: list[dict], workdir: Path) -> list[dict]:
    out_dir = workdir / ".task_outputs" / "tool-results"
    out_dir.mkdir(parents=True, exist_ok=True)

    def save(tool_use_id: str, content: str) -> str:
        path = out_dir / f"{re.sub(r'[^A-Za-z0-9._-]', '_', tool_use_id)[:120] or 'unknown'}.txt"
        path.write_text(content, encoding="utf-8")
        return str(path)

    def pointer(content: str) -> str | None:  # persisted_output_path
        if not (content.startswith(EARLIER) and content.endswith("]")):
            return None
        path = Path(content[len(EARLIER):-1]).resolve()
        return str(path) if path.is_relative_to(out_dir.resolve()) and path.exists() else None

    def preview(tool_use_id: str, content: str, chars: int) -> str:  # persisted_preview
        path = pointer(content)
        text = Path(path).read_text(encoding="utf-8") if path else content
        return (f"<persisted-output>\nFull output: {path or save(tool_use_id, content)}\n"
                f"Preview:\n{text[:chars]}\n</persisted-output>")

    last = messages[-1]["content"] if isinstance(messages[-1]["content"], list) else []
    batch = [b for b in last if b.get("type") == "tool_result"]
    total = sum(len(str(b["content"])) for b in batch)
    for block in sorted(batch, key=lambda b: -len(str(b["content"]))):  # tool_result_budget
        if total <= 200_000:
            break
        if len(str(block["content"])) > 30_000:
            block["content"] = preview(block["tool_use_id"], block["content"], 2_000)
            total = sum(len(str(b["content"])) for b in batch)
    messages = course_snip(messages, workdir)
    results = [b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    if course_chars(messages) <= COURSE_LIMIT:
        return messages
    last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"),
                         default=-1)
    unseen = {id(b) for m in messages[last_assistant + 1:] if isinstance(m["content"], list)
              for b in m["content"]}
    consumed = [b for b in results if id(b) not in unseen]
    for block in consumed[:-3]:  # micro_compact
        if course_chars(messages) <= COURSE_TARGET:
            break
        content = block["content"]
        if len(content) > 120:
            path = pointer(content) or save(block["tool_use_id"], content)
            block["content"] = f"{EARLIER}{path}]"
    if course_chars(messages) > COURSE_LIMIT:
        for block in sorted(results, key=lambda b: -len(str(b["content"]))):  # fit_tool_results
            if course_chars(messages) <= COURSE_TARGET:
                break
            new = preview(block["tool_use_id"], block["content"], 1_000)
            if len(new) < len(block["content"]):
                block["content"] = new
    return messages


def course_snip(messages: list[dict], workdir: Path, keep_head: int = 3,
                keep_tail: int = 46, limit: int = 50) -> list[dict]:
    """s08's ``snip_compact``: past ``limit`` messages, the whole list is written to a
    transcript (one JSON line per message) and the middle becomes one marker; the tail never
    starts with tool results (their tool_use would be cut off)."""
    if len(messages) <= limit:
        return messages
    start = len(messages) - keep_tail
    while start < len(messages) and isinstance(messages[start]["content"], list) and any(
            b.get("type") == "tool_result" for b in messages[start]["content"]):
        start += 1
    if start <= keep_head + 1:
        return messages
    folder = workdir / ".transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"transcript_{time.time_ns()}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for message in messages:
            fh.write(json.dumps(message, default=str) + "\n")
    marker = {"role": "user",
              "content": f"[{start - keep_head} messages archived at {path}]"}
    return [*messages[:keep_head], marker, *messages[start:]]
