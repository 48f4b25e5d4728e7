"""The tool table the model sees, and how the runner treats odd calls."""

from __future__ import annotations

from core.tools import COMPACT_SCHEMA, TOOL_NAMES, TOOL_SCHEMAS, tool_schemas


def test_six_tools_in_anthropic_format():
    assert TOOL_NAMES == ("bash", "read_file", "write_file", "edit_file", "glob", "compact")
    for schema in TOOL_SCHEMAS:
        assert set(schema) == {"name", "description", "input_schema"}
        assert schema["input_schema"]["type"] == "object"


def test_input_fields_are_the_course_fields():
    fields = {s["name"]: set(s["input_schema"]["properties"]) for s in TOOL_SCHEMAS}
    assert fields == {
        "bash": {"command"},
        # ``offset`` is ctxlab's addition: the way on past read_file's 4 MiB cap
        "read_file": {"path", "offset", "limit"},
        "write_file": {"path", "content"},
        "edit_file": {"path", "old_text", "new_text"},
        "glob": {"pattern"},
        "compact": set(),
    }


def test_compact_schema_is_exact():
    assert COMPACT_SCHEMA == {
        "name": "compact",
        "description": "Summarize earlier conversation to free context space.",
        "input_schema": {"type": "object", "properties": {}},
    }


def test_tool_schemas_returns_a_private_copy():
    copy = tool_schemas()
    copy[0]["description"] = "changed"
    assert TOOL_SCHEMAS[0]["description"] == "Run a shell command."


def test_compact_is_never_executed_by_the_runner(run):
    result = run("compact")
    assert result.is_error and "agent loop" in result.content


def test_unknown_tool_and_missing_fields_are_errors_not_exceptions(run):
    unknown = run("rm_rf")
    assert unknown.is_error and unknown.meta["error"] == "unknown_tool"
    missing = run("read_file")
    assert missing.is_error and "path" in missing.content
