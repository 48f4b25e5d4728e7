"""Measuring request bodies in a separate process, so a 20 MB body never stalls the proxy.

Parsing and dumping JSON are C calls that hold the interpreter lock for their whole length:
about 0.1 s each for 20 MB, several per request. In a worker *thread* that is time the
proxy's event loop (and a UI on the same loop) cannot run. One worker *process* does the
measuring instead: it receives the raw body (a plain byte copy through a pipe), keeps each
watch's conversation state, and sends back small events. The process is started with
``spawn`` (the parent has threads; ``fork`` would copy their locks), once, on first use.

When a worker process cannot be had (a platform without it, a worker that died), the
measuring falls back to a thread in this process, with the same functions.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from core.events import Event, WatchRequest
from core.watch.conversations import Conversations
from core.watch.exchange import Exchange, measure_request

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
# In the worker process: each watch's conversations, by the watch's key.
_conversations: dict[str, Conversations] = {}


def pool() -> ProcessPoolExecutor:
    """The shared measuring process (started on first use, joined at interpreter exit)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=1,
                                        mp_context=multiprocessing.get_context("spawn"))
        return _pool


def reset_pool() -> None:
    """Forget a broken pool; the next call starts a new one."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def recordable(raw: bytes, body: Any) -> bool:
    """Can the raw body go into a JSONL line as it is? A UTF-8 JSON object can: a literal
    newline in valid JSON is whitespace (strings cannot hold one), so it becomes a space."""
    return isinstance(body, dict) and json.detect_encoding(raw) == "utf-8"


def measure_raw(key: str, x: Exchange) -> tuple[WatchRequest, tuple[Event, ...], bool]:
    """Runs in the worker: the request event, its client stages, and ``recordable``."""
    conversations = _conversations.setdefault(key, Conversations())
    body, event, stages = measure_request(x, conversations)
    return event, stages, recordable(x.body, body)


def forget(key: str) -> None:
    """Runs in the worker: a watch ended, drop its conversations."""
    _conversations.pop(key, None)
