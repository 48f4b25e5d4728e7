"""The agent loop: the course's ``agent_loop`` with events out and compaction in.

Per user request: recall memories → build the system prompt from named sections → repeat
{ prepare() → model call (reactive compact on overflow) → run every tool_use of the batch in
order, all results in one user message → a ``compact`` call in the batch compacts *after*
the results are appended } until the model stops calling tools → extract memories from the
turn as it was before any compaction → consolidate if due.

Pinned context (``pinned=True``, the default) lives outside ``messages`` and is rebuilt for
every call: the workspace's rules files (:mod:`core.sources.agent.pinned`, re-read when they
change) and the harness's work log (:mod:`core.sources.agent.worklog`, fed from every tool
result and request, and handed to every summary). Compaction never sees either, so it can
never lose them.

Every tool outcome is redacted (:mod:`core.tools.secrets`) before it becomes an event, a history
entry, a work-log note or an archive file: the tools run without ctxlab's keys, and a key
value a command still finds is replaced by ``[redacted NAME]``.

The loop is plain asyncio: cancelling the task that runs :meth:`Agent.run_turn` stops it at
the next await (a running bash command is killed with it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from core.archive.store import earlier_text
from core.compact.breakdown import prompt_breakdown
from core.compact.managers import Manager
from core.compact.pipeline import COMPACT_TOOL_RESULT
from core.compact.summarizer import RoutedSummarizer
from core.compact.truncate import make_compactor
from core.config import Thresholds
from core.events import (
    AssistantText,
    Error,
    Event,
    ModelRequest,
    ModelResponse,
    PairViolation,
    SystemPrompt,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from core.measure import estimate_tokens, json_chars
from core.memory.hooks import MemoryHooks
from core.memory.store import MemoryStore
from core.messages import validate_pairs
from core.providers.base import ModelCall, ModelReply, Provider
from core.sources.agent.api_stages import api_stages
from core.sources.agent.cache_estimate import PrefixCache
from core.sources.agent.pinned import ProjectRules
from core.sources.agent.side_calls import Announced
from core.sources.agent.system_prompt import Section, base_sections, describe, render
from core.sources.agent.worklog import WorkLog
from core.sources.controls import Controls
from core.tools import TOOL_SCHEMAS, ToolOutcome, ToolRunner
from core.tools.secrets import ToolSecrets, redact_file

MAX_STEPS_PER_TURN = 60
EMPTY_REPLY = "(no response)"


class Gate(Protocol):
    """What the loop awaits before each main call: the source's controls, or a gate that
    also counts the calls (a scripted session that can go back)."""

    async def wait(self) -> None: ...


@dataclass
class TurnLog:
    """Everything the model and tools said in one request, never compacted: memory is
    extracted from this, so a preference stated early in a long turn is read verbatim even
    after compaction summarised it away."""

    request: str
    messages: list[dict] = field(default_factory=list)


class Agent:
    """One conversation in one workspace."""

    def __init__(
        self,
        workspace: Path,
        provider: Provider,
        *,
        thresholds: Thresholds | None = None,
        emit: Callable[[Event], Any] | None = None,
        breaks: frozenset[str] = frozenset(),
        memory: bool = True,
        gate: Gate | None = None,
        offline_side_calls: bool | None = None,
        max_steps: int = MAX_STEPS_PER_TURN,
        compaction: Manager = Manager.PIPELINE,
        pinned: bool = True,
        worklog: WorkLog | None = None,
        count_tokens: bool = False,
        record_stages: bool = False,
        memory_store: MemoryStore | None = None,
        pass_env: tuple[str, ...] = (),
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.provider = provider
        # The tools' environment and the values kept out of their results: ctxlab's keys,
        # the variables passed with --pass-env, and a key the provider was given directly.
        self.secrets = ToolSecrets.from_environ(
            pass_env=pass_env, extra=[(f"{provider.name} API key",
                                       getattr(provider, "api_key", None))])
        self.emit = emit or (lambda event: event)
        self.gate: Gate = gate or Controls()  # held before each main call (pause, step, pace)
        self.max_steps = max_steps
        self.count_tokens = count_tokens
        # Scripted runs answer side calls offline unless the scenario scripts an answer.
        self.offline = provider.name == "scripted" if offline_side_calls is None \
            else offline_side_calls
        self.side = Announced(provider, self.emit)  # side calls show as events too
        summarizer = RoutedSummarizer(lambda: self.side_provider("summary"),
                                      (thresholds or Thresholds()).summary_max_tokens)
        self.compactor = make_compactor(compaction, self.workspace, thresholds, summarizer,
                                        self.emit, breaks)
        self.compactor.context_notes = self.summary_notes  # summaries see the work log
        self.compactor.ctx.snapshots = record_stages  # stage events carry before/after
        self.pinned = pinned
        self.rules = ProjectRules(self.workspace, self.emit)
        self.worklog = worklog if worklog is not None else WorkLog()
        self.memory_sections: list[Section] = []
        self.tools = ToolRunner(self.workspace, spool_dir=self.compactor.archive.results_dir)
        self.memory = MemoryHooks(self.workspace, self.emit, enabled=memory,
                                  store=memory_store)
        self.messages: list[dict] = []
        self.full_history: list[dict] = []
        self._result_at: dict[str, int] = {}  # tool_use_id -> index in full_history
        self._ledger_seen = 0
        self.turns = 0
        self.last_system: list[Section] = []
        api = getattr(provider, "api_context", None)
        self.prefix_cache = PrefixCache(enabled=api.cache if api is not None else True)
        self.tool_chars = json_chars(TOOL_SCHEMAS)  # the same definitions with every call

    # -- side-call routing --------------------------------------------------------------------

    def side_provider(self, purpose: str) -> Provider | None:
        """The provider for a side call, or None for the offline implementation."""
        if not self.offline or self.side.has_script(purpose):
            return self.side
        return None

    # -- one request ----------------------------------------------------------------------------

    async def run_turn(self, request: str) -> None:
        self.turns += 1
        self.emit(TurnStart(request=request))
        self.worklog.note_request(request, self.turns)
        log = TurnLog(request)
        self._append({"role": "user", "content": request}, log)
        self.memory_sections = await self.memory.recall(self.full_history,
                                                        self.side_provider("select"))
        for _ in range(self.max_steps):
            reply = await self._call_model(request)
            # The API refuses an empty assistant message anywhere but last: never keep one.
            content = reply.content or [{"type": "text", "text": EMPTY_REPLY}]
            self._append({"role": "assistant", "content": content}, log)
            uses = reply.tool_uses
            if reply.stop_reason == "compaction":
                continue  # the API paused after compacting: send the block back, go on
            if not uses:
                break
            results, wants_compact = await self._run_tools(uses)
            self._append({"role": "user", "content": results}, log)
            if wants_compact:
                self.messages = await self.compactor.compact(self.messages, request)
        await self.memory.after_turn(log.messages, self.side_provider("extract"),
                                     self.side_provider("consolidate"))
        self.emit(TurnEnd(chars=json_chars(self.messages)))

    def _append(self, message: dict, log: TurnLog) -> None:
        self.messages.append(message)
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result_at[block.get("tool_use_id", "")] = len(self.full_history)
        self.full_history.append(message)
        log.messages.append(message)

    def _archive_full_output(self, tool_use_id: str, outcome: ToolOutcome) -> str:
        """A tool output cut to a preview is kept whole in the archive, like any large result.

        The model then sees the same ``<persisted-output>`` wrapper as for a result the
        budget persisted (the preview it would have seen, and the file holding all of it), so
        later stages, recovery and the model's own ``read_file`` treat both alike.
        """
        if outcome.full_output is None:
            return outcome.content
        archive = self.compactor.archive
        try:
            redact_file(outcome.full_output, self.secrets.redactor)  # bash's is clean already
            path = archive.adopt(tool_use_id, outcome.full_output)
            wrapper = archive.wrap(path, outcome.content)
            archive.flush()
        except OSError as exc:
            outcome.full_output.unlink(missing_ok=True)
            self.emit(Error(message=f"the whole output of {tool_use_id} could not be "
                                    f"archived: {exc}", kind="archive"))
            return outcome.content
        return wrapper

    def _shed_persisted(self) -> None:
        """Hold results already saved byte-exact on disk as their pointer in ``full_history``.

        The uncompacted history serves extraction (which reads text, not tool output) and
        the UI; keeping megabytes of persisted output in it would make memory grow with
        everything the tools ever printed instead of with the conversation.
        """
        archive = self.compactor.archive
        for entry in archive.ledger[self._ledger_seen:]:
            path, tool_use_id = entry.get("where", ""), entry.get("tool_use_id", "")
            index = self._result_at.get(tool_use_id)
            if index is None or not archive.is_persisted(path):
                continue
            message = self.full_history[index]
            blocks = [
                {**b, "content": earlier_text(path)}
                if isinstance(b, dict) and b.get("tool_use_id") == tool_use_id
                and b.get("type") == "tool_result" else b
                for b in message["content"]
            ]
            self.full_history[index] = {**message, "content": blocks}
        self._ledger_seen = len(archive.ledger)

    # -- pinned context -------------------------------------------------------------------------

    def system_sections(self) -> list[Section]:
        """What the next main call is told: ctxlab's base sections, the pinned project rules
        (re-read when their files changed), this turn's memory sections, and the work log
        last (it changes every call; everything before it stays cacheable)."""
        rules = self.rules.sections() if self.pinned else []
        log = [Section("worklog", self.worklog.section_text(), "pinned", self.worklog.source)] \
            if self.pinned else []
        return base_sections(self.workspace) + rules + self.memory_sections + log

    @staticmethod
    def stable_system_chars(sections: list[Section], system: str) -> int | None:
        """Where the work log (last, changing every call) starts in the rendered system
        prompt: the cache breakpoint goes before it. None when there is no work log."""
        if not sections or sections[-1].name != "worklog" or not sections[-1].text.strip():
            return None
        stable = render(sections[:-1])
        return len(stable) if stable and system.startswith(stable) else None

    def summary_notes(self) -> str:
        """The work log's progress, for every summary (nothing when pinning is off)."""
        return self.worklog.summary_notes() if self.pinned else ""

    async def _call_model(self, request: str) -> ModelReply:
        await self.gate.wait()

        async def send(messages: list[dict]) -> ModelReply:
            sections = self.system_sections()  # per request: a hand edit applies at once
            self.last_system = sections
            system = render(sections)
            stable = self.stable_system_chars(sections, system)
            chars = json_chars(messages)
            for v in validate_pairs(messages, allow_pending=False):  # only a break switch can
                self.emit(PairViolation(kind=v.kind, message_index=v.message_index,
                                        tool_use_id=v.tool_use_id,
                                        stage=self.compactor.violation_stage(v)))
            described = describe(sections)
            self.emit(SystemPrompt(sections=described,
                                   texts=tuple(s.text for s in sections if s.text.strip())))
            split = self.prefix_cache.observe(system, TOOL_SCHEMAS, messages, stable)
            self.emit(ModelRequest(purpose="main", chars=chars,
                                   est_tokens=estimate_tokens(system) + chars // 4,
                                   messages=len(messages), system_chars=len(system),
                                   counted_tokens=await self._counted(system, messages),
                                   cache_read_est=split.read, cache_write_est=split.write,
                                   breakdown=self.request_breakdown(described, system,
                                                                    messages),
                                   sent=tuple(messages),
                                   sent_sizes=self.compactor.sizes_of(messages)))
            reply = await self.provider.complete(
                # a copy: the loop keeps appending to its own list after the call
                ModelCall(purpose="main", messages=list(messages), system=system,
                          max_tokens=self.compactor.thresholds.main_max_tokens,
                          tools=TOOL_SCHEMAS, system_stable=stable),
                on_text=lambda delta: self.emit(AssistantText(delta=delta)),
            )
            self.emit(ModelResponse(purpose="main", stop_reason=reply.stop_reason,
                                    usage=reply.usage))
            for stage in api_stages(messages, reply.content, reply.usage, reply.extras,
                                    self.compactor.archive):
                self.emit(stage)  # the API's own context management (api-edit, api-compact)
            return reply

        self.messages, reply = await self.compactor.call_with_recovery(
            self.messages, request, send)
        self._shed_persisted()
        return reply

    def request_breakdown(self, sections: tuple[dict, ...], system: str,
                          messages: list[dict]) -> dict[str, int]:
        """What one main call sends, by category: the system prompt by its sections' kind,
        the tool definitions, and the messages (those add up to the call's ``chars``)."""
        return {**prompt_breakdown(sections, len(system)), "tools": self.tool_chars,
                **self.compactor.categories.totals(messages)}

    async def _counted(self, system: str, messages: list[dict]) -> int | None:
        """The API's own token count beside the estimate (opt-in: one more request)."""
        counter = getattr(self.provider, "count_tokens", None)
        if not self.count_tokens or counter is None:
            return None
        return await counter(system, messages, TOOL_SCHEMAS)

    async def _run_tools(self, uses: list[dict]) -> tuple[list[dict], bool]:
        """Every tool_use gets a result, in order; ``compact`` is deferred, not executed."""
        results: list[dict] = []
        wants_compact = False
        for use in uses:
            tool_id, name = use.get("id", ""), use.get("name", "")
            data = given if isinstance(given := use.get("input"), dict) else {}
            self.emit(ToolCall(id=tool_id, name=name, input=data))
            if name == "compact":
                wants_compact = True
                content, is_error = COMPACT_TOOL_RESULT, False
            else:
                with self.secrets.applied():
                    outcome = self._redacted(await self.tools.run(name, data))
                content, is_error = self._archive_full_output(tool_id, outcome), outcome.is_error
                self.worklog.note_tool(name, data, outcome, self.turns)
            self.emit(ToolResult(id=tool_id, name=name, chars=len(content), is_error=is_error))
            block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
            if is_error:
                block["is_error"] = True
            results.append(block)
        return results, wants_compact

    def _redacted(self, outcome: ToolOutcome) -> ToolOutcome:
        """The outcome with every known secret value replaced, whatever tool produced it (a
        ``read_file`` of a ``.env``, an error quoting a value, a ``glob`` of odd names)."""
        redactor = self.secrets.redactor
        content = redactor.redact(outcome.content) if isinstance(outcome.content, str) \
            else outcome.content
        return replace(outcome, content=content, meta=redactor.redact_value(outcome.meta))
