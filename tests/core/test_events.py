import json

from core.compact.managers import Manager, joined
from core.events import (
    EVENT_TYPES,
    Emitter,
    MemoryWritten,
    ModelRequest,
    ModelResponse,
    Recorder,
    ReplayStep,
    RunStart,
    Stage,
    WatchRequest,
    WatchResponse,
    dumps_event,
    event_from_json,
)


def test_every_contract_event_type_exists():
    required = {"run_start", "turn_start", "model_request", "model_response", "tool_call",
                "tool_result", "stage", "memory_selected", "memory_written", "memory_rejected",
                "memory_consolidated", "memory_consolidation_failed", "index_rebuilt", "error",
                "turn_end", "run_end"}
    assert required <= set(EVENT_TYPES)


def test_emitter_stamps_time_and_events_round_trip_through_json():
    ticks = iter([10.0, 12.5])
    rec = Recorder()
    emit = Emitter([rec], clock=lambda: next(ticks))
    emit(Stage(stage="snip_compact", before_chars=10, after_chars=5, before_messages=60,
               after_messages=50, files=(".transcripts/t.jsonl",)))
    data = json.loads(dumps_event(rec.events[0]))
    assert data["type"] == "stage" and data["t"] == 2.5
    assert data["files"] == [".transcripts/t.jsonl"]
    again = event_from_json(data)
    assert again.stage == "snip_compact" and again.t == 2.5


def test_memory_written_carries_the_record_type():
    data = MemoryWritten(file="tabs.md", name="tabs", record_type="user").to_json()
    assert data["type"] == "memory_written" and data["record_type"] == "user"


def test_a_model_response_states_the_context_tokens_its_usage_gives():
    usage = {"input_tokens": 3_100, "output_tokens": 90, "cache_read_input_tokens": 8_000,
             "iterations": [
                 {"type": "message", "input_tokens": 1_000, "cache_read_input_tokens": 4_000},
                 {"type": "message", "input_tokens": 2_100, "cache_read_input_tokens": 4_000}]}
    event = ModelResponse(purpose="main", stop_reason="end_turn", usage=usage)
    assert event.context_tokens == 6_100  # the answering step's window, not the loop's sum
    data = json.loads(dumps_event(event))
    assert data["context_tokens"] == 6_100 and data["usage"] == usage
    assert event_from_json(data) == event
    assert ModelResponse(purpose="main", stop_reason=None).to_json()["context_tokens"] is None


def test_a_log_written_before_context_tokens_reads_back_with_them():
    line = {"type": "model_response", "t": 1.0, "purpose": "original", "stop_reason": None,
            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 6_120,
                      "cache_read_input_tokens": 14_350}}
    assert event_from_json(line).context_tokens == 20_474


def test_a_watched_response_states_its_context_tokens_too():
    usage = {"input_tokens": 1_200, "output_tokens": 40, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 900}
    assert WatchResponse(id=1, status=200, usage=usage).context_tokens == 2_100
    assert WatchResponse(id=2, status=502, error="upstream unreachable").context_tokens is None


def test_the_breakdown_travels_on_request_events_and_old_logs_still_read() -> None:
    parts = {"system": 751, "tools": 1_307, "text": 259, "structure": 57}
    request = ModelRequest(purpose="main", chars=316, est_tokens=80, messages=2,
                           breakdown=parts)
    step = ReplayStep(index=1, total=2, original_chars=10, original_messages=1,
                      categories={"text": 8}, ctxlab_chars=10, ctxlab_messages=1,
                      breakdown={"text": 8, "structure": 2})
    watched = WatchRequest(id=1, method="POST", path="/v1/messages", time="t",
                           breakdown={"system": 5, "text": 8, "structure": 2})
    for event in (request, step, watched):
        data = json.loads(dumps_event(event))
        assert data["breakdown"] == event.breakdown
        assert event_from_json(data) == event
    # lines written before the field existed: no breakdown, the older categories as they were
    old = [{"type": "model_request", "t": 0.1, "purpose": "main", "chars": 94,
            "est_tokens": 295, "messages": 1, "system_chars": 1088, "counted_tokens": None,
            "cache_read_est": 0, "cache_write_est": 295},
           {"type": "replay_step", "t": 0.2, "index": 1, "total": 6, "original_chars": 500,
            "original_messages": 3, "original_tokens": None,
            "categories": {"text": 100, "tool_use": 50, "tool_result": 300, "thinking": 0,
                           "image": 0}, "ctxlab_chars": 480, "ctxlab_messages": 3,
            "timestamp": None},
           {"type": "watch_request", "t": 0.3, "id": 1, "method": "POST",
            "path": "/v1/messages", "time": "2025-01-01T00:00:00.000+00:00",
            "categories": {"system": 9, "messages": 20}}]
    for line in old:
        event = event_from_json(line)
        assert event.breakdown == {}
        assert getattr(event, "categories", None) == line.get("categories")


def stage_line(stage: str, by: str) -> dict:
    return {"type": "stage", "t": 1.0, "stage": stage, "before_chars": 9, "after_chars": 3,
            "before_messages": 4, "after_messages": 2, "by": by}


def test_a_log_written_before_the_managers_vocabulary_reads_in_todays_names():
    """``s08`` was the pipeline in run_start; ``api`` named both of the API's managers and
    ``ctxlab`` also truncation and the offline editing in ``stage.by``."""
    start = {"type": "run_start", "t": 0.0, "provider": "anthropic", "workspace": "/w",
             "context_manager": "s08+api-compact"}
    assert event_from_json(start).context_manager == "ctxlab+api-compact"
    assert event_from_json({**start, "context_manager": "api-clear-tool-uses"}) \
        .context_manager == "api-edit"
    assert [event_from_json(stage_line(stage, by)).by for stage, by in (
        ("api_compaction", "api"), ("api_clear_tool_uses", "api"),
        ("api_clear_thinking", "api"), ("api_clear_whatever", "api"),
        ("sliding_window", "ctxlab"), ("api_clear_tool_uses", "ctxlab"),
        ("micro_compact", "ctxlab"), ("manual_compact", "claude-code"),
        ("client_summary", "client"), ("future_stage", "someone-new"),
    )] == ["api-compact", "api-edit", "api-edit", "api-edit", "truncate", "api-edit",
           "ctxlab", "claude-code", "client", "someone-new"]


def test_todays_names_go_out_as_plain_strings_and_read_back_unchanged():
    start = RunStart(provider="scripted", workspace="/w",
                     context_manager=joined([Manager.TRUNCATE, Manager.API_EDIT]))
    stage = Stage(stage="api_compaction", by=Manager.API_COMPACT, before_chars=9,
                  after_chars=3, before_messages=4, after_messages=1)
    for event in (start, stage):
        data = json.loads(dumps_event(event))
        assert event_from_json(data).to_json() == data
        assert all(type(v) is str for v in event.to_json().values() if isinstance(v, str))
    assert start.to_json()["context_manager"] == "truncate+api-edit"
    assert stage.to_json()["by"] == "api-compact"
