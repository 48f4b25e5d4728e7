"""What the bundled scenarios say agrees with what they do: the file a request names is the
file written, every probe of a turn is a different question, a new session is marked, and a
stated preference is stored as a short-named ``user`` record."""

from __future__ import annotations

import asyncio
import re

import pytest

from core.events import Recorder
from core.memory.extract import offline_candidates
from core.scenarios import bundled_names, find_scenario
from core.sources.agent.session import AgentSession, RunOptions

PATH = re.compile(r"[A-Za-z0-9_./-]+\.py")


def written_paths(turn) -> set[str]:
    return {data["path"] for reply in turn.replies for name, data in reply.tools
            if name == "write_file"}


@pytest.mark.parametrize("name", ["refactor-auth", "refactor-auth-zh"])
def test_the_new_file_the_request_asks_for_is_the_file_written_and_probed(name):
    scenario = find_scenario(name)
    first = scenario.sessions[0].turns[0]
    written = written_paths(first)
    assert written == {"auth/token_helpers.py"}
    assert written <= set(PATH.findall(first.user)), first.user
    probes = [p.expect for t in scenario.sessions[-1].turns for p in t.probes]
    assert any(expect in path for expect in probes for path in written)
    # later requests never call the helpers' new home by the old module's name
    for turn in scenario.sessions[0].turns[1:]:
        if "refresh_token" in turn.user:
            assert "auth/token_helpers.py" in turn.user, turn.user


@pytest.mark.parametrize("name", bundled_names())
def test_no_turn_asks_the_same_probe_twice(name):
    for session in find_scenario(name).sessions:
        for turn in session.turns:
            asks = [p.ask for p in turn.probes]
            assert len(asks) == len(set(asks)), (name, turn.user, asks)


def run_events(name: str, workspace) -> list:
    recorder = Recorder()
    from core.events import Emitter

    ok = asyncio.run(AgentSession(RunOptions(workspace=workspace, scenario=find_scenario(name)),
                                  Emitter(sinks=[recorder])).run())
    assert ok
    return recorder.events


def test_two_sessions_marks_where_each_session_starts(tmp_path):
    events = run_events("two-sessions", tmp_path)
    kinds = [e.type for e in events]
    starts = [i for i, k in enumerate(kinds) if k == "session_start"]
    assert [(events[i].session, events[i].sessions) for i in starts] == [(1, 2), (2, 2)]
    for i in starts:  # the marker comes before anything of its session's first request
        first_turn = kinds.index("turn_start", i)
        assert "turn_end" not in kinds[i:first_turn]
    assert kinds.index("turn_end") < starts[1]  # session 2 starts after session 1's turn


def test_a_single_session_scenario_emits_no_session_marker(tmp_path):
    assert "session_start" not in {e.type for e in run_events("big-log", tmp_path)}


def test_two_sessions_stores_the_preference_as_a_short_user_record(tmp_path):
    events = run_events("two-sessions", tmp_path)
    [written] = [e for e in events if e.type == "memory_written"]
    assert written.record_type == "user"
    assert len(written.name) <= 40 and len(written.file) <= 44
    assert "snake_case" in written.name


@pytest.mark.parametrize(("said", "kind", "name"), [
    ("Remember that I prefer snake_case file names and type hints on every public function.",
     "user", "prefers snake_case file names"),
    ("Remember that the staging database is read-only on Fridays.", "project",
     "the staging database is read-only on"),
    ("I always use tabs for indentation, never spaces.", "feedback",
     "always use tabs for indentation"),
])
def test_offline_extraction_names_records_briefly_and_types_preferences_as_user(said, kind,
                                                                                 name):
    [candidate] = offline_candidates([{"role": "user", "content": said}])
    assert (candidate["type"], candidate["name"]) == (kind, name)
    assert candidate["body"] == said  # the whole sentence is kept, only the name is short
