"""What the watch reports when answers come out of order or before the body is whole.

The proxy hands an exchange to its observer once the client has the answer's first byte;
these tests hold it to arrival order all the same, and to reporting an exchange whose
answer the client got even when the client then broke its body off or stopped sending it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.events import WatchRequest, WatchResponse
from core.sources.watch import proxy
from core.sources.watch.apis import Upstreams
from tests.core.sources.watch.test_streamed_body import (
    ANSWER,
    Arrival,
    RawUpstream,
    _answer,
    _body,
    _connect,
    _head,
    _wait,
)
from tests.support.watching import RunningWatch

REFUSED = (b'{"type": "error", "error": {"type": "request_too_large", '
           b'"message": "too large"}}')


class SlowUpstream(RawUpstream):
    """Answers a body that says ``slow`` late, every other at once."""

    def delay(self, arrival: Arrival) -> float:
        return 0.4 if b"slow" in arrival.body else 0.0


class RefusingUpstream(RawUpstream):
    """Answers 413 as soon as the head is in, before reading any of the body."""

    def early(self, arrival: Arrival) -> bytes | None:
        return (b"HTTP/1.1 413 Request Entity Too Large\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n" % len(REFUSED) + REFUSED)


def _watching(upstream: RawUpstream, root: Path) -> Iterator[RunningWatch]:
    try:
        with RunningWatch(upstream.url, root) as running:
            yield running
    finally:
        upstream.close()


@pytest.fixture
def slow_watch(tmp_path: Path) -> Iterator[RunningWatch]:
    yield from _watching(SlowUpstream(), tmp_path)


@pytest.fixture
def refusing_watch(tmp_path: Path) -> Iterator[RunningWatch]:
    yield from _watching(RefusingUpstream(), tmp_path)


def _ask(url: str, body: bytes) -> None:
    with _connect(url) as sock:
        sock.sendall(_head(len(body)) + body)
        assert _answer(sock).endswith(ANSWER)


def test_requests_are_measured_in_the_order_they_arrived(slow_watch):
    """Request 1's answer is slow, request 2 (30 ms later) is answered at once: before,
    whoever's answer began first was measured first, and the ids came out [2, 1]."""
    slow = b'{"model": "m", "max_tokens": 1, "messages": [], "metadata": {"x": "slow"}}'
    quick = b'{"model": "m", "max_tokens": 1, "messages": []}'
    first = threading.Thread(target=_ask, args=(slow_watch.url, slow))
    first.start()
    time.sleep(0.03)
    _ask(slow_watch.url, quick)
    first.join()
    slow_watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    assert [r.id for r in slow_watch.of(WatchRequest)] == [1, 2]
def test_a_body_still_uploading_holds_up_no_later_request(slow_watch):
    """The line is taken when a body is whole: a request whose body has not all come yet
    is not ahead of a later one already whole (it had no request to measure yet)."""
    body = _body()
    quick = b'{"model": "m", "max_tokens": 1, "messages": []}'
    with _connect(slow_watch.url) as stalled:
        stalled.sendall(_head(len(body)) + body[:1000])
        _ask(slow_watch.url, quick)
        slow_watch.wait_for(lambda w: [r.id for r in w.of(WatchRequest)] == [2])
        stalled.sendall(body[1000:])
        assert _answer(stalled).endswith(ANSWER)
    slow_watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    assert [r.id for r in slow_watch.of(WatchRequest)] == [2, 1]


def test_a_client_that_hangs_up_after_an_early_answer_is_reported(refusing_watch):
    """The upstream refused the body before reading it; the client got the 413 and hung up
    mid-body. Before, the proxy waited for the rest of the body and reported nothing."""
    body = _body()
    with _connect(refusing_watch.url) as sock:
        sock.sendall(_head(len(body)) + body[:1000])
        assert _answer(sock, REFUSED).startswith(b"HTTP/1.1 413")
    refusing_watch.wait_for(lambda w: bool(w.of(WatchResponse)))
    (response,) = refusing_watch.of(WatchResponse)
    assert response.status == 413
    assert response.error is not None
    assert "1,000 of" in response.error and "disconnected" in response.error
    (request,) = refusing_watch.of(WatchRequest)
    assert request.id == response.id


def test_a_client_that_stops_sending_after_an_early_answer_is_reported(refusing_watch,
                                                                       monkeypatch):
    """It keeps the socket open and sends no more: before, the proxy waited for ever."""
    monkeypatch.setattr(proxy, "REST_OF_BODY", 0.3)
    body = _body()
    with _connect(refusing_watch.url) as sock:
        sock.sendall(_head(len(body)) + body[:1000])
        assert _answer(sock, REFUSED).startswith(b"HTTP/1.1 413")
        refusing_watch.wait_for(lambda w: bool(w.of(WatchResponse)), timeout=10)
    (response,) = refusing_watch.of(WatchResponse)
    assert response.status == 413 and response.error is not None
    assert "stopped sending" in response.error
    _wait(lambda: len(refusing_watch.of(WatchRequest)) == 1, "the request was reported")


def test_a_request_that_fails_before_it_is_forwarded_is_not_reported(tmp_path, monkeypatch):
    """Its target could not be made: the client gets a 500 and the watch hears nothing.
    Before, the body's reader was started outside the handler's cleanup, read the body to
    its end, and the watch measured a request that never went upstream (and never
    answered)."""
    real = Upstreams.target

    def target(self, raw_path, headers):
        if "boom" in raw_path:
            raise ValueError("no upstream for this")
        return real(self, raw_path, headers)

    monkeypatch.setattr(Upstreams, "target", target)
    upstream = RawUpstream()
    with RunningWatch(upstream.url, tmp_path) as watch, _connect(watch.url) as sock:
        small = b'{"model": "m", "max_tokens": 1, "messages": []}'
        sock.sendall(_head(len(small)).replace(b"/v1/messages", b"/v1/messages?boom")
                     + small)
        assert sock.recv(1 << 16).startswith(b"HTTP/1.1 500")
        time.sleep(0.3)  # long enough for a stray reader to have told the watch
        _ask(watch.url, small)
        watch.wait_for(lambda w: bool(w.of(WatchResponse)))
        assert [r.id for r in watch.of(WatchRequest)] == [2]
    upstream.close()
