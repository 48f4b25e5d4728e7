"""The official ``openai`` SDK → ``ctxlab watch`` → the scripted OpenAI server, over HTTP.

Chat Completions and Responses, streamed and not, come back as the SDK expects them; the
watch shows each with its exact usage and records it with its ``api``; no key reaches the
recording; the proxy outlives ten concurrent streams, a client that leaves mid-stream, and
an upstream that is gone; a WebSocket upgrade is refused at once with 426; a gzip or zstd
answer reaches the client byte for byte, still encoded, and the watch reads it.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import aiohttp
import openai
import pytest
import zstandard
from yarl import URL

from core.events import Stage, WatchRequest, WatchResponse
from core.sources.watch.apis import Upstreams
from core.sources.watch.proxy import WatchProxy
from tests.support.messages_server import unused_port_url
from tests.support.openai_server import CHAT, COMPACT
from tests.support.openai_wire import (
    ResponsesReply,
    chat_usage,
    compaction_item,
    function_call_item,
    message_item,
    response_events,
    responses_usage,
    tool_call,
)
from tests.support.watching import RunningWatch

KEY = "sk-test-secret-openai"
ASK = [{"role": "system", "content": "You are terse."},
       {"role": "user", "content": "Say hello."}]


@pytest.fixture
def watch(openai_watch: RunningWatch) -> RunningWatch:
    """Here the watch stands in front of the OpenAI server (conftest)."""
    return openai_watch


def client(watch: RunningWatch, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY, **options)


def recording(watch: RunningWatch) -> list[dict[str, Any]]:
    assert watch.source is not None and watch.source.recording is not None
    text = watch.source.recording.path.read_text(encoding="utf-8")
    assert KEY not in text
    return [json.loads(line) for line in text.splitlines()]


def unparsed(value: Any) -> Any:
    """An SDK object's dump without the fields the SDK adds when it parses (``parsed``,
    ``parsed_arguments``): what the API said."""
    if isinstance(value, dict):
        return {k: unparsed(v) for k, v in value.items()
                if k not in ("parsed", "parsed_arguments")}
    if isinstance(value, list):
        return [unparsed(v) for v in value]
    return value


def test_chat_completions_streamed_and_not_with_exact_usage(watch, openai_server):
    openai_server.chat("Hello there.", usage=chat_usage(1_000, 12, cached=800))
    openai_server.chat("Hello again, in pieces.", chunk=3, usage=chat_usage(1_100, 9))
    sdk = client(watch)
    plain = sdk.chat.completions.create(model="gpt-4o", messages=ASK)
    assert plain.choices[0].message.content == "Hello there."
    parts = []
    for chunk in sdk.chat.completions.create(model="gpt-4o", messages=ASK, stream=True,
                                             stream_options={"include_usage": True}):
        parts += [c.delta.content or "" for c in chunk.choices]
    assert "".join(parts) == "Hello again, in pieces."
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    requests, responses = watch.of(WatchRequest), watch.of(WatchResponse)
    assert [(r.api, r.purpose, r.stream) for r in requests] == [
        ("chat.completions", "side", False), ("chat.completions", "side", True)]
    assert requests[0].conversation == requests[1].conversation
    assert [(r.usage["input_tokens"], r.usage["cache_read_input_tokens"],
             r.usage["output_tokens"], r.context_tokens) for r in responses] == [
        (200, 800, 12, 1_000), (1_100, 0, 9, 1_100)]
    assert [r.stop_reason for r in responses] == ["stop", "stop"]
    assert responses[0].api_usage == chat_usage(1_000, 12, cached=800)
    lines = recording(watch)
    assert [line["api"] for line in lines] == ["chat.completions"] * 2
    assert lines[0]["response"] == plain.model_dump(exclude_unset=True)
    assert lines[1]["response"]["choices"][0]["message"]["content"] == \
        "Hello again, in pieces."
    assert lines[1]["response"]["usage"] == chat_usage(1_100, 9)
    assert [line["request"] for line in lines] == [r.body for r in openai_server.requests]


def test_chat_tool_calls_are_assembled_and_recorded(watch, openai_server):
    call = tool_call("read_file", {"path": "notes.txt"}, "call_1")
    openai_server.chat(None, tool_calls=[call])
    stream = client(watch).chat.completions.create(model="gpt-4o", messages=ASK, stream=True)
    calls = [d.function.arguments for c in stream for ch in c.choices
             for d in ch.delta.tool_calls or [] if d.function and d.function.arguments]
    assert "".join(calls) == call["function"]["arguments"]
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    assert watch.of(WatchResponse)[0].stop_reason == "tool_calls"
    [line] = recording(watch)
    assert line["response"]["choices"][0]["message"]["tool_calls"] == [call]


def test_responses_streamed_and_not_through_the_sdk(watch, openai_server):
    usage = responses_usage(12_000, 300, cached=10_000, reasoning=120)
    openai_server.respond([message_item("Plain answer.")], usage=usage)
    openai_server.respond([function_call_item("exec_command", {"cmd": "ls"}, "call_ls"),
                           message_item("Streamed answer.")], usage=usage, chunk=4)
    sdk = client(watch)
    tools: list[Any] = [{"type": "function", "name": "exec_command", "parameters": {}}]
    plain = sdk.responses.create(model="gpt-5", input="hi", instructions="Be brief.",
                                 tools=tools)
    assert plain.output_text == "Plain answer."
    with sdk.responses.stream(model="gpt-5", input="hi", instructions="Be brief.",
                              tools=tools) as stream:
        final = stream.get_final_response()
    assert final.output_text == "Streamed answer." and final.usage.total_tokens == 12_300
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    requests, responses = watch.of(WatchRequest), watch.of(WatchResponse)
    assert [(r.api, r.purpose, r.messages) for r in requests] == [("responses", "main", 1)] * 2
    assert requests[0].breakdown["system"] == len(json.dumps("Be brief."))
    for shown in responses:
        assert shown.usage == {"input_tokens": 2_000, "cache_read_input_tokens": 10_000,
                               "cache_creation_input_tokens": 0, "output_tokens": 300,
                               "reasoning_output_tokens": 120, "total_tokens": 12_300}
        assert (shown.stop_reason, shown.context_tokens, shown.error) == (
            "completed", 12_000, None)
    lines = recording(watch)
    assert [line["api"] for line in lines] == ["responses"] * 2
    assert lines[0]["response"] == plain.model_dump(exclude_unset=True)
    assert lines[1]["response"]["output"] == unparsed(
        final.model_dump(exclude_unset=True)["output"])


def test_a_compact_call_is_recorded_and_its_effect_shown_on_the_next_request(
        watch, openai_server):
    history = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "done"},
               {"role": "user", "content": "more"}]
    kept = [compaction_item("gAAAA" + "k" * 700), {"role": "user", "content": "more"}]
    openai_server.respond([message_item("ok")])
    openai_server.compact(kept)
    openai_server.respond([message_item("after")])
    sdk = client(watch)
    sdk.responses.create(model="gpt-5", input=history, instructions="Help.")  # type: ignore[arg-type]
    ask = urllib.request.Request(
        f"{watch.url}/v1/responses/compact", method="POST",
        data=json.dumps({"model": "gpt-5", "input": history, "instructions": "Help."}).encode(),
        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
    with urllib.request.urlopen(ask, timeout=10) as answer:
        compacted = json.loads(answer.read())
    assert compacted["output"] == kept
    sdk.responses.create(model="gpt-5", input=[*compacted["output"],
                                                {"role": "user", "content": "go"}],
                         instructions="Help.")
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 3)
    assert [r.purpose for r in watch.of(WatchRequest)] == ["main", "compaction", "main"]
    [stage] = watch.of(Stage)
    assert stage.stage == "client_summary" and stage.ledger[-1]["encrypted_chars"] == 705
    assert [line["api"] for line in recording(watch)] == [
        "responses", "responses.compact", "responses"]
    assert openai_server.requests_to(COMPACT)[0].headers["authorization"] == f"Bearer {KEY}"


def test_both_base_urls_reach_the_same_endpoint(tmp_path, openai_server):
    openai_server.respond([message_item("one")])
    openai_server.respond([message_item("two")])
    with RunningWatch(openai_server.url, tmp_path) as watch:  # the upstream has the /v1
        sdk = openai.OpenAI(base_url=watch.url, api_key=KEY)  # the client has none
        assert sdk.responses.create(model="gpt-5", input="hi").output_text == "one"
        both = openai.OpenAI(base_url=f"{watch.url}/v1", api_key=KEY)  # both: one is dropped
        assert both.responses.create(model="gpt-5", input="hi").output_text == "two"
        watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
        assert [e.path for e in watch.of(WatchRequest)] == ["/responses", "/v1/responses"]
        assert {e.api for e in watch.of(WatchRequest)} == {"responses"}
    assert [r.path for r in openai_server.requests] == ["/v1/responses", "/v1/responses"]


def test_without_upstream_a_call_beside_the_model_endpoints_reaches_openai(
        openai_server, messages_server):
    """Each API's host stands in for the real one; before, the model list and a stored
    response's cancel went to the Anthropic host with the client's OpenAI key."""
    async def run() -> tuple[list[str], str]:
        routes = Upstreams(messages=URL(messages_server.url), openai=URL(openai_server.origin))
        proxy = WatchProxy(routes, port=0)
        await proxy.start()
        try:
            sdk = openai.AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0)
            models = await sdk.models.list()
            with pytest.raises(openai.NotFoundError) as caught:
                await sdk.responses.cancel("resp_1")
            return [m.id for m in models.data], caught.value.message
        finally:
            await proxy.stop()

    listed, said = asyncio.run(run())
    assert listed == [] and "no route POST /v1/responses/resp_1/cancel" in said
    assert [r.path for r in openai_server.requests] == ["/v1/responses/resp_1/cancel"]
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert messages_server.requests == []


def test_ten_concurrent_chat_streams(watch, openai_server):
    texts = {f"reply number {i}" for i in range(10)}
    for text in sorted(texts):
        openai_server.chat(text, chunk=2, event_delay=0.05)  # ~0.5 s per stream
    firsts: list[float] = []
    ends: list[float] = []

    async def one(sdk: openai.AsyncOpenAI) -> str:
        parts = []
        stream = await sdk.chat.completions.create(model="gpt-4o", messages=ASK,  # type: ignore[arg-type]
                                                   stream=True)
        async for chunk in stream:
            if not parts:
                firsts.append(time.perf_counter())
            parts += [c.delta.content or "" for c in chunk.choices]
        ends.append(time.perf_counter())
        return "".join(parts)

    async def all_ten() -> set[str]:
        async with openai.AsyncOpenAI(base_url=f"{watch.url}/v1", api_key=KEY) as sdk:
            return set(await asyncio.gather(*(one(sdk) for _ in range(10))))

    assert asyncio.run(all_ten()) == texts
    assert max(firsts) < min(ends), "the ten streams were not all open at once"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 10)
    assert all(r.error is None and r.status == 200 for r in watch.of(WatchResponse))
    assert len(recording(watch)) == 10


def test_a_client_leaving_mid_stream_leaves_the_proxy_up_and_the_recording_valid(
        watch, openai_server, caplog):
    openai_server.chat("y" * 400, chunk=4, event_delay=0.02)  # ~100 chunks, 2 s
    openai_server.chat("still here")
    with client(watch).chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=ASK, stream=True) as response:  # type: ignore[arg-type]
        next(response.iter_bytes())
    again = client(watch).chat.completions.create(model="gpt-4o", messages=ASK)  # type: ignore[arg-type]
    assert again.choices[0].message.content == "still here"
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    left = watch.of(WatchResponse)[0]
    assert "client disconnected" in left.error and left.stop_reason is None
    lines = recording(watch)
    assert len(lines) == 2 and "client disconnected" in lines[0]["error"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_an_unreachable_upstream_is_an_openai_shaped_502(tmp_path):
    with RunningWatch(unused_port_url(), tmp_path) as watch:
        with pytest.raises(openai.InternalServerError) as caught:
            client(watch, max_retries=0).chat.completions.create(model="gpt-4o",  # type: ignore[arg-type]
                                                                 messages=ASK)
        assert caught.value.status_code == 502
        body = caught.value.body
        assert isinstance(body, dict) and "upstream unreachable" in body["message"]
        assert body["type"] == "api_error"
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        assert "upstream unreachable" in watch.of(WatchResponse)[0].error


def test_upstream_errors_pass_through_as_they_came(watch, openai_server):
    openai_server.error(429, "Rate limit reached.", path=CHAT, error_type="requests",
                        code="rate_limit_exceeded")
    with pytest.raises(openai.RateLimitError) as caught:
        client(watch, max_retries=0).chat.completions.create(model="gpt-4o",  # type: ignore[arg-type]
                                                             messages=ASK)
    assert caught.value.status_code == 429
    watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    assert watch.of(WatchResponse)[0].error == "requests: Rate limit reached."
    [line] = recording(watch)
    assert line["status"] == 429 and line["response"]["error"]["code"] == "rate_limit_exceeded"


def test_a_websocket_upgrade_is_refused_at_once_with_426(watch, openai_server):
    async def upgrade() -> int:
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(f"{watch.url}/v1/responses"):
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    assert asyncio.run(upgrade()) == 426
    host, port = watch.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", "/v1/responses", headers={"upgrade": "websocket",
                                                  "connection": "Upgrade"})
    refused = json.loads(conn.getresponse().read())
    conn.close()
    assert refused["error"]["code"] == "upgrade_required"  # OpenAI's shape on its path
    assert openai_server.requests == []  # nothing reached the upstream
    assert watch.of(WatchRequest) == []


class FixedUpstream:
    """An upstream that answers every POST with the same bytes, encoded as given, and
    keeps the headers it got: what the client gets through the proxy must be those bytes."""

    def __init__(self, body: bytes, encoding: str) -> None:
        upstream = self
        self.body, self.encoding, self.headers = body, encoding, []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                upstream.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-encoding", upstream.encoding)
                self.send_header("content-length", str(len(upstream.body)))
                self.end_headers()
                self.wfile.write(upstream.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(("encoding", "per_event"), [
    ("gzip", False), ("zstd", False), ("identity", False), ("gzip", True), ("zstd", True)])
def test_compressed_answers_pass_byte_exact_and_are_read(encoding, per_event, tmp_path):
    """``per_event``: one gzip member or zstd frame per event, as a server that compresses
    per flush sends them (before, the watch read the first and took it for the whole)."""
    usage = responses_usage(5_000, 70, cached=4_000)
    events = list(response_events(ResponsesReply([message_item("packed")], usage=usage),
                                  "resp_1", "gpt-5"))
    pack = {"gzip": gzip.compress, "zstd": zstandard.ZstdCompressor().compress,
            "identity": bytes}[encoding]
    packed = b"".join(pack(e) for e in events) if per_event else pack(b"".join(events))
    upstream = FixedUpstream(packed, encoding)
    try:
        with RunningWatch(upstream.url, tmp_path) as watch:
            host, port = watch.url.removeprefix("http://").split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("POST", "/v1/responses",
                         body=json.dumps({"model": "gpt-5", "input": "hi", "stream": True}),
                         headers={"api-key": KEY, "authorization": f"Bearer {KEY}",
                                  "accept-encoding": "zstd,gzip",
                                  "content-type": "application/json"})
            answer = conn.getresponse()
            assert answer.getheader("content-encoding") == encoding
            assert answer.read() == packed  # as the upstream sent it, still encoded
            conn.close()
            watch.wait_for(lambda w: bool(w.of(WatchResponse)))
            shown = watch.of(WatchResponse)[0]
            assert (shown.stop_reason, shown.context_tokens, shown.error) == (
                "completed", 5_000, None)
            assert recording(watch)[0]["response"]["output"][0]["content"][0]["text"] == \
                "packed"
        sent = upstream.headers[0]
        assert (sent["api-key"], sent["authorization"], sent["accept-encoding"]) == (
            KEY, f"Bearer {KEY}", "zstd,gzip")
    finally:
        upstream.close()
