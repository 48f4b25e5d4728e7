"""Bundled scenarios (YAML files beside this module) and how to find one by name or path."""

from __future__ import annotations

from pathlib import Path

from core.scenarios.model import Scenario, ScenarioError, load_scenario

HERE = Path(__file__).resolve().parent
DEFAULT_SCENARIO = "refactor-auth"


def bundled_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.yaml"))


def find_scenario(name_or_path: str) -> Scenario:
    """A bundled scenario by name, or a scenario file by path."""
    bundled = HERE / f"{name_or_path}.yaml"
    if bundled.is_file():
        return load_scenario(bundled)
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return load_scenario(path)
    raise ScenarioError(
        f"no scenario {name_or_path!r}; bundled: {', '.join(bundled_names()) or '(none)'}"
    )


__all__ = ["DEFAULT_SCENARIO", "Scenario", "ScenarioError", "bundled_names", "find_scenario"]
