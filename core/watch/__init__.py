"""``ctxlab watch``: a local Messages-API proxy that shows any client's context.

* :mod:`core.watch.proxy` forwards every request unchanged to the upstream API and streams
  the answer back as it arrives (aiohttp on both sides);
* :mod:`core.watch.exchange` turns one finished exchange into ``watch_request`` /
  ``watch_response`` events (pure);
* :mod:`core.watch.sse` turns a recorded SSE body back into the final Message;
* :mod:`core.watch.analysis` measures one request (pure);
* :mod:`core.watch.conversations` groups requests into conversations and finds the
  client's own compaction between two of them (pure);
* :mod:`core.watch.worker` measures bodies in a child process, off the proxy's loop;
* :mod:`core.watch.recording` appends every exchange to ``.ctxlab/watch/<time>.jsonl``;
* :mod:`core.watch.source` ties them together as an event source (``async run(emit)``).
"""
