"""Hostile OpenAI-shaped traffic gets what the Messages side gets.

A malformed event from the upstream, a body that is not JSON, an upstream that goes silent
or cuts its stream, a 100 MB stream: the proxy stays up, the client gets what the upstream
sent (or an OpenAI-shaped gateway error), the watch says what happened, and the recording
stays one valid JSON object per line.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from core.events import WatchRequest, WatchResponse
from core.sources.watch.exchange import Exchange, read_exchange
from tests.support.openai_wire import message_item, responses_usage, sse
from tests.support.watching import RunningWatch

KEY = "sk-test-secret-openai"


@pytest.fixture
def watch(openai_watch: RunningWatch) -> RunningWatch:
    """Here the watch stands in front of the OpenAI server (conftest)."""
    return openai_watch


def lines(watch: RunningWatch) -> list[dict[str, Any]]:
    assert watch.source is not None and watch.source.recording is not None
    path = watch.source.recording.path
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def raw_post(url: str, body: bytes) -> tuple[int, bytes]:
    ask = urllib.request.Request(url, data=body, method="POST",
                                 headers={"content-type": "application/json",
                                          "authorization": f"Bearer {KEY}"})
    try:
        with urllib.request.urlopen(ask, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def stream_text(sdk: openai.OpenAI) -> str:
    with sdk.responses.stream(model="gpt-5", input="hi") as stream:
        return stream.get_final_response().output_text


def test_a_malformed_event_passes_through_and_the_rest_is_read(watch, openai_server):
    openai_server.respond([message_item("survives")], malformed_at=4,
                          usage=responses_usage(900, 5))
    with urllib.request.urlopen(urllib.request.Request(
            f"{watch.url}/v1/responses", method="POST",
            data=json.dumps({"model": "gpt-5", "input": "hi", "stream": True}).encode(),
            headers={"content-type": "application/json"}), timeout=10) as answer:
        body = answer.read()
    assert b"data: {not json" in body  # the client got it as sent
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    shown = watch.of(WatchResponse)[0]
    assert (shown.stop_reason, shown.context_tokens, shown.error) == ("completed", 900, None)
    assert lines(watch)[0]["response"]["output"][0]["content"][0]["text"] == "survives"


def test_a_body_that_is_not_json_is_forwarded_and_answered_not_recorded(watch, openai_server):
    status, body = raw_post(f"{watch.url}/v1/chat/completions", b"{this is not json")
    assert status == 400 and json.loads(body)["error"]["message"].startswith("We could not")
    assert openai_server.requests[0].raw == b"{this is not json"
    openai_server.chat("next one is fine")
    sdk = openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY)
    assert sdk.chat.completions.create(model="m", messages=[  # type: ignore[arg-type]
        {"role": "user", "content": "hi"}]).choices[0].message.content == "next one is fine"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    first = watch.of(WatchRequest)[0]
    assert (first.api, first.conversation, first.chars) == ("chat.completions", None, 0)
    assert [line["api"] for line in lines(watch)] == ["chat.completions"]  # only the JSON one


def test_a_silent_upstream_is_an_openai_shaped_504(tmp_path, openai_server):
    openai_server.respond([message_item("late")], delay=1.5)
    with RunningWatch(openai_server.origin, tmp_path, read_timeout=0.3) as watch:
        sdk = openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            sdk.responses.create(model="gpt-5", input="hi")
        assert caught.value.status_code == 504
        assert "timed out" in caught.value.message
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        assert "timed out" in watch.of(WatchResponse)[0].error
        [line] = lines(watch)
        assert line["status"] == 504 and "timed out" in line["response"]["error"]["message"]


def test_an_upstream_that_goes_silent_mid_stream_is_cut_for_the_client(
        tmp_path, openai_server):
    openai_server.respond([message_item("a quick answer in many deltas")], chunk=2)
    openai_server.respond([message_item("z" * 40)], chunk=2, event_delay=1.0)
    with RunningWatch(openai_server.origin, tmp_path, read_timeout=0.4) as watch:
        sdk = openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY, max_retries=0)
        assert stream_text(sdk) == "a quick answer in many deltas"
        with pytest.raises(openai.APIConnectionError):
            stream_text(sdk)
        sdk.close()
        watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
        assert "went silent mid-body" in watch.of(WatchResponse)[1].error
        assert len(lines(watch)) == 2


def test_a_stream_the_upstream_cuts_is_cut_for_the_client_and_recorded(watch, openai_server,
                                                                       caplog):
    openai_server.respond([message_item("a reply that never ends")], chunk=3, cut_after=6)
    openai_server.respond([message_item("the proxy is still up")])
    sdk = openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY, max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        stream_text(sdk)
    assert sdk.responses.create(model="gpt-5", input="hi").output_text == \
        "the proxy is still up"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    cut = watch.of(WatchResponse)[0]
    assert cut.status == 200 and "upstream stream broke mid-body" in cut.error
    assert cut.stop_reason == "in_progress" and cut.usage is None
    recorded = lines(watch)
    assert recorded[0]["response"]["status"] == "in_progress"
    assert recorded[0]["response"]["output"][0]["content"][0]["text"] == "a repl"  # 2 deltas
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_100_mb_stream_costs_the_watch_its_budget_and_keeps_the_exact_usage():
    """The final event repeats the whole 100 MB output, so it is cut; its usage is not."""
    usage = responses_usage(150_000, 25_000_000, cached=120_000, reasoning=10)
    x = Exchange(id=1, method="POST", path="/v1/responses", body=b"{}", started=0.0,
                 status=200, content_type="text/event-stream")
    delta = sse({"type": "response.output_text.delta", "output_index": 0,
                 "delta": "x" * 4096})
    x.keep(sse({"type": "response.created", "response": {
        "id": "resp_1", "status": "in_progress", "output": [], "usage": None}}))
    for _ in range((100 << 20) // len(delta)):
        x.keep(delta)
    text = "x" * (100 << 20)
    x.keep(sse({"type": "response.completed", "response": {
        "id": "resp_1", "status": "completed",
        "output": [message_item(text)], "usage": usage}}))
    del text
    assert x.kept + len(x.tail) < 17 << 20 + 2 * (256 << 10)
    final, event, notes = read_exchange(x)
    assert event.api_usage == usage
    assert event.usage is not None and event.usage["input_tokens"] == 30_000
    assert event.context_tokens == 150_000
    assert notes and notes[0].startswith("response truncated")
    assert final is not None and final["id"] == "resp_1"
