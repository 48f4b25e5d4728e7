"""One threshold resolver: defaults < scenario budget < ctxlab.toml < flags."""

from __future__ import annotations

from pathlib import Path

from core.config import Thresholds, resolve_thresholds, scenario_thresholds


def test_each_layer_changes_only_the_keys_it_names(tmp_path: Path) -> None:
    budget = {"context_limit": 9_000, "keep_recent": 2}
    assert resolve_thresholds(tmp_path, {}, budget) is None  # the scenario's own applies
    assert scenario_thresholds(budget).context_limit == 9_000
    (tmp_path / "ctxlab.toml").write_text("context-limit = 8000\nmax-messages = 30\n")
    toml = resolve_thresholds(tmp_path, {}, budget)
    assert toml is not None
    assert (toml.context_limit, toml.keep_recent, toml.max_messages) == (8_000, 2, 30)
    flags = resolve_thresholds(tmp_path, {"context_limit": 7_000}, budget)
    assert flags is not None
    assert (flags.context_limit, flags.keep_recent, flags.max_messages) == (7_000, 2, 30)
    plain = resolve_thresholds(None, {"max_messages": 40})
    assert plain == Thresholds().replace(max_messages=40)
