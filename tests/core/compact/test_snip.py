import json

from core.archive.store import archive_marker_path
from core.messages import validate_pairs
from tests.core.compact.builders import (
    assistant,
    chars,
    make,
    prepare,
    result,
    results,
    stages,
    use,
    user,
)


def chat(n: int) -> list[dict]:
    return [user(f"m{i}") if i % 2 == 0 else {"role": "assistant", "content": f"a{i}"}
            for i in range(n)]


def test_fifty_messages_are_left_alone(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = chat(50)
    assert prepare(comp, history) == history and stages(rec) == []


def test_keeps_head_three_and_tail_forty_six(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = chat(60)
    out = prepare(comp, history)
    assert len(out) == 50
    assert out[:3] == history[:3] and out[4:] == history[-46:]
    path = archive_marker_path(out[3]["content"])
    assert out[3]["content"] == f"[11 messages archived at {path}]"
    assert path.startswith(".transcripts/transcript_") and path.endswith(".jsonl")
    lines = (tmp_path / path).read_text().splitlines()
    assert [json.loads(x) for x in lines] == history  # the whole pre-snip list
    assert stages(rec) == ["snip_compact"]


def test_cut_points_move_around_pairs_and_result_may_exceed_fifty(tmp_path):
    comp, _ = make(tmp_path, context_limit=10**9)
    history = chat(60)
    history[2] = assistant(use("h1"))  # head cut would split h1 from its result
    history[3] = results(result("h1", "ok"))
    history[13] = assistant(use("t1"))  # tail_start = 14 would split t1 from its result
    history[14] = results(result("t1", "ok"))
    out = prepare(comp, history)
    assert len(out) == 52
    assert out[:4] == history[:4] and out[5:] == history[13:]
    assert validate_pairs(out) == []


def test_repeated_snip_is_stable(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = chat(60)
    history[13] = assistant(use("t1"))
    history[14] = results(result("t1", "ok"))
    once = prepare(comp, history)
    twice = prepare(comp, once)
    assert twice == once and stages(rec) == ["snip_compact"]
    # a later snip archives the old marker as one of its messages: transcripts chain
    longer = once + chat(10)
    thrice = prepare(comp, longer)
    assert chars(thrice) < chars(longer)
    newest = archive_marker_path(thrice[3]["content"])
    first_lines = (tmp_path / newest).read_text().splitlines()
    assert any("messages archived at" in line for line in first_lines)
