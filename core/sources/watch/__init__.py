"""``ctxlab watch``: a local proxy for the Messages API and OpenAI's Responses and Chat
Completions APIs that shows any client's context.

* :mod:`core.sources.watch.proxy` forwards every request unchanged to the upstream API and streams
  the answer back as it arrives (aiohttp on both sides);
* :mod:`core.sources.watch.exchange` turns one finished exchange into ``watch_request`` /
  ``watch_response`` events (pure);
* :mod:`core.sources.watch.apis` tells the APIs apart by path and picks each one's upstream;
* :mod:`core.sources.watch.sse` turns a recorded SSE body back into the final Message;
  :mod:`core.sources.watch.openai_stream` into the final Response or chat.completion;
* :mod:`core.sources.watch.analysis` measures one Messages request (pure);
  :mod:`core.sources.watch.openai_requests` one OpenAI request;
* :mod:`core.sources.watch.history_shapes` reads one history entry of any of the APIs;
* :mod:`core.sources.watch.conversations` groups requests into conversations and finds the
  client's own compaction between two of them (pure);
* :mod:`core.sources.watch.worker` measures bodies in a child process, off the proxy's loop;
* :mod:`core.sources.watch.recording` appends every exchange to ``.ctxlab/watch/<time>.jsonl``;
* :mod:`core.sources.watch.source` ties them together as an event source (``async run(emit)``).
"""
