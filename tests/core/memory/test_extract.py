"""Extraction: the gates, the temporary markers, the two extractors and their window."""

from __future__ import annotations

import json

import pytest

from core.events import Error, MemoryRejected, MemoryWritten
from core.memory.extract import (
    COURSE_MARKERS,
    Candidate,
    Deduper,
    Rejection,
    dialogue_text,
    extract_memories,
    find_json_array,
    gate,
    offline_candidates,
    temporary_marker,
)
from core.providers.base import ProviderError
from tests.core.memory.conftest import FakeProvider, assistant, run, user


def candidate(**overrides: str) -> dict[str, str]:
    return {"name": "tabs", "type": "user", "scope": "persistent",
            "description": "User prefers tabs", "body": "Use tabs for indentation."} | overrides


# -- markers --------------------------------------------------------------------------------


def test_the_course_has_nineteen_markers_and_all_still_reject():
    assert len(COURSE_MARKERS) == 19
    for marker in COURSE_MARKERS:
        assert temporary_marker(f"Use tabs {marker.upper()} please") == marker


@pytest.mark.parametrize("text", [
    "only for THIS   conversation", "temporarily use spaces", "in this run use -v",
    "本次會話使用繁體", "for-now use port 8080", "for_now", "For\nnow", "這一輪先跳過",
    "暫時不要改", "暂时不要改", "今回のみ有効", "for the time being",
])
def test_wider_markers_are_caught(text):
    assert temporary_marker(text) is not None


@pytest.mark.parametrize("text", [
    "for nowhere near the limit", "current turnover is reported weekly",
    "暂时性错误需要重试", "暫時性錯誤需要重試", "this tasks list", "formatting for nowadays",
    "a temporary directory is /tmp",
])
def test_words_that_merely_contain_a_marker_pass(text):
    assert temporary_marker(text) is None


# -- gates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("item", "reason"), [
    ("not a dict", "not a JSON object"),
    (candidate(scope="current_task"), "scope is 'current_task'"),
    ({k: v for k, v in candidate().items() if k != "scope"}, "missing scope"),
    (candidate(type="User"), "unknown type 'User'"),
    (candidate(name="  "), "empty name"),
    (candidate(description=""), "empty description"),
    (candidate(body="\n"), "empty body"),
    (candidate(body=["a"]), "field 'body' is not text"),
    (candidate(name="../../etc/passwd"), "file path"),
    (candidate(body="use spaces for now"), "temporary marker 'for now'"),
])
def test_each_gate_rejects_with_its_reason(item, reason):
    result = gate(item, Deduper())
    assert isinstance(result, Rejection) and reason in result.reason


def test_a_good_candidate_passes_stripped():
    result = gate(candidate(name="  tabs  "), Deduper())
    assert result == Candidate("tabs", "user", "User prefers tabs", "Use tabs for indentation.",
                               "persistent")


@pytest.mark.parametrize("name", ["tabs_preference", "tabs-preference", "Tabs Preference",
                                  "tabs__preference", "TABS - preference"])
def test_dedupe_treats_underscore_dash_and_space_alike(name):
    deduper = Deduper([Candidate("tabs-preference", "user", "other", "other")])
    result = gate(candidate(name=name), deduper)
    assert isinstance(result, Rejection) and "same name" in result.reason


def test_dedupe_also_matches_description_and_body_normalised():
    deduper = Deduper([Candidate("a", "user", "User  PREFERS tabs", "x")])
    assert "same description" in gate(candidate(name="b"), deduper).reason
    deduper = Deduper([Candidate("a", "user", "x", "use_tabs-for indentation.")])
    assert "same body" in gate(candidate(name="b"), deduper).reason


# -- window ---------------------------------------------------------------------------------


def test_the_dialogue_keeps_the_newest_text():
    messages = [user("OLDEST " + "o" * 9_000), assistant("reply"), user("NEWEST words")]
    text = dialogue_text(messages)
    assert text.endswith("user: NEWEST words") and len(text) == 8_000
    assert "OLDEST" not in text


def test_the_dialogue_takes_the_last_twelve_messages_that_carry_text():
    messages = [user(f"m{i}") for i in range(20)]
    messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": "t",
                                                       "name": "bash", "input": {}}]})
    text = dialogue_text(messages)
    assert text.splitlines()[0] == "user: m8" and text.splitlines()[-1] == "user: m19"


def test_find_json_array_skips_brackets_that_are_not_json():
    assert find_json_array('see [note] then [{"a": 1}]') == [{"a": 1}]
    assert find_json_array("no array") is None


# -- offline extractor ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "type_"), [
    ("Remember that the API docs live at https://docs.example.com/v2.", "reference"),
    ("Please remember: staging runs on port 8443.", "project"),
    ("I prefer tabs over spaces.", "user"),
    ("Always run ruff before committing.", "feedback"),
    ("Never push directly to main!", "feedback"),
    ("From now on, answer in English.", "feedback"),
    ("以后都用中文回复。", "feedback"),
    ("记住：部署在周五。", "project"),
    ("我更喜欢简短的回答", "user"),
])
def test_offline_rules(text, type_):
    (found,) = offline_candidates([user(text)])
    assert found["type"] == type_ and found["scope"] == "persistent"
    assert found["name"] and found["description"] and found["body"]


@pytest.mark.parametrize("text", ["Do you remember the port?", "Please fix the bug.",
                                  "以后再说？", "The user prefers nothing here"])
def test_offline_rules_ignore_questions_and_plain_requests(text):
    assert offline_candidates([user(text)]) == []


def test_offline_extractor_reads_only_the_users_words():
    assert offline_candidates([assistant("I prefer to always use spaces.")]) == []


def test_offline_extraction_stores_and_gates(store, recorder):
    messages = [user("I prefer tabs over spaces. For now, always use port 8080."),
                assistant("Noted.")]
    stored = run(extract_memories(store, messages))
    assert [r.name for r in stored] == ["prefers tabs over spaces"]
    (rejected,) = recorder.of(MemoryRejected)
    assert "temporary marker" in rejected.reason
    (written,) = recorder.of(MemoryWritten)
    assert written.record_type == "user" and written.file == stored[0].file
    recorder.events.clear()
    assert run(extract_memories(store, messages)) == []
    reasons = [e.reason for e in recorder.of(MemoryRejected)]
    assert reasons[0].startswith("duplicate of 'prefers tabs over spaces'")


# -- model extractor ------------------------------------------------------------------------


def test_model_extraction_goes_through_the_same_gates(store, recorder):
    answer = json.dumps([
        candidate(),
        candidate(name="tabs_again", description="d2", body="b2", scope="current_task"),
        candidate(name="port", description="dev port", body="Use 8080 this session only"),
        candidate(name="deploys", type="project", description="Deploy on Fridays",
                  body="Deploys happen on Fridays."),
    ])
    provider = FakeProvider(f"Here you go:\n{answer}")
    stored = run(extract_memories(store, [user("I like tabs"), assistant("ok")], provider))
    assert [r.name for r in stored] == ["tabs", "deploys"]
    assert [e.reason.split(" ")[0] for e in recorder.of(MemoryRejected)] == ["scope", "temporary"]
    call = provider.calls[0]
    assert call.purpose == "extract" and call.max_tokens == 1000
    assert "Existing memory catalog:\n(none)" in provider.prompt()
    assert "Dialogue:\nuser: I like tabs\nassistant: ok" in provider.prompt()


def test_the_model_sees_the_existing_catalog(store):
    store.write("tabs", "User prefers tabs", "user", "b")
    provider = FakeProvider("[]")
    run(extract_memories(store, [user("hi")], provider))
    assert "Existing memory catalog:\n- tabs: User prefers tabs" in provider.prompt()


@pytest.mark.parametrize("answer", [ProviderError("down"), "I could not find anything."])
def test_a_failed_extraction_stores_nothing_and_says_so(store, recorder, answer):
    assert run(extract_memories(store, [user("remember x")], FakeProvider(answer))) == []
    (error,) = recorder.of(Error)
    assert error.kind == "memory" and "extraction skipped" in error.message
    assert store.records() == []


def test_an_empty_dialogue_makes_no_call(store):
    provider = FakeProvider("[]")
    assert run(extract_memories(store, [assistant("   ")], provider)) == []
    assert provider.calls == []
