"""docs/EVENTS.md is checked against core/events/: every event type and every field is
documented with its JSON type, nothing stale is documented, and the example lines are real.

To see what the code defines (a starting point when an event changes)::

    python -m tests.test_docs_events
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.events import EVENT_TYPES, event_from_json, wire_fields

DOC = Path(__file__).resolve().parent.parent / "docs" / "EVENTS.md"
COMMON = ("type", "t")

_ATOMS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
          "dict[str, Any]": "object"}


def json_type(annotation: str) -> str:
    """The JSON type of a field from its annotation: ``str | None`` → ``string or null``."""
    parts = [p.strip() for p in annotation.split("|")]
    names = []
    for part in parts:
        if part == "None":
            names.append("null")
        elif part.startswith("tuple[") and part.endswith(", ...]"):
            names.append("array of " + json_type(part[len("tuple["):-len(", ...]")]))
        elif part in _ATOMS:
            names.append(_ATOMS[part])
        else:
            raise AssertionError(f"no JSON type known for annotation {annotation!r}")
    return " or ".join(names)


def code_fields() -> dict[str, dict[str, str]]:
    """event type → {field: JSON type}, from the dataclasses (``t`` is common to all)."""
    return {
        name: {f.name: json_type(str(f.type)) for f in wire_fields(cls)
               if f.name not in COMMON}
        for name, cls in EVENT_TYPES.items()
    }


def skeleton() -> str:
    lines = []
    for name, fields in code_fields().items():
        lines += [f"### `{name}`", "", "| field | type | meaning |", "|---|---|---|"]
        lines += [f"| `{field}` | {kind} |  |" for field, kind in fields.items()]
        lines.append("")
    return "\n".join(lines)


_HEADING = re.compile(r"^### `([a-z_]+)`\s*$")
_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+?) \| (.*)\|\s*$")


def doc_fields(text: str) -> dict[str, dict[str, str]]:
    """The ``### `type``` sections of the doc, each with its ``| `field` | type | … |`` rows."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            assert heading.group(1) not in sections, f"{heading.group(1)} documented twice"
            current = sections.setdefault(heading.group(1), {})
            continue
        if line.startswith("#"):
            current = None
            continue
        row = _ROW.match(line)
        if row and current is not None:
            field, kind, meaning = row.groups()
            assert field not in current, f"field {field} documented twice"
            assert meaning.strip(), f"field {field} has no meaning"
            current[field] = kind.strip()
    return sections


def summary_table(text: str) -> list[str]:
    """The event kinds listed in the "Event types" table."""
    body = text.split("## Event types", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", body, flags=re.M)


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_event_type_and_field_is_documented_with_its_json_type(doc):
    documented = doc_fields(doc)
    expected = code_fields()
    hint = f"\n\nwhat the code defines:\n\n{skeleton()}"
    missing = sorted(set(expected) - set(documented))
    stale = sorted(set(documented) - set(expected))
    assert not missing, f"event types missing from docs/EVENTS.md: {missing}{hint}"
    assert not stale, f"docs/EVENTS.md documents event types that do not exist: {stale}"
    for name, fields in expected.items():
        assert documented[name] == fields, f"fields of `{name}` differ from the code{hint}"


def test_the_summary_table_lists_every_type_once(doc):
    assert sorted(summary_table(doc)) == sorted(EVENT_TYPES)


def test_the_example_lines_are_real_events(doc):
    block = doc.split("```jsonl\n", 1)[1].split("```", 1)[0]
    lines = block.strip().splitlines()
    assert len(lines) >= 5
    times = []
    for line in lines:
        data = json.loads(line)
        event = event_from_json(data)  # a known type, with acceptable fields
        assert set(data) == set(event.to_json()), line
        times.append(data["t"])
    assert json.loads(lines[0])["type"] == "run_start"
    assert json.loads(lines[-1])["type"] == "run_end"
    assert times == sorted(times)


def test_json_types_cover_every_annotation_in_use():
    for cls in EVENT_TYPES.values():
        for f in wire_fields(cls):
            json_type(str(f.type))  # raises for an annotation the doc cannot describe


if __name__ == "__main__":
    print(skeleton())
