"""The Messages API's own context management, as ctxlab configures it.

Two server-side managers can stand beside (or instead of) the s08 pipeline:

* **context editing** — ``clear_tool_uses_20250919`` (and ``clear_thinking_20251015``), beta
  ``context-management-2025-06-27``: the server clears old tool results before the model
  sees the prompt; the client keeps its full history;
* **server compaction** — ``compact_20260112``, beta ``compact-2026-01-12``: past a trigger
  the server summarises the conversation into a ``compaction`` block that the client must
  send back; everything before the block is then ignored.

The shapes built here are the installed SDK's own TypedDicts
(``anthropic.types.beta.BetaClearToolUses20250919EditParam``,
``BetaCompact20260112EditParam``…). The API's documented limits are checked *before* any
call, so a bad combination is one clear :class:`~core.config.ConfigError`, not an HTTP 400
halfway through a run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from core.compact.managers import Manager, joined
from core.config import MAX_SETTING as MAX_COUNT
from core.config import ConfigError

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
COMPACTION_BETA = "compact-2026-01-12"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
COMPACT = "compact_20260112"

# Documented defaults and limits (platform docs: context editing, compaction).
DEFAULT_CLEAR_TRIGGER = 100_000  # input tokens
DEFAULT_CLEAR_KEEP = 3  # tool uses
DEFAULT_COMPACTION_TRIGGER = 150_000  # input tokens
MIN_COMPACTION_TRIGGER = 50_000


def shown(value: object, limit: int = 40) -> str:
    """A setting's value for a message: a 400-digit number is cut, not printed whole."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_COUNT:
        return "a number of more than 13 digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
TRIGGER_UNITS = ("input_tokens", "tool_uses")


@dataclass(frozen=True)
class ContextEditing:
    """``clear_tool_uses_20250919``: clear the oldest tool results past ``trigger``."""

    trigger: int = DEFAULT_CLEAR_TRIGGER
    trigger_unit: str = "input_tokens"  # or "tool_uses"
    keep: int = DEFAULT_CLEAR_KEEP  # most recent tool uses left alone
    clear_at_least: int | None = None  # input tokens; clear nothing unless this much goes
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False

    def edit(self) -> dict[str, Any]:
        """The edit as ``BetaClearToolUses20250919EditParam``."""
        edit: dict[str, Any] = {
            "type": CLEAR_TOOL_USES,
            "trigger": {"type": self.trigger_unit, "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
        }
        if self.clear_at_least is not None:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least}
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs:
            inputs = self.clear_tool_inputs
            edit["clear_tool_inputs"] = inputs if isinstance(inputs, bool) else list(inputs)
        return edit


@dataclass(frozen=True)
class ServerCompaction:
    """``compact_20260112``: the server summarises the history past ``trigger`` tokens."""

    trigger: int = DEFAULT_COMPACTION_TRIGGER
    pause_after_compaction: bool = False
    instructions: str | None = None

    def edit(self) -> dict[str, Any]:
        """The edit as ``BetaCompact20260112EditParam``."""
        edit: dict[str, Any] = {
            "type": COMPACT,
            "trigger": {"type": "input_tokens", "value": self.trigger},
        }
        if self.pause_after_compaction:
            edit["pause_after_compaction"] = True
        if self.instructions:
            edit["instructions"] = self.instructions
        return edit


@dataclass(frozen=True)
class ApiContext:
    """What ctxlab asks the API to manage, and whether main calls use prompt caching."""

    editing: ContextEditing | None = None
    compaction: ServerCompaction | None = None
    clear_thinking: int | None = None  # keep N thinking turns (needs extended thinking)
    cache: bool = True  # cache_control breakpoints on main calls
    thinking: bool = False  # whether main calls enable extended thinking (ctxlab: never)

    @property
    def active(self) -> bool:
        """Whether any server-side manager is on (the request then goes to the beta API)."""
        return bool(self.editing or self.compaction or self.clear_thinking is not None)

    def validate(self) -> ApiContext:
        """The API's documented rules, checked locally; the message names the setting."""
        if self.compaction is not None:
            trigger = self.compaction.trigger
            if isinstance(trigger, bool) or not isinstance(trigger, int) \
                    or not MIN_COMPACTION_TRIGGER <= trigger <= MAX_COUNT:
                raise ConfigError(
                    f"api compaction trigger: must be at least {MIN_COMPACTION_TRIGGER:,} input"
                    f" tokens (the API's minimum) and at most {MAX_COUNT:,}, got {shown(trigger)}")
            instructions = self.compaction.instructions
            if instructions is not None and not str(instructions).strip():
                raise ConfigError("api compaction instructions: must not be empty")
        if self.editing is not None:
            e = self.editing
            if e.trigger_unit not in TRIGGER_UNITS:
                raise ConfigError(
                    f"api context editing trigger unit: must be one of {', '.join(TRIGGER_UNITS)},"
                    f" got {e.trigger_unit!r}")
            for name, value in (("trigger", e.trigger), ("keep", e.keep),
                                ("clear_at_least", e.clear_at_least)):
                if value is None and name == "clear_at_least":
                    continue
                if isinstance(value, bool) or not isinstance(value, int) or value < 0 \
                        or (value == 0 and name != "keep") or value > MAX_COUNT:
                    raise ConfigError(
                        f"api context editing {name}: must be a positive integer up to "
                        f"{MAX_COUNT:,}, got {shown(value)}")
        if self.clear_thinking is not None and not self.thinking:
            raise ConfigError(
                "api clear_thinking: needs extended thinking, which ctxlab's main calls do not"
                " turn on; remove clear_thinking")
        return self

    def betas(self) -> list[str]:
        """The ``anthropic-beta`` names the request needs."""
        betas = []
        if self.editing or self.clear_thinking is not None:
            betas.append(CONTEXT_MANAGEMENT_BETA)
        if self.compaction:
            betas.append(COMPACTION_BETA)
        return betas

    def context_management(self) -> dict[str, Any] | None:
        """``BetaContextManagementConfigParam``: clear_thinking first (the API requires it
        first when combined), then clearing tool uses, then compaction."""
        edits: list[dict[str, Any]] = []
        if self.clear_thinking is not None:
            edits.append({"type": CLEAR_THINKING,
                          "keep": {"type": "thinking_turns", "value": self.clear_thinking}})
        if self.editing:
            edits.append(self.editing.edit())
        if self.compaction:
            edits.append(self.compaction.edit())
        return {"edits": edits} if edits else None

    def managers(self) -> tuple[Manager, ...]:
        """The API's own managers this asks for: context editing, compaction, or both."""
        on = []
        if self.editing or self.clear_thinking is not None:
            on.append(Manager.API_EDIT)
        if self.compaction:
            on.append(Manager.API_COMPACT)
        return tuple(on)

    def manager(self, local: Manager) -> str:
        """Who is in charge of the context, as ``run_start`` says it: the run's own engine,
        then the API's managers, joined by ``+`` (``ctxlab``, ``ctxlab+api-compact``)."""
        return joined((local, *self.managers()))


# -- from ctxlab.toml and flags --------------------------------------------------------------

EDITING_KEYS = {f.name for f in dataclasses.fields(ContextEditing)}
COMPACTION_KEYS = {f.name for f in dataclasses.fields(ServerCompaction)}


def _section(cls: type, data: Any, keys: set[str], source: str) -> Any:
    """A ``[api.*]`` table as its dataclass; ``true`` means the defaults, ``false`` off."""
    if data is False or data is None:
        return None
    if data is True:
        return cls()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be a table or true/false, got {data!r}")
    changes: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name == "enabled":
            if not value:
                return None
            continue
        if name not in keys:
            raise ConfigError(f"{source}: unknown setting {key!r}")
        changes[name] = tuple(value) if isinstance(value, list) else value
    return cls(**changes)


def api_context_from_mapping(data: dict[str, Any], base: ApiContext | None = None,
                             source: str = "settings") -> ApiContext:
    """Apply an ``[api]`` table over ``base``: ``cache``, ``context_editing``,
    ``compaction``, ``clear_thinking``; each table replaces the one in ``base``."""
    result = base or ApiContext()
    for key, value in data.items():
        name = key.replace("-", "_")
        where = f"{source}: api.{key}"
        if name == "cache":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: must be true or false, got {value!r}")
            result = dataclasses.replace(result, cache=value)
        elif name == "context_editing":
            result = dataclasses.replace(
                result, editing=_section(ContextEditing, value, EDITING_KEYS, where))
        elif name == "compaction":
            result = dataclasses.replace(
                result, compaction=_section(ServerCompaction, value, COMPACTION_KEYS, where))
        elif name == "clear_thinking":
            result = dataclasses.replace(result, clear_thinking=value)
        else:
            raise ConfigError(f"{source}: unknown setting api.{key!r}")
    try:
        return result.validate()
    except (ConfigError, TypeError) as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            merged[key] = {**old, **value}
        elif isinstance(value, dict) and old is True:
            merged[key] = value
        else:
            merged[key] = value
    return merged


def load_api_context(toml: dict[str, Any], flags: dict[str, Any] | None = None,
                     source: str = "ctxlab.toml") -> ApiContext:
    """The ``[api]`` table of ``ctxlab.toml``, then the flags (each key they name wins)."""
    table = toml.get("api", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: api: must be a table")
    data = _merge({k.replace("-", "_"): v for k, v in table.items()}, flags or {})
    return api_context_from_mapping(data, source=source if not flags else
                                    f"{source} + command line")
