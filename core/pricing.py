"""What a call costs: the API's ``usage`` priced with an editable per-model table.

Billed input is three kinds of token at three rates (``usage`` counts them apart): uncached
``input_tokens``, ``cache_creation_input_tokens`` (written to the prompt cache: dearer) and
``cache_read_input_tokens`` (read back: a tenth of the price). A server compaction's own
summarisation step is billed too, but is *not* in the top-level fields: it is the
``compaction`` entry of ``usage.iterations``. How a ``usage`` is read into those kinds is
:class:`core.usage.Usage`'s business; this module only prices them.

The table is ``core/prices.toml`` (shipped, editable), and a workspace's ``ctxlab.toml`` may
override or add models under ``[prices."<model>"]``. A model not in the table has no price:
callers show tokens only, never a guess.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import ConfigError
from core.usage import Usage

PRICES_FILE = Path(__file__).with_name("prices.toml")
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    model: str
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float

    def cost(self, tokens: Usage) -> float:
        """USD for a call's (or a tally's) billed tokens, a server compaction's step added."""
        billed = tokens.billed()
        return (billed.input * self.input + billed.cache_write_5m * self.cache_write_5m
                + billed.cache_write_1h * self.cache_write_1h
                + billed.cache_read * self.cache_read + billed.output * self.output) / PER


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Price]
    reference_model: str | None = None

    def find(self, model: str | None) -> Price | None:
        """The exact id, else the longest id that ``model`` starts with; None if unknown."""
        if not model:
            return None
        if model in self.models:
            return self.models[model]
        matches = [m for m in self.models if model.startswith(m)]
        return self.models[max(matches, key=len)] if matches else None

    @property
    def reference(self) -> Price | None:
        return self.find(self.reference_model)


def _price(model: str, data: dict[str, Any], defaults: dict[str, Any], source: str) -> Price:
    try:
        base_in, base_out = float(data["input"]), float(data["output"])
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"{source}: prices.{model}: needs numbers input and output") from None

    def rate(key: str) -> float:
        return float(data[key]) if key in data else base_in * float(defaults.get(key, 1.0))

    return Price(model, base_in, base_out, rate("cache_write_5m"), rate("cache_write_1h"),
                 rate("cache_read"))


def load_prices(workspace_toml: dict[str, Any] | None = None,
                path: Path = PRICES_FILE) -> PriceTable:
    """The shipped table, with a workspace's ``[prices]`` over it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    defaults = data.get("defaults", {})
    rows = dict(data.get("models", {}))
    extra = (workspace_toml or {}).get("prices", {})
    if not isinstance(extra, dict):
        raise ConfigError("ctxlab.toml: prices: must be a table of models")
    for model, row in extra.items():
        rows[model] = {**rows.get(model, {}), **row} if isinstance(row, dict) else row
    models = {m: _price(m, r if isinstance(r, dict) else {}, defaults, str(path))
              for m, r in rows.items()}
    return PriceTable(models, defaults.get("reference_model"))


def money(amount: float | None) -> str:
    """``$0.0123``; ``—`` when there is no price."""
    return "—" if amount is None else f"${amount:.4f}"
