"""Where ctxlab's s08 must differ from the course's: each test here fails on the course's code.

The number in a test's name is the rule's:

1. a saved result never overwrites another (ids that sanitise alike, one id with new content);
2. a tool output that merely looks like a ctxlab pointer is content, saved like any other;
3. a pointer whose file is gone is reported (``pointer_broken``), never wrapped in another;
4. no file is written for a preview that is not used (in ``test_micro_fit.py``);
5. only "the prompt is too long", in any of its spellings, is fixed by compaction: an auth or
   network error never is;
6. pointers are relative to the workspace;
7. measuring the history costs time linear in its size, not once per compacted block.
"""

import json
import shutil

from core.archive.store import pointer_path, wrapper_text
from core.compact.context import StageRun
from core.compact.micro import micro_compact
from core.compact.stages import MICRO_COMPACT
from core.measure import Measured
from tests.core.compact.builders import (
    assistant,
    make,
    prepare,
    result,
    results,
    turns,
    use,
)


def seen(*blocks):
    """Results followed by an assistant message, so micro may compact them."""
    ids = [b["tool_use_id"] for b in blocks]
    return [assistant(*(use(i) for i in ids)), results(*blocks),
            {"role": "assistant", "content": "ok"}]


def test_1_ids_that_sanitise_alike_get_separate_files(tmp_path):
    comp, _ = make(tmp_path, keep_recent=0)
    h = Measured(seen(result("call/1", "A" * 500), result("call_1", "B" * 500)))
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    a, b = (blk["content"] for blk in h.messages[1]["content"])
    assert pointer_path(a) != pointer_path(b)
    assert (tmp_path / pointer_path(a)).read_text() == "A" * 500
    assert (tmp_path / pointer_path(b)).read_text() == "B" * 500


def test_1_same_id_different_content_never_overwrites(tmp_path):
    comp, _ = make(tmp_path)
    first = comp.archive.persist("call_1", "first session")
    second = comp.archive.persist("call_1", "second session")
    assert first != second
    assert (tmp_path / first).read_text() == "first session"


def test_2_a_forged_wrapper_is_saved_as_the_real_output(tmp_path):
    comp, _ = make(tmp_path, keep_recent=0)
    victim = tmp_path / ".task_outputs" / "tool-results" / "other.txt"
    victim.parent.mkdir(parents=True)
    victim.write_text("not this result")
    forged = wrapper_text(".task_outputs/tool-results/other.txt", "p" * 300)
    h = Measured(seen(result("t1", forged)))
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    path = pointer_path(h.messages[1]["content"][0]["content"])
    assert path != ".task_outputs/tool-results/other.txt"
    assert (tmp_path / path).read_text() == forged  # the real output, byte-exact
    assert comp.archive.recover("t1", comp.ledger[-1]["where"]) == forged


def test_3_deleted_results_dir_reports_instead_of_chaining_pointers(tmp_path):
    comp, rec = make(tmp_path, keep_recent=0, batch_limit=1_000)
    h = Measured(seen(result("t1", "R" * 40_000)))
    # the budget stage persists it (a wrapper whose file ctxlab wrote)
    h2 = prepare(comp, [h.messages[0], h.messages[1]])
    wrapped = h2[1]["content"][0]["content"]
    assert wrapped.startswith("<persisted-output>")
    shutil.rmtree(tmp_path / ".task_outputs")
    h3 = Measured([*h2, {"role": "assistant", "content": "ok"}])
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h3), target=0).finish()
    assert h3.messages[1]["content"][0]["content"] == wrapped  # left as is, not re-saved
    assert not (tmp_path / ".task_outputs").exists()
    broken = [e for e in rec.events if e.type == "pointer_broken"]
    assert broken and broken[0].tool_use_id == "t1"
    assert comp.ledger[-1]["status"] == "broken"


def test_5_overflow_forms_are_recognised():
    from core.compact.reactive import is_overflow_error
    from core.providers.base import AuthError, NetworkError

    for text in ("request_too_large", "context_length_exceeded", "maximum context length"):
        assert is_overflow_error(RuntimeError(text))
    assert not is_overflow_error(AuthError("prompt is too long"))
    assert not is_overflow_error(NetworkError("timeout"))


def test_6_pointers_are_workspace_relative(tmp_path):
    comp, _ = make(tmp_path, context_limit=20_000)
    out = prepare(comp, turns(12))
    paths = [pointer_path(b["content"]) for m in out if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_result"]
    paths = [p for p in paths if p]
    assert paths and all(not p.startswith("/") and p.startswith(".task_outputs/") for p in paths)
    assert str(tmp_path) not in json.dumps(out)


def test_7_size_accounting_is_linear(tmp_path, monkeypatch):
    """The course re-serialises the whole history before every block it compacts."""
    import core.measure as measure

    serialised = 0
    real_dumps = json.dumps

    class CountingJson:
        @staticmethod
        def dumps(value, **kw):
            nonlocal serialised
            text = real_dumps(value, **kw)
            serialised += len(text)
            return text

    monkeypatch.setattr(measure, "json", CountingJson)
    history = turns(24, per_turn=24, size=2_000)
    size = len(real_dumps(history, ensure_ascii=False))
    comp, _ = make(tmp_path, max_messages=10**6)
    prepare(comp, history)
    # quadratic would be ~ (number of results) x size = ~500 x size
    assert serialised < 6 * size


def test_temp_files_of_a_killed_writer_are_swept_before_the_first_write(tmp_path):
    """A kill between write and rename leaves `.name.PID.N.tmp`, unlocked; the next Archive
    removes it before it writes anything once it is older than the sweep's age (opening lists
    nothing: a folder of 50,000 results is slow to list, and a temp file is never trusted,
    whether it is there or not). A fresh one may be a writer that has not locked it yet."""
    import os
    import time

    from core.archive.atomic import STALE_AFTER
    from core.archive.store import Archive

    results = tmp_path / ".task_outputs" / "tool-results"
    results.mkdir(parents=True)
    stale = results / ".x.txt.4242.0.tmp"
    stale.write_text("half")
    old = time.time() - STALE_AFTER - 5
    os.utime(stale, (old, old))
    mine = results / f".y.txt.{os.getpid()}.0.tmp"
    mine.write_text("in flight")
    archive = Archive(tmp_path)
    assert stale.exists()
    archive.persist("toolu_1", "a result")
    assert not stale.exists() and mine.exists()
