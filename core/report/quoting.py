"""A message's blocks as a report quotes them: escaped, each capped, every cut said.

A transcript is untrusted input: a tool result may hold ``<script>``, and the report shows
it as text (:func:`html.escape` on everything that came from the source). Each block is
quoted through the report's :class:`~core.report.caps.Budget`; a cut names the size left
out and where the whole text is.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from core.report.caps import Budget, Quote
from core.sources.watch.history_shapes import result_text, role_of


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def block_texts(message: Any) -> list[tuple[str, str]]:
    """(label, text) for each block of a message: text, a tool call with its input, a tool
    result's text, thinking; anything else as its JSON."""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, str):
        return [("text", content)]
    out: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else [content]:
        if not isinstance(block, dict):
            out.append(("block", json.dumps(block, ensure_ascii=False)))
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(("text", str(block.get("text", ""))))
        elif kind == "tool_use":
            out.append((f"tool call {block.get('name', '')}",
                        json.dumps(block.get("input"), ensure_ascii=False)))
        elif kind == "tool_result":
            label = "tool result" + (" (error)" if block.get("is_error") else "")
            out.append((f"{label} {block.get('tool_use_id', '')}",
                        result_text(block.get("content"))))
        elif kind == "thinking":
            out.append(("thinking", str(block.get("thinking", ""))))
        else:
            out.append((str(kind or "block"), json.dumps(block, ensure_ascii=False)))
    return out


def quote_html(quote: Quote, where: str) -> str:
    """A quote as ``<pre>``, and a line saying what was left out and where it is whole."""
    text = f'<pre class="text">{esc(quote.shown)}</pre>' if quote.shown else ""
    if quote.cut:
        text += (f'<p class="cut">{quote.cut:,} of {quote.total:,} chars not shown; '
                 f'the whole text: {esc(where)}</p>')
    return text


def message_html(message: Any, budget: Budget, where: str) -> str:
    """One message: its role, then each block quoted."""
    role = role_of(message) or "?"
    parts = [f'<div class="message"><span class="role">{esc(role)}</span>']
    for label, text in block_texts(message):
        parts.append(f'<div class="block"><span class="kind">{esc(label)}</span> '
                     f'<span class="size">{len(text):,} chars</span>'
                     f'{quote_html(budget.quote(text), where)}</div>')
    parts.append("</div>")
    return "".join(parts)
