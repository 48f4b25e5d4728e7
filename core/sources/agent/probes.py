"""Probes: could the model still answer a question about something said early on?"""

from __future__ import annotations

import json

from core.events import ProbeChecked
from core.sources.agent.loop import Agent


def check_probe(agent: Agent, ask: str, expect: str) -> ProbeChecked:
    """Could the model answer ``ask``? Only if ``expect`` is in what the next main call
    would send: the system prompt's sections (pinned ones re-read) or the kept messages.
    Case-insensitive; text inside messages is also matched in its JSON-escaped form."""
    needle = expect.casefold()
    found = [s.name for s in agent.system_sections()
             if s.text.strip() and needle in s.text.casefold()]
    dump = json.dumps(agent.messages, ensure_ascii=False).casefold()
    if needle in dump or json.dumps(needle, ensure_ascii=False)[1:-1] in dump:
        found.append("messages")
    return ProbeChecked(ask=ask, expect=expect, answerable=bool(found), found_in=tuple(found))
