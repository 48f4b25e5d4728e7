"""Shared helpers for the memory tests: a fake provider, a store, file hashing, polling."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.events import Recorder
from core.memory.store import MemoryStore
from core.providers.base import ModelCall, ModelReply


class FakeProvider:
    """Answers model calls from a script: strings are answers, exceptions are raised."""

    name = "fake"
    model = "fake-model"

    def __init__(self, *answers: str | BaseException | Callable[[ModelCall], str],
                 stop_reason: str = "end_turn") -> None:
        self.answers = list(answers)
        self.calls: list[ModelCall] = []
        self.stop_reason = stop_reason

    async def complete(self, call: ModelCall, on_text: Any = None) -> ModelReply:
        self.calls.append(call)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(call)
        if isinstance(answer, BaseException):
            raise answer
        return ModelReply(content=[{"type": "text", "text": answer}],
                          stop_reason=self.stop_reason)

    def prompt(self, i: int = -1) -> str:
        return self.calls[i].messages[0]["content"]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def document(name: str, description: str, type_: str = "user", body: str = "body") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}\n"


def tree_hashes(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Hash every entry under ``root`` (symlinks by their target text, never followed)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel.split("/")[0] in skip:
                continue
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = "special"
    return out


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02) -> Any:
    """Poll until ``predicate()`` is truthy; generous so a loaded machine does not flake."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / ".memory"


@pytest.fixture
def store(root: Path, recorder: Recorder) -> MemoryStore:
    return MemoryStore(root, recorder)
