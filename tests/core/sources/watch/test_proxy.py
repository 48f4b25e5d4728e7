"""The official SDK → ``ctxlab watch`` → the scripted Messages server, over real HTTP.

What a client gets through the proxy must be what it would get directly, byte for byte,
streamed as it arrives; errors come back as they came; watching never costs the client.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import time
from pathlib import Path

import anthropic
import pytest

from core.events import WatchRequest, WatchResponse
from tests.support.messages_server import MessagesServer, unused_port_url
from tests.support.watching import RunningWatch

ASK = {"model": "claude-test", "max_tokens": 64,
       "messages": [{"role": "user", "content": "Say hello."}]}


def sync_client(url: str, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-test-secret", **options)


def raw_body(client: anthropic.Anthropic, **params) -> tuple[int, str, bytes]:
    with client.messages.with_streaming_response.create(**ASK, **params) as response:
        body = b"".join(response.iter_bytes())
        return response.status_code, response.headers.get("content-type", ""), body


def script(server: MessagesServer) -> None:
    server.reply_text("Hello! Nice to meet you, this is a reply in several chunks.")


@pytest.mark.parametrize("stream", [False, True])
def test_responses_are_byte_identical_to_a_direct_call(stream, watch, messages_server):
    script(messages_server)
    proxied = raw_body(sync_client(watch.url), stream=stream)
    with MessagesServer() as direct_server:  # a fresh server: the same ids, the same bytes
        script(direct_server)
        direct = raw_body(sync_client(direct_server.url), stream=stream)
    assert proxied == direct
    assert proxied[0] == 200 and proxied[2]


def test_sync_and_async_sdk_streaming_and_not(watch, messages_server):
    for text in ("one", "two", "three", "four"):
        messages_server.reply_text(text)
    client = sync_client(watch.url)
    assert client.messages.create(**ASK).content[0].text == "one"
    with client.messages.stream(**ASK) as stream:
        assert stream.get_final_text() == "two"

    async def go() -> tuple[str, str]:
        # closed inside its own loop: a client collected later would close on a dead loop
        async with anthropic.AsyncAnthropic(base_url=watch.url, api_key="sk-test-secret"
                                            ) as aclient:
            plain = await aclient.messages.create(**ASK)
            async with aclient.messages.stream(**ASK) as stream:
                streamed = await stream.get_final_text()
        return plain.content[0].text, streamed

    assert asyncio.run(go()) == ("three", "four")
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 4)
    assert [e.stream for e in watch.of(WatchRequest)] == [False, True, False, True]
    assert all(e.usage == {"input_tokens": 25, "output_tokens": 12}
               for e in watch.of(WatchResponse))


def test_the_stream_arrives_event_by_event_not_buffered(watch, messages_server):
    messages_server.reply_text("x" * 40, chunk=4, event_delay=0.1)  # ~14 events, 1.4 s
    client = sync_client(watch.url)
    start = time.perf_counter()
    with client.messages.with_streaming_response.create(**ASK, stream=True) as response:
        chunks = response.iter_bytes()
        next(chunks)
        first = time.perf_counter() - start
        for _ in chunks:
            pass
    total = time.perf_counter() - start
    assert first < total / 3, (first, total)


def test_count_tokens_and_an_unknown_path_pass_through(watch, messages_server):
    messages_server.count(1234)
    client = sync_client(watch.url)
    counted = client.messages.count_tokens(model="claude-test", messages=ASK["messages"])
    assert counted.input_tokens == 1234
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.post("/v1/unknown/thing?x=1", body={"a": 1}, cast_to=object)
    assert "no route /v1/unknown/thing" in caught.value.message
    assert [r.path for r in messages_server.requests] == [
        "/v1/messages/count_tokens", "/v1/unknown/thing"]
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    requests = watch.of(WatchRequest)
    assert [e.purpose for e in requests] == ["count_tokens", "other"]
    assert sorted((e.id, e.status) for e in watch.of(WatchResponse)) == [(1, 200), (2, 404)]


HOP = ("host", "connection", "content-length")


def _sent_headers(server: MessagesServer) -> list[dict[str, str]]:
    return [{k: v for k, v in r.headers.items() if k not in HOP} for r in server.requests]


def test_headers_reach_the_upstream_unchanged_and_never_the_recording(watch, messages_server):
    clients = [
        lambda url: sync_client(url, default_headers={"anthropic-beta": "context-1",
                                                      "x-api-key": "sk-other-secret"}),
        lambda url: anthropic.Anthropic(base_url=url, auth_token="tok-secret"),
    ]
    for make in clients:
        messages_server.reply_text("ok")
        make(watch.url).messages.create(**ASK)
    with MessagesServer() as direct:
        for make in clients:
            direct.reply_text("ok")
            make(direct.url).messages.create(**ASK)
        assert _sent_headers(messages_server) == _sent_headers(direct)
    assert messages_server.requests[0].headers["x-api-key"] == "sk-other-secret"
    assert messages_server.requests[0].headers["anthropic-beta"] == "context-1"
    assert messages_server.requests[1].headers["authorization"] == "Bearer tok-secret"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    assert watch.source is not None and watch.source.recording is not None
    saved = watch.source.recording.path.read_text(encoding="utf-8")
    events = json.dumps([e.to_json() for e in watch.events])
    for secret in ("sk-test-secret", "sk-other-secret", "tok-secret", "context-1"):
        assert secret not in saved and secret not in events


@pytest.mark.parametrize(("queue", "error", "status"), [
    (lambda s: s.rate_limited(), anthropic.RateLimitError, 429),
    (lambda s: s.overloaded(), anthropic.APIStatusError, 529),
    (lambda s: s.overflow(), anthropic.BadRequestError, 400),
    (lambda s: s.unauthorized(), anthropic.AuthenticationError, 401),
])
def test_upstream_errors_reach_the_client_as_they_came(queue, error, status, watch,
                                                       messages_server):
    queue(messages_server)
    with pytest.raises(error) as caught:
        sync_client(watch.url, max_retries=0).messages.create(**ASK)
    assert caught.value.status_code == status
    queue(messages_server)
    with pytest.raises(error) as direct:
        sync_client(messages_server.url, max_retries=0).messages.create(**ASK)
    assert caught.value.body == direct.value.body
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    shown = watch.of(WatchResponse)[0]
    assert shown.status == status and shown.error


def test_an_error_event_inside_a_stream_is_passed_on_and_shown(watch, messages_server):
    messages_server.stream_error("partial answer")
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"), \
            sync_client(watch.url, max_retries=0).messages.stream(**ASK) as stream:
        stream.get_final_text()
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    assert "overloaded_error" in watch.of(WatchResponse)[0].error


def test_a_refused_upstream_is_a_502_with_an_api_error_body(tmp_path, messages_server):
    with RunningWatch(unused_port_url(), tmp_path) as watch:
        with pytest.raises(anthropic.InternalServerError) as caught:
            sync_client(watch.url, max_retries=0).messages.create(**ASK)
        assert caught.value.status_code == 502
        assert "upstream unreachable" in caught.value.message
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        assert "upstream unreachable" in watch.of(WatchResponse)[0].error


def test_a_websocket_upgrade_on_a_messages_path_is_refused_in_anthropic_s_shape(
        watch, messages_server):
    """Before, the 426 body was OpenAI's shape whatever the path."""
    host, port = watch.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", "/v1/messages", headers={
        "upgrade": "websocket", "connection": "Upgrade", "x-api-key": "sk-test-secret"})
    answer = conn.getresponse()
    body = json.loads(answer.read())
    conn.close()
    assert answer.status == 426
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "WebSocket" in body["error"]["message"]
    assert messages_server.requests == [] and watch.of(WatchRequest) == []


def test_a_silent_upstream_is_a_504(tmp_path, messages_server):
    messages_server.reply_text("late", delay=1.5)
    with RunningWatch(messages_server.url, tmp_path, read_timeout=0.3) as watch:
        with pytest.raises(anthropic.APIStatusError) as caught:
            sync_client(watch.url, max_retries=0).messages.create(**ASK)
        assert caught.value.status_code == 504
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        assert "timed out" in watch.of(WatchResponse)[0].error


def test_ten_concurrent_streams(watch, messages_server):
    texts = {f"reply number {i}" for i in range(10)}
    for text in sorted(texts):
        messages_server.reply_text(text, event_delay=0.1)  # ~1 s per stream
    firsts: list[float] = []
    ends: list[float] = []

    async def one(client: anthropic.AsyncAnthropic) -> str:
        async with client.messages.stream(**ASK) as stream:
            async for event in stream:
                if event.type == "text" and len(firsts) <= len(ends) + 10:
                    firsts.append(time.perf_counter())
                    break
            text = await stream.get_final_text()
        ends.append(time.perf_counter())
        return text

    async def all_ten() -> set[str]:
        async with anthropic.AsyncAnthropic(base_url=watch.url, api_key="k") as client:
            return set(await asyncio.gather(*(one(client) for _ in range(10))))

    assert asyncio.run(all_ten()) == texts
    assert max(firsts) < min(ends), "the ten streams were not all open at once"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 10)


def test_a_client_hanging_up_mid_stream_closes_the_upstream_call(watch, messages_server,
                                                                 monkeypatch, caplog):
    from tests.support import messages_server as server_module

    written: list[int] = []
    failed: list[BaseException] = []
    original = server_module._Handler.write_chunk

    def counting(self, data: bytes) -> None:
        try:
            original(self, data)
        except OSError as exc:
            failed.append(exc)
            raise
        written.append(len(data))

    monkeypatch.setattr(server_module._Handler, "write_chunk", counting)
    messages_server.reply_text("y" * 400, chunk=4, event_delay=0.02)  # ~100 events, 2 s
    client = sync_client(watch.url)
    with client.messages.with_streaming_response.create(**ASK, stream=True) as response:
        next(response.iter_bytes())
    deadline = time.monotonic() + 5
    while not failed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert failed, "the upstream kept streaming to nobody"
    assert len(written) < 60
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    assert "client disconnected" in watch.of(WatchResponse)[0].error
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_large_body_is_forwarded_and_measured(watch, messages_server):
    messages_server.reply_text("ok")
    big = "z" * 20_000_000
    client = sync_client(watch.url)
    client.messages.create(model="claude-test", max_tokens=8,
                           messages=[{"role": "user", "content": big}])
    assert messages_server.requests[0].body["messages"][0]["content"] == big
    watch.wait_for(lambda w: bool(w.of(WatchResponse)), timeout=30)
    assert watch.of(WatchRequest)[0].chars > 20_000_000


def _said(value):
    if isinstance(value, dict):
        return {k: _said(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_said(v) for v in value]
    return value


def test_every_messages_call_is_recorded_in_the_requests_format(watch, messages_server):
    messages_server.reply_tool_use("read_file", {"path": "a.py"}, text="Reading.")
    messages_server.reply_text("streamed")
    client = sync_client(watch.url)
    direct = client.messages.create(**ASK)
    with client.messages.stream(**ASK) as stream:
        streamed = stream.get_final_message()
    client.messages.count_tokens(model="claude-test", messages=ASK["messages"])
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 3)
    assert watch.source is not None and watch.source.recording is not None
    path = watch.source.recording.path
    assert path.parent == Path(watch.options.root) / ".ctxlab" / "watch"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2  # count_tokens is not a Messages call
    assert lines[0]["request"] == messages_server.requests[0].body
    assert lines[0]["response"] == direct.to_dict()
    assert lines[1]["request"]["stream"] is True
    # the SDK's accumulator sets fields the wire left out to None; compare what was said
    assert _said(lines[1]["response"]) == streamed.to_dict(exclude_none=True)
    assert {"timestamp", "status", "duration_ms", "ttfb_ms"} <= set(lines[1])


def _cut_error(url: str) -> type[BaseException]:
    try:
        with sync_client(url, max_retries=0).messages.stream(**ASK) as stream:
            stream.get_final_text()
    except Exception as exc:
        return type(exc)
    raise AssertionError("the cut stream ended cleanly")


def test_a_stream_the_upstream_cuts_is_cut_for_the_client_too(watch, messages_server, caplog):
    messages_server.cut_stream("a reply that never ends", after_events=4)
    proxied = _cut_error(watch.url)
    messages_server.cut_stream("a reply that never ends", after_events=4)
    assert proxied is _cut_error(messages_server.url)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    shown = watch.of(WatchResponse)[0]
    assert shown.status == 200 and "upstream stream broke mid-body" in shown.error


def test_measuring_in_this_process_gives_the_same_events(tmp_path, messages_server):
    """The fallback when no worker process can be had."""
    messages_server.reply_text("ok")
    with RunningWatch(messages_server.url, tmp_path, in_process=True) as watch:
        sync_client(watch.url).messages.create(**ASK)
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        (request,) = watch.of(WatchRequest)
        assert (request.messages, request.purpose) == (1, "side")
        assert watch.source is not None and watch.source.recording is not None
        line = json.loads(watch.source.recording.path.read_text(encoding="utf-8"))
        assert line["request"] == messages_server.requests[0].body


def test_a_dead_measuring_process_falls_back_to_this_one(watch, messages_server):
    import os
    import signal

    assert watch.source is not None
    pid = watch.source._child.pid
    assert pid is not None and pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    messages_server.reply_text("still watched")
    sync_client(watch.url).messages.create(**ASK)
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    (request,) = watch.of(WatchRequest)
    assert request.messages == 1 and request.chars > 0
