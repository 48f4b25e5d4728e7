"""The watch holds bounded memory whatever the traffic.

Counted, not timed: the characters a stream's assembly copies, the bytes a decompression
produces, the bodies and conversations held after many requests.
"""

from __future__ import annotations

import json
import tracemalloc
import zlib
from types import SimpleNamespace

import pytest

from core.sources.watch import sse
from core.sources.watch.sse import DECODED_LIMIT, ServerEvent, assemble_stream, decoded


class Piece(str):
    """A delta's text that counts the characters every ``+`` it takes part in copies."""

    copied = 0

    def __radd__(self, other: str) -> str:
        Piece.copied += len(other) + len(self)
        return str.__add__(other, self)

    def __add__(self, other: str) -> str:
        Piece.copied += len(other) + len(self)
        return str.__add__(self, other)


def _counting_loads(text: str):
    def hook(value: dict):
        for key in ("text", "partial_json", "thinking"):
            if isinstance(value.get(key), str):
                value[key] = Piece(value[key])
        return value

    return json.loads(text, object_hook=hook)


def _stream(deltas: int) -> list[ServerEvent]:
    def event(data: dict) -> ServerEvent:
        return ServerEvent(data["type"], json.dumps(data))

    events = [event({"type": "message_start",
                     "message": {"id": "m", "role": "assistant", "content": []}})]
    kinds = (("text", "text_delta", "text"), ("thinking", "thinking_delta", "thinking"),
             ("tool_use", "input_json_delta", "partial_json"))
    for index, (block, delta, key) in enumerate(kinds):
        start = {"type": block, block if block != "tool_use" else "input": ""}
        if block == "tool_use":
            start = {"type": "tool_use", "id": "t", "name": "n", "input": {}}
        events.append(event({"type": "content_block_start", "index": index,
                             "content_block": start}))
        if block == "tool_use":
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: '{"a": "'}}))
        for _ in range(deltas):
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: "0123456789"}}))
        if block == "tool_use":
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: '"}'}}))
        events.append(event({"type": "content_block_stop", "index": index}))
    return events


def test_a_stream_of_many_deltas_is_assembled_in_linear_time(monkeypatch):
    """Before, each delta was added with ``s = s + delta``: 5,000 deltas of 10 characters
    copied 375 million characters."""
    monkeypatch.setattr(sse, "json", SimpleNamespace(loads=_counting_loads))
    deltas = 5_000
    Piece.copied = 0
    message, _ = assemble_stream(_stream(deltas))
    total = 3 * deltas * 10
    text, thinking, tool = message["content"]
    assert len(text["text"]) == len(thinking["thinking"]) == deltas * 10
    assert tool["input"] == {"a": "0123456789" * deltas}
    assert Piece.copied <= 4 * total, f"{Piece.copied:,} characters copied for {total:,}"


def _bomb(size: int, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(size >> 20)) + packer.flush()


@pytest.mark.parametrize("wbits", [31, 15], ids=["gzip", "deflate"])
def test_a_compression_bomb_is_cut_at_the_limit_and_says_so(wbits):
    """Before, a gzip body was decompressed whole: 64 kB on the wire, 64 MB in memory."""
    limit = 1 << 20
    bomb = _bomb(64 * limit, wbits)
    assert len(bomb) < limit // 8
    tracemalloc.start()
    try:
        body, truncated = decoded(bomb, "gzip" if wbits == 31 else "deflate", limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert truncated and body is not None and len(body) == limit
    assert peak < 3 * limit
    assert DECODED_LIMIT == 16 << 20  # the limit the watch reads with (docs/WATCH.md)
    small, cut = decoded(zlib.compress(b"{}"), "deflate")
    assert (small, cut) == (b"{}", False)


def test_a_response_over_its_budget_keeps_its_head_and_its_last_events(monkeypatch):
    """Before, every chunk of a response was kept until the exchange was read: a 1 GB
    stream held 1 GB in the proxy, then several copies of it while it was assembled."""
    from core.sources.watch import exchange
    from core.sources.watch.exchange import Exchange, read_exchange

    monkeypatch.setattr(exchange, "RESPONSE_BUDGET", 1 << 20)
    x = Exchange(id=1, method="POST", path="/v1/messages", body=b"{}", started=0.0,
                 status=200, content_type="text/event-stream")
    events = _stream(0)[:2]  # message_start, the first content_block_start
    delta = ServerEvent("content_block_delta", json.dumps(
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "0123456789" * 10}}))

    def wire(event: ServerEvent) -> bytes:
        return f"event: {event.event}\ndata: {event.data}\n\n".encode()

    for event in events:
        x.keep(wire(event))
    batch = wire(delta) * 500
    for _ in range((20 << 20) // len(batch)):  # 20 MB of deltas
        x.keep(batch)
        assert x.kept <= 1 << 20 and len(x.tail) <= 2 * exchange.TAIL
    x.keep(b'event: message_delta\ndata: {"type": "message_delta", "delta": '
           b'{"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}\n\n')
    message, event, notes = read_exchange(x)
    assert event.stop_reason == "end_turn" and event.usage == {"output_tokens": 7}
    assert message["content"][0]["text"].startswith("0123456789")
    assert len(message["content"][0]["text"]) < 1 << 20
    assert notes and "response truncated" in notes[0] and "response truncated" in event.error


def test_a_gzip_bomb_through_the_proxy_is_cut_and_the_recording_says_so(tmp_path):
    import http.client
    from urllib.parse import urlsplit

    from core.events import WatchResponse
    from tests.support.heavy_upstream import HeavyUpstream, bomb
    from tests.support.watching import RunningWatch

    with HeavyUpstream() as upstream, RunningWatch(upstream.url, tmp_path) as watch:
        parts = urlsplit(watch.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        body = json.dumps({"model": "bomb-64", "max_tokens": 5,
                           "messages": [{"role": "user", "content": "hi"}]}).encode()
        conn.request("POST", "/v1/messages", body=body,
                     headers={"content-type": "application/json"})
        answer = conn.getresponse()
        assert answer.getheader("content-encoding") == "gzip"
        assert answer.read() == bomb(64)  # the client gets it as sent
        conn.close()
        watch.wait_for(lambda w: bool(w.of(WatchResponse)), timeout=60)
        (shown,) = watch.of(WatchResponse)
        assert "decompressed to its first" in shown.error
        assert watch.source is not None and watch.source.recording is not None
        (line,) = watch.source.recording.path.read_text(encoding="utf-8").splitlines()
        record = json.loads(line)
        assert record["response"] is None
        assert any("decompressed to its first" in note for note in record["notes"])


def test_a_thousand_conversations_leave_a_bounded_number_held():
    """Before, the last request of every conversation stayed for the whole watch: 40
    distinct 5 MB conversations cost the measuring process 420 MB."""
    from core.sources.watch.conversations import MAX_CONVERSATIONS, Conversations

    conversations = Conversations()
    for n in range(1_000):
        conversations.observe(n, {"messages": [{"role": "user", "content": f"task {n}"}]})
        assert conversations.held()[0] <= MAX_CONVERSATIONS
    assert conversations.held()[0] == MAX_CONVERSATIONS


def test_conversations_are_also_bounded_by_their_size_and_the_newest_is_always_kept():
    from core.sources.watch.conversations import Conversations

    conversations = Conversations(max_chars=10 << 20)
    big = "x" * (1 << 20)
    for n in range(100):
        conversations.observe(n, {"messages": [{"role": "user", "content": f"{n} {big}"}]})
        assert conversations.held()[1] <= 10 << 20
    huge = {"messages": [{"role": "user", "content": "y" * (12 << 20)}]}
    conversations.observe(100, huge)
    assert conversations.held()[0] == 1  # alone over the budget, and still compared
    more = {"messages": [*huge["messages"], {"role": "assistant", "content": "ok"},
                         {"role": "user", "content": "next"}]}
    assert conversations.observe(101, more).appended == 2


def test_the_least_recently_used_conversation_goes_first():
    from core.sources.watch.conversations import Conversations

    conversations = Conversations(max_conversations=8)
    kept = [{"role": "user", "content": "the long one"}]
    conversations.observe(0, {"messages": kept})
    for n in range(1, 200):
        conversations.observe(n, {"messages": [{"role": "user", "content": f"other {n}"}]})
        if n % 5 == 0:  # the long conversation goes on now and then
            kept = [*kept, {"role": "assistant", "content": f"a{n}"},
                    {"role": "user", "content": f"u{n}"}]
            assert conversations.observe(n, {"messages": kept}).appended == 2


def test_the_bodies_kept_for_the_viewer_are_bounded_by_count_and_bytes():
    """Before, the last 32 bodies were kept whatever their size: 32 × 20 MB = 640 MB."""
    from core.sources.watch.source import KEEP_BODIES, BodyWindow

    window = BodyWindow(budget=8 << 20)
    for n in range(1_000):
        window.add(n, bytes(1 << 20))
        assert len(window) <= KEEP_BODIES and window.bytes <= 8 << 20
    assert window.get(999) is not None and window.get(0) is None
    window.add(1_000, bytes(9 << 20))  # over the budget alone: not kept, nothing evicted
    assert window.get(1_000) is None and window.get(999) is not None
    many = BodyWindow()
    for n in range(1_000):
        many.add(n, b"{}")
    assert len(many) == KEEP_BODIES


def test_a_body_over_the_measure_limit_is_forwarded_but_neither_parsed_nor_recorded(
        tmp_path, messages_server, monkeypatch):
    """Before, every body up to the proxy's 1 GiB was parsed in the measuring process (and
    held as its conversation), several times its size."""
    import anthropic

    from core.events import Error, WatchRequest, WatchResponse
    from core.sources.watch import source
    from tests.support.watching import RunningWatch

    monkeypatch.setattr(source, "MEASURE_LIMIT", 10_000)
    messages_server.reply_text("small")
    messages_server.reply_text("big")
    with RunningWatch(messages_server.url, tmp_path) as watch:
        client = anthropic.Anthropic(base_url=watch.url, api_key="k")
        for text in ("hi", "x" * 20_000):
            client.messages.create(model="m", max_tokens=5,
                                   messages=[{"role": "user", "content": text}])
        watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
        requests = {e.id: e for e in watch.of(WatchRequest)}
        assert requests[1].messages == 1 and requests[2].messages == 0
        assert requests[2].body_bytes > 20_000
        (error,) = watch.of(Error)
        assert "request 2 not analysed" in error.message and "over the 10,000" in error.message
        assert watch.source is not None and watch.source.recording is not None
        lines = watch.source.recording.path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 1
