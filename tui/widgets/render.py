"""How one history message is drawn in a few lines: shared by "what the model sees" and the
inspector, so a pointer looks the same wherever a learner meets it.

Nothing here renders a large value whole: text is cut to a few short lines and every tool
result shows its size first. The special texts the engine puts into a history get their own
colour and label, because spotting them is the point of the workbench:

* ``pointer`` — ``[Earlier tool result saved at …]`` (micro_compact)
* ``wrapper`` — ``<persisted-output>`` with a preview (tool_result_budget, fit_tool_results)
* ``marker``  — ``[N messages archived at …]`` (snip_compact)
* ``summary`` — ``[Compacted]`` / ``[Reactive compact]`` (compact_history, reactive, manual)
"""

from __future__ import annotations

import json
from typing import Any

from textual.content import Content

from core.compact.breakdown import text_kind
from tui.i18n import t

KIND_STYLE = {
    "pointer": "bold $pointer",
    "wrapper": "bold $pointer",
    "marker": "bold $marker",
    "summary": "bold $summary",
}
KIND_LABEL = {  # message ids
    "pointer": "kind.pointer",
    "wrapper": "kind.wrapper",
    "marker": "kind.marker",
    "summary": "kind.summary",
}


def size_label(chars: int) -> str:
    """``6,000 chars``, ``36k chars``, ``1.2M chars`` (the unit in the UI's language)."""
    if chars >= 1_000_000:
        number = f"{chars / 1_000_000:.1f}M"
    elif chars >= 10_000:
        number = f"{chars / 1000:.0f}k"
    else:
        number = f"{chars:,}"
    return f"{number} {t('unit.chars')}"


def short_size(chars: int) -> str:
    """A size in at most 6 characters, for narrow table columns."""
    if chars >= 1_000_000:
        return f"{chars / 1_000_000:.1f}M"
    if chars >= 10_000:
        return f"{chars // 1000}k"
    return f"{chars:,}"


def head_lines(text: str, lines: int = 2, width: int = 96) -> str:
    """The first ``lines`` non-empty lines, each cut to ``width`` (never the whole value)."""
    out: list[str] = []
    for line in text[: lines * width * 4].splitlines():
        if line.strip():
            out.append(line if len(line) <= width else line[: width - 1] + "…")
        if len(out) == lines:
            break
    return "\n".join(out)


def as_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def block_lines(block: Any, lines: int) -> Content:
    """One content block of a message, a line or a few."""
    if not isinstance(block, dict):
        return Content(head_lines(str(block), lines))
    kind = block.get("type")
    if kind == "text":
        return Content(head_lines(block.get("text", ""), lines))
    if kind == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False)
        return Content.assemble(("→ ", "$accent"), (str(block.get("name", "?")), "bold"),
                                f" {args[:80]}")
    if kind == "tool_result":
        content = block.get("content", "")
        text = as_text(content)
        shape = text_kind(content)
        head = Content.assemble(("← ", "$secondary"),
                                (str(block.get("tool_use_id", "")), "dim"),
                                f"  {size_label(len(text))}")
        if shape in KIND_STYLE:
            return Content.assemble(head, "  ", (t(KIND_LABEL[shape]), KIND_STYLE[shape]), "\n",
                                    (head_lines(text, 1), KIND_STYLE[shape]))
        error = Content.assemble((" " + t("kind.error"), "bold $error")) \
            if block.get("is_error") else ""
        return Content.assemble(head, error, "\n", (head_lines(text, lines), "dim"))
    return Content(f"[{kind}]")


def message_content(index: int, message: dict[str, Any], lines: int = 2,
                    chars: int | None = None) -> Content:
    """A header (position, role, size as the caller measured it, special shape) and a short
    body; without ``chars`` the header states no size (this module measures nothing)."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    shape = text_kind(content, message)
    header = Content.assemble((f"#{index} ", "dim"), (role, "bold $primary"),
                              (f"  {size_label(chars)}" if chars is not None else "", "dim"))
    if shape in KIND_STYLE:
        header = Content.assemble(header, "  ", (t(KIND_LABEL[shape]), KIND_STYLE[shape]))
    if isinstance(content, str):
        style = KIND_STYLE.get(shape, "")
        return Content.assemble(header, "\n", (head_lines(content, lines + 1), style))
    parts = [block_lines(b, lines) for b in content or []]
    return Content("\n").join([header, *parts])
