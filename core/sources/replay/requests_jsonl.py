"""Requests JSONL: one request body per line, optionally with its response.

This is the format ``ctxlab watch`` records, and the simplest one to write from any
harness. A line's body is a Messages API request, or an OpenAI one (``"api"``:
``responses``, ``responses.compact``, ``chat.completions``, or told by the body), which
:mod:`~core.sources.replay.openai_bodies` turns into the Messages shape first; after that
every API is read alike. Each line is either

* a bare request body: ``{"model": …, "system": …, "tools": […], "messages": […], …}``, or
* ``{"request": {<request body>}, "response": {<Messages API response>}}`` — the
  response's ``content``, ``usage``, ``stop_reason`` and ``model`` are read.

A Responses body's ``input`` is a list of items, or a string beside a ``model`` (or on a
line naming its ``api``); a body without the field of the API its line resolves to is
skipped with a ``malformed`` notice naming it.

Optional on either shape: ``"timestamp"`` (a string, shown as given), ``"conversation"``
and ``"request_id"`` (the watch's own ids, read when present). Each line is one request.

A recording holds every call a client made, so it is first cut into conversations
(:mod:`core.sources.replay.conversations`) and one is replayed: the longest, or the one
asked for. Its side calls (a title, a quota probe, ``count_tokens``) are never steps.
Within the conversation, a request's new input is whatever its ``messages`` add to the
previous request's (the previous reply, as the client sent it back, is that request's
reply, not new input). Claude Code's summary request is the agent's compaction call, never
a user turn: the compaction shows on the next request, which starts with the summary
("This session is being continued…"), as ``manual_compact`` when the history holds the
``/compact`` command and ``auto_compact`` otherwise, with the summary request's ``usage``
as its cost. A request that only clears old tool results (Claude Code's
``[Old tool result content cleared]``) is its ``micro_compact``. Any other request that
does not extend the previous one shows a stage
``rewrite_compact`` by the recorded agent. After a compaction, ctxlab's side takes only the
messages after the last assistant message as new input. Codex's compaction calls (its local
checkpoint request, its remote ``compaction_trigger``, a ``responses/compact`` call) are
the same: the compaction shows on the next request, which holds the history Codex kept up
to its summary (or its encrypted ``compaction`` item), as the trigger its turn metadata
gives.

Read: ``messages`` (a mid-history ``role: "system"`` note is user text on ctxlab's
side), ``system``, ``model``, ``tools`` and
``max_tokens`` (to tell side calls), ``metadata.user_id`` (the session); in a response
``content``, ``usage``, ``stop_reason``, ``model``. Ignored: ``temperature``, ``stream`` and
every other key; a response's ``id`` and ``type``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.measure import json_chars
from core.messages import message_text, system_text
from core.sources.replay.codex_compaction import summary_of
from core.sources.replay.conversations import (
    Call,
    Conversation,
    Split,
    by_claude_code,
    cleared_results,
    compaction_call,
    continues_summary,
    manual_compaction,
    same,
    split,
    summary_end,
    texts,
)
from core.sources.replay.model import Compaction, Exchange, Message, Recording, ReplayError
from core.sources.replay.openai_bodies import (
    MESSAGES,
    Body,
    ResponseChain,
    api_of,
    body_problem,
)
from core.sources.replay.openai_bodies import body_of as openai_body
from core.sources.replay.reading import jsonl_objects, skip
from core.sources.replay.responses_items import BadItem
from core.sources.replay.shape import content_problem, text_or_none, usage_problem
from core.usage import context_tokens
from core.wording import plural


def _is_body(data: dict[str, Any], line: dict[str, Any]) -> bool:
    """A request body: a ``messages`` list (Messages, Chat Completions) or a Responses
    ``input`` as a real request holds it: a list of items, or a string beside a ``model``
    (or on a line that names its ``api``). A bare ``{"input": "…", "output": "…"}`` is a
    row of an evaluation data set, never a call a client made."""
    if isinstance(data.get("messages"), list):
        return True
    given = data.get("input")
    return isinstance(given, list) or (isinstance(given, str) and (
        "model" in data or "api" in line))


def body_of(data: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(request, response)`` of one line, or ``(None, None)`` when it is neither shape."""
    if not isinstance(data, dict):
        return None, None
    if isinstance(data.get("request"), dict) and _is_body(data["request"], data):
        response = data.get("response")
        return data["request"], response if isinstance(response, dict) else None
    if _is_body(data, data) and "payload" not in data:
        return data, None
    return None, None


def looks_like(first: Any) -> bool:
    return body_of(first)[0] is not None


def _problem(messages: list[Message], response: dict[str, Any] | None) -> str | None:
    """Why a line cannot be replayed: a field of the wrong type in its request or response."""
    for index, message in enumerate(messages):
        problem = content_problem(message.get("content"), f"messages[{index}].content")
        if problem:
            return problem
    if response is None:
        return None
    return content_problem(response.get("content"), "response.content") or \
        usage_problem(response.get("usage"), "response.usage")


def _extends(old: list[Message], new: list[Message]) -> bool:
    """Does ``new`` start with ``old``, as content? (Its first and last two messages are
    compared: O(1) per line; ``cache_control`` moves to the newest block on every call.)"""
    if not old:
        return True
    n = len(old)
    return len(new) >= n and all(same(old[i], new[i]) for i in {0, max(n - 2, 0), n - 1})


def _compacted(messages: list[Message]) -> bool:
    """Does this history start over from an agent's summary (Claude Code's or Codex's)?"""
    return continues_summary(messages) or summary_end(messages) is not None


def _after_last_assistant(messages: list[Message]) -> list[Message]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            return messages[i + 1:]
    return list(messages)


def _calls(text: str, recording: Recording) -> list[Call]:
    """Every line that holds a usable request body; the others become notices."""
    calls: list[Call] = []
    replies = ResponseChain()
    for line in jsonl_objects(text, recording):
        request, response = body_of(line.data)
        if request is None:
            recording.note("malformed", f"line {line.number} is not a request body (no "
                           "\"messages\" array nor \"input\" items, nor an \"input\" text "
                           "with a \"model\"); skipped", line.number)
            recording.skipped["not a request"] += 1
            recording.lines_read -= 1
            continue
        api = api_of(line.data, request, response)
        wrong = body_problem(api, request)
        if wrong:
            skip(recording, line.number, f"line {line.number}: {wrong}; skipped")
            recording.lines_read -= 1
            continue
        shaped: Body | None = None
        if api != MESSAGES:
            try:
                shaped = openai_body(api, request, response)
            except BadItem as exc:
                skip(recording, line.number, f"line {line.number}: {exc}; skipped")
                recording.lines_read -= 1
                continue
            missing = replies.link(shaped.request, request)
            if missing is not None:
                recording.note("previous_response_missing", f"line {line.number} continues "
                               f"response {missing[:80]!r}, which is not in the file: the "
                               "server held the earlier history, which the file does not "
                               "have, so this request's history starts at its own input",
                               line.number)
            request, response = shaped.request, shaped.response
        messages = [m for m in request["messages"] if isinstance(m, dict)]
        problem = _problem(messages, response)
        if problem:
            skip(recording, line.number, f"line {line.number}: {problem}; skipped")
            recording.lines_read -= 1
            continue
        call = Call(line=line.number, request=request, response=response,
                    messages=messages, timestamp=text_or_none(line.data.get("timestamp")),
                    conversation=_field(line.data.get("conversation")),
                    request_id=_field(line.data.get("request_id")), api=api)
        if shaped is not None:
            call.session, call.compaction = shaped.session, shaped.compaction
            call.trigger, call.codex = shaped.trigger, shaped.codex
            call.prewarm = shaped.prewarm
            replies.remember(messages, response)
        calls.append(call)
    return calls


def _field(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _choose(found: Split, wanted: str | None, path: Path) -> Conversation | None:
    if wanted is None:
        return found.default()
    chosen = next((c for c in found.conversations if c.id == wanted), None)
    if chosen is None:
        ids = ", ".join(c.id for c in found.conversations) or "none"
        raise ReplayError(f"{path}: no conversation {wanted!r} (it holds: {ids})")
    return chosen


def _note_others(recording: Recording, found: Split, chosen: Conversation) -> None:
    """Say what is not replayed: the other conversations, and the side calls."""
    for other in found.conversations:
        if other is not chosen:
            info = other.info()
            recording.note("conversation", f"conversation {info.id} ({info.requests} "
                           f"requests from line {info.first_line}: {info.label!r}) is not "
                           f"replayed; choose it with --conversation {info.id}",
                           info.first_line)
    if found.side_calls:
        kinds = Counter(what for _, what in found.side_calls)
        listed = ", ".join(f"{n} {what}" for what, n in sorted(kinds.items()))
        recording.note("side_calls", f"{plural(len(found.side_calls), 'side call')} kept apart, "
                       f"never a step of the history: {listed}", found.side_calls[0][0].line)


def load(path: Path, text: str, conversation: str | None = None) -> Recording:
    """The recording's ``conversation`` (the longest when None), its steps in order."""
    recording = Recording(format="requests", path=path, agent=Manager.AGENT)
    found = split(_calls(text, recording))
    recording.side_calls = len(found.side_calls)
    recording.conversations = [c.info() for c in found.conversations]
    chosen = _choose(found, conversation, path)
    if chosen is None:
        return recording
    recording.conversation = chosen.id
    _note_others(recording, found, chosen)
    if any(call.codex for call in chosen.calls):
        recording.agent = Manager.CODEX
    elif by_claude_code(chosen.calls):
        recording.agent = Manager.CLAUDE_CODE
    _Steps(recording).play(chosen.calls)
    return recording


class _Steps:
    """One conversation's calls turned into exchanges and the agent's own compactions."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.known: list[Message] | None = None  # the previous request's messages
        self.replied = False  # did the previous request get a reply recorded?
        self.last_tokens: int | None = None
        self.summary: Call | None = None  # Claude Code's summary request, not yet followed

    def play(self, calls: list[Call]) -> None:
        for call in calls:
            if compaction_call(call):
                self.summary = call  # the compaction's own call: never a user turn
                continue
            self._request(call)
        if self.summary is not None:
            self.recording.note("unanswered", f"the summary request on line "
                                f"{self.summary.line} is the last of its conversation: the "
                                "compaction it started is not in the recording",
                                self.summary.line)

    def _request(self, call: Call) -> None:
        messages, known = call.messages, self.known
        if not self.recording.system:
            self.recording.system = system_text(call.request.get("system"))
        if known is None:
            new = messages
        elif _extends(known, messages) and not (self.summary and _compacted(messages)):
            new = self._appended(known, messages)
            if self.summary is not None:
                self.recording.note("summary_unused", f"the summary request on line "
                                    f"{self.summary.line} was not followed by a compacted "
                                    "history", self.summary.line)
                self.summary = None
        elif self.summary is not None or _compacted(messages):
            end = summary_end(messages)
            new = messages[end + 1:] if end is not None else _after_last_assistant(messages)
            kept = messages[:len(messages) - len(new)]
            self.recording.steps.append(self._compaction(call, kept))
        elif (cleared := cleared_results(known, messages)) is not None:
            self.recording.steps.append(Compaction(
                by=self.recording.agent, trigger="auto", cleared=cleared,
                pre_tokens=self.last_tokens, line=call.line, timestamp=call.timestamp))
            new = self._appended(known, messages)
        else:
            new = _after_last_assistant(messages)
            self.recording.steps.append(Compaction(
                by=self.recording.agent, trigger="rewrite",
                kept=messages[:len(messages) - len(new)], pre_tokens=self.last_tokens,
                summary=f"the request on line {call.line} does not extend the previous "
                        f"one ({json_chars(known):,} → {json_chars(messages):,} chars)",
                line=call.line))
        self._exchange(call, new)

    def _appended(self, known: list[Message], messages: list[Message]) -> list[Message]:
        """What ``messages`` add to ``known``, the previous reply (as the client sends it
        back: it is that request's reply) left out."""
        new = messages[len(known):]
        return new[1:] if self.replied and new and new[0].get("role") == "assistant" else new

    def _compaction(self, call: Call, kept: list[Message]) -> Compaction:
        """The agent's summary compaction, seen on the first request after it."""
        summary, self.summary = self.summary, None
        usage = _usage(summary.response) if summary else None
        said = message_text({"role": "assistant", "content": summary.response.get("content")}
                            ) if summary and summary.response else ""
        said = said or summary_of("", kept)  # Codex's: its text, or what is known of it
        trigger = (summary.trigger if summary else None) or (
            "manual" if manual_compaction(call.messages) else "auto")
        return Compaction(
            by=self.recording.agent, trigger=trigger, kept=kept,
            summary=said or ("\n".join(texts(kept[0])) if kept else ""),
            pre_tokens=self.last_tokens or (context_tokens(usage) if usage else None),
            line=(summary or call).line, timestamp=(summary or call).timestamp, usage=usage)

    def _exchange(self, call: Call, new: list[Message]) -> None:
        request, response = call.request, call.response
        reply, usage = None, None
        if response is not None and isinstance(response.get("content"), list):
            reply = {"role": "assistant", "content": response["content"]}
            usage = _usage(response)
        model = text_or_none((response or {}).get("model") or request.get("model"))
        self.recording.model = self.recording.model or model
        stop = (response or {}).get("stop_reason")
        self.recording.steps.append(Exchange(
            input=new, reply=reply, usage=usage, model=model,
            stop_reason=stop if isinstance(stop, str) else None, sent=call.messages,
            line=call.line, timestamp=call.timestamp))
        self.known, self.replied = call.messages, reply is not None
        self.last_tokens = context_tokens(usage) if usage else self.last_tokens


def _usage(response: dict[str, Any] | None) -> dict[str, Any] | None:
    """A response's usage with only the counts that are counts (a recording is untrusted:
    a ``"7"`` or ``true`` where a number belongs is left out, not carried to every view)."""
    usage = (response or {}).get("usage")
    if not isinstance(usage, dict) or usage_problem(usage) is not None:
        return None
    return {k: v for k, v in usage.items() if not k.endswith("_tokens")
            or (isinstance(v, int) and not isinstance(v, bool))}
