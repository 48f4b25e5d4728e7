"""Pause, step, next stage, seek and cancel (core/sources/controls.py, and the AgentSession
under it).

A paused gate holds the loop before each main model call; ``step()`` lets exactly one call
through. Cancelling the task that runs an AgentSession ends it cleanly: the ``CancelledError``
reaches the awaiting code, and the event stream still ends with ``run_end`` (``ok`` false).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.events import Error, ModelRequest, Recorder, RunEnd, ToolCall, ToolResult, TurnEnd
from core.providers.anthropic import AnthropicProvider
from core.scenarios.model import parse_scenario
from core.sources.agent.session import AgentSession, RunOptions
from core.sources.controls import Controls


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def rec_types(recorder: Recorder) -> list[str]:
    return [e.type for e in recorder.events]


async def settle() -> None:
    """Give a task that could make progress plenty of chances to do so."""
    for _ in range(20):
        await asyncio.sleep(0.01)


# -- the gate alone ---------------------------------------------------------------------------

def test_gate_states():
    async def scenario() -> None:
        gate = Controls(paused=True)
        assert gate.paused
        waiter = asyncio.create_task(gate.wait())
        await settle()
        assert not waiter.done()
        gate.step()
        await until(waiter.done)
        assert gate.paused  # one step, then paused again
        second = asyncio.create_task(gate.wait())
        await settle()
        assert not second.done()
        gate.resume()
        await until(second.done)
        assert not gate.paused
        await asyncio.wait_for(gate.wait(), 1)  # running: no waiting at all
        gate.pause()
        assert gate.paused

    asyncio.run(scenario())


def test_asleep_while_the_source_waits_at_the_gate_for_a_person():
    """What a front end asks to know that nothing more comes until someone acts: paused,
    held at the end, waiting for a prompt."""
    async def scenario() -> None:
        gate = Controls(paused=True)
        assert not gate.asleep
        waiter = asyncio.create_task(gate.wait())
        await settle()
        assert gate.asleep
        gate.resume()
        await until(waiter.done)
        assert not gate.asleep
        held = asyncio.create_task(gate.hold(3))
        await settle()
        assert gate.asleep
        gate.finish()
        await until(held.done)
        assert not gate.asleep
        asking = Controls()
        prompt = asyncio.create_task(asking.next_prompt())
        await settle()
        assert asking.asleep  # a live run between two turns
        asking.send("next")
        await until(prompt.done)
        assert not asking.asleep
        serving = Controls()
        task = asyncio.create_task(serving.until_finished())
        await settle()
        assert not serving.asleep  # a watch serving: its traffic keeps coming
        serving.finish()
        await until(task.done)

    asyncio.run(scenario())


def test_a_jump_waits_no_pace_and_streams_no_word_at_the_pace():
    async def scenario() -> None:
        gate = Controls(paused=True, step_period=1.0, word_period=0.2)
        gate.set_speed(1.0)
        assert gate.word_delay == 0.2
        gate.until_next_stage()
        assert gate.word_delay == 0.0  # the words on the way are not the point
        started = time.monotonic()
        for _ in range(5):  # five steps on the way: none waits the second of ×1
            await asyncio.wait_for(gate.wait(), 0.5)
        assert time.monotonic() - started < 1.0
        gate.saw_stage()
        held = asyncio.create_task(gate.wait())
        await settle()
        assert not held.done() and gate.word_delay == 0.2  # there: paused, at the pace again
        held.cancel()

    asyncio.run(scenario())


def test_a_jump_to_a_stage_of_one_kind_plays_past_the_others():
    async def scenario() -> None:
        gate = Controls(paused=True)
        gate.until_next_stage("auto_compact")
        gate.saw_stage("snip_compact")  # another kind: on it goes
        await asyncio.wait_for(gate.wait(), 0.5)
        gate.saw_stage("auto_compact")
        held = asyncio.create_task(gate.wait())
        await settle()
        assert not held.done() and not gate.seeking  # that kind came: paused after it
        held.cancel()

    asyncio.run(scenario())


# -- the gate in a real run ---------------------------------------------------------------------

def test_a_paused_run_makes_no_model_call_until_step_then_exactly_one(tmp_path, messages_server):
    server = messages_server
    server.reply_tool_use("bash", {"command": "echo one"}, id="toolu_1")
    server.reply_text("Finished.")
    server.reply_text("[]")  # extract (a side call: not gated)
    provider = AnthropicProvider(base_url=server.url, api_key="test-key", model="claude-test")
    recorder = Recorder()

    async def scenario() -> bool:
        runner = AgentSession(RunOptions(workspace=tmp_path, prompts=["go"], provider="anthropic"),
                              recorder, paused=True, provider=provider)
        task = asyncio.create_task(runner.run())
        await settle()
        assert server.requests_to() == []
        runner.step()
        await until(lambda: len(recorder.of(ToolCall)) == 1)
        await settle()
        assert len(server.requests_to()) == 1  # the second call waits for the next step
        assert not task.done()
        runner.step()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(scenario())
    assert len(server.requests_to()) == 3 and server.pending == 0


# -- cancellation -------------------------------------------------------------------------------

SLOW = """
name: slow
workspace: long_chat
sessions:
  - turns:
      - user: Wait a while.
        replies:
          - tools:
              - bash: {command: "sleep 30"}
          - say: Done waiting.
"""
STEPS = """
name: steps
workspace: long_chat
sessions:
  - turns:
      - user: Two steps.
        replies:
          - tools:
              - bash: {command: "echo first"}
          - say: Never reached.
"""


def cancel_when(workspace: Path, script: str, ready: Callable[[Recorder], bool],
                steps: int | None = None) -> tuple[Recorder, float]:
    """Start a scripted run (paused with ``steps`` to go, when given), cancel its task once
    ``ready``; the CancelledError must reach the code awaiting the task."""
    recorder = Recorder()
    options = RunOptions(workspace=workspace, scenario=parse_scenario(script, "s.yaml"))

    async def scenario() -> None:
        runner = AgentSession(options, recorder, paused=steps is not None)
        if steps is not None:
            runner.step(steps)
        task = asyncio.create_task(runner.run())
        await until(lambda: ready(recorder))
        if steps is not None:
            await settle()
        task.cancel()
        await task

    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scenario())
    return recorder, time.monotonic() - started


def test_cancelling_mid_tool_ends_cleanly(tmp_path):
    """(That the bash child dies with the task is tested in tests/core/tools.)"""
    recorder, elapsed = cancel_when(tmp_path, SLOW, lambda rec: bool(rec.of(ToolCall)))
    assert elapsed < 10  # the 30 s command did not hold the run
    assert rec_types(recorder)[-2:] == ["error", "run_end"]
    assert recorder.events[-2] == Error(message="run cancelled", kind="cancelled")
    assert recorder.events[-1] == RunEnd(ok=False, turns=0)
    assert recorder.of(ToolResult) == [] and recorder.of(TurnEnd) == []


def test_cancelling_while_paused_between_two_calls_of_a_turn_ends_cleanly(tmp_path):
    # one call, its tool batch, then held before the second call
    recorder, _ = cancel_when(tmp_path, STEPS, lambda rec: bool(rec.of(ToolResult)), steps=1)
    assert len([e for e in recorder.of(ModelRequest) if e.purpose == "main"]) == 1
    assert recorder.of(TurnEnd) == []
    assert [e.kind for e in recorder.of(Error)] == ["cancelled"]
    assert recorder.events[-1] == RunEnd(ok=False, turns=0)

