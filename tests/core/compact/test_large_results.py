"""Large results take the fast paths (written while hashed, counted not escaped): the files,
the manifest and the measure must be exactly what the slow paths gave."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from blake3 import blake3

from core.archive.store import STREAMED_CHARS, Archive
from core.archive.streamed_write import SLICE
from core.compact.pipeline import (
    INLINE_SAVE_CHARS,
    LIGHT_HISTORY_CHARS,
    LIGHT_SHED_CHARS,
    Compactor,
    files_to_shed,
)
from core.config import Thresholds
from core.measure import json_chars


def _big(chars: int) -> str:
    line = 'INFO "ingest" ok\tpath=C:\\logs\\a.log\n'
    return (line * (chars // len(line) + 1))[:chars]


def test_a_large_result_is_written_whole_under_its_hash_and_listed(tmp_path: Path) -> None:
    content = _big(STREAMED_CHARS + 12_345)
    archive = Archive(tmp_path)
    rel = archive.persist("toolu_big", content)
    archive.flush()
    data = (tmp_path / rel).read_bytes()
    assert data == content.encode()
    entry = archive.manifest_entry(rel)
    assert entry.algorithm == "blake3" and entry.chars == len(content)
    assert entry.digest == blake3(data).hexdigest() and entry.digest[:16] in rel
    assert Archive(tmp_path).read_result(rel) == content
    folder = tmp_path / ".task_outputs" / "tool-results"
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_persisting_the_same_large_result_again_writes_nothing(tmp_path: Path) -> None:
    content = _big(STREAMED_CHARS * 2)
    archive = Archive(tmp_path)
    rel = archive.persist("toolu_big", content)
    archive.flush()
    before = (tmp_path / rel).stat().st_ino
    again = Archive(tmp_path)  # a new process: nothing memoised
    assert again.persist("toolu_big", str(content)) == rel
    assert (tmp_path / rel).stat().st_ino == before  # not replaced
    folder = tmp_path / ".task_outputs" / "tool-results"
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_prepare_of_a_fresh_large_result_reports_exact_sizes(tmp_path: Path) -> None:
    content = _big(3 * SLICE)  # over the batch limit, in three slices
    messages = [
        {"role": "user", "content": "Look at the log."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_big",
                                           "name": "read_file", "input": {"path": "a.log"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big",
                                      "content": content}]},
    ]
    events: list = []
    compactor = Compactor(tmp_path, emit=events.append)
    sent = asyncio.run(compactor.prepare(messages, "Look at the log."))
    (stage,) = [e for e in events if getattr(e, "stage", None) == "tool_result_budget"]
    assert stage.before_chars == len(json.dumps(messages, ensure_ascii=False))
    assert stage.after_chars == len(json.dumps(sent, ensure_ascii=False)) == json_chars(sent)
    rel = stage.files[0]
    assert (tmp_path / rel).read_text() == content


def test_a_second_prepare_measures_only_what_was_added(tmp_path: Path,
                                                       monkeypatch) -> None:
    import core.measure as measure

    messages = [{"role": "user", "content": f"message {i}"} for i in range(30)]
    compactor = Compactor(tmp_path)
    first = asyncio.run(compactor.prepare(messages, "r"))
    counted: list = []
    original = measure.json_chars
    monkeypatch.setattr(measure, "json_chars",
                        lambda value, memo=None: counted.append(value) or original(value, memo))
    added = [*first, {"role": "assistant", "content": "ok"}]
    history = compactor.prepare_local(added)
    assert counted == [added[-1]]
    assert history.chars == len(json.dumps(added, ensure_ascii=False))


def test_a_failed_large_write_leaves_no_file_no_entry_and_no_temp(tmp_path: Path,
                                                                  monkeypatch) -> None:
    import core.archive.streamed_write as streamed

    slices: list = []

    def disk_full(fd, data):
        slices.append(data)
        if len(slices) == 2:  # the first slice went to disk, the second does not fit
            raise OSError(28, "No space left on device")
        os.write(fd, data)

    monkeypatch.setattr(streamed, "_write_all", disk_full)
    archive = Archive(tmp_path)
    try:
        archive.persist("toolu_big", _big(3 * SLICE))
    except OSError as exc:
        assert exc.errno == 28
    else:
        raise AssertionError("the write error was swallowed")
    archive.flush()
    folder = tmp_path / ".task_outputs" / "tool-results"
    assert [p.name for p in folder.iterdir() if not p.name.startswith(".")] == []
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []
    assert archive.manifest() == {}


def test_the_budget_keeps_a_result_whose_wrapper_would_not_be_shorter(tmp_path: Path) -> None:
    """With a preview as long as the result, no name can make the wrapper shorter: nothing
    is written, whatever the length of the name the file would get."""

    content = _big(40_000)
    messages = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]}]
    thresholds = Thresholds(batch_limit=10, large_result=30_000, budget_preview=40_000)
    compactor = Compactor(tmp_path, thresholds=thresholds)
    sent = compactor.prepare_local(messages).messages
    assert sent[0]["content"][0]["content"] == content
    assert not (tmp_path / ".task_outputs" / "tool-results").exists() or not [
        p for p in (tmp_path / ".task_outputs" / "tool-results").iterdir()
        if p.suffix == ".txt"]


def test_a_call_that_can_compact_nothing_runs_without_a_thread(tmp_path: Path,
                                                               monkeypatch) -> None:
    import core.compact.pipeline as pipeline

    hops: list = []
    real = asyncio.to_thread
    monkeypatch.setattr(pipeline.asyncio, "to_thread",
                        lambda fn, *args: hops.append(fn) or real(fn, *args))
    compactor = Compactor(tmp_path)
    small = [{"role": "user", "content": f"message {i}"} for i in range(10)]
    sent = asyncio.run(compactor.prepare(small, "r"))
    assert hops == [] and sent == small
    fresh = [*sent, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_big", "content": _big(4 * SLICE)}]}]
    events: list = []
    compactor.ctx.emit = events.append
    inline = asyncio.run(compactor.prepare(fresh, "r"))
    assert hops == []  # a fresh result of a few MB is saved inline: no hop to a thread
    (stage,) = [e for e in events if getattr(e, "stage", None) == "tool_result_budget"]
    assert stage.before_chars == len(json.dumps(fresh, ensure_ascii=False))
    assert stage.after_chars == len(json.dumps(inline, ensure_ascii=False))
    huge = [*sent, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_huge",
         "content": _big(INLINE_SAVE_CHARS + 1)}]}]
    asyncio.run(compactor.prepare(huge, "r"))
    assert len(hops) == 1  # past INLINE_SAVE_CHARS it is saved in a worker thread


def tool_pairs(n: int, chars: int = 3_000) -> list[dict]:
    """``n`` calls of a tool, each answered with a result of ``chars`` chars."""
    pairs: list[dict] = []
    for i in range(n):
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x" * chars}
        pairs += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return pairs


def test_a_short_history_is_compacted_without_a_thread(
        tmp_path: Path, monkeypatch) -> None:
    import core.compact.pipeline as pipeline

    hops: list = []
    real = asyncio.to_thread
    monkeypatch.setattr(pipeline.asyncio, "to_thread",
                        lambda fn, *args: hops.append(fn) or real(fn, *args))
    events: list = []
    compactor = Compactor(tmp_path, emit=events.append)
    many = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
            for i in range(80)]
    sent = asyncio.run(compactor.prepare(many, "r"))
    assert hops == []
    assert len(sent) < len(many)  # snipped, its transcript written inline
    assert [e.stage for e in events if getattr(e, "stage", None)] == ["snip_compact"]

    # past the trigger at every call (a replay's steady state): micro-compacted inline
    pairs = tool_pairs(30)
    past = Compactor(tmp_path / "past", emit=events.append)
    sent = asyncio.run(past.prepare(pairs, "r"))
    assert len(hops) == 1  # all of it new, to be measured: in a worker thread
    events.clear()
    turn = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "y" * 15_000}]
    asyncio.run(past.prepare([*sent, *turn], "r"))
    assert len(hops) == 1  # measured last time, and short: the stages ran inline
    assert "micro_compact" in [e.stage for e in events if getattr(e, "stage", None)]

    # the limits lowered mid-run: far past the new target, hundreds of results to save
    roomy = Thresholds(context_limit=10**7, max_messages=1_000)
    lowered = Compactor(tmp_path / "lowered", thresholds=roomy)
    kept = asyncio.run(lowered.prepare(tool_pairs(120), "r"))
    assert len(hops) == 2 and len(json.dumps(kept)) > Thresholds().target + LIGHT_SHED_CHARS
    lowered.thresholds = Thresholds()
    asyncio.run(lowered.prepare([*kept, *turn], "r"))
    assert len(hops) == 3  # more than LIGHT_SHED_CHARS past the target: in a worker thread
    # not far past it, but in hundreds of short results: as many files to write
    short = Compactor(tmp_path / "short", thresholds=roomy)
    kept = asyncio.run(short.prepare(tool_pairs(400, chars=200), "r"))
    short.thresholds = Thresholds()
    assert len(json.dumps(kept)) - Thresholds().target < LIGHT_SHED_CHARS
    asyncio.run(short.prepare([*kept, *turn], "r"))
    assert len(hops) == 5  # the new history, then more than LIGHT_SHED_FILES files to write

    # a long history, even one measured last time, is still handed to a thread
    long = Compactor(tmp_path / "long", thresholds=Thresholds(context_limit=10**7),
                     emit=events.append)
    chars = LIGHT_HISTORY_CHARS // 40  # what snip keeps (50 messages) is still longer
    long_messages = [{**m, "content": m["content"] + " " + "x" * chars} for m in many]
    sent = asyncio.run(long.prepare(long_messages, "r"))
    asyncio.run(long.prepare([*sent, *turn[:1]], "r"))
    assert len(hops) == 7  # both snips of a history past LIGHT_HISTORY_CHARS


def _odd_text(chars: int) -> str:
    """Text with every kind of escape, non-ASCII, a lone surrogate and a surrogate pair of
    lone halves, placed so that some fall on the slice boundaries of a streamed save."""
    unit = 'ok "q" \\ \t\n\x01\x1f é 中 \ud800 \udbff\udc00 😀 \u2028\n'
    text = (unit * (chars // len(unit) + 1))[:chars]
    edge = SLICE
    return text[:edge - 1] + "\ud83d\x02" + text[edge + 1:]


def test_a_streamed_save_is_byte_exact_and_counted_exactly(tmp_path: Path) -> None:
    content = _odd_text(2 * SLICE + 777)
    messages = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_odd", "content": content}]}]
    events: list = []
    sent = Compactor(tmp_path, emit=events.append).prepare_local(messages).messages
    (stage,) = [e for e in events if getattr(e, "stage", None) == "tool_result_budget"]
    assert stage.before_chars == len(json.dumps(messages, ensure_ascii=False))
    assert stage.after_chars == len(json.dumps(sent, ensure_ascii=False))
    data = (tmp_path / stage.files[0]).read_bytes()
    assert data == content.encode("utf-8", "surrogatepass")
    assert Archive(tmp_path).read_result(stage.files[0]) == content


def test_a_save_started_early_that_no_stage_uses_leaves_nothing(tmp_path: Path) -> None:
    """A preview as long as the result makes the budget keep it inline: the save started
    before measuring is dropped, temporary file and all."""

    content = _big(SLICE + 5)
    messages = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]}]
    thresholds = Thresholds(batch_limit=10, large_result=30_000,
                            budget_preview=2 * SLICE,
                            context_limit=10 * SLICE)  # nor micro, nor fit
    sent = Compactor(tmp_path, thresholds=thresholds).prepare_local(messages).messages
    assert sent[0]["content"][0]["content"] == content
    folder = tmp_path / ".task_outputs" / "tool-results"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_the_files_to_shed_are_counted_oldest_first_and_pointers_are_not() -> None:
    history = tool_pairs(10, chars=1_120)
    assert files_to_shed(history, 120, 2_500, 64) == 3  # 1,000 chars out per file
    assert files_to_shed(history, 120, 10**6, 4) == 5  # counted one past ``most``
    history[1]["content"][0]["content"] = "[Earlier tool result saved at /w/r.txt]"
    history[3]["content"][0]["content"] = "short"
    assert files_to_shed(history, 120, 2_500, 64) == 3  # neither saves anything
    assert files_to_shed(history, 120, 0, 64) == 0
