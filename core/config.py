"""Thresholds and settings: the course's constants as defaults, every one configurable.

Values come, in rising priority, from the defaults, a ``ctxlab.toml`` in the workspace, and
command-line flags. A bad value names its key in the error so the user can fix it.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.untrusted import MAX_DEPTH, UntrustedFileError, read_limited, too_deep

# More chars, tokens or messages than any context holds; every limit is turned into a float
# somewhere, and past this a value is a typo or an attack. The one bound of every count.
MAX_SETTING = 10**12

# The teaching lab's break switches: each turns off exactly one protection of the pipeline
# (core/compact), so a room can watch what that protection is for.
BREAK_SWITCHES = (
    "pair-protection",
    "unseen-guard",
    "persist-before-placeholder",
    "pointer-idempotence",
    "stage-order",
)


class ConfigError(ValueError):
    """A setting has a bad value; the message names the key."""


@dataclass(frozen=True)
class Thresholds:
    """The knobs of the compaction pipeline (names follow the contract's flags)."""

    context_limit: int = 50_000  # CONTEXT_CHAR_LIMIT: the trigger
    batch_limit: int = 200_000  # TOOL_RESULT_BATCH_CHAR_LIMIT
    large_result: int = 30_000  # LARGE_RESULT_CHAR_LIMIT (a result must be > this)
    keep_recent: int = 3  # KEEP_RECENT_RESULTS
    max_messages: int = 50  # snip_compact max_messages
    snip_head: int = 3  # snip head size
    reactive_keep: int = 5  # KEEP_RECENT_MESSAGES for reactive compact
    summary_input_limit: int = 80_000  # SUMMARY_INPUT_CHAR_LIMIT
    summary_head: int = 20_000  # head kept when the summary input is cut
    summary_tail: int = 60_000  # tail kept when the summary input is cut
    micro_short: int = 120  # content this short is never micro-compacted
    target_ratio: float = 0.8  # reduction target = int(context_limit * ratio)
    budget_preview: int = 2_000  # preview in the budget wrapper
    fit_preview: int = 1_000  # preview in fit_tool_results
    max_reactive_retries: int = 1
    summary_max_tokens: int = 2_000
    main_max_tokens: int = 8_000

    @property
    def target(self) -> int:
        """Where micro/fit stop: ``int(context_limit * 0.8)`` (40,000 by default)."""
        return int(self.context_limit * self.target_ratio)

    @property
    def snip_tail(self) -> int:
        """Messages kept at the end by snip: ``max_messages - head - 1`` (46)."""
        return self.max_messages - self.snip_head - 1

    def validate(self) -> Thresholds:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "target_ratio":
                if not isinstance(value, int | float) or not 0 < value <= 1:
                    raise ConfigError(f"{f.name}: must be a number in (0, 1], got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{f.name}: must be an integer, got {value!r}")
            if value < 0 or (value == 0 and f.name not in {"keep_recent", "max_reactive_retries"}):
                raise ConfigError(f"{f.name}: must be positive, got {value!r}")
            if value > MAX_SETTING:  # every limit is turned into a float somewhere
                raise ConfigError(f"{f.name}: must be at most {MAX_SETTING:,}")
        if self.max_messages < self.snip_head + 2:
            raise ConfigError(
                f"max_messages: must be at least snip_head + 2 ({self.snip_head + 2}),"
                f" got {self.max_messages}"
            )
        return self

    def replace(self, **changes: Any) -> Thresholds:
        return dataclasses.replace(self, **changes).validate()


THRESHOLD_KEYS = tuple(f.name for f in dataclasses.fields(Thresholds))


def thresholds_from_mapping(data: dict[str, Any], base: Thresholds | None = None,
                            source: str = "settings") -> Thresholds:
    """Apply ``data`` (keys with ``-`` or ``_``) over ``base``; unknown keys are an error."""
    changes: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in THRESHOLD_KEYS:
            raise ConfigError(f"{source}: unknown setting {key!r}")
        changes[name] = value
    try:
        return dataclasses.replace(base or Thresholds(), **changes).validate()
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


MAX_TOML_BYTES = 1_000_000  # a settings file; anything larger is not one


def has_toml(workspace: Path) -> bool:
    """Is there anything called ``ctxlab.toml`` in the workspace? (A FIFO or a directory
    counts: :func:`load_toml` then refuses it by name rather than skipping it unseen.)"""
    path = workspace / "ctxlab.toml"
    return path.exists() or path.is_symlink()


def load_toml(workspace: Path) -> dict[str, Any]:
    """Read ``ctxlab.toml`` from the workspace (empty when absent).

    It is a file someone else may have written, so every failure is one
    :class:`ConfigError` naming it: not a regular file (a FIFO would hang the read,
    ``/dev/zero`` fill memory), over 1 MB, not UTF-8, not TOML, or nested so deeply that
    the parser runs out of stack — which used to surface as a ``RecursionError`` blamed on
    whatever file the command was given.
    """
    path = workspace / "ctxlab.toml"
    if not has_toml(workspace):
        return {}
    try:
        text = read_limited(path, MAX_TOML_BYTES).decode("utf-8")
        data = tomllib.loads(text)
    except UntrustedFileError as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: is not UTF-8 text (byte {exc.start})") from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{path}: is nested too deeply to read") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if too_deep(data, MAX_DEPTH):
        raise ConfigError(f"{path}: is nested more than {MAX_DEPTH} levels deep")
    return data


def resolve_thresholds(workspace: Path | None = None, flags: dict[str, Any] | None = None,
                       budget: dict[str, Any] | None = None,
                       budget_source: str = "scenario") -> Thresholds | None:
    """The one layering of thresholds: defaults < a scenario's teaching ``budget`` <
    ``ctxlab.toml`` in ``workspace`` < ``flags`` (the workbench's limits screen replaces the
    result while a session runs). Each layer changes only the keys it names.

    None when neither a ``ctxlab.toml`` nor a flag has anything to say: the session then
    applies the scenario's own budget, which follows the scenario when it is changed.
    """
    toml = workspace is not None and has_toml(workspace)
    if not flags and not toml:
        return None
    base = scenario_thresholds(budget, budget_source)
    if toml:
        assert workspace is not None
        return load_thresholds(workspace, flags, base)
    return thresholds_from_mapping(flags or {}, base, source="command line")


def scenario_thresholds(budget: dict[str, Any] | None,
                        source: str = "scenario") -> Thresholds:
    """The defaults with a scenario's teaching budget over them."""
    return thresholds_from_mapping(budget, source=source) if budget else Thresholds()


def load_thresholds(workspace: Path, overrides: dict[str, Any] | None = None,
                    base: Thresholds | None = None) -> Thresholds:
    """``base`` (defaults, or a scenario's teaching budget), then ``ctxlab.toml`` (top level
    or a ``[thresholds]`` table), then flags: each layer changes only the keys it names."""
    data = load_toml(workspace)
    table = data.get("thresholds", {k: v for k, v in data.items() if not isinstance(v, dict)})
    if not isinstance(table, dict):
        raise ConfigError(f"{workspace / 'ctxlab.toml'}: thresholds: must be a table")
    table = {k: v for k, v in table.items() if k.replace("-", "_") in THRESHOLD_KEYS}
    thresholds = thresholds_from_mapping(table, base, source=str(workspace / "ctxlab.toml"))
    if overrides:
        thresholds = thresholds_from_mapping(overrides, thresholds, source="command line")
    return thresholds
