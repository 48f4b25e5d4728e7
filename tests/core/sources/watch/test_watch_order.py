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
from tests.core.sources.watch.test_streamed_body import (
    ANSWER,
    Arrival,
    RawUpstream,
    _answer,
    _connect,
    _head,
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
