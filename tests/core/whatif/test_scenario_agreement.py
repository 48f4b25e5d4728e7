"""A bundled scenario compared two ways agrees: played under each strategy
(:mod:`core.compare`), and recorded once unmanaged then priced by the what-if runner
(:mod:`core.whatif.run`), every request sends the same chars.

The recording is the scenario's own trajectory: played with limits so high that no stage
fires, each main request's messages written as one line of a Requests JSONL file (the format
``ctxlab watch`` records). A scripted scenario's replies do not depend on what the model was
sent, so the managed runs follow the same trajectory and only what is sent differs — which
is exactly what the what-if runner changes. The pairs compared: the scenario's ``compact``
(the s08 pipeline) and the session's ``s08`` at the scenario's thresholds; ``truncate``
(at the scenario's thresholds on both paths, and again at a limit tight enough to cut),
``observation-masking`` (10 kept on both paths) and ``api-compaction`` under the same names;
``api-clear-tool-uses`` at the scenario's trigger (its context limit in tokens, at ctxlab's 4
chars per token) and keep (``keep_recent``), and ``api-compaction`` at the same trigger.

Only ``big-log`` and ``long-chat`` are compared: ``long-migration`` scripts a refused prompt
(the reactive compact answers a refusal a recording never holds), ``refactor-auth`` and its
Chinese twin call the ``compact`` tool and use memory, and ``two-sessions`` is two sessions
with memory between them — none of which a recorded trajectory carries.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest

from core.compact.clear_tool_uses import tokens
from core.compare import compare_sync, parse_strategies
from core.config import Thresholds, scenario_thresholds
from core.events import Emitter, ModelRequest, Recorder, Stage
from core.scenarios import find_scenario
from core.scenarios.model import Scenario
from core.sources.agent.session import AgentSession, RunOptions
from core.sources.replay import load_recording
from core.whatif.model import WhatIf
from core.whatif.run import compare_session
from core.whatif.strategies import WhatIfOptions

HIGH = 10**9
NOTHING_FIRES = Thresholds(context_limit=HIGH, batch_limit=HIGH, large_result=HIGH,
                           keep_recent=10**6, max_messages=10**6, summary_input_limit=HIGH,
                           summary_head=HIGH, summary_tail=HIGH)
PAIRS = {"compact": "s08", "truncate": "truncate", "api-clear-tool-uses": "api-clear-tool-uses",
         "api-compaction": "api-compaction", "observation-masking": "observation-masking"}


async def unmanaged_requests(scenario: Scenario) -> list[ModelRequest]:
    """The scenario's main requests when nothing is compacted: its whole trajectory."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-test-") as tmp:
        recorder = Recorder()
        options = RunOptions(workspace=Path(tmp) / "workspace", scenario=scenario,
                             provider="scripted", thresholds=NOTHING_FIRES, memory=False,
                             pinned=False)
        assert await AgentSession(options, Emitter(sinks=[recorder])).run()
    assert not [e for e in recorder.events if isinstance(e, Stage)]  # nothing fired
    return [e for e in recorder.events if isinstance(e, ModelRequest) and e.purpose == "main"]


def record(scenario: Scenario, path: Path) -> int:
    """Write the scenario's trajectory as a Requests JSONL file; its number of requests."""
    requests = asyncio.run(unmanaged_requests(scenario))
    with path.open("w", encoding="utf-8") as out:
        for request in requests:
            assert request.sent is not None
            body = {"model": "claude-sonnet-4-5", "messages": list(request.sent)}
            out.write(json.dumps(body, ensure_ascii=False) + "\n")
    return len(requests)


@pytest.mark.parametrize("name", ["big-log", "long-chat"])
def test_the_session_path_sends_what_the_scenario_path_sent(tmp_path, name):
    scenario = find_scenario(name)
    limits = scenario_thresholds(scenario.thresholds, scenario.source)
    path = tmp_path / f"{name}.jsonl"
    count = record(scenario, path)
    played = compare_sync(scenario, parse_strategies(",".join(PAIRS)))
    options = WhatIfOptions(strategies=tuple(PAIRS.values()), thresholds=limits,
                            clear_trigger_tokens=tokens(limits.context_limit),
                            clear_keep=limits.keep_recent,
                            compaction_trigger_tokens=tokens(limits.context_limit))
    whatif = compare_session(load_recording(path, "requests"), options)
    assert whatif.requests == count
    for result in played.strategies:
        run = whatif.strategy(PAIRS[result.name])
        assert run is not None and run.error is None, (result.name, run)
        sent = tuple(r.chars for r in run.requests)
        assert sent == result.chars_per_call, (result.name, first_difference(
            result.chars_per_call, sent))


def test_truncate_cuts_where_the_scenario_cuts_not_where_the_window_would(tmp_path):
    """At the scenario's own limits neither path cuts these sessions, so the pair above
    cannot tell the scenario's limit from the model's window. Here ``long-chat``'s limit is
    half its largest request: the scenario's truncate cuts, the window (200,000 tokens)
    would not, and the session path must cut exactly where the scenario did. (``big-log``
    cannot show it: its one huge result is the latest message, which no window drops.)"""
    scenario = find_scenario("long-chat")
    path = tmp_path / "long-chat.jsonl"
    record(scenario, path)
    recording = load_recording(path, "requests")
    at_window = compare_session(recording, WhatIfOptions(strategies=("truncate",)))
    uncut = chars_sent(at_window, "truncate")
    tight = scenario_thresholds(scenario.thresholds, scenario.source).replace(
        context_limit=max(uncut) // 2)
    (played,) = compare_sync(scenario, parse_strategies("truncate"), tight).strategies
    assert played.chars_per_call != uncut  # the scenario's limit cut; the window's did not
    whatif = compare_session(recording, WhatIfOptions(strategies=("truncate",),
                                                      thresholds=tight))
    sent = chars_sent(whatif, "truncate")
    assert sent == played.chars_per_call, first_difference(played.chars_per_call, sent)


def chars_sent(whatif: WhatIf, strategy: str) -> tuple[int, ...]:
    run = whatif.strategy(strategy)
    assert run is not None and run.error is None, (strategy, run)
    return tuple(r.chars for r in run.requests)


def first_difference(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    """Where two series part (a failing test says which request, not just "not equal")."""
    for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return f"request {i}: scenario {x:,} chars, session {y:,}"
    return f"lengths {len(a)} and {len(b)}"
