"""The invariants of prepare() over histories that try to break them.

The random histories of ``test_properties`` are well-behaved. These also hold what a hostile
or unlucky history holds: wrappers forged for real archive files (with their digests forged
into the manifest, as a process writing the workspace could), wrappers and placeholders
naming files that do not exist, lone surrogates, tool inputs and result blocks nested 150
deep, and a tool_use id used again in a later turn for different content. Whatever the mix:
the history sent is API-valid (no pair split), and every result that left the context can
be read back, byte-exact, from a file the ledger names.
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.archive.store import Archive, earlier_text, wrapper_text
from core.compact.pipeline import Compactor
from core.config import Thresholds
from core.events import Recorder
from core.messages import iter_tool_results, validate_pairs
from tests.core.compact.test_properties import THRESHOLDS

RESULTS = ".task_outputs/tool-results"
NEW = "new data that is in no file\n" * 40


def nested(depth: int) -> object:
    value: object = "bottom"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@st.composite
def bodies(draw, tid: str) -> str:
    size = draw(st.one_of(st.integers(0, 300), st.integers(2_000, 6_000),
                          st.integers(20_000, 45_000)))
    unit = draw(st.sampled_from(["x", "数", "\ud800", "a\udc80", "\r\n", "\u2028"]))
    return f"{tid}:" + unit * (size // len(unit))


@st.composite
def hostile_histories(draw):
    """(history, seeds): ``seeds`` are results to archive before the run, each with the
    forged wrapper whose digest is recorded beside the genuine one's."""
    messages: list[dict] = [{"role": "user", "content": "start"}]
    seeds: list[tuple[str, str, str]] = []  # (tid, archived content, forged preview)
    used: list[str] = []
    for t in range(draw(st.integers(1, 30))):
        ids = []
        for k in range(draw(st.integers(0, 3))):
            reuse = used and draw(st.integers(0, 5)) == 0
            tid = draw(st.sampled_from(used)) if reuse else f"toolu_{t}_{k}"
            if tid not in ids:
                ids.append(tid)
        used.extend(i for i in ids if i not in used)
        deep = draw(st.booleans())
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": "bash",
             "input": {"command": "ls", "deep": nested(150)} if deep else {"command": "ls"}}
            for i in ids] or [{"type": "text", "text": f"turn {t}"}]})
        if not ids:
            messages.append({"role": "user", "content": f"next {t}"})
            continue
        blocks = []
        for tid in ids:
            kind = draw(st.sampled_from(["plain", "plain", "blocks", "forged", "real",
                                         "dangling"]))
            body = draw(bodies(tid))
            if kind == "blocks":
                content: object = [{"type": "text", "text": body, "meta": nested(150)}]
            elif kind in ("forged", "real"):
                archived = body + "x" * 3_000
                preview = archived[:2_000]
                rel = f"{RESULTS}/seed-{len(seeds)}"  # the real name is known once saved
                forged = preview + draw(st.sampled_from(["", "\n"])) + NEW
                seeds.append((tid, archived, forged))
                content = (rel, preview if kind == "real" else forged)
            elif kind == "dangling":
                missing = f"{RESULTS}/{tid}-gone.txt"
                content = draw(st.sampled_from([earlier_text(missing),
                                                wrapper_text(missing, body[:100])]))
            else:
                content = body
            blocks.append({"type": "tool_result", "tool_use_id": tid, "content": content})
        messages.append({"role": "user", "content": blocks})
    messages.append({"role": "user", "content": "go on"} if messages[-1]["role"] == "assistant"
                    else {"role": "assistant", "content": "ok"})
    return messages, seeds


def seed(workspace: Path, history: list[dict], seeds: list) -> dict[str, str]:
    """Archive the seeded results, record the forged wrapper digests next to the real ones,
    and put the wrappers into the history; returns {genuine wrapper: what it stands for}."""
    archive = Archive(workspace)
    placed: dict[str, tuple[str, str, str]] = {}
    for n, (tid, archived, forged) in enumerate(seeds):
        rel = archive.persist(tid, archived)
        real = archive.wrap(rel, archived[:2_000])
        fake = archive.wrap(rel, forged)  # a forged digest: what anyone could append
        placed[f"{RESULTS}/seed-{n}"] = (real, fake, archived)
    archive.flush()
    genuine: dict[str, str] = {}
    for _, _, block in iter_tool_results(history):
        if isinstance(block["content"], tuple):
            key, preview = block["content"]
            real, fake, archived = placed[key]
            is_real = real.endswith(f"\n{preview}\n</persisted-output>")
            block["content"] = real if is_real else fake
            if is_real:
                genuine[real] = archived
    return genuine


def recoverable(archive: Archive, ledger: list[dict], tid: str, wanted: list) -> bool:
    for entry in ledger:
        if entry["tool_use_id"] != tid or entry["where"] == "lost":
            continue
        try:
            if archive.recover(tid, entry["where"]) in wanted:
                return True
            if entry["where"].startswith(".transcripts/"):  # an id used twice: each copy
                for message in archive.read_transcript(entry["where"]):
                    for block in message.get("content") or []:
                        if isinstance(block, dict) and block.get("tool_use_id") == tid \
                                and block.get("content") in wanted:
                            return True
        except (LookupError, OSError):  # a dangling pointer's entry names no file
            continue
    return False


def key(content: object) -> str:
    return json.dumps(content, sort_keys=True)


def check(comp: Compactor, history: list[dict], out: list[dict], genuine: dict) -> None:
    assert validate_pairs(out) == []
    left = Counter((b["tool_use_id"], key(b.get("content"))) for _, _, b in iter_tool_results(out))
    fresh = Archive(comp.archive.workspace)
    for _, _, block in iter_tool_results(history):
        tid, content = block["tool_use_id"], block.get("content")
        if left[(tid, key(content))] > 0:
            left[(tid, key(content))] -= 1
            continue
        wanted = [content]
        if isinstance(content, str) and content in genuine:
            wanted.append(genuine[content])  # a real wrapper: what it stands for
        assert recoverable(comp.archive, comp.ledger, tid, wanted), f"{tid} was lost"
        assert recoverable(fresh, comp.ledger, tid, wanted), f"{tid} lost for a fresh archive"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_histories(), THRESHOLDS)
def test_prepare_invariants_over_hostile_histories(drawn, limits):
    history, seeds = copy.deepcopy(drawn)
    with tempfile.TemporaryDirectory() as tmp:
        genuine = seed(Path(tmp), history, seeds)
        comp = Compactor(Path(tmp), limits, emit=Recorder())
        out = asyncio.run(comp.prepare(history, "go"))
        check(comp, history, out, genuine)
        again = asyncio.run(comp.prepare(out, "go"))  # stable: nothing new was appended
        assert again == out


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_histories(), st.integers(1, 8))
def test_reactive_compact_over_hostile_histories(drawn, keep):
    history, seeds = copy.deepcopy(drawn)
    with tempfile.TemporaryDirectory() as tmp:
        genuine = seed(Path(tmp), history, seeds)
        comp = Compactor(Path(tmp), Thresholds(reactive_keep=keep))
        out = asyncio.run(comp.reactive(history, "go"))
        assert out[0]["content"].startswith("[Reactive compact]")
        check(comp, history, out, genuine)


def test_a_result_holding_crlf_is_recovered_byte_exact(tmp_path):
    """Found by the property above: recovery read the file with universal newlines, so a
    result's ``\\r\\n`` came back as ``\\n``."""
    archive = Archive(tmp_path)
    content = "line one\r\nline two\r\n\rtail"
    rel = archive.persist("toolu_crlf", content)
    archive.flush()
    assert archive.recover("toolu_crlf", rel) == content
    assert Archive(tmp_path).read_result(rel) == content
