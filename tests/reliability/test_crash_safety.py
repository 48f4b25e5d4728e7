"""No data loss, proven by SIGKILL: every durable write is all-or-nothing.

A *fork server* — one Python process that has already imported ctxlab — forks a writer for
each round; the writer loops over one kind of durable write, and after a seeded random
delay the fork server SIGKILLs it. The test then looks at the files the way the next start
would, and checks that each write is either fully there (the new bytes) or not (the old
bytes), never partial, and that no leftover temp file is visible to any listing. Forking
from a warm process makes a kill point cost a fork instead of a fresh interpreter's start.

Kinds (each is a real ctxlab call, not a re-implementation):

* ``memory`` — ``MemoryStore.write`` updating five records in turn;
* ``consolidate`` — ``consolidate_memories`` on a copy of the store the checkpoint-driven
  test in ``tests/core/memory/test_crash.py`` uses (that test kills at every durable step;
  this one at random times);
* ``transcript`` — ``Archive.write_transcript``;
* ``result`` — ``Archive.persist`` + ``Archive.flush`` (the tool-result file and manifest);
* ``session`` — ``save_session``;
* ``scenario`` — a whole ``refactor-auth`` run with ``--session``: every stage, memory write,
  consolidation and session save of the engine, killed at a random moment.

Writers log each completed write to a progress file (one ``write(2)`` per line, which a
SIGKILL cannot tear), so "before or after" is checked against what was acknowledged: the
state on disk is the last acknowledged write or the one in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from blake3 import blake3

from core.archive.listing import archive_listing
from core.archive.manifest_index import INDEX, SIDECARS
from core.archive.store import Archive
from core.memory.index import render_index
from core.memory.journal import JOURNAL_NAME
from core.memory.store import MemoryStore
from core.sources.agent.saved import load_session
from core.sources.agent.worklog import load_worklog
from tests.core.memory.test_crash import seed as seed_consolidation_store
from tests.core.memory.test_crash import snapshot as memory_snapshot
from tests.reliability.payloads import (
    memory_body,
    result_content,
    session_messages,
    transcript_messages,
)

REPO = Path(__file__).resolve().parents[2]
SEED = 20261102
ROUNDS = {"memory": 12, "consolidate": 8, "transcript": 12, "result": 12, "session": 12,
          "scenario": 10}
DELAYS = {"consolidate": (0.0, 0.15), "scenario": (0.0, 0.45)}  # else (0.002, 0.12) s
ARCHIVE_TMP = re.compile(r"^\..+\.\d+\.\d+\.tmp$")  # core.archive.store.atomic_write_text
# The manifest's lock, its index and sqlite's journal of the index (a kill during an index
# update leaves it; the next opener rolls the update back).
MANIFEST_FILES = {".manifest.lock", INDEX, *(INDEX + s for s in SIDECARS)}
MEMORY_TMP = ARCHIVE_TMP  # core.memory.journal.atomic_write uses the archive's temp names
# Temp files found after a kill: each is a write the kill interrupted half-way (evidence that
# kills land inside writes, not only between them).
TORN_WRITES: set[Path] = set()

FORK_SERVER = textwrap.dedent('''
    import asyncio, json, os, signal, sys, time, traceback
    from pathlib import Path
    from core.archive.store import Archive
    from core.memory.consolidate import consolidate_memories
    from core.memory.store import MemoryStore
    from core.sources.agent.session import AgentSession, RunOptions
    from core.scenarios import find_scenario
    from core.sources.agent.saved import save_session
    from tests.reliability.payloads import (memory_body, result_content,
                                            session_messages, transcript_messages)

    def progress(path):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return lambda line: os.write(fd, (line + "\\n").encode())

    def resume(path):
        try:
            lines = Path(path).read_text().split()
        except FileNotFoundError:
            return 0
        return int(lines[-1].split(":")[0]) + 1 if lines else 0

    def write_forever(kind, work, log):
        ack = progress(log)
        start = resume(log)
        if kind == "memory":
            store = MemoryStore(Path(work) / ".memory")
            for i in range(start, start + 10_000):
                store.write(f"note {i % 5}", f"note {i % 5} version {i}", "project",
                            memory_body(i))
                ack(str(i))
        elif kind == "consolidate":
            asyncio.run(consolidate_memories(MemoryStore(work), None, force=True))
            ack("0")
        elif kind == "transcript":
            archive = Archive(Path(work))
            for i in range(start, start + 10_000):
                ack(f"{i}:{archive.write_transcript(transcript_messages(i))}")
        elif kind == "result":
            archive = Archive(Path(work))
            for i in range(start, start + 10_000):
                rel = archive.persist(f"toolu_{i}", result_content(i))
                archive.flush()
                ack(f"{i}:{rel}")
        elif kind == "session":
            for i in range(start, start + 10_000):
                save_session(Path(work), "work", session_messages(i), i)
                ack(str(i))
        elif kind == "scenario":
            options = RunOptions(workspace=Path(work), scenario=find_scenario("refactor-auth"),
                                 session="work")
            asyncio.run(AgentSession(options, lambda event: None).run())
            ack("0")
        time.sleep(60)  # finished before the kill: wait for it

    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                write_forever(job["kind"], job["work"], job["log"])
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(3)
            os._exit(0)
        time.sleep(job["delay"])
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        signalled = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        print(json.dumps({"killed": signalled, "status": status}), flush=True)
''')


class ForkServer:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "CTXLAB_"))}
        self.proc = subprocess.Popen([sys.executable, "-c", FORK_SERVER], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def kill_during(self, kind: str, work: Path, log: Path, delay: float) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"kind": kind, "work": str(work), "log": str(log), "delay": delay}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, self.stop()
        assert json.loads(answer)["killed"], f"{kind}: the writer died on its own: " \
            f"{self.stop()}"

    def stop(self) -> str:
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    server = ForkServer()
    yield server
    if server.proc.poll() is None:
        assert server.stop() == ""  # no writer ever failed


def acknowledged(log: Path) -> list[str]:
    try:
        return log.read_text().split()
    except FileNotFoundError:
        return []


def delays(kind: str) -> list[float]:
    rng = random.Random(f"{SEED}-{kind}")
    low, high = DELAYS.get(kind, (0.002, 0.12))
    return [rng.uniform(low, high) for _ in range(ROUNDS[kind])]


# -- checks: what the next start sees -----------------------------------------------------------

def read_jsonl(text: str) -> list[dict]:
    """One JSON value per "\\n"-terminated line (not ``str.splitlines``, which also breaks
    at U+2028, U+2029 and U+0085 inside the JSON strings)."""
    return [json.loads(line) for line in text.split("\n") if line]


def check_memory_store(root: Path) -> MemoryStore:
    """Temp files are invisible even before recovery; reopening leaves a clean, indexed
    store with no invalid file, journal or temp file."""
    if not root.is_dir():  # killed before the first write created the folder
        return MemoryStore(root, read_only=True)
    raw = MemoryStore(root, read_only=True).scan()
    listed = [r.file for r in raw.records] + [i.file for i in raw.invalid]
    assert not [f for f in listed if f.endswith(".tmp") or f.startswith(".")], listed
    leftovers = [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    assert all(MEMORY_TMP.match(name) for name in leftovers), leftovers
    TORN_WRITES.update(root / name for name in leftovers)
    store = MemoryStore.open(root)  # what the next run does
    assert store.invalid() == []
    assert not (root / JOURNAL_NAME).exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == render_index(store.records())
    return store


def check_archive(workspace: Path) -> None:
    """Every transcript parses whole; every manifest entry matches its file's hash; every
    result file is complete; temp files are dotted and never listed in the workbench (which
    lists what the archive reports)."""
    listed = {record["path"] for record in archive_listing(Archive(workspace))}
    for folder in (workspace / ".transcripts", workspace / ".task_outputs" / "tool-results"):
        if folder.is_dir():
            hidden = [p.name for p in folder.iterdir()
                      if p.name.startswith(".") and p.name not in MANIFEST_FILES]
            assert all(ARCHIVE_TMP.match(name) for name in hidden), hidden
            TORN_WRITES.update(folder / name for name in hidden)
            assert not [rel for rel in listed if Path(rel).name in hidden]
    for path in sorted((workspace / ".transcripts").glob("transcript_*.jsonl")):
        text = path.read_text(encoding="utf-8", errors="surrogatepass")
        assert text.endswith("\n"), path
        read_jsonl(text)
    manifest_file = workspace / ".task_outputs" / "tool-results" / "manifest.jsonl"
    if manifest_file.exists():  # an append-only log: a kill can only cut the line in flight
        for line in manifest_file.read_bytes().split(b"\n"):
            try:
                json.loads(line or b"{}")
            except ValueError:  # cut off (the next append starts a fresh line): ignored
                TORN_WRITES.add(manifest_file)
    manifest = Archive(workspace).manifest()
    for rel, entry in manifest.items():
        data = (workspace / rel).read_bytes()
        oracle = blake3(data) if entry.algorithm == "blake3" else hashlib.sha256(data)
        assert oracle.hexdigest() == entry.digest, rel
        assert len(data.decode("utf-8", "surrogatepass")) == entry.chars, rel


# -- the kinds ----------------------------------------------------------------------------------

def verify_memory(work: Path, log: Path) -> None:
    store = check_memory_store(work / ".memory")
    done = [int(x) for x in acknowledged(log)]
    last = done[-1] if done else -1
    for record in store.records():
        version = int(record.body.rsplit(" END ", 1)[1])
        assert record.body == memory_body(version).strip()  # whole, never torn
        assert record.description == f"{record.name} version {version}"
        newest_acked = max((i for i in done if i % 5 == version % 5), default=-1)
        in_flight = last + 1 if (last + 1) % 5 == version % 5 else None
        assert version in (newest_acked, in_flight), (record.name, version, last)
    names = {r.name for r in store.records()}
    assert {f"note {i % 5}" for i in done} <= names  # every acknowledged record is there


def verify_transcripts(work: Path, log: Path) -> None:
    check_archive(work)
    acked = dict(line.split(":", 1) for line in acknowledged(log))
    last = max(map(int, acked), default=-1)
    written = set()
    folder = work / ".transcripts"
    for path in sorted(folder.glob("transcript_*.jsonl")) if folder.is_dir() else []:
        messages = read_jsonl(path.read_text(encoding="utf-8", errors="surrogatepass"))
        i = int(messages[0]["content"].split()[1])
        assert messages == json.loads(json.dumps(transcript_messages(i)))  # whole
        written.add(i)
    # every acknowledged transcript is there; the only others are writes a kill cut off
    # after the rename, before the acknowledgement (the next round wrote them again)
    assert set(map(int, acked)) <= written <= set(map(int, acked)) | {last + 1}
    for rel in acked.values():
        assert (work / rel).is_file()


def verify_results(work: Path, log: Path) -> None:
    check_archive(work)
    archive = Archive(work)
    manifest = archive.manifest()
    for line in acknowledged(log):
        i, rel = line.split(":", 1)
        assert manifest[rel].tool_use_id == f"toolu_{i}"
    results = work / ".task_outputs" / "tool-results"
    for path in results.glob("toolu_*.txt") if results.is_dir() else []:
        i = int(path.name.split("_")[1].split("-")[0])
        text = path.read_text(encoding="utf-8", errors="surrogatepass")
        assert text == result_content(i), path.name  # unlisted or listed, always whole


def verify_session(work: Path, log: Path) -> None:
    done = [int(x) for x in acknowledged(log)]
    path = work / ".ctxlab" / "sessions" / "work" / "session.json"
    if not path.exists():
        assert done == []
        return
    messages, turns = load_session(work, "work")
    assert messages == session_messages(turns)
    last = done[-1] if done else -1
    assert turns in (last, last + 1)
    hidden = [p.name for p in path.parent.iterdir() if p.name.startswith(".")]
    assert all(ARCHIVE_TMP.match(name) for name in hidden), hidden
    TORN_WRITES.update(path.parent / name for name in hidden)


def verify_scenario(work: Path, log: Path) -> None:
    check_archive(work)
    if (work / ".memory").is_dir():
        check_memory_store(work / ".memory")
    if (work / ".ctxlab" / "sessions" / "work" / "session.json").exists():
        messages, turns = load_session(work, "work")
        assert 1 <= turns <= 5 and messages
    load_worklog(work, "work")  # parses (or is absent)


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_partial_file(tmp_path, fork_server):
    verify = {"memory": verify_memory, "transcript": verify_transcripts,
              "result": verify_results, "session": verify_session,
              "scenario": verify_scenario}
    kills = 0
    for kind, check in verify.items():
        work, log = tmp_path / kind, tmp_path / f"{kind}.log"
        for n, delay in enumerate(delays(kind)):
            if kind == "scenario":  # a fresh sample workspace per run
                work, log = tmp_path / f"scenario-{n}", tmp_path / f"scenario-{n}.log"
            fork_server.kill_during(kind, work, log, delay)
            kills += 1
            check(work, log)
        if kind != "scenario":
            assert acknowledged(log), f"{kind}: no write ever completed; delays too short"
    assert kills >= 50
    assert len(TORN_WRITES) >= 5, "almost no kill landed inside a write"


@pytest.mark.slow
def test_sigkill_during_consolidation_at_random_moments(tmp_path, fork_server):
    original = tmp_path / "original"
    seed_consolidation_store(original)
    before = memory_snapshot(original)
    outcomes = []
    for n, delay in enumerate(delays("consolidate")):
        work = tmp_path / f"kill-{n}"
        shutil.copytree(original, work)
        fork_server.kill_during("consolidate", work, tmp_path / f"c-{n}.log", delay)
        state = memory_snapshot(work)  # reopen: recovery, index, no journal, no temp
        outcomes.append("old" if state == before else "new")
        if outcomes[-1] == "new":
            assert len(state) < len(before)  # the consolidated set, whole
        shutil.rmtree(work)
    assert len(outcomes) == ROUNDS["consolidate"]
