"""Scenario files: the format, the dataclasses, and a loader whose errors name file and line.

A scenario is YAML::

    name: refactor-auth
    title: Refactor an auth module
    workspace: refactor_auth          # a generator in core/scenarios/workspaces.py
    thresholds: {context_limit: 12000} # optional: a teaching budget
    memory:                            # optional: records seeded into .memory/ first
      - {name: ..., type: user, description: ..., body: ...}
    sessions:                          # each session is a fresh conversation, same workspace
      - turns:
          - user: "Refactor the auth module"
            replies:                   # one item per main model call, in order
              - say: "Let me look."
                tools:
                  - read_file: {path: auth/session.py}
              - error: prompt_too_long # a scripted API error at this call
              - say: "Done."
            select: [[0]]              # optional scripted side-call answers, one per call
            extract: [[{name: ..., type: user, scope: persistent, ...}]]
            probes:                    # optional: facts that should still be visible
              - {ask: "Which indentation?", expect: "tabs"}

Only the model's words are scripted; tools, compaction and memory are the real engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.config import THRESHOLD_KEYS
from core.scenarios.safe_yaml import UnsafeYaml, check_events, check_plain
from core.untrusted import UntrustedFileError, read_limited

TOOL_NAMES = ("bash", "read_file", "write_file", "edit_file", "glob", "compact")
SIDE_PURPOSES = ("summary", "select", "extract", "consolidate")
TOP_KEYS = ("name", "title", "description", "workspace", "thresholds", "memory", "sessions")
SCRIPTED_ERROR_NAMES = ("prompt_too_long", "request_too_large", "overloaded", "auth", "network")


class ScenarioError(ValueError):
    """A scenario file is wrong; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Reply:
    say: str = ""
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Probe:
    ask: str
    expect: str


@dataclass(frozen=True)
class Turn:
    user: str
    replies: tuple[Reply, ...]
    side: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    probes: tuple[Probe, ...] = ()


@dataclass(frozen=True)
class Session:
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    workspace: str
    sessions: tuple[Session, ...]
    thresholds: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    source: str = ""
    memory: tuple[dict[str, str], ...] = ()  # records seeded into .memory/ before the run

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


MAX_SCENARIO_BYTES = 8_000_000  # the bundled scenarios are under 20 kB; a file read whole


def load_scenario(path: Path) -> Scenario:
    """Read and parse a scenario file, refusing what is no file before reading anything:
    a FIFO would hang the read forever and ``/dev/zero`` fill memory (one line each)."""
    try:
        text = read_limited(path, MAX_SCENARIO_BYTES).decode("utf-8")
    except UntrustedFileError as exc:
        raise ScenarioError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc}") from None
    return parse_scenario(text, str(path))


def parse_scenario(text: str, source: str = "<scenario>") -> Scenario:
    try:
        check_events(text)  # tags and deep nesting, before composing can recurse
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except UnsafeYaml as exc:
        raise ScenarioError(f"{source}:{exc.line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(f"{source}:{line}: invalid YAML: {problem}") from None
    return _Parser(source).scenario(node)


NULL_TAG = "tag:yaml.org,2002:null"


def yaml_kind(value: Any) -> str:
    """How a user would name a YAML value that is not text: ``null``, ``a number``…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"  # date, datetime, bytes


class _Parser:
    """Walks the YAML node tree so every error can point at a line."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, node: yaml.Node | None, message: str) -> ScenarioError:
        line = node.start_mark.line + 1 if node is not None else 1
        return ScenarioError(f"{self.source}:{line}: {message}")

    def mapping(self, node: yaml.Node | None, what: str) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, yaml.Node] = {}
        for key, value in node.value:
            out[str(key.value)] = value
        return out

    def seq(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{what} must be a list")
        return list(node.value)

    def text(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{what} must be text")
        return str(node.value)

    def value(self, node: yaml.Node) -> Any:
        """Plain JSON-shaped data (no dates, no sets), so the run's JSON events can carry it."""
        if isinstance(node, yaml.ScalarNode) and node.tag == NULL_TAG:
            return None  # an empty value (`name:`) does not survive serialize + load
        try:
            check_plain(node)
            return yaml.safe_load(yaml.serialize(node))
        except UnsafeYaml as exc:
            raise ScenarioError(f"{self.source}:{exc.line}: {exc}") from None
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or exc
            raise self.fail(node, f"invalid value: {problem}") from None

    def known_keys(self, node: yaml.Node, allowed: tuple[str, ...], what: str) -> None:
        """A typo (``threshold:``) must not be silently ignored."""
        for key, _ in node.value:
            if str(key.value) not in allowed:
                raise self.fail(key, f"unknown key {key.value!r} in {what}; expected one of "
                                     f"{', '.join(allowed)}")

    def scenario(self, node: yaml.Node | None) -> Scenario:
        from core.scenarios.workspaces import GENERATORS

        top = self.mapping(node, "a scenario")
        self.known_keys(node, TOP_KEYS, "a scenario")
        for key in ("name", "workspace", "sessions"):
            if key not in top:
                raise self.fail(node, f"missing '{key}'")
        workspace = self.text(top["workspace"], "workspace")
        if workspace not in GENERATORS:
            raise self.fail(top["workspace"], f"unknown workspace {workspace!r}; one of "
                                              f"{', '.join(GENERATORS)}")
        thresholds = self.value(top["thresholds"]) if "thresholds" in top else {}
        if not isinstance(thresholds, dict):
            raise self.fail(top["thresholds"], "thresholds must be a mapping")
        self.check_thresholds(top["thresholds"]) if "thresholds" in top else None
        sessions = tuple(self.session(s) for s in self.seq(top["sessions"], "sessions"))
        if not sessions:
            raise self.fail(top["sessions"], "a scenario needs at least one session")
        return Scenario(
            name=self.text(top["name"], "name"),
            title=self.text(top["title"], "title") if "title" in top else "",
            workspace=workspace,
            sessions=sessions,
            thresholds=thresholds,
            description=self.text(top["description"], "description")
            if "description" in top else "",
            source=self.source,
            memory=tuple(self.record(r) for r in self.seq(top["memory"], "memory"))
            if "memory" in top else (),
        )

    def record(self, node: yaml.Node) -> dict[str, str]:
        """A seeded record, checked by the store's own rules now, not halfway through a run."""
        from core.memory.record import MemoryStoreError, validate_fields

        fields = self.mapping(node, "a seeded memory")
        if not {"name", "type", "description", "body"} <= set(fields):
            raise self.fail(node, "a seeded memory needs name, type, description and body")
        record = {}
        for key in ("name", "type", "description", "body"):
            value = self.value(fields[key])
            if not isinstance(value, str):  # `name: null` must not become a record "None"
                raise self.fail(fields[key], f"seeded memory: {key} must be text, not "
                                             f"{yaml_kind(value)} (quote it if it is a word)")
            record[key] = value
        try:
            validate_fields(record["name"], record["description"], record["type"],
                            record["body"])
        except MemoryStoreError as exc:
            at = next((fields[k] for k in ("type", "name") if k in str(exc)), node)
            raise self.fail(at, f"seeded memory: {exc}") from None
        return record

    def check_thresholds(self, node: yaml.Node) -> None:
        """Each key known and each value valid, with the offending line."""
        from core.config import ConfigError, thresholds_from_mapping

        for key, value in self.mapping(node, "thresholds").items():
            if key.replace("-", "_") not in THRESHOLD_KEYS:
                raise self.fail(node, f"unknown threshold {key!r}")
            try:
                thresholds_from_mapping({key: self.value(value)})
            except (ConfigError, TypeError) as exc:
                raise self.fail(value, f"thresholds: {exc}") from None

    def session(self, node: yaml.Node) -> Session:
        data = self.mapping(node, "a session")
        self.known_keys(node, ("turns",), "a session")
        if "turns" not in data:
            raise self.fail(node, "a session needs 'turns'")
        return Session(tuple(self.turn(t) for t in self.seq(data["turns"], "turns")))

    def turn(self, node: yaml.Node) -> Turn:
        data = self.mapping(node, "a turn")
        if "user" not in data:
            raise self.fail(node, "a turn needs 'user' (the request)")
        replies = tuple(self.reply(r) for r in self.seq(data["replies"], "replies")) \
            if "replies" in data else ()
        side: dict[str, tuple[Any, ...]] = {}
        for purpose in SIDE_PURPOSES:
            if purpose in data:
                side[purpose] = tuple(self.value(data[purpose]) if isinstance(
                    data[purpose], yaml.SequenceNode) else [self.value(data[purpose])])
        probes = tuple(self.probe(p) for p in self.seq(data["probes"], "probes")) \
            if "probes" in data else ()
        unknown = set(data) - {"user", "replies", "probes", *SIDE_PURPOSES}
        if unknown:
            raise self.fail(node, f"unknown key(s) in a turn: {', '.join(sorted(unknown))}")
        return Turn(self.text(data["user"], "user"), replies, side, probes)

    def reply(self, node: yaml.Node) -> Reply:
        data = self.mapping(node, "a reply")
        unknown = set(data) - {"say", "tools", "error"}
        if unknown:
            raise self.fail(node, f"unknown key(s) in a reply: {', '.join(sorted(unknown))}")
        if "error" in data:
            error = self.text(data["error"], "error")
            if error not in SCRIPTED_ERROR_NAMES:
                raise self.fail(data["error"], f"unknown error {error!r}; one of "
                                f"{', '.join(SCRIPTED_ERROR_NAMES)}")
            return Reply(error=error)
        tools = []
        for item in self.seq(data["tools"], "tools") if "tools" in data else []:
            call = self.mapping(item, "a tool call")
            if len(call) != 1:
                raise self.fail(item, "a tool call is one 'name: {input}' pair")
            (name, args), = call.items()
            if name not in TOOL_NAMES:
                raise self.fail(item, f"unknown tool {name!r}; one of {', '.join(TOOL_NAMES)}")
            value = self.value(args) or {}
            if not isinstance(value, dict):
                raise self.fail(args, f"the input of {name} must be a mapping")
            tools.append((name, value))
        say = self.text(data["say"], "say") if "say" in data else ""
        if not say and not tools:
            raise self.fail(node, "a reply needs 'say', 'tools' or 'error'")
        return Reply(say=say, tools=tuple(tools))

    def probe(self, node: yaml.Node) -> Probe:
        data = self.mapping(node, "a probe")
        if "ask" not in data or "expect" not in data:
            raise self.fail(node, "a probe needs 'ask' and 'expect'")
        return Probe(self.text(data["ask"], "ask"), self.text(data["expect"], "expect"))
