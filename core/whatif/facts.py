"""What the session itself later relied on, and whether a strategy still showed it then.

A what-if comparison can price every strategy, but a cheap strategy that hid what the agent
went on to use is no bargain. The recording says what was used, without simulating anything:

* a **quote**: a reply (its text, or a tool call's input) contains a *distinctive* line of an
  earlier tool result. A line is distinctive when, with a read tool's line-number prefix
  (``    12\\t``) and the surrounding blanks taken off, it is at least :data:`MIN_LINE` chars
  long and holds at least :data:`MIN_WORD_CHARS` letters or digits (rulers, blank-padded
  tables and short output such as ``ok`` or ``exit 0`` never are), and the agent had not
  written it itself in an earlier reply (a file it wrote and then read back is its own text,
  not the result's). A line that several results hold belongs to the first. One fact per
  result and quoting request: the first line quoted.
* a **re-read**: a tool call reads a file (:mod:`core.whatif.reads`) that an earlier result
  already returned, whole or the same span, with no write to that file in between (after an
  edit the content differs, so reading it again is no repeat; a shell command that is no
  plain read and names the file counts as a write, and a whole read cut at the tool's cap
  covers only the lines it returned: :mod:`core.whatif.reads`). The fact is the latest such
  result that holds the content (not an error, nor a "file unchanged" answer).

A result is its tool_use id *and* its content (:class:`ResultKey`): some harnesses reuse ids
(``call_0``, or a replayed ``toolu_01read``), and a later result under the same id is another
result, with facts of its own; one with the same id and the same content is the same result.

``produced_at`` is the request that first sent the result, ``needed_at`` the request whose
reply quotes or re-reads it, both 1-based over ``recording.exchanges``: the fact had to be in
what *that* request sent. :func:`find_facts` reads the trajectory once: result lines go into a
dict keyed by their first :data:`MIN_LINE` chars, and each reply is scanned once, one dict
look-up per position, so a long session costs its length, not its length squared.

:class:`Visibility` judges the facts against what one strategy sends: a quote is visible when
its line appears anywhere in the messages (a summary that kept it counts); a re-read's result
when a tool result with that id still carries its original content, not a placeholder or a
preview (another result reusing the id is not it). A message is read once however many
requests carry it (kept by identity: a strategy that changes a message builds a new one).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.sources.replay.model import Compaction, Message, Recording
from core.sources.replay.original import CLEARED
from core.sources.watch.history_shapes import result_text
from core.whatif.carry import carried
from core.whatif.model import Fact, FactCheck
from core.whatif.reads import Read, lines_returned, names, read_of, shell_named, written_by

MIN_LINE = 30  # chars a quoted line needs, stripped: shorter lines recur by chance
MIN_WORD_CHARS = 12  # letters or digits it needs: rulers and padding are no facts
DETAIL = 120  # chars of a quoted line kept in Fact.detail
LINE_NUMBER = re.compile(r"^\s*\d+(?:\t|\u2192)")  # a read tool's "    12\t" / "    12→"
# A read tool's answer that the file is as last read (Claude Code's "Wasted call — file
# unchanged since your last Read"): still a re-read, but no copy of the content.
UNCHANGED = re.compile(r"\bunchanged since\b", re.IGNORECASE)
# Keys whose strings are no content a model reads (ids, signatures, base64 data).
NOT_CONTENT = frozenset({"id", "tool_use_id", "call_id", "tool_call_id", "type", "role",
                         "signature", "data", "encrypted_content", "media_type"})


def distinctive(raw: str) -> str | None:
    """``raw`` as a fact's line (prefix and blanks off), or ``None`` when it is not one."""
    if len(raw) < MIN_LINE:  # most output lines: no work beyond their length
        return None
    line = LINE_NUMBER.sub("", raw, count=1).strip()
    if len(line) < MIN_LINE or sum(map(str.isalnum, line)) < MIN_WORD_CHARS:
        return None
    return line


def _lines(text: str) -> Iterator[str]:
    """The distinctive lines of ``text``."""
    for raw in text.splitlines():
        line = distinctive(raw)
        if line is not None:
            yield line


def digest(text: str) -> str:
    """A result's text as a short digest: equal digests, equal content."""
    data = text.encode("utf-8", errors="surrogatepass")
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _cut(line: str) -> str:
    return line if len(line) <= DETAIL else line[:DETAIL - 1] + "…"


@dataclass(frozen=True)
class ResultKey:
    """One tool result: its tool_use id and its content's digest (ids can repeat)."""

    id: str
    digest: str


@dataclass
class _Result:
    """A tool result as first sent."""

    id: str
    tool: str
    produced_at: int
    digest: str
    read: Read | None
    returned: int | None = None  # a whole read's last line (a capped read holds no more)


@dataclass
class _Finder:
    """One walk over a recording's exchanges, collecting facts as they appear."""

    facts: list[Fact] = field(default_factory=list)
    calls: dict[str, tuple[str, Read | None]] = field(default_factory=dict)
    results: set[ResultKey] = field(default_factory=set)
    anchors: dict[str, list[tuple[str, _Result]]] = field(default_factory=dict)
    indexed: set[str] = field(default_factory=set)  # lines a result already holds
    own: set[str] = field(default_factory=set)  # lines the agent wrote in a reply
    reads: dict[str, list[_Result]] = field(default_factory=dict)  # path -> current reads
    noted: set[tuple[ResultKey, int, str]] = field(default_factory=set)  # one fact a kind

    def sent(self, messages: Sequence[Message], request: int) -> None:
        """The tool results among ``messages``, first sent by ``request``."""
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result(str(block.get("tool_use_id", "")), block.get("content"),
                                 request, block.get("is_error") is True)

    def _result(self, result_id: str, content: Any, request: int, error: bool) -> None:
        text = result_text(content)
        if not result_id or not text or text == CLEARED:
            return
        key = ResultKey(result_id, digest(text))
        if key in self.results:  # the same result sent again
            return
        self.results.add(key)
        tool, read = self.calls.get(result_id, ("", None))  # the latest call with that id
        returned = lines_returned(text) if read is not None and read.cap else None
        result = _Result(result_id, tool, request, key.digest, read, returned)
        if read is not None and not error and not UNCHANGED.search(text[:200]):
            self.reads.setdefault(read.path, []).append(result)
        for line in _lines(text):
            if line in self.own or line in self.indexed:
                continue
            self.indexed.add(line)
            self.anchors.setdefault(line[:MIN_LINE], []).append((line, result))

    def reply(self, message: Message | None, request: int) -> None:
        """What the reply to ``request`` quotes and re-reads; then its calls, remembered
        for the results that answer them."""
        if message is None:
            return
        texts = list(_reply_texts(message.get("content")))
        for text in texts:
            for line, result in self._quotes(text):
                self._fact(result, request, "quote", _cut(line))
        for text in texts:
            self.own.update(_lines(text))
        for block in _calls(message.get("content")):
            self._call(block, request)

    def _quotes(self, text: str) -> Iterator[tuple[str, _Result]]:
        """Each indexed line ``text`` holds, with its result: one dict look-up a position."""
        get = self.anchors.get
        for start in range(len(text) - MIN_LINE + 1):
            found = get(text[start:start + MIN_LINE])
            for line, result in found or ():
                if text.startswith(line, start):
                    yield line, result

    def _call(self, block: dict[str, Any], request: int) -> None:
        tool, given = str(block.get("name", "")), block.get("input")
        read = read_of(tool, given)
        if read is not None:
            earlier = [r for r in self.reads.get(read.path, ())
                       if r.read is not None and r.read.covers(read, r.returned)]
            if earlier:
                self._fact(earlier[-1], request, "reread", read.path)
        named = shell_named(tool, given)
        for path in [*written_by(tool, given), *(p for p in self.reads if names(named, p))]:
            self.reads.pop(path, None)
        self.calls[str(block.get("id", ""))] = (tool, read)

    def _fact(self, result: _Result, request: int, kind: str, detail: str) -> None:
        noted = (ResultKey(result.id, result.digest), request, kind)
        if noted in self.noted:
            return
        self.noted.add(noted)
        self.facts.append(Fact(result_id=result.id, tool=result.tool,
                               produced_at=result.produced_at, needed_at=request,
                               kind=kind, detail=detail,
                               digest=result.digest if kind == "reread" else ""))


def _reply_texts(content: Any) -> Iterator[str]:
    """A reply's text and its tool calls' input strings."""
    if isinstance(content, str):
        yield content
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            yield block["text"]
        elif block.get("type") == "tool_use":
            out: list[str] = []
            _strings(block.get("input"), out, {})
            yield from out


def _calls(content: Any) -> Iterator[dict[str, Any]]:
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            yield block


def find_facts(recording: Recording) -> list[Fact]:
    """The facts the recorded session relied on, in the order they were needed."""
    finder = _Finder()
    pending: list[Message] = []  # results appended just before a compaction
    request = 0
    for step in recording.steps:
        if isinstance(step, Compaction):
            pending.extend(step.input)
            continue
        request += 1
        finder.sent([*pending, *step.input], request)
        pending = []
        finder.reply(step.reply, request)
    return finder.facts


def _strings(value: Any, out: list[str], results: dict[str, list[Any]]) -> None:
    """Every content string in ``value`` into ``out``; each tool result's content into
    ``results`` under its call id, every one if an id repeats (Messages, Responses and Chat
    Completions shapes)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, results)
    elif isinstance(value, dict):
        call: Any = value.get("tool_use_id") or (value.get("call_id") if "output" in value
                                                 else value.get("tool_call_id"))
        if isinstance(call, str):
            results.setdefault(call, []).append(value.get("content", value.get("output")))
        for key, item in value.items():
            if key not in NOT_CONTENT:
                _strings(item, out, results)


@dataclass(frozen=True)
class _Shown:
    """One message as the checks read it: its text and its tool results by id."""

    text: str
    results: dict[str, list[Any]]


def _shown(message: Any) -> _Shown:
    out: list[str] = []
    results: dict[str, list[Any]] = {}
    _strings(message, out, results)
    return _Shown("\n".join(out), results)


class Visibility:
    """The facts of one session, checked against what a strategy sends."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self._needed: dict[int, list[Fact]] = {}
        for fact in facts:
            self._needed.setdefault(fact.needed_at, []).append(fact)
        self._sent = _SentIndex()

    def check(self, index: int, messages: Sequence[Message]) -> list[FactCheck]:
        """The facts needed at request ``index``, each judged visible or not in
        ``messages``; ``[]`` at once when none is needed there."""
        needed = self._needed.get(index)
        if not needed:
            return []
        shown = self._sent.read(messages)
        found = {fact.result_id: self._sent.results(fact.result_id) for fact in needed}
        whole: list[str] = []  # every message's text, joined when a quote needs it
        return [FactCheck(fact, _visible(fact, found[fact.result_id], shown, whole))
                for fact in needed]


class _SentIndex:
    """What a strategy sent last, read for the checks, and where each tool result is.

    A strategy sends mostly what it sent the time before (:mod:`core.whatif.carry`), so
    only the messages the previous request did not hold are read: a check costs what
    changed, not the whole history (thousands of messages, checked at nearly every request
    of a long session)."""

    def __init__(self) -> None:
        self._messages: list[Any] = []
        self._shown: list[_Shown] = []
        self._current: set[int] = set()  # ids of the _Shown read last
        self._where: dict[str, list[_Shown]] = {}  # result id -> messages that held it

    def read(self, messages: Sequence[Message]) -> list[_Shown]:
        current, old = list(messages), self._shown
        shown: list[_Shown] = []
        c = 0
        for start, length in carried(self._messages, current):
            if start >= 0:
                shown.extend(old[start:start + length])
            else:
                for message in current[c:c + length]:
                    fresh = _shown(message)
                    shown.append(fresh)
                    for rid in fresh.results:
                        self._where.setdefault(rid, []).append(fresh)
            c += length
        self._messages, self._shown, self._current = current, shown, set(map(id, shown))
        return shown

    def results(self, rid: str) -> list[str]:
        """The text of every tool result with id ``rid`` in what was read last, oldest
        first: an id can repeat, and only the content tells its results apart."""
        held = [s for s in self._where.get(rid, ()) if id(s) in self._current]
        if rid in self._where:
            self._where[rid] = held  # what is no longer sent is let go
        return [result_text(content) for s in held for content in s.results[rid]]


def _visible(fact: Fact, texts: list[str], shown: list[_Shown], whole: list[str]) -> bool:
    """A re-read: a result with that id, unchanged (a later result reusing the id is not
    it). A quote: the line in such a result (the common case, a few look-ups), else
    anywhere in what is sent (``whole`` holds the messages' text joined once, the first
    time a check needs it)."""
    if fact.kind != "quote":
        return any(digest(text) == fact.digest for text in texts)
    line = fact.detail.removesuffix("…")
    if any(line in text for text in texts):
        return True
    if not whole:
        whole.append("\n".join(s.text for s in shown))
    return line in whole[0]
