"""Every string a tool returns is valid Unicode, and no request can get a session stuck.

A file name that is not UTF-8 (one byte ``0xff``: a Latin-1 checkout, a tarball from
elsewhere) reaches Python as a lone surrogate. Echoed into a ``tool_result`` it made the
SDK's next request fail with ``UnicodeEncodeError`` — and every later prompt of the session
failed the same way, because the history still held it. Here the whole path runs over the
real SDK against the local Messages server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.events import ToolResult
from tests.support.messages_server import MessagesServer
from tests.support.runs import main_requests, run_prompts


def _plant_non_utf8_file(workspace: Path) -> None:
    fd = os.open(os.fsencode(workspace) + b"/caf\xff.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"latin-1 named\n")
    os.close(fd)


def _tool_results(request_body: dict) -> list[dict]:
    return [
        block
        for message in request_body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_a_non_utf8_file_name_from_glob_does_not_break_the_next_call_or_the_session(
        tmp_path: Path, messages_server: MessagesServer):
    server = messages_server
    _plant_non_utf8_file(tmp_path)
    server.reply_tool_use("glob", {"pattern": "*.txt"}, id="toolu_glob")
    # the model uses the spelling glob showed it
    server.reply_tool_use("read_file", {"path": "caf\\xff.txt"}, id="toolu_read")
    server.reply_text("It holds one line.")
    server.reply_text("Still here.")  # the next prompt of the same session

    ok, rec = run_prompts(server, tmp_path, ["What is in the .txt file?", "And now?"],
                          memory=False)

    assert ok, [getattr(e, "message", e) for e in rec.events if "Error" in type(e).__name__]
    assert server.pending == 0
    mains = main_requests(server)
    assert len(mains) == 4
    for request in mains:  # what went out is valid UTF-8 JSON, byte for byte
        json.loads(request.raw.decode("utf-8"))
    results = {b["tool_use_id"]: b for b in _tool_results(mains[2].body)}
    assert results["toolu_glob"]["content"] == "caf\\xff.txt"
    assert results["toolu_read"]["content"] == "latin-1 named\n"
    assert not any(r.is_error for r in rec.of(ToolResult))
