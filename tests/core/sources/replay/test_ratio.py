"""The session's chars-per-token ratio, measured from recorded usage, is not skewed by a
pasted image: its base64 bytes are not what it costs in tokens."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from core.sources.replay import load_recording
from core.sources.replay.original import chars_per_token

RATIO = 3.7
CONSTANT = 5_000  # system prompt and tools: tokens the history does not show
IMAGE_TOKENS = 1_600


def image_recording(tmp_path: Path) -> Path:
    """Eight requests of a growing history; the second user message pastes a 1 MB PNG
    (billed by its pixels: a fixed number of tokens, whatever its bytes)."""
    png = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 3_000).decode()
    messages: list[dict] = []
    rows = []
    for n in range(8):
        content: list[dict] = [{"type": "text", "text": f"step {n}: " + "word " * 8_000}]
        if n == 1:
            content.append({"type": "image",
                            "source": {"type": "base64", "media_type": "image/png",
                                       "data": png}})
        messages = [*messages, {"role": "user", "content": content}]
        text = sum(len(json.dumps(m)) for m in messages) - (len(png) if n >= 1 else 0)
        tokens = int(text / RATIO) + CONSTANT + (IMAGE_TOKENS if n >= 1 else 0)
        reply = [{"type": "text", "text": "ok " * 300}]
        rows.append({"request": {"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                 "messages": messages},
                     "response": {"content": reply, "usage": {"input_tokens": tokens}}})
        messages = [*messages, {"role": "assistant", "content": reply}]
    path = tmp_path / "image.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_pasted_image_does_not_skew_the_measured_ratio(tmp_path):
    ratio, source = chars_per_token(load_recording(image_recording(tmp_path)))
    assert source == "usage"
    assert ratio == pytest.approx(RATIO, rel=0.05)  # the image's bytes counted: ~7
