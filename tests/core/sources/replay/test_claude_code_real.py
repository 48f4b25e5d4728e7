"""Transcripts the real Claude Code 2.1.197 wrote, against the requests it really sent.

1292932d is one session of four runs: a task with two parallel tool calls and one more
call, a follow-up that Claude Code compacted automatically first, ``/compact``, and the
task again. 1292932d-requests.json holds every request body's messages, reduced to their
text and tool ids, as the watch recorded them (requests 3 and 7 are the summary requests,
which the transcript does not record). What ctxlab rebuilds as the original's history
before each request must be those messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.sources.replay import Exchange, Recording, load_recording
from core.sources.replay.detect import detect
from core.sources.replay.original import as_sent

REAL = Path(__file__).resolve().parents[3] / "fixtures" / "replay" / "claude-code-2.1.197"
SESSION = REAL / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"
INTERACTIVE = REAL / "23066283-41ed-4042-8fbf-6784c95a159e.jsonl"
ORPHAN = REAL / "boundary-without-logical-parent.jsonl"
SUBAGENT = REAL / "d64386a0-acb4-45b0-92ee-44fa32751f8c" / "subagents" / \
    "agent-ad28c263592ced03c.jsonl"
MAIN_WITH_SUBAGENT = REAL / "d64386a0-acb4-45b0-92ee-44fa32751f8c.jsonl"
SUMMARY_REQUESTS = (3, 7)
# Claude Code adds this reminder to every request itself; no transcript record holds it.
UNRECORDED = "<system-reminder> As you answer the user's questions"


def sent_requests() -> list[list[dict[str, Any]]]:
    data = json.loads((REAL / "1292932d-requests.json").read_text(encoding="utf-8"))
    return [r["messages"] for r in data["requests"]]


def digest(block: Any) -> str | None:
    """A block as the requests fixture spells it (thinking: None, Claude Code sent none;
    the fixture's reminders are reduced already, as its long texts are cut)."""
    if isinstance(block, str):
        block = {"type": "text", "text": block}
    kind = block.get("type")
    if kind == "text":
        text = block["text"].rstrip("\n")  # Claude Code ends joined user texts with one
        if text.startswith("<system-reminder>\n"):  # (the fixture's are reduced already)
            text = "<system-reminder> " + text.split("\n", 2)[1].split(":")[0]
        return (text if len(text) <= 120 else text[:120] + "…").rstrip("\n")
    if kind == "tool_use":
        return f"tool_use {block['id']}"
    if kind == "tool_result":
        return f"tool_result {block['tool_use_id']}"
    return None


def comparable(messages: list[dict[str, Any]]) -> list[tuple[str, list[str], list[str]]]:
    """Roles with their text and tool ids, in order; neighbours of one role merged (the
    API joins them too); the reminders as a sorted list of their kinds, since their place
    among a message's blocks is Claude Code's own and not recorded."""
    out: list[tuple[str, list[str], list[str]]] = []
    for message in messages:
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        texts = [d for d in map(digest, blocks) if d is not None]
        plain = [d for d in texts if not d.startswith("<system-reminder>")]
        notes = [d for d in texts if d.startswith("<system-reminder>")
                 and not d.startswith(UNRECORDED)]
        if not plain and not notes:
            continue
        if out and out[-1][0] == message["role"]:
            out[-1] = (message["role"], out[-1][1] + plain, sorted(out[-1][2] + notes))
        else:
            out.append((message["role"], plain, sorted(notes)))
    return out


def histories(recording: Recording) -> list[list[dict[str, Any]]]:
    """The original's history as each request was sent."""
    return [list(history.messages) for _, history in as_sent(recording)]


def tool_ids(exchanges: list[Exchange], kind: str) -> list[str]:
    key = "id" if kind == "tool_use" else "tool_use_id"
    messages = [m for e in exchanges for m in (e.input if kind == "tool_result" else
                                               [e.reply] if e.reply else [])]
    return [b[key] for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == kind]


def test_every_parallel_call_and_result_of_every_task_is_replayed():
    rec = load_recording(SESSION)
    assert len(rec.exchanges) == 9 and rec.notices == []
    per_task = ["toolu_01read", "toolu_02bash", "toolu_03bash"]
    assert tool_ids(rec.exchanges, "tool_use") == per_task * 3
    assert tool_ids(rec.exchanges, "tool_result") == per_task * 3
    # one assistant message [thinking, text, Read, Bash], then ONE user message of results
    first, second = rec.exchanges[0], rec.exchanges[1]
    assert [b["type"] for b in first.reply["content"]] == \
        ["thinking", "text", "tool_use", "tool_use"]
    assert second.input == [{"role": "user", "content": [
        *[b for b in second.input[0]["content"] if b["type"] == "tool_result"]]}]
    assert len(second.input[0]["content"]) == 2


def test_exactly_the_two_compactions_claude_code_made():
    rec = load_recording(SESSION)
    assert [(c.trigger, c.stage, c.pre_tokens, c.post_tokens) for c in rec.compactions] == \
        [("auto", "auto_compact", 190_048, 764), ("manual", "manual_compact", 190_040, 700)]
    assert all(c.summary.startswith("This session is being continued") for c in rec.compactions)


def test_the_originals_history_is_what_claude_code_sent_before_every_request():
    sent = [r for i, r in enumerate(sent_requests()) if i not in SUMMARY_REQUESTS]
    ours = histories(load_recording(SESSION))
    assert len(ours) == len(sent) == 9
    for index, (mine, theirs) in enumerate(zip(ours, sent, strict=True)):
        assert comparable(mine) == comparable(theirs), f"request {index}"


def test_after_each_compaction_the_summary_then_the_preserved_messages():
    requests = sent_requests()
    after_auto, after_manual = histories(load_recording(SESSION))[3], \
        histories(load_recording(SESSION))[6]
    assert comparable(after_auto) == comparable(requests[4])
    assert [role for role, _, _ in comparable(after_auto)] == ["user", "assistant", "user"]
    assert comparable(after_auto)[1][1] == ["notes.txt has 3 lines."]  # the preserved reply
    assert comparable(after_manual) == comparable(requests[8])
    # the synthetic reply Claude Code wrote itself is sent, and is no request
    assert ("assistant", ["No response requested."], []) in comparable(after_manual)


def test_a_boundary_whose_logical_parent_is_missing_joins_the_record_before_it():
    rec = load_recording(ORPHAN)
    [notice] = rec.notices
    assert notice.kind == "boundary-joined" and notice.line == 21
    assert "joined to line 20" in notice.message
    # nothing before the boundary is lost: the first task's three requests come first
    assert [type(s).__name__ for s in rec.steps] == ["Exchange"] * 3 + ["Compaction"] + \
        ["Exchange"] * 3
    assert tool_ids(rec.exchanges, "tool_result").count("toolu_01read") == 2
    [compaction] = rec.compactions
    assert [m["role"] for m in compaction.kept] == ["user", "assistant", "user"]


def test_an_interactive_transcript_opening_with_mode_lines_is_detected_and_read():
    text = INTERACTIVE.read_text(encoding="utf-8")
    assert json.loads(text.split("\n", 1)[0])["type"] == "ai-title"
    assert detect(INTERACTIVE, text) == "claude-code"
    for skip in (2, 3):  # a file opening with its mode or permission-mode line
        rest = "".join(text.splitlines(keepends=True)[skip:])
        assert json.loads(rest.split("\n", 1)[0])["type"] in ("mode", "permission-mode")
        assert detect(INTERACTIVE, rest) == "claude-code"
    rec = load_recording(INTERACTIVE)
    assert not [k for k in rec.skipped if k.startswith("unknown")]
    assert {"mode", "permission-mode", "ai-title", "last-prompt",
            "file-history-snapshot", "system:turn_duration"} <= set(rec.skipped)
    # written out of order (the prompt after the reply's first lines): still one request
    assert tool_ids(rec.exchanges, "tool_use") == ["toolu_01read", "toolu_02bash",
                                                   "toolu_03bash"]
    assert "Read notes.txt" in json.dumps(rec.exchanges[0].input)


def test_a_subagent_transcript_opens_as_a_session_of_its_own_and_says_whose_it_is():
    rec = load_recording(SUBAGENT)
    assert len(rec.exchanges) == 2
    assert "SUBAGENT-TASK" in json.dumps(rec.exchanges[0].input)
    [notice] = rec.notices
    assert notice.kind == "subagent"
    assert "general-purpose “Count lines”" in notice.message and "toolu_09task" in notice.message


def test_the_sessions_subagents_are_listed_with_their_own_requests_and_tokens():
    main = load_recording(MAIN_WITH_SUBAGENT)
    assert [p.name for p in main.subagents] == ["agent-ad28c263592ced03c.jsonl"]
    [totals] = main.subagents_read
    assert (totals.agent_type, totals.description, totals.tool_use_id, totals.spawn_depth) == \
        ("general-purpose", "Count lines", "toolu_09task", 1)
    assert (totals.requests, totals.compactions, totals.error) == (2, 0, None)
    sub = load_recording(SUBAGENT)
    assert totals.input_tokens == sum(e.usage["input_tokens"] + e.usage.get(
        "cache_read_input_tokens", 0) + e.usage.get("cache_creation_input_tokens", 0)
        for e in sub.exchanges) > 0
    # the Task call that started it is in the main session, with its result
    assert "toolu_09task" in tool_ids(main.exchanges, "tool_use")


def test_an_unreadable_subagent_is_listed_with_its_reason(tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_bytes(MAIN_WITH_SUBAGENT.read_bytes())
    folder = tmp_path / "s" / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-x.jsonl").write_text("", encoding="utf-8")
    [totals] = load_recording(session).subagents_read
    assert totals.requests == 0 and "is empty" in (totals.error or "")
    assert totals.agent_type is None  # no meta file: unnamed, still listed


def test_a_record_written_twice_is_read_once_without_a_notice(tmp_path):
    rows = SESSION.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, r in enumerate(rows)
              if "Now say what the first line was" in r and '"type":"user"' in r)
    twice = tmp_path / "twice.jsonl"  # as Claude Code wrote the follow-up prompt, once more
    twice.write_text("".join([*rows[:at + 1], rows[at], *rows[at + 1:]]), encoding="utf-8")
    rec = load_recording(twice)
    assert rec.notices == [] and rec.skipped["duplicate"] == 1
    assert histories(rec) == histories(load_recording(SESSION))


def rewritten(tmp_path: Path, change: Any) -> Path:
    """The real session with ``change`` applied to each compact boundary's metadata."""
    rows = []
    for row in SESSION.read_text(encoding="utf-8").splitlines():
        data = json.loads(row)
        if data.get("subtype") == "compact_boundary":
            change(data["compactMetadata"])
        rows.append(json.dumps(data, ensure_ascii=False))
    path = tmp_path / "rewritten.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_without_preserved_messages_the_preserved_segment_is_walked(tmp_path):
    session = rewritten(tmp_path, lambda meta: meta.pop("preservedMessages"))
    assert histories(load_recording(session)) == histories(load_recording(SESSION))


def test_preserved_messages_missing_from_the_file_are_said(tmp_path):
    def lose(meta: dict[str, Any]) -> None:
        meta["preservedMessages"]["uuids"].append("0f0e0d0c-0000-4000-8000-000000000000")

    rec = load_recording(rewritten(tmp_path, lose))
    assert [n.kind for n in rec.notices] == ["preserved-missing"] * 2
    assert histories(rec) == histories(load_recording(SESSION))  # the rest is kept


def test_a_boundary_without_metadata_keeps_the_summary_alone(tmp_path):
    rec = load_recording(rewritten(tmp_path, lambda meta: meta.clear()))
    assert [len(c.kept) for c in rec.compactions] == [1, 1]
    assert [c.trigger for c in rec.compactions] == ["auto", "auto"]  # no trigger recorded


OPUS = REAL / "opus-6ce1357e-ba2e-41af-8172-5c9f29e9cb6a.jsonl"


def test_for_claude_codes_default_model_attachments_are_the_system_messages_it_sent():
    """The same session with Claude Code's default model (claude-opus-4-8), which takes
    ``role: "system"`` messages mid-conversation: every attachment of a turn is one such
    message at the end of the turn, as its requests show (opus-requests.json)."""
    data = json.loads((REAL / "opus-requests.json").read_text(encoding="utf-8"))
    sent = [r["messages"] for r in data["requests"] if r["index"] not in SUMMARY_REQUESTS]
    ours = histories(load_recording(OPUS))
    assert len(ours) == len(sent) == 9
    for index, (mine, theirs) in enumerate(zip(ours, sent, strict=True)):
        assert comparable(mine) == comparable(theirs), f"request {index}"
    assert any(m["role"] == "system" for m in ours[-1])
    # the sonnet-shaped session above keeps them as reminders in the user's message
    assert not any(m["role"] == "system" for h in histories(load_recording(SESSION)) for m in h)


def test_a_record_written_again_with_a_field_added_is_one_record_without_a_notice():
    """2.1.197 writes the first prompt of an interactive or resumed session a second time
    with the session's ``slug`` added: the same record, not another under its uuid."""
    rec = load_recording(OPUS)
    assert rec.skipped["duplicate"] == 1
    assert not [n for n in rec.notices if n.kind == "duplicate-uuid"]


def test_the_turns_shown_are_what_the_user_typed_not_the_reminders_sent_with_them(tmp_path):
    """The attachments go to the model as ``<system-reminder>`` blocks in the prompt's
    message and count in its history; the conversation view shows the prompt alone."""
    import asyncio

    from core.events import Emitter, TurnStart
    from core.sources.replay.source import ReplayOptions, ReplaySource

    rec = load_recording(SESSION)
    assert "<system-reminder>" in json.dumps(rec.exchanges[0].input)
    events: list[Any] = []
    source = ReplaySource(rec, ReplayOptions(workdir=tmp_path / "w", seekable=False))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    turns = [e.request for e in events if isinstance(e, TurnStart)]
    assert turns[:2] == ["Read notes.txt and count lines of other.txt",
                         "Now say what the first line was"]
    assert not any("<system-reminder>" in t for t in turns)


def test_ctxlab_side_holds_the_system_messages_as_user_text(tmp_path):
    """The original sent its attachments as system messages; ctxlab's history alternates
    user and assistant, so there they are user text."""
    import asyncio

    from core.events import Emitter, ModelRequest
    from core.sources.replay.source import ReplayOptions, ReplaySource

    events: list[Any] = []
    source = ReplaySource(load_recording(OPUS),
                          ReplayOptions(workdir=tmp_path / "w", seekable=False))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    sent = [e.sent for e in events if isinstance(e, ModelRequest) and e.purpose == "main"]
    assert len(sent) == 9
    assert not any(m["role"] == "system" for messages in sent for m in messages)


def test_a_preserved_message_listed_twice_is_kept_once(tmp_path):
    def twice(meta: dict[str, Any]) -> None:
        uuids = meta["preservedMessages"]["uuids"]
        uuids.extend(uuids)

    assert histories(load_recording(rewritten(tmp_path, twice))) == \
        histories(load_recording(SESSION))
