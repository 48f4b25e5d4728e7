"""The agent loop (core/sources/agent/loop.py): deferred ``compact``, confinement, the
pre-compaction snapshot.

Scripted turns drive the real tools, compaction and memory; the snapshot test drives the real
SDK over real HTTP (the ``messages_server`` fixture) so the extraction call's input can be read
off the wire.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from core.compact.breakdown import CATEGORIES, MESSAGE_CATEGORIES, PROMPT_CATEGORIES
from core.compact.pipeline import COMPACT_TOOL_RESULT
from core.config import Thresholds
from core.events import (
    MemoryWritten,
    ModelRequest,
    Recorder,
    Stage,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from core.measure import json_chars
from core.memory import MemoryStore
from core.messages import validate_pairs
from core.providers.anthropic import AnthropicProvider
from core.providers.base import ModelCall, ModelReply, TextSink
from core.providers.scripted import ScriptedProvider
from core.scenarios.model import Turn, parse_scenario
from core.sources.agent.loop import Agent
from core.tools import TOOL_SCHEMAS

NOTES = "def add(a, b):\n    return a + b\n" * 20  # 640 chars: kept whole by every stage


class RecordingScripted(ScriptedProvider):
    """The scripted provider, keeping a copy of every call it was asked to answer."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ModelCall] = []

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        self.calls.append(ModelCall(call.purpose, json.loads(json.dumps(call.messages)),
                                    call.system, call.max_tokens, call.tools))
        return await super().complete(call, on_text)

    def main_calls(self) -> list[ModelCall]:
        return [c for c in self.calls if c.purpose == "main"]


def one_turn(yaml_turn: str) -> Turn:
    """Parse a single scripted turn (indented as an item of ``turns:``)."""
    text = "name: t\nworkspace: long_chat\nsessions:\n  - turns:\n" + yaml_turn
    return parse_scenario(text, "inline.yaml").sessions[0].turns[0]


def play(workspace: Path, yaml_turn: str, **agent_options: Any
         ) -> tuple[Agent, Recorder, RecordingScripted]:
    turn = one_turn(yaml_turn)
    provider = RecordingScripted()
    provider.begin_turn(turn)
    recorder = Recorder()
    agent = Agent(workspace, provider, emit=recorder, **agent_options)
    asyncio.run(agent.run_turn(turn.user))
    return agent, recorder, provider


def assert_api_valid(provider: RecordingScripted) -> None:
    for call in provider.main_calls():
        assert validate_pairs(call.messages, allow_pending=False) == []


# -- the compact tool's deferred semantics -------------------------------------------------

DEFERRED = """
      - user: Read the notes, compact, then check the tree.
        replies:
          - say: Reading, compacting and checking in one batch.
            tools:
              - read_file: {path: notes.py}
              - compact: {}
              - bash: {command: "echo ran-after-compact > after.txt && echo bash-ran"}
          - say: All three are done.
"""


def test_batch_with_compact_in_the_middle_answers_every_call_in_order(tmp_path):
    (tmp_path / "notes.py").write_text(NOTES, encoding="utf-8")
    agent, rec, provider = play(tmp_path, DEFERRED)

    calls = rec.of(ToolCall)
    results = rec.of(ToolResult)
    assert [c.name for c in calls] == ["read_file", "compact", "bash"]
    assert [r.id for r in results] == [c.id for c in calls]
    assert not any(r.is_error for r in results)
    # bash, listed after compact, still ran
    assert (tmp_path / "after.txt").read_text(encoding="utf-8") == "ran-after-compact\n"

    (stage,) = [s for s in rec.of(Stage) if s.stage == "manual_compact"]
    # compaction saw the request, the tool_use message and the results message: 3 messages
    assert stage.before_messages == 3 and stage.after_messages == 1
    (transcript_rel,) = stage.files
    lines = (tmp_path / transcript_rel).read_text(encoding="utf-8").splitlines()
    transcript = [json.loads(line) for line in lines]
    assert [m["role"] for m in transcript] == ["user", "assistant", "user"]
    results_message = transcript[-1]
    blocks = results_message["content"]
    assert [b["tool_use_id"] for b in blocks] == [c.id for c in calls]
    assert blocks[0]["content"] == NOTES
    assert blocks[1]["content"] == COMPACT_TOOL_RESULT
    assert COMPACT_TOOL_RESULT == "Compaction requested after this tool batch."
    assert "bash-ran" in blocks[2]["content"]
    assert not any(b.get("is_error") for b in blocks)
    assert validate_pairs(transcript, allow_pending=False) == []

    # the stage fires after the last result and before the next model call
    order = [type(e).__name__ for e in rec.events
             if isinstance(e, ToolResult | Stage | ModelRequest)]
    assert order == ["ModelRequest", "ToolResult", "ToolResult", "ToolResult", "Stage",
                     "ModelRequest"]

    # the next call starts from the summary alone: no orphan tool_result anywhere
    second = provider.main_calls()[1].messages
    assert second[0]["role"] == "user"
    assert second[0]["content"].startswith("[Compacted]\n\nCurrent user request:\n"
                                           "Read the notes, compact, then check the tree.")
    assert f"Full transcript: {transcript_rel}" in second[0]["content"]
    assert len(second) == 1
    assert_api_valid(provider)
    assert validate_pairs(agent.messages, allow_pending=False) == []
    assert agent.messages[-1]["content"] == [{"type": "text", "text": "All three are done."}]


def test_every_main_request_carries_its_breakdown_adding_up_to_what_was_sent(tmp_path):
    """The facts the Context meter shows are the request's own: the message categories add
    up to the chars the model was sent, the system prompt's to its length."""
    (tmp_path / "notes.py").write_text(NOTES, encoding="utf-8")
    _, rec, provider = play(tmp_path, DEFERRED)
    requests = [e for e in rec.of(ModelRequest) if e.purpose == "main"]
    calls = provider.main_calls()
    assert len(requests) == len(calls) == 2
    for request, call in zip(requests, calls, strict=True):
        parts = request.breakdown
        assert set(parts) == set(CATEGORIES)
        assert sum(parts[k] for k in MESSAGE_CATEGORIES) == request.chars == \
            json_chars(call.messages)
        assert sum(parts[k] for k in PROMPT_CATEGORIES) == request.system_chars == \
            len(call.system)
        assert parts["tools"] == json_chars(TOOL_SCHEMAS)
    assert requests[1].breakdown["summaries"] > 0  # the compact tool left a summary
    assert requests[0].breakdown["summaries"] == 0


def test_two_compact_calls_in_one_batch_compact_once(tmp_path):
    (tmp_path / "notes.py").write_text(NOTES, encoding="utf-8")
    _, rec, provider = play(tmp_path, """
      - user: Compact twice.
        replies:
          - tools:
              - compact: {}
              - read_file: {path: notes.py}
              - compact: {}
          - say: Done.
""")
    results = rec.of(ToolResult)
    assert [r.name for r in results] == ["compact", "read_file", "compact"]
    assert [s.stage for s in rec.of(Stage)] == ["manual_compact"]
    assert_api_valid(provider)


def test_a_scripted_summary_answer_is_the_summary_kept(tmp_path):
    (tmp_path / "notes.py").write_text(NOTES, encoding="utf-8")
    agent, rec, _ = play(tmp_path, """
      - user: Read and compact.
        summary: "SCRIPTED: the notes define add()."
        replies:
          - tools:
              - read_file: {path: notes.py}
              - compact: {}
          - say: Done.
""")
    assert [s.stage for s in rec.of(Stage)] == ["manual_compact"]
    assert json.dumps("SCRIPTED: the notes define add().") in agent.messages[0]["content"]
    assert [e.purpose for e in rec.of(ModelRequest)] == ["main", "summary", "main"]


class KeepsCalls(ScriptedProvider):
    def __init__(self) -> None:
        super().__init__()
        self.kept: list[tuple[ModelCall, str]] = []

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        if call.purpose == "main":
            self.kept.append((call, json.dumps(call.messages)))
        return await super().complete(call, on_text)


def test_a_kept_model_call_still_shows_what_was_sent(tmp_path):
    (tmp_path / "notes.py").write_text(NOTES, encoding="utf-8")
    turn = one_turn("""
      - user: Read the notes.
        replies:
          - tools:
              - read_file: {path: notes.py}
          - say: Read them.
""")
    provider = KeepsCalls()
    provider.begin_turn(turn)
    asyncio.run(Agent(tmp_path, provider).run_turn(turn.user))
    assert len(provider.kept) == 2
    for call, as_sent in provider.kept:
        assert json.dumps(call.messages) == as_sent


# -- confinement, seen from the loop -------------------------------------------------------

def test_escaping_paths_become_error_results_and_the_turn_goes_on(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.py").write_text(NOTES, encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP SECRET outside the workspace\n", encoding="utf-8")
    (workspace / "innocent.txt").symlink_to(outside)

    agent, rec, provider = play(workspace, f"""
      - user: Read some files.
        replies:
          - tools:
              - read_file: {{path: ../outside.txt}}
              - read_file: {{path: "{outside}"}}
              - read_file: {{path: innocent.txt}}
              - read_file: {{path: notes.py}}
          - say: Three of those were outside the workspace.
""")
    results = rec.of(ToolResult)
    assert [r.is_error for r in results] == [True, True, True, False]
    (_, _, results_message, *_) = agent.full_history
    blocks = results_message["content"]
    assert [b.get("is_error", False) for b in blocks] == [True, True, True, False]
    for block in blocks[:3]:
        assert block["content"].startswith("Error: ")
        assert "TOP SECRET" not in block["content"]
    assert blocks[3]["content"] == NOTES
    # the loop went on: a second model call, then a normal end of turn
    assert len(provider.main_calls()) == 2
    assert len(rec.of(TurnEnd)) == 1
    assert agent.messages[-1]["role"] == "assistant"
    assert_api_valid(provider)


# -- memory is extracted from the turn as it was before compaction -------------------------

PREFERENCE = "I always indent with tabs, never spaces."
REQUEST = f"{PREFERENCE} Now look at big.txt."
EARLY_NOTE = "Noted: tabs, never spaces. Reading big.txt."


def test_extraction_reads_the_turn_as_it_was_before_compact_history(tmp_path, messages_server):
    (tmp_path / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 150, encoding="utf-8")
    server = messages_server
    server.reply_tool_use("read_file", {"path": "big.txt"}, text=EARLY_NOTE)
    server.reply_text("The agent read big.txt; nothing else happened.")  # the summary call
    server.reply_text("Done.")
    record = {"name": "indentation", "type": "user", "scope": "persistent",
              "description": "The user indents with tabs, never spaces",
              "body": "Always indent with tabs, never spaces."}
    server.reply_text(json.dumps([record]))  # the extract call

    rec = Recorder()
    provider = AnthropicProvider(base_url=server.url, api_key="test-key")
    agent = Agent(tmp_path, provider, thresholds=Thresholds(context_limit=600), emit=rec)

    async def turn() -> None:
        try:
            await agent.run_turn(REQUEST)
        finally:
            await provider.aclose()

    asyncio.run(turn())
    assert server.pending == 0

    # compact_history really replaced the early part of the turn
    assert [s.stage for s in rec.of(Stage) if s.stage == "compact_history"]
    assert agent.messages[0]["content"].startswith("[Compacted]")
    assert not any(EARLY_NOTE in json.dumps(m) for m in agent.messages)

    # ... yet extraction read the turn verbatim, from before the summary
    extract = server.requests_to()[-1].body
    assert extract["max_tokens"] == 1000 and "tools" not in extract
    prompt = extract["messages"][0]["content"]
    dialogue = prompt.split("Dialogue:\n", 1)[1]
    assert dialogue.splitlines()[0] == f"user: {REQUEST}"
    assert f"assistant: {EARLY_NOTE}" in dialogue
    assert "[Compacted]" not in dialogue

    (written,) = rec.of(MemoryWritten)
    stored = MemoryStore(tmp_path / ".memory").get(written.file)
    assert stored is not None and stored.body == record["body"]
    stage_at = next(i for i, e in enumerate(rec.events)
                    if isinstance(e, Stage) and e.stage == "compact_history")
    assert rec.events.index(written) > stage_at
    for request in server.requests_to():
        assert validate_pairs(request.body["messages"], allow_pending=False) == []


def test_an_empty_reply_never_leaves_an_empty_assistant_message(tmp_path):
    """The API refuses empty assistant content before the last message."""
    import asyncio as aio

    from core.providers.base import ModelReply
    from core.sources.agent.loop import EMPTY_REPLY, Agent

    class Empty:
        name, model = "fake", "m"

        def __init__(self):
            self.sent = []

        async def complete(self, call, on_text=None):
            self.sent.append(call)
            if call.purpose != "main":
                return ModelReply(content=[{"type": "text", "text": "[]"}])
            return ModelReply(content=[], stop_reason="end_turn")

    provider = Empty()
    agent = Agent(tmp_path, provider, memory=False)
    aio.run(agent.run_turn("hi"))
    aio.run(agent.run_turn("again"))
    main = [c for c in provider.sent if c.purpose == "main"]
    assert main[1].messages[1] == {"role": "assistant",
                                   "content": [{"type": "text", "text": EMPTY_REPLY}]}
    assert all(m["content"] for m in agent.messages)


# -- a long command output stays recoverable (issue 11) --------------------------------------

LONG_OUTPUT = """
      - user: Print the long log.
        replies:
          - say: Printing it.
            tools:
              - bash: {command: "python3 -c \\"print('START' + 'm' * 120000 + 'END')\\""}
          - say: Done.
"""


def test_a_bash_output_over_the_cap_is_archived_whole_behind_its_preview(tmp_path):
    agent, _, provider = play(tmp_path, LONG_OUTPUT)
    (block,) = [b for b in agent.messages[2]["content"] if b.get("type") == "tool_result"]
    wrapper = block["content"]
    archive = agent.compactor.archive
    path = archive.trusted_pointer(block["tool_use_id"], wrapper)
    assert path is not None, wrapper[:200]
    # (a 50,000-char preview is itself over the trigger: fit_tool_results shortens it,
    # reusing the same file)
    assert {e["chars"] for e in archive.ledger if e["where"] == path} == {120009}
    assert archive.recover(block["tool_use_id"], path) == "START" + "m" * 120000 + "END\n"
    assert archive.manifest()[path].chars == 120009
    # what the model was sent: the same wrapper, never the whole output
    sent = json.dumps(provider.main_calls()[-1].messages)
    assert "START" in sent and "m" * 60000 not in sent
    assert not [p for p in (tmp_path / ".task_outputs" / "tool-results").iterdir()
                if p.name.endswith(".tmp")]
