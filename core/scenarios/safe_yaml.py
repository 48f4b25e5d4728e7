"""What a scenario file may contain beyond valid YAML: plain, JSON-shaped data only.

``yaml.SafeLoader`` refuses to *build* arbitrary Python objects, but a scenario file used
to break ctxlab in three other ways, each a traceback instead of ``FILE:LINE: reason``:

* **tags** (``!!python/object/apply:…``, ``!!binary``): composing the node tree accepts any
  tag, constructing it then raised, or produced ``bytes`` the JSON event writer could not
  print once the run had already started;
* **unquoted dates** (``2024-01-01``): YAML 1.1 makes them ``datetime.date`` objects, which
  also reached the JSON writer mid-run;
* **deep nesting** (50,000 ``[``): composing recurses once per level and ended in a
  ``RecursionError``.

So before composing, the event stream — which PyYAML parses without recursion — is checked
for depth and tags, and every value taken from the tree is checked for types JSON cannot
carry. Each problem is reported with the line it is on.
"""

from __future__ import annotations

import yaml

MAX_DEPTH = 64  # far beyond any real scenario (the bundled ones nest 8 deep)

_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "merge")
)


class UnsafeYaml(ValueError):
    """A construct a scenario may not use; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def check_events(text: str) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and explicit tags, with their line.

    YAML syntax errors pass through as ``yaml.YAMLError`` for the caller's usual message.
    """
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!":  # "!" only forces plain text
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise UnsafeYaml(
                event.start_mark.line + 1,
                f"YAML tags like {shown} are not allowed in a scenario file; write plain "
                "text, numbers, lists and mappings",
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise UnsafeYaml(
                    event.start_mark.line + 1,
                    f"lists and mappings nest more than {MAX_DEPTH} levels deep here",
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def check_plain(node: yaml.Node) -> None:
    """Refuse values JSON cannot carry: dates and times, sets, keys that are collections.

    Iterative, and each node is visited once, so an alias that refers to itself ends.
    """
    todo, seen = [node], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        line = current.start_mark.line + 1
        if current.tag not in _PLAIN_TAGS:
            if current.tag == "tag:yaml.org,2002:timestamp":
                raise UnsafeYaml(
                    line,
                    f"unquoted date or time {current.value!r}; quote it "
                    f"('{current.value}') to keep it as text",
                )
            raise UnsafeYaml(line, f"unsupported YAML value of type {current.tag}")
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                if not isinstance(key, yaml.ScalarNode):
                    raise UnsafeYaml(key.start_mark.line + 1, "a mapping key must be plain text")
                todo.extend((key, value))
        elif isinstance(current, yaml.SequenceNode):
            todo.extend(current.value)
