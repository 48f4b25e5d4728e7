"""One vocabulary for who manages the context: the stage table, compare and the wire agree."""

from __future__ import annotations

import pytest

from core.compact.managers import (
    Manager,
    joined,
    manager_names,
    parse_manager,
    read_by,
)
from core.compact.stages import TABLE, pipeline_stages
from core.compact.truncate import ENGINES
from core.compare import STRATEGIES


def test_the_wire_names_are_the_ones_docs_events_promises():
    assert [m.value for m in Manager] == ["ctxlab", "truncate", "api-edit", "api-compact",
                                          "observation-masking", "client", "claude-code",
                                          "codex", "agent"]
    assert {m for m in Manager if m.recorded} == {Manager.CLAUDE_CODE, Manager.CODEX,
                                                  Manager.AGENT}
    assert {m for m in Manager if m.server} == {Manager.API_EDIT, Manager.API_COMPACT}


def test_older_names_read_as_todays_and_an_unknown_one_is_refused_by_name():
    assert parse_manager("s08") is Manager.PIPELINE
    assert parse_manager("api-clear-tool-uses") is Manager.API_EDIT
    assert parse_manager("truncate") is Manager.TRUNCATE
    with pytest.raises(ValueError, match="'nope'; one of ctxlab, truncate"):
        parse_manager("nope")


def test_a_context_manager_value_joins_each_manager_once_in_order():
    assert joined([Manager.PIPELINE, Manager.API_EDIT, Manager.API_COMPACT]) == \
        "ctxlab+api-edit+api-compact"
    assert joined(["s08", Manager.PIPELINE, "api-edit"]) == "ctxlab+api-edit"
    assert manager_names("s08+api-compact") == ("ctxlab", "api-compact")
    assert manager_names("ctxlab+someone-new") == ("ctxlab", "someone-new")  # a newer log


def test_read_by_changes_only_older_spellings():
    for manager in Manager:
        assert read_by(manager.value, "micro_compact") == manager.value
    assert read_by("api", "api_compaction") == "api-compact"
    assert read_by("api", "api_clear_thinking") == "api-edit"


def test_every_row_and_strategy_speaks_the_vocabulary():
    assert {row.manager for row in TABLE} == {Manager.PIPELINE, Manager.TRUNCATE,
                                              Manager.API_EDIT, Manager.API_COMPACT,
                                              Manager.OBSERVATION_MASKING}
    assert all(row.name in pipeline_stages() for row in TABLE if row.run is not None)
    # compare plays only managers ctxlab can run itself, and every one of them
    assert {s.manager for s in STRATEGIES.values()} == set(ENGINES)
