"""Themes: the YAML files in the ``themes`` package, turned into Textual ``Theme`` objects.

Themes are data, not code, so a presenter can add one without touching Python; they ship
inside the wheel and are read with :mod:`importlib.resources`, never from the source tree.
Each file holds Textual's colour fields plus ``variables`` — ctxlab's own colours for
pointers, markers, summaries, recalled memories and diff highlights — which the stylesheet
uses as ``$pointer``, ``$marker`` and so on — and ``meter-marks``, the weight of the target
and trigger marks on a bar (:mod:`tui.widgets.meter_marks`). :data:`VARIABLE_DEFAULTS`
fills in any a theme leaves out, so a minimal theme still renders.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml
from textual.theme import Theme

DEFAULT_THEME = "ctxlab-dark"
THEME_PACKAGE = "themes"
_FIELDS = (
    "primary", "secondary", "warning", "error", "success", "accent", "foreground",
    "background", "surface", "panel", "boost", "dark", "luminosity_spread", "text_alpha",
)
VARIABLE_DEFAULTS: dict[str, str] = {
    "pointer": "#56C8D8",
    "marker": "#C792EA",
    "summary": "#F2B134",
    "recalled": "#6CC070",
    "removed": "#5C2B2B",
    "added": "#23452C",
    "changed": "#4A4020",
    "meter-fill": "#5AA9E6",
    "meter-over": "#E5534B",
    "meter-marks": "light",  # the target and trigger marks: light, or heavy and labelled
}


class ThemeError(ValueError):
    """A theme file is unusable; the message names the file."""


def theme_from_mapping(data: dict[str, Any], source: str) -> Theme:
    """Build a ``Theme`` from one YAML mapping; unknown keys are refused, not ignored."""
    if not isinstance(data, dict) or not data.get("name") or not data.get("primary"):
        raise ThemeError(f"{source}: a theme needs at least 'name' and 'primary'")
    unknown = set(data) - {"name", "variables", *_FIELDS}
    if unknown:
        raise ThemeError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
    variables = {**VARIABLE_DEFAULTS, **{str(k): str(v) for k, v in
                                         (data.get("variables") or {}).items()}}
    fields = {k: data[k] for k in _FIELDS if k in data}
    return Theme(name=str(data["name"]), variables=variables, **fields)


def load_themes() -> dict[str, Theme]:
    """Every ``*.yaml`` theme shipped in the ``themes`` package, by name."""
    found: dict[str, Theme] = {}
    for entry in sorted(resources.files(THEME_PACKAGE).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith((".yaml", ".yml")):
            continue
        try:
            data = yaml.safe_load(entry.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ThemeError(f"{entry.name}: invalid YAML: {exc}") from None
        theme = theme_from_mapping(data, entry.name)
        found[theme.name] = theme
    return found
