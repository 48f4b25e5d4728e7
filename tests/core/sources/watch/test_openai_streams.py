"""OpenAI answers read back after the fact: Responses and Chat Completions streams, usage.

The streams are the scripted server's wire format (event for event as the API sends them);
what comes out must be the final object the API (or the SDK's accumulator) would give, with
the usage in the project's terms: OpenAI counts cached input *inside* ``input_tokens``.
"""

from __future__ import annotations

import gzip
import json
import sys

import pytest
import zstandard

from core.events import WatchResponse
from core.sources.watch.exchange import Exchange, read_exchange
from core.sources.watch.openai_stream import (
    assemble_chat,
    assemble_responses,
    final_facts,
    is_whole,
    messages_usage,
    read_openai_response,
    usage_in_tail,
)
from core.sources.watch.sse import UnreadableBody, decoded, iter_sse
from tests.support.openai_wire import (
    ChatReply,
    ResponsesReply,
    chat_chunks,
    chat_json,
    chat_usage,
    custom_tool_call_item,
    function_call_item,
    message_item,
    reasoning_item,
    response_events,
    response_json,
    responses_usage,
    tool_call,
)

SSE = "text/event-stream; charset=utf-8"
OUTPUT = [reasoning_item("Think first.", encrypted="gAAAA" + "x" * 300),
          message_item("Counting the lines now, in several deltas."),
          function_call_item("exec_command", {"cmd": "wc -l notes.txt"}, "call_wc"),
          custom_tool_call_item("apply_patch", "*** Begin Patch\n*** End Patch\n", "call_p")]


def stream(reply: ResponsesReply) -> bytes:
    return b"".join(response_events(reply, "resp_1", "gpt-test"))


def test_a_responses_stream_gives_the_completed_response_with_its_exact_usage():
    usage = responses_usage(30_000, 900, cached=24_000, reasoning=700)
    reply = ResponsesReply(output=OUTPUT, usage=usage, chunk=5)
    final, error, cut = read_openai_response(stream(reply), SSE, None, "responses")
    assert error is None and not cut
    assert final == response_json(reply, "resp_1", "gpt-test") | {
        "created_at": final["created_at"]}
    stop, mapped, sent = final_facts("responses", final)
    assert stop == "completed" and sent == usage
    assert mapped == {"input_tokens": 6_000, "cache_read_input_tokens": 24_000,
                      "cache_creation_input_tokens": 0, "output_tokens": 900,
                      "reasoning_output_tokens": 700, "total_tokens": 30_900}
    event = WatchResponse(id=1, status=200, usage=mapped)
    assert event.context_tokens == 30_000  # the whole input, cached or not


def test_an_empty_final_output_is_filled_from_the_items_done():
    events = [json.loads(e.data) for e in iter_sse(stream(ResponsesReply(output=OUTPUT))
                                                   .decode())]
    events[-1]["response"]["output"] = []  # the API may leave it empty
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    final, _ = assemble_responses(iter_sse(body))
    assert final is not None
    assert [i["type"] for i in final["output"]] == [
        "reasoning", "message", "function_call", "custom_tool_call"]
    assert final["output"][2]["arguments"] == json.dumps({"cmd": "wc -l notes.txt"})


def test_a_stream_cut_mid_item_keeps_what_had_arrived_and_says_it_is_unfinished():
    reply = ResponsesReply(output=[message_item("Hello there, a longer answer.")], chunk=4)
    events = response_events(reply, "resp_1", "gpt-test")
    final, error = assemble_responses(iter_sse(b"".join(events[:7]).decode()))
    assert error is None and final is not None
    assert final["status"] == "in_progress" and not is_whole("responses", final)
    assert final["output"][0]["content"][0]["text"] == "Hello there,"  # three deltas
    assert final_facts("responses", final)[1] is None  # no usage arrived


def test_a_failed_response_and_an_error_event_are_the_errors_said():
    failed = {"code": "server_error", "message": "The model crashed."}
    raw = stream(ResponsesReply(output=[message_item("partial")], failed=failed))
    final, error, _ = read_openai_response(raw, SSE, None, "responses")
    assert final is not None and final["status"] == "failed"
    assert error == {"error": failed}
    said = b'event: error\ndata: {"type": "error", "code": "rate_limit_exceeded", ' \
        b'"message": "Slow down."}\n\n'
    assert read_openai_response(said, SSE, None, "responses")[1]["message"] == "Slow down."


def test_a_malformed_event_is_skipped_and_the_rest_read():
    reply = ResponsesReply(output=[message_item("fine")], malformed_at=3)
    final, error, _ = read_openai_response(stream(reply), SSE, None, "responses")
    assert final is not None and final["status"] == "completed" and error is None


def test_an_incomplete_response_says_why_it_stopped():
    reply = ResponsesReply(output=[message_item("cut")], status="incomplete")
    final, _, _ = read_openai_response(stream(reply), SSE, None, "responses")
    assert final_facts("responses", final)[0] == "incomplete: max_output_tokens"
    assert is_whole("responses", final)


@pytest.mark.parametrize("include_usage", [True, False])
def test_chat_chunks_give_one_chat_completion(include_usage):
    reply = ChatReply("Three lines, as counted.", chunk=3,
                      tool_calls=[tool_call("count", {"path": "notes.txt"}, "call_1"),
                                  tool_call("read", {"path": "a"}, "call_2")],
                      usage=chat_usage(2_000, 50, cached=1_500, reasoning=20))
    body = b"".join(chat_chunks(reply, "chatcmpl-1", "gpt-test",
                                include_usage=include_usage))
    final, error, _ = read_openai_response(body, SSE, None, "chat.completions")
    whole = chat_json(reply, "chatcmpl-1", "gpt-test")
    assert error is None and final is not None
    assert final["choices"][0]["message"]["content"] == "Three lines, as counted."
    assert final["choices"][0]["message"]["tool_calls"] == \
        whole["choices"][0]["message"]["tool_calls"]
    assert final["choices"][0]["finish_reason"] == "tool_calls"
    stop, mapped, sent = final_facts("chat.completions", final)
    assert stop == "tool_calls" and is_whole("chat.completions", final)
    if include_usage:
        assert sent == reply.usage
        assert mapped is not None and (mapped["input_tokens"], mapped["cache_read_input_tokens"],
                                       mapped["output_tokens"]) == (500, 1_500, 50)
    else:
        assert "usage" not in final and mapped is None


def test_a_chat_stream_cut_before_its_finish_is_not_whole():
    reply = ChatReply("A reply long enough to be cut.", chunk=4)
    chunks = chat_chunks(reply, "chatcmpl-1", "gpt-test", include_usage=True)
    final, _ = assemble_chat(iter_sse(b"".join(chunks[:3]).decode()))
    assert final is not None and not is_whole("chat.completions", final)
    assert assemble_chat(iter_sse("data: [DONE]\n\n")) == (None, None)


def test_a_json_answer_and_an_error_body_are_read_as_sent():
    reply = ResponsesReply(output=[message_item("hi")])
    body = response_json(reply, "resp_9", "gpt-test")
    assert read_openai_response(json.dumps(body).encode(), "application/json", None,
                                "responses")[:2] == (body, None)
    error = {"error": {"message": "bad key", "type": "invalid_request_error",
                       "param": None, "code": "invalid_api_key"}}
    assert read_openai_response(json.dumps(error).encode(), "application/json", None,
                                "responses")[1] == error
    assert final_facts("responses", error) == (None, None, None)
    assert read_openai_response(b"<html>oops</html>", "text/html", None,
                                "responses")[:2] == (None, None)


def test_usage_that_says_nothing_usable_is_none():
    assert messages_usage(None) is None
    assert messages_usage({"output_tokens": 3}) is None
    assert messages_usage({"input_tokens": -5, "output_tokens": 3}) is None
    odd = messages_usage({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 50},
                          "output_tokens": "many"})
    assert odd is not None and odd["input_tokens"] == 0 and odd["output_tokens"] == 0


def test_compressed_answers_are_read_and_an_unreadable_one_is_said():
    raw = stream(ResponsesReply(output=[message_item("compressed")]))
    assert read_openai_response(gzip.compress(raw), SSE, "gzip", "responses")[0]["status"] \
        == "completed"
    packed = zstandard.ZstdCompressor().compress(raw)
    assert read_openai_response(packed, SSE, "zstd", "responses")[0]["status"] == "completed"
    with pytest.raises(UnreadableBody, match="snappy"):
        read_openai_response(raw, SSE, "snappy", "responses")


def _events(usage: dict) -> list[bytes]:
    return list(response_events(ResponsesReply([message_item("in frames")], usage=usage),
                                "resp_1", "gpt-test"))


@pytest.mark.parametrize("encoding", ["zstd", "gzip"])
def test_a_body_of_several_frames_or_members_is_read_whole(encoding):
    """A server that compresses per flush sends one zstd frame (or gzip member) per event;
    before, only the first was read: the usage, in the last event, was never seen."""
    usage = responses_usage(5_000, 70, cached=4_000)
    pack = zstandard.ZstdCompressor().compress if encoding == "zstd" else gzip.compress
    packed = b"".join(pack(event) for event in _events(usage))
    final, error, cut = read_openai_response(packed, SSE, encoding, "responses")
    assert error is None and not cut
    assert final is not None and final["status"] == "completed" and final["usage"] == usage
    assert final["output"][0]["content"][0]["text"] == "in frames"
    body, cut = decoded(packed, encoding, limit=len(b"".join(_events(usage))) - 1)
    assert cut and len(body) == len(b"".join(_events(usage))) - 1


def test_a_body_of_many_empty_members_is_read_to_its_last_one():
    """Thousands of empty gzip members (zeros between some, which pad), then the stream:
    every member is read, the last one too."""
    usage = responses_usage(5_000, 70, cached=4_000)
    empty = gzip.compress(b"", mtime=0)
    packed = (empty + b"\0\0") * 10_000 + empty * 10_000 + gzip.compress(
        b"".join(_events(usage)))
    final, error, cut = read_openai_response(packed, SSE, "gzip", "responses")
    assert error is None and not cut
    assert final is not None and final["usage"] == usage


@pytest.mark.parametrize(("encoding", "body", "said"), [
    ("gzip", b"\x1f\x8b\x08\x00" + b"not gzip at all" * 4, "not valid gzip"),
    ("zstd", b"(\xb5/\xfd" + b"not zstd at all" * 4, "not valid zstd"),
    ("snappy", b"anything", "does not know"),
])
def test_a_body_the_watch_cannot_decode_is_said_not_taken_for_empty(encoding, body, said):
    """Before, a corrupt gzip or zstd body became ``response: null`` with no note."""
    x = Exchange(id=1, method="POST", path="/v1/responses", body=b"{}", started=0.0,
                 status=200, content_type=SSE, content_encoding=encoding)
    x.keep(body)
    final, event, notes = read_exchange(x)
    assert final is None and len(notes) == 1
    assert notes[0].startswith("response not read: ") and said in notes[0]
    assert event.error is not None and said in event.error


def test_a_brotli_body_without_the_brotli_package_is_said(monkeypatch):
    """Before, ``br`` counted as readable whether or not ``brotli`` was installed."""
    monkeypatch.setitem(sys.modules, "brotli", None)  # as if it were not installed
    with pytest.raises(UnreadableBody, match="brotli package is not installed"):
        decoded(b"\x8b\x00\x80", "br")
    assert decoded(b"", "br") == (b"", False)  # no bytes are no bytes in any encoding


def _body(events: list[dict]) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def test_a_chat_refusal_is_kept():
    """Before, ``delta.refusal`` was dropped: a refused answer read as an empty one."""
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-test", "choices": [{"index": 0, "delta": delta,
                                                  "finish_reason": finish}]}
    body = _body([chunk({"role": "assistant", "content": None, "refusal": ""}),
                  chunk({"refusal": "I can't help "}), chunk({"refusal": "with that."}),
                  chunk({}, "stop")]) + "data: [DONE]\n\n"
    final, _ = assemble_chat(iter_sse(body))
    assert final is not None
    assert final["choices"][0]["message"] == {"role": "assistant", "content": None,
                                              "refusal": "I can't help with that."}


def test_a_cut_response_keeps_its_refusal_and_each_summary_part_apart():
    """Before, a cut stream dropped ``response.refusal.delta`` and ran the parts of a
    reasoning summary together with no separator."""
    base = {"id": "resp_1", "status": "in_progress", "output": [], "usage": None}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    events = [{"type": "response.created", "response": base},
              {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
              *({"type": "response.reasoning_summary_text.delta", "output_index": 0,
                 "summary_index": n, "delta": piece}
                for n, piece in [(0, "**Plan**"), (0, " first."), (1, "**Then**"), (1, " act.")]),
              {"type": "response.output_item.added", "output_index": 1, "item": message},
              {"type": "response.output_text.delta", "output_index": 1, "content_index": 0,
               "delta": "Partly, "},
              {"type": "response.refusal.delta", "output_index": 1, "content_index": 1,
               "delta": "but not "},
              {"type": "response.refusal.delta", "output_index": 1, "content_index": 1,
               "delta": "that."}]
    final, _ = assemble_responses(iter_sse(_body(events)))
    assert final is not None
    assert final["output"][0]["summary"] == [
        {"type": "summary_text", "text": "**Plan** first."},
        {"type": "summary_text", "text": "**Then** act."}]
    assert final["output"][1]["content"] == [
        {"type": "output_text", "text": "Partly, "},
        {"type": "refusal", "refusal": "but not that."}]


def test_the_usage_in_a_tail_is_an_object_that_says_the_input():
    """Before, a ``"usage": null`` took the next ``{`` of the stream for its usage: a whole
    later event."""
    usage = responses_usage(150_000, 2_000, cached=120_000)
    null_then_delta = (
        b'data: {"type":"response.in_progress","response":{"id":"r","usage":null}}\n\n'
        b'data: {"type":"response.output_text.delta","output_index":0,"delta":"x"}\n\n')
    assert usage_in_tail(null_then_delta) is None
    assert usage_in_tail(b'"usage": {"note": "no counts"}') is None
    final = json.dumps({"type": "response.completed", "response": {"usage": usage}},
                       indent=1).encode()  # a space after the colon, a newline after it
    assert usage_in_tail(null_then_delta + b"data: " + final + b"\n\n") == usage
    assert usage_in_tail(b"...cut" + final + null_then_delta) == usage


def test_an_azure_stream_takes_its_id_and_model_from_the_chunks_after_its_filter_chunk():
    """Azure opens a chat stream with its content filter's results: empty id and model, no
    choices. Before, the completion kept that empty head."""
    body = b"".join(chat_chunks(ChatReply("Filtered, then fine.", chunk=5), "chatcmpl-9",
                                "gpt-4o-2024-11-20", include_usage=True)).decode()
    opening = {"id": "", "object": "", "created": 0, "model": "", "choices": [],
               "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
    final, _ = assemble_chat(iter_sse(f"data: {json.dumps(opening)}\n\n" + body))
    assert final is not None
    assert (final["id"], final["model"]) == ("chatcmpl-9", "gpt-4o-2024-11-20")
    assert isinstance(final["created"], int) and final["created"] > 0
    assert final["choices"][0]["message"]["content"] == "Filtered, then fine."
