"""Invariants of prepare() over random valid histories and random thresholds."""

import asyncio
import json
import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.archive.store import Archive
from core.compact.pipeline import Compactor
from core.config import Thresholds
from core.events import Recorder
from core.messages import iter_tool_results, validate_pairs

SIZES = st.one_of(st.integers(0, 300), st.integers(100, 5_000), st.integers(20_000, 60_000))
IDS = st.sampled_from(["toolu_", "call/", "call_", "x y:"])


@st.composite
def histories(draw):
    messages = [{"role": "user", "content": draw(st.sampled_from(["start", "开始 refactor"]))}]
    n_turns = draw(st.integers(1, 40))
    serial = 0
    for t in range(n_turns):
        k = draw(st.integers(0, 4))
        ids = []
        for _ in range(k):
            ids.append(f"{draw(IDS)}{serial}")
            serial += 1
        text = [{"type": "text", "text": f"turn {t}"}] if draw(st.booleans()) or not k else []
        messages.append({"role": "assistant", "content": text + [
            {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": f"{i}.py"}}
            for i in ids]})
        if k:
            blocks = []
            for i in ids:
                size = draw(SIZES)
                body = f"{i}:" + ("数" if draw(st.booleans()) else "x") * size
                content = body if draw(st.integers(0, 4)) else [{"type": "text", "text": body}]
                blocks.append({"type": "tool_result", "tool_use_id": i, "content": content})
            messages.append({"role": "user", "content": blocks})
        elif draw(st.booleans()) or t == n_turns - 1:
            messages.append({"role": "user", "content": f"next {t}"})
    return messages


THRESHOLDS = st.builds(
    Thresholds,
    context_limit=st.integers(500, 80_000),
    batch_limit=st.integers(1_000, 250_000),
    large_result=st.integers(200, 40_000),
    keep_recent=st.integers(0, 4),
    max_messages=st.integers(6, 60),
    reactive_keep=st.integers(1, 8),
)


def chars(messages):
    return len(json.dumps(messages, ensure_ascii=False))


def results_by_id(messages):
    return {b["tool_use_id"]: b.get("content", "") for _, _, b in iter_tool_results(messages)}


def check_prepare(comp, rec, history, out):
    """API-valid, exactly measured, recoverable byte-exact via the ledger, idempotent."""
    # still API-valid
    assert validate_pairs(out) == []
    # the size measure is exact at every stage boundary
    events = [e for e in rec.events if e.type == "stage"]
    for e in events:
        event(e.stage)
    before = chars(history)
    for e in events:
        assert e.before_chars == before
        before = e.after_chars
    assert before == chars(out)
    # every byte that left the context is recoverable, byte-exact, via the ledger — also
    # from a fresh archive of the workspace (what another process or the next run sees)
    fresh = Archive(comp.archive.workspace)
    remaining = results_by_id(out)
    for tid, content in results_by_id(history).items():
        if remaining.get(tid) == content:
            continue
        entries = [x for x in comp.ledger if x["tool_use_id"] == tid]
        assert entries, f"{tid} left the context without a ledger entry"
        assert all(x["where"] != "lost" for x in entries)
        assert comp.archive.recover(tid, entries[-1]["where"]) == content
        assert fresh.recover(tid, entries[-1]["where"]) == content
    # idempotent when nothing new was appended
    n_events = len(rec.events)
    again = asyncio.run(comp.prepare(out, "go"))
    assert again == out
    assert len(rec.events) == n_events
    assert not [e for e in rec.events if e.type == "error"]


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), THRESHOLDS)
def test_prepare_invariants(history, limits):
    with tempfile.TemporaryDirectory() as tmp:
        rec = Recorder()
        comp = Compactor(Path(tmp), limits, emit=rec)
        original = json.loads(json.dumps(history))
        out = asyncio.run(comp.prepare(history, "go"))
        # the caller's list is untouched
        assert history == original
        check_prepare(comp, rec, history, out)


def other_contents(history, tag):
    """The same history (same tool_use ids) whose results hold different bytes."""
    out = json.loads(json.dumps(history))
    for _, _, block in iter_tool_results(out):
        content = block["content"]
        if isinstance(content, str):
            block["content"] = tag + content
        else:
            content[0]["text"] = tag + content[0]["text"]
    return out


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), THRESHOLDS)
def test_prepare_invariants_with_two_concurrent_archives_on_one_workspace(history, limits):
    """Two compactors (a workbench and a headless run) on one workspace at the same time,
    reusing the same tool_use ids for different contents: each keeps every invariant."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(Compactor(Path(tmp), limits, emit=rec), rec, other_contents(history, tag))
                for tag, rec in (("A", Recorder()), ("B", Recorder()))]
        outs: dict[int, list] = {}
        start = threading.Barrier(2)

        def work(k):
            comp, _, hist = runs[k]
            start.wait()
            outs[k] = asyncio.run(comp.prepare(hist, "go"))

        threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert set(outs) == {0, 1}
        for k, (comp, rec, hist) in enumerate(runs):
            check_prepare(comp, rec, hist, outs[k])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), st.integers(1, 8))
def test_reactive_compact_is_pair_safe_and_loses_nothing(history, keep):
    with tempfile.TemporaryDirectory() as tmp:
        comp = Compactor(Path(tmp), Thresholds(reactive_keep=keep))
        out = asyncio.run(comp.reactive(history, "go"))
        assert validate_pairs(out) == []
        assert out[0]["content"].startswith("[Reactive compact]")
        remaining = results_by_id(out)
        for tid, content in results_by_id(history).items():
            if remaining.get(tid) != content:
                entry = [x for x in comp.ledger if x["tool_use_id"] == tid][-1]
                assert comp.archive.recover(tid, entry["where"]) == content
