"""A workspace that ships links where ctxlab keeps its own files changes nothing outside it.

A cloned repository can hold a ``.task_outputs`` that points at the user's home, or a
``manifest.jsonl`` that points at a shell rc file. Every harness folder and file is planted
here, one at a time, as a link to a place outside the workspace (an existing folder or file,
or a name that does not exist yet); then a run that compacts and summarises, a run that
extracts and consolidates memory, a ``ctxlab compact``, a ``ctxlab replay`` and a ``ctxlab
memory consolidate`` all happen in that workspace. Each may refuse with one line or carry on
without the link; what is checked is that every file and folder outside the workspace is
byte-for-byte as it was, and that no command ended in a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from core.scenarios import find_scenario
from core.scenarios.prepare import seed_memory
from core.scenarios.workspaces import generate
from tui.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
CLAUDE_SESSION = FIXTURES / "claude-code" / "5b1f3c2e-8d4a-4f0e-9a57-2c6d1e0b7a91.jsonl"

def plant_at(where: str, kind: str) -> object:
    """One case: where in the workspace, and what the link points at ("dir", "file" or a
    "missing" name)."""
    return pytest.param(where, kind, id=f"{where}->{kind}")


PLANTS = [
    plant_at(".task_outputs", "dir"),
    plant_at(".task_outputs", "missing"),
    plant_at(".task_outputs/tool-results", "dir"),
    plant_at(".task_outputs/tool-results/manifest.jsonl", "file"),
    plant_at(".task_outputs/tool-results/manifest.jsonl", "missing"),
    plant_at(".task_outputs/tool-results/.manifest.lock", "file"),
    plant_at(".task_outputs/tool-results/.manifest.sqlite", "file"),
    plant_at(".task_outputs/tool-results/.manifest.sqlite", "missing"),
    plant_at(".transcripts", "dir"),
    plant_at(".memory", "dir"),
    plant_at(".memory/MEMORY.md", "file"),
    plant_at(".memory/.lock", "file"),
    plant_at(".memory/.history", "dir"),
    plant_at(".memory/auth-owner.md", "file"),
    plant_at(".ctxlab", "dir"),
    plant_at(".ctxlab/sessions", "dir"),
    plant_at(".ctxlab/sessions/s1", "dir"),
    plant_at(".ctxlab/sessions/s1/session.json", "file"),
    plant_at(".ctxlab/sessions/s1/worklog.json", "missing"),
]

VICTIM = "export PATH=/usr/bin\n# the user's own file: nothing may be appended to it\n"


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``root`` (links not followed): kind and content digest."""
    seen: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[rel] = ("dir", "")
            else:
                seen[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return seen


def plant(workspace: Path, outside: Path, where: str, kind: str) -> Path:
    target = outside / where.replace("/", "__")
    if kind == "dir":
        target.mkdir()
        (target / "keep.txt").write_text(VICTIM)
    elif kind == "file":
        target.write_text(VICTIM)
    link = workspace / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=kind == "dir")
    return target


def prepared_workspace(tmp_path: Path) -> Path:
    """The long-migration sample files and refactor-auth's starting memory, in one place."""
    ws = tmp_path / "ws"
    ws.mkdir()
    generate(find_scenario("long-migration").workspace, ws)
    seed_memory(ws, find_scenario("refactor-auth").memory)
    return ws


def history_with_a_large_result() -> list[dict]:
    """Enough turns to summarise and one result large enough to persist."""
    messages: list[dict] = [{"role": "user", "content": "inspect the logs"}]
    for i in range(60):
        tid = f"toolu_{i:03d}"
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": "bash", "input": {"command": f"cat {i}"}}]})
        body = ("x" * 40_000) if i == 0 else f"line {i}\n" * 200
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": body}]})
    messages.append({"role": "user", "content": "what went wrong?"})
    return messages


def commands(workspace: Path, tmp_path: Path) -> list[list[str]]:
    history = tmp_path / "history.json"
    history.write_text(json.dumps(history_with_a_large_result()))
    ws = str(workspace)
    return [
        ["run", "--headless", "--scenario", "long-migration", "--workspace", ws,
         "--session", "s1"],
        ["run", "--headless", "--scenario", "refactor-auth", "--workspace", ws,
         "--session", "s1"],
        ["run", "--headless", "--scenario", "refactor-auth", "--workspace", ws,
         "--resume", "s1"],
        ["compact", "--workdir", ws, str(history)],
        ["replay", "--headless", "--workdir", ws, str(CLAUDE_SESSION)],
        ["memory", "consolidate"],
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("where", "kind"), PLANTS)
def test_a_planted_link_changes_nothing_outside_the_workspace(
        tmp_path, capsys, monkeypatch, where, kind):
    ws = prepared_workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".bashrc").write_text(VICTIM)
    if (ws / where).exists() or (ws / where).is_symlink():
        if (ws / where).is_dir():
            shutil.rmtree(ws / where)
        else:
            (ws / where).unlink()
    target = plant(ws, outside, where, kind)
    before = snapshot(outside)
    monkeypatch.chdir(ws)
    for argv in commands(ws, tmp_path):
        code = main(argv)
        err = capsys.readouterr().err
        assert "Traceback" not in err, (argv, err)
        if code != 0:
            assert err.strip(), f"{argv} failed silently"
        assert snapshot(outside) == before, f"{argv} changed {target} outside the workspace"
