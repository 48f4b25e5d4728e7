"""Concurrent writers on one memory store: two ctxlab processes and a person's editor.

For ten seconds, two Python processes each call ``MemoryStore(...).write`` in a loop (their
own six records, plus one record both of them update), while a third process plays an
editor: it rewrites its own record files the way editors save — write a hidden temp file,
then rename it over the record — without ever taking ctxlab's lock. Each process logs every
write it completed.

Afterwards: no update is lost (every record holds exactly the last content its writer
logged), no file is torn or invalid, the shared name is still one file (never ``-2``), and
after a final reindex ``MEMORY.md`` is exactly the index of the files on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.memory.index import render_index
from core.memory.store import MemoryStore, render_document

REPO = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("CTXLAB_CONCURRENCY_SECONDS", "10"))
OWN = 6  # records per ctxlab writer
EDITED = 4  # records the editor owns
SHARED = "shared note"

WRITER = textwrap.dedent('''
    import os, sys, time
    from core.memory.store import MemoryStore
    root, tag, seconds, log = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    store = MemoryStore(root)
    end, i = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        name = "shared note" if i % 7 == 6 else f"{tag} {i % 6}"
        body = f"{tag} wrote version {i} of {name}. " + "x" * (i % 40) * 50
        store.write(name, f"{name}, version {i} by {tag}", "project", body)
        os.write(fd, f"{i}\\t{name}\\t{body}\\n".encode())
        i += 1
''')

EDITOR = textwrap.dedent('''
    import os, sys, time
    from core.memory.store import render_document
    root, seconds, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    end, i = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        k = i % 4
        name, body = f"editor {k}", f"Hand edit number {i} of editor {k}."
        text = render_document(name, f"edited by hand, version {i}", "user", body)
        target = os.path.join(root, f"editor-{k}.md")
        tmp = os.path.join(root, f".editor-{k}.md.swp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
        os.write(fd, f"{i}\\t{name}\\t{body}\\n".encode())
        i += 1
        time.sleep(0.002)
''')


def last_writes(log: Path) -> dict[str, tuple[int, str]]:
    """name → (number, body) of the last write the process logged for it."""
    last: dict[str, tuple[int, str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        number, name, body = line.split("\t")
        last[name] = (int(number), body)
    return last


@pytest.mark.slow
def test_two_ctxlab_processes_and_an_editor_lose_no_update(tmp_path):
    root = tmp_path / ".memory"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CTXLAB_"))}
    env["PYTHONPATH"] = str(REPO)
    logs = {tag: tmp_path / f"{tag}.log" for tag in ("alpha", "beta", "editor")}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), tag, str(SECONDS),
                               str(logs[tag])], cwd=REPO, env=env, stderr=subprocess.PIPE)
             for tag in ("alpha", "beta")]
    procs.append(subprocess.Popen([sys.executable, "-c", EDITOR, str(root), str(SECONDS),
                                   str(logs["editor"])], cwd=REPO, env=env,
                                  stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=SECONDS + 60)
        assert proc.returncode == 0, err.decode()

    alpha, beta, editor = (last_writes(logs[t]) for t in ("alpha", "beta", "editor"))
    assert min(len(alpha), len(beta)) == OWN + 1 and len(editor) == EDITED
    store = MemoryStore(root)
    assert store.invalid() == []  # nothing torn, nothing half-written
    records = {r.name: r for r in store.records()}
    expected = {name: body for writes in (alpha, beta, editor)
                for name, (_, body) in writes.items() if name != SHARED}
    for name, body in expected.items():
        assert records[name].body == body.strip(), name  # the last logged write, exactly
    # the shared record: one file, holding one of the two writers' last versions, whole
    assert [r.file for r in records.values() if r.name == SHARED] == ["shared-note.md"]
    assert records[SHARED].body in (alpha[SHARED][1].strip(), beta[SHARED][1].strip())
    assert set(records) == set(expected) | {SHARED}
    # the editor's files are the bytes it renamed into place
    for k in range(EDITED):
        number, body = editor[f"editor {k}"]
        text = render_document(f"editor {k}", f"edited by hand, version {number}", "user",
                               body)
        assert (root / f"editor-{k}.md").read_text(encoding="utf-8") == text
    # no temp file left visible; the index matches the files after a final reindex
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    store.rebuild_index("command", notify=False)
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert index == render_index(MemoryStore(root).records())
    assert len(index.splitlines()) == 2 * OWN + EDITED + 1
    writes = sum(len(logs[t].read_text().splitlines()) for t in ("alpha", "beta"))
    assert writes >= 40, "too few writes for the writers to have contended"
