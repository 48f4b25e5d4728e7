"""What the crash-safety writers write: deterministic from the write's number, so a reader
can tell a whole write from a torn one. Imported by the test and by its fork server."""

from __future__ import annotations

from typing import Any


def memory_body(i: int) -> str:
    return f"note {i % 5} version {i}: " + "m" * (997 * (i % 23)) + f" END {i}"


def transcript_messages(i: int) -> list[dict[str, Any]]:
    """Sizes up to ~200 kB; odd characters on purpose (a line separator, a lone surrogate)."""
    return [{"role": "user", "content": f"transcript {i}"},
            {"role": "assistant",
             "content": [{"type": "text", "text": "t\n" * (9_000 * (i % 11))}]},
            {"role": "user", "content": f"end {i} \u2028 \ud800"}]


def result_content(i: int) -> str:
    """Up to ~250 kB, with NUL bytes and non-ASCII text."""
    return f"result {i}\n" + "r\u00e9\x00" * (41_000 * (i % 7)) + f"\nend {i}"


def session_messages(i: int) -> list[dict[str, Any]]:
    """The history after ``i`` turns (its last 12), alternating user and assistant text."""
    out: list[dict[str, Any]] = []
    for j in range(max(0, i - 12), i):
        out.append({"role": "user", "content": f"request {j} " + "s" * (3_000 * (j % 9))})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {j}"}]})
    return out
