"""One request measured: categories that add up, the purpose guess, the assembled stream."""

from __future__ import annotations

import anthropic

from core.compact.breakdown import MESSAGE_CATEGORIES
from core.measure import json_chars
from core.sources.watch.analysis import analyse_request, guess_purpose, response_facts
from core.sources.watch.sse import assemble_stream, decode_body, parse_sse, response_object

BODY = {
    "model": "claude-test", "max_tokens": 100,
    "system": [{"type": "text", "text": "You are an agent.",
                "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py"}]},
    ],
}


def test_the_breakdown_is_the_one_vocabulary_and_adds_up_to_the_measure():
    facts = analyse_request("/v1/messages", BODY)
    parts = facts.breakdown
    assert sum(parts[k] for k in MESSAGE_CATEGORIES) == facts.chars
    assert set(parts) == {"system", "tools", *MESSAGE_CATEGORIES}
    assert parts["system"] == json_chars(BODY["system"])
    assert parts["tools"] == json_chars(BODY["tools"])
    assert parts["thinking"] == json_chars(BODY["messages"][1]["content"][0])
    assert parts["images"] == json_chars(BODY["messages"][0]["content"][1])
    assert parts["tool_results"] == json_chars("a.py\nb.py")


def test_a_body_with_no_message_objects_still_adds_up():
    body = {**BODY, "messages": ["stray", 42, *BODY["messages"]]}
    facts = analyse_request("/v1/messages", body)
    assert sum(facts.breakdown[k] for k in MESSAGE_CATEGORIES) == facts.chars == \
        json_chars(body["messages"])


def test_the_older_categories_are_derived_and_still_add_up_to_the_measure():
    facts = analyse_request("/v1/messages", BODY)
    assert facts.chars == json_chars(BODY["messages"])
    cats = facts.categories
    assert sum(cats[k] for k in ("messages", "tool calls", "tool results", "thinking",
                                 "images")) == facts.chars
    assert cats["system"] == json_chars(BODY["system"])
    assert cats["tool definitions"] == json_chars(BODY["tools"])
    assert all(cats[k] > 0 for k in cats)
    assert (facts.model, facts.messages, facts.purpose) == ("claude-test", 3, "main")
    assert facts.est_tokens > 0


def test_purpose_guesses():
    one = [{"role": "user", "content": "hi"}]
    assert guess_purpose("/v1/messages", {"max_tokens": 1, "messages": one}) == "quota"
    assert guess_purpose("/v1/messages", {"messages": one, "tools": [{}]}) == "main"
    assert guess_purpose("/v1/messages", {
        "system": "Summarize this coding conversation in under 50 characters.",
        "messages": one}) == "title"
    assert guess_purpose("/v1/messages", {"messages": [
        {"role": "user", "content": "Summarize this conversation for continuity."}]}
    ) == "summary"
    assert guess_purpose("/v1/messages", {"messages": one}) == "side"
    assert guess_purpose("/v1/messages", {"messages": one * 3}) == "main"
    assert guess_purpose("/v1/messages/count_tokens", {"messages": one}) == "count_tokens"
    assert guess_purpose("/v1/models", {}) == "other"


def test_a_system_block_whose_text_is_no_string_is_measured_not_a_crash():
    """Bodies come from any client: ``"text": 42`` in a system block used to fail the join."""
    body = {**BODY, "system": [{"type": "text", "text": 42}, {"type": "text", "text": "ok"}]}
    assert guess_purpose("/v1/messages", body) == "main"
    analyse_request("/v1/messages", body)


def test_a_streamed_message_is_assembled_as_the_sdk_does(messages_server):
    """The server's real SSE sequence, assembled here and by the SDK's own stream."""
    messages_server.reply_tool_use("bash", {"command": "ls -la", "n": [1, 2]}, text="Let me see.",
                                   id="toolu_1")
    client = anthropic.Anthropic(base_url=messages_server.url, api_key="k")
    with client.messages.with_streaming_response.create(
            model="m", max_tokens=9, messages=[{"role": "user", "content": "x"}],
            stream=True) as response:
        raw = b"".join(response.iter_bytes())
    messages_server.reply_tool_use("bash", {"command": "ls -la", "n": [1, 2]}, text="Let me see.",
                                   id="toolu_1")
    with client.messages.stream(model="m", max_tokens=9,
                                messages=[{"role": "user", "content": "x"}]) as stream:
        sdk = stream.get_final_message().to_dict(exclude_none=True)
    message, error = assemble_stream(parse_sse(raw.decode()))
    assert error is None
    message = {k: v for k, v in message.items() if v is not None}
    sdk["id"] = message["id"]
    assert message == sdk
    assert response_facts(message) == ("tool_use", {"input_tokens": 25, "output_tokens": 12})


def test_error_bodies_and_encodings():
    import gzip
    import json

    body = json.dumps({"type": "error", "error": {"type": "overloaded_error",
                                                  "message": "Overloaded"}}).encode()
    message, error = response_object(gzip.compress(body), "application/json", "gzip")
    assert error == message and error["error"]["type"] == "overloaded_error"
    assert response_facts(message) == (None, None)
    assert decode_body(b"abc", "zstd") is None
    cut, _ = assemble_stream(parse_sse("event: ping\ndata: {\"type\": \"ping\"}\n\n"))
    assert cut is None


def test_an_api_error_is_reported_before_what_happened_on_the_wire():
    from core.sources.watch.exchange import Exchange, response_event

    sse = (b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
           b'"message": "Overloaded"}}\n\n')
    x = Exchange(id=1, method="POST", path="/v1/messages", body=b"{}", started=0.0,
                 status=200, content_type="text/event-stream", chunks=[sse],
                 error="client disconnected; upstream call closed")
    assert response_event(x)[1].error == ("overloaded_error: Overloaded; "
                                          "client disconnected; upstream call closed")
