"""``ctxlab compact``: one prepare() on a file, its two outputs, and every way input goes wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.compact.stages import stage_names as table_order
from core.messages import validate_pairs
from core.providers.base import AuthError, ModelReply
from tui.cli import main

ROOT = Path(__file__).resolve().parents[3]
JSON_KEYS = {"messages", "events", "ledger", "chars_before", "chars_after", "violations"}


# -- helpers --------------------------------------------------------------------------------


def turns(n_turns: int, per_turn: int, size: int, *, request: str = "refactor auth",
          prefix: str = "t") -> list[dict]:
    """A user request, then per turn an assistant tool_use batch and its user tool_results."""
    messages: list[dict] = [{"role": "user", "content": request}]
    for t in range(n_turns):
        ids = [f"{prefix}{t}_{i}" for i in range(per_turn)]
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": f"{i}.py"}}
            for i in ids]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": f"{i}:" + "x" * size}
            for i in ids]})
    return messages


def write_input(tmp_path: Path, data: object, name: str = "input.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")  # ASCII escapes: lone surrogates too
    return path


def compact(capsys, path: Path, workdir: Path, *flags: str) -> tuple[int, str, str]:
    code = main(["compact", str(path), "--workdir", str(workdir), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def compact_json(capsys, path: Path, workdir: Path, *flags: str) -> dict:
    code, out, err = compact(capsys, path, workdir, "--json", *flags)
    assert code == 0, err
    assert out.count("\n") == 1 and out.endswith("\n")
    return json.loads(out)


def stage_names(result: dict) -> list[str]:
    return [e["stage"] for e in result["events"] if e["type"] == "stage"]


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("ctxlab compact: "), err
    for needle in needles:
        assert needle in err, err


def budget_snip_micro_history() -> list[dict]:
    """30 seen turns of 3 kB (snip and micro have work), then 7 fresh 40 kB results (budget)."""
    messages = turns(30, 1, 3_000)
    big = [f"big{i}" for i in range(7)]
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": i, "name": "bash", "input": {"command": "cat log"}}
        for i in big]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": i, "content": f"{i} " + "é" * 40_000}
        for i in big]})
    return messages


# -- what it does ---------------------------------------------------------------------------


def test_under_limit_is_a_no_op(capsys, tmp_path):
    messages = turns(3, 2, 500)
    path = write_input(tmp_path, messages)
    result = compact_json(capsys, path, tmp_path / "work")
    assert set(result) == JSON_KEYS
    assert result["events"] == [] and result["ledger"] == [] and result["violations"] == []
    assert result["messages"] == messages
    assert result["chars_before"] == result["chars_after"]
    code, out, _ = compact(capsys, path, tmp_path / "work")
    assert code == 0 and "no stage fired" in out


def test_budget_snip_micro_fire_in_the_course_order(capsys, tmp_path):
    messages = budget_snip_micro_history()
    result = compact_json(capsys, write_input(tmp_path, messages), tmp_path / "work")
    names = stage_names(result)
    assert names[:3] == ["tool_result_budget", "snip_compact", "micro_compact"]
    assert names == sorted(names, key=table_order().index)
    assert set(result) == JSON_KEYS and result["violations"] == []
    assert result["chars_before"] == len(json.dumps(messages, ensure_ascii=False))
    assert result["chars_after"] == len(json.dumps(result["messages"], ensure_ascii=False))
    assert result["chars_after"] < result["chars_before"]
    assert all({"type", "t"} <= set(event) for event in result["events"])
    stage = next(e for e in result["events"] if e["type"] == "stage")
    assert {"stage", "before_chars", "after_chars", "before_messages", "after_messages",
            "files", "tool_use_ids"} <= set(stage)
    assert all(set(entry) >= {"tool_use_id", "stage", "chars", "where"}
               for entry in result["ledger"])


def _archived_content(workdir: Path, where: str, tool_use_id: str) -> object:
    """The tool result's content as the file at ``where`` holds it."""
    file = workdir / where
    if where.endswith(".jsonl"):
        found = [b["content"] for line in file.read_text(encoding="utf-8").splitlines()
                 for b in (json.loads(line)["content"] if isinstance(json.loads(line)["content"],
                                                                    list) else [])
                 if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id]
        assert len(found) == 1
        return found[0]
    return file.read_bytes().decode("utf-8")


def test_ledger_entries_point_at_files_holding_the_original(capsys, tmp_path):
    messages = budget_snip_micro_history()
    originals = {b["tool_use_id"]: b["content"] for m in messages if isinstance(m["content"], list)
                 for b in m["content"] if b["type"] == "tool_result"}
    workdir = tmp_path / "work"
    result = compact_json(capsys, write_input(tmp_path, messages), workdir)
    assert result["ledger"], "this history must archive something"
    kinds = set()
    for entry in result["ledger"]:
        assert entry["where"] != "lost"
        assert not Path(entry["where"]).is_absolute()
        assert (workdir / entry["where"]).is_file(), entry
        kinds.add(Path(entry["where"]).suffix)
        assert _archived_content(workdir, entry["where"], entry["tool_use_id"]) == \
            originals[entry["tool_use_id"]]
    assert kinds == {".txt", ".jsonl"}  # result files (budget, micro) and a transcript (snip)


def test_readable_report_lists_stages_total_and_archives(capsys, tmp_path):
    path = write_input(tmp_path, budget_snip_micro_history())
    code, out, err = compact(capsys, path, tmp_path / "work")
    assert code == 0, err
    for word in ("tool_result_budget", "snip_compact", "micro_compact", "total:", "archives:",
                 ".transcripts"):
        assert word in out


def test_context_limit_flag_forces_the_later_stages(capsys, tmp_path):
    path = write_input(tmp_path, turns(5, 1, 3_000, request="keep tests green"))
    assert compact_json(capsys, path, tmp_path / "a")["events"] == []
    result = compact_json(capsys, path, tmp_path / "b", "--context-limit", "2000")
    names = stage_names(result)
    assert {"micro_compact", "fit_tool_results", "compact_history"} <= set(names)
    assert names == sorted(names, key=table_order().index)
    (summary,) = result["messages"]
    assert "Current user request:\nkeep tests green\n" in summary["content"]


def test_active_request_flag_and_default(capsys, tmp_path):
    messages = turns(5, 1, 1_000, request="first ask")
    messages.append({"role": "assistant", "content": "done"})
    messages.append({"role": "user", "content": [{"type": "text", "text": "now the second"}]})
    path = write_input(tmp_path, messages)
    result = compact_json(capsys, path, tmp_path / "a", "--context-limit", "2000")
    assert "Current user request:\nnow the second\n" in result["messages"][0]["content"]
    result = compact_json(capsys, path, tmp_path / "b", "--context-limit", "2000",
                          "--active-request", "do X")
    assert "Current user request:\ndo X\n" in result["messages"][0]["content"]


def test_ctxlab_toml_is_honoured_and_flags_win(capsys, tmp_path):
    path = write_input(tmp_path, turns(5, 1, 1_000))
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "ctxlab.toml").write_text("context_limit = 2000\n", encoding="utf-8")
    assert "compact_history" in stage_names(compact_json(capsys, path, workdir))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "ctxlab.toml").write_text("[thresholds]\ncontext-limit = 2000\n", encoding="utf-8")
    assert compact_json(capsys, path, fresh, "--context-limit", "1000000")["events"] == []


@pytest.mark.parametrize("toml", ['context_limit = "big"\n', "keep_recent = -1\n",
                                  "max_messages = 2\n", "context_limit = [\n"])
def test_bad_ctxlab_toml_exits_2_naming_the_key(capsys, tmp_path, toml):
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "ctxlab.toml").write_text(toml, encoding="utf-8")
    code, out, err = compact(capsys, write_input(tmp_path, turns(1, 1, 10)), workdir)
    assert_one_line_error(code, err, "ctxlab.toml")
    assert out == ""
    key = toml.split(" ")[0]
    if "[" not in toml:
        assert key in err


def test_bad_threshold_flag_exits_2(capsys, tmp_path):
    code, _, err = compact(capsys, write_input(tmp_path, turns(1, 1, 10)), tmp_path / "w",
                           "--keep-recent", "-1")
    assert_one_line_error(code, err, "keep_recent")


def test_workdir_is_created_and_archives_land_under_it(capsys, tmp_path):
    workdir = tmp_path / "deep" / "er"
    result = compact_json(capsys, write_input(tmp_path, turns(5, 1, 1_000)), workdir,
                          "--context-limit", "2000")
    assert all((workdir / e["where"]).is_file() for e in result["ledger"])
    assert list((workdir / ".transcripts").glob("transcript_*.jsonl"))


def test_break_switch_is_passed_and_unknown_name_refused(capsys, tmp_path):
    path = write_input(tmp_path, turns(5, 1, 1_000))
    result = compact_json(capsys, path, tmp_path / "a", "--context-limit", "2000",
                          "--break", "persist-before-placeholder")
    assert any(entry["where"] == "lost" for entry in result["ledger"])
    code, _, err = compact(capsys, path, tmp_path / "b", "--break", "no-such-switch")
    assert_one_line_error(code, err, "no-such-switch", "pair-protection")
    assert not (tmp_path / "b").exists()


# -- the model summarizer -------------------------------------------------------------------


def test_anthropic_provider_missing_exits_2(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "core.providers.anthropic", None)
    code, _, err = compact(capsys, write_input(tmp_path, turns(1, 1, 10)), tmp_path / "w",
                           "--provider", "anthropic")
    assert_one_line_error(code, err, "anthropic")


def _fake_provider(monkeypatch, complete) -> None:
    """Stand in for ``core.providers.anthropic`` with a provider answering through ``complete``."""
    provider = type("AnthropicProvider", (), {"name": "anthropic", "model": "fake",
                                              "complete": complete})
    module = types.ModuleType("core.providers.anthropic")
    module.AnthropicProvider = provider
    monkeypatch.setitem(sys.modules, "core.providers.anthropic", module)


def test_anthropic_provider_writes_the_summary(capsys, tmp_path, monkeypatch):
    calls = []

    async def complete(self, call, on_text=None):
        calls.append(call)
        return ModelReply(content=[{"type": "text", "text": "state: all good"}])

    _fake_provider(monkeypatch, complete)
    result = compact_json(capsys, write_input(tmp_path, turns(5, 1, 1_000)), tmp_path / "w",
                          "--provider", "anthropic", "--context-limit", "2000")
    assert [c.purpose for c in calls] == ["summary"]
    assert '"state: all good"' in result["messages"][0]["content"]
    purposes = [e.get("purpose") for e in result["events"] if e["type"] == "model_request"]
    assert purposes == ["summary"]


def test_failing_summary_call_exits_1_with_one_line(capsys, tmp_path, monkeypatch):
    async def complete(self, call, on_text=None):
        raise AuthError("invalid x-api-key", status=401)

    _fake_provider(monkeypatch, complete)
    code, out, err = compact(capsys, write_input(tmp_path, turns(5, 1, 1_000)), tmp_path / "w",
                             "--provider", "anthropic", "--context-limit", "2000")
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and "auth" in err and "invalid x-api-key" in err



def test_anthropic_provider_summarises_with_the_real_sdk(server_env, capsys, tmp_path):
    server_env.reply_text("state: the real SDK wrote this")
    result = compact_json(capsys, write_input(tmp_path, turns(5, 1, 1_000)), tmp_path / "w",
                          "--provider", "anthropic", "--context-limit", "2000")
    assert '"state: the real SDK wrote this"' in result["messages"][0]["content"]
    assert len(server_env.requests_to()) == 1

# -- bad input ------------------------------------------------------------------------------

_ORPHAN = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "thinking"},
           {"role": "user", "content": "more"},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope",
                                         "content": "x"}]}]

BAD_INPUTS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "not-utf8": (b'[{"role": "user", "content": "\xff\xfe"}]', ("UTF-8",)),
    "not-json": (b'[{"role": "user", ', ("not JSON",)),
    "empty-file": (b"", ("not JSON",)),
    "nan": (b'[{"role": "user", "content": NaN}]', ("NaN",)),
    "not-a-list": (b'{"role": "user", "content": "hi"}', ("array",)),
    "not-an-object": (b'["hello"]', ("message 0",)),
    "no-role": (b'[{"role": "user", "content": "a"}, {"content": "b"}]', ("message 1", "role")),
    "bad-role": (b'[{"role": "system", "content": "a"}]', ("message 0", "role")),
    "no-content": (b'[{"role": "user"}]', ("message 0", "content")),
    "numeric-content": (b'[{"role": "user", "content": 5}]', ("message 0", "content")),
    "block-no-type": (b'[{"role": "user", "content": [{"text": "a"}]}]', ("block 0", "type")),
    "tool-use-in-user": (b'[{"role": "user", "content": [{"type": "tool_use", "id": "a"}]}]',
                         ("message 0", "tool_use")),
    "orphan-result": (json.dumps(_ORPHAN).encode(), ("message 3", "nope")),
    "deep-nesting": (b"[" * 200_000 + b"]" * 200_000, ("nested",)),
    "huge-int": (b"[" + b"9" * 5_000 + b"]", ("not JSON",)),
    "newline-in-role": (b'[{"role": "a\\nb\\ud800", "content": "x"}]', ("message 0",)),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, case):
    raw, needles = BAD_INPUTS[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(raw)
    code, out, err = compact(capsys, path, tmp_path / "work")
    assert_one_line_error(code, err, f"{path}: ", *needles)
    assert out == ""
    assert not (tmp_path / "work").exists()  # nothing is created for input that is refused


def test_missing_input_and_unusable_workdir(capsys, tmp_path):
    code, _, err = compact(capsys, tmp_path / "absent.json", tmp_path / "w")
    assert_one_line_error(code, err, "absent.json", "no such file")
    code, _, err = compact(capsys, tmp_path, tmp_path / "w")
    assert_one_line_error(code, err, str(tmp_path))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = compact(capsys, write_input(tmp_path, turns(1, 1, 10)), blocker / "sub")
    assert_one_line_error(code, err, "--workdir")


# -- a real process -------------------------------------------------------------------------


def _run_module(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tui", "compact", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_subprocess_json_run_and_bad_input(tmp_path):
    path = write_input(tmp_path, budget_snip_micro_history())
    proc = _run_module(str(path), "--workdir", str(tmp_path / "work"), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) == JSON_KEYS
    assert stage_names(result)[:3] == ["tool_result_budget", "snip_compact", "micro_compact"]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": "a"}, {"content": "b"}]', encoding="utf-8")
    proc = _run_module(str(bad), "--workdir", str(tmp_path / "work2"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "message 1" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- fuzz -----------------------------------------------------------------------------------

_SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc80", "\udfff"])
_TEXT = st.text(alphabet=st.one_of(st.characters(), _SURROGATES), max_size=30)
_IDS = st.sampled_from(["a", "b", "call/1", "call_1", ""])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     _TEXT, st.just("y" * 60_000))
_ANY = st.recursive(_SCALARS, lambda kids: st.lists(kids, max_size=4)
                    | st.dictionaries(_TEXT, kids, max_size=4), max_leaves=12)
_CONTENT = st.one_of(_TEXT, st.just("z" * 50_000), st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}),
    st.fixed_dictionaries({"type": st.just("image"), "source": st.fixed_dictionaries(
        {"type": st.just("base64"), "media_type": st.just("image/png"),
         "data": st.just("iVBORw0KGgo" * 300)})}),
    st.fixed_dictionaries({"type": _TEXT}, optional={"x": _ANY})), max_size=3), _ANY)
_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": _IDS, "name": _TEXT,
                           "input": _ANY}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": _IDS},
                          optional={"content": _CONTENT, "is_error": st.booleans()}),
    st.fixed_dictionaries({"type": st.sampled_from(["image", "thinking", "mystery"])},
                          optional={"data": _ANY}),
    _ANY,
)
_MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                           "content": st.one_of(_TEXT, st.lists(_BLOCK, max_size=4))}),
    st.fixed_dictionaries({}, optional={"role": _ANY, "content": _ANY}),
)
_DOCUMENT = st.one_of(  # the file's text; json.dumps escapes lone surrogates as "\ud800"
    st.lists(_MESSAGE, max_size=14).map(json.dumps),
    st.builds(turns, st.integers(0, 30), st.integers(1, 4), st.integers(0, 4_000),
              request=_TEXT).map(json.dumps),
    _ANY.map(json.dumps),
    st.integers(0, 3_000).map(lambda depth: "[" * depth + "]" * depth),
    st.tuples(st.lists(_MESSAGE, max_size=3), st.integers(0, 3_000)).map(
        lambda pair: json.dumps(pair[0])[:-1] + (", " if pair[0] else "")
        + '{"role": "user", "content": ' + "[" * pair[1] + "]" * pair[1] + "}]"),
)


@settings(max_examples=int(os.environ.get("FUZZ_N", "60")), deadline=None,  # FUZZ_N=2000: soak
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(document=_DOCUMENT, limit=st.sampled_from([None, "300", "5000"]))
def test_fuzz_any_json_gives_a_result_or_one_line(capsys, document, limit):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.json"
        path.write_text(document, encoding="utf-8")
        flags = ["--json", *(["--context-limit", limit] if limit else [])]
        code, out, err = compact(capsys, path, Path(tmp) / "work", *flags)
    assert "Traceback" not in err
    if code == 0:
        assert err == ""
        result = json.loads(out)
        assert set(result) == JSON_KEYS
        if not validate_pairs(json.loads(document)):
            assert result["violations"] == []  # compaction never breaks a valid history
    elif code == 1:  # a compaction that would grow a small history is refused, not applied
        assert err.count("\n") == 1 and "it would grow the history" in err, err
        assert out == ""
    else:
        assert_one_line_error(code, err, str(path))
        assert out == ""


# -- engine defects found from the outside --------------------------------------------------


def _pointer_history(path: str) -> list[dict]:
    messages = turns(3, 1, 1_000)
    messages[2]["content"][0]["content"] = f"[Earlier tool result saved at {path}]"
    return messages


def _marker_history(path: str) -> list[dict]:
    """51 messages whose snip middle is one archive-marker-shaped message (pair at the cut)."""
    return [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "user", "content": f"[5 messages archived at {path}]"},
            *turns(1, 1, 10)[1:],
            *({"role": ("assistant", "user")[i % 2], "content": "x"} for i in range(45))]


@pytest.mark.parametrize("build", [_pointer_history, _marker_history])
@pytest.mark.parametrize("path", [".task_outputs/tool-results/a\u0000b", ".transcripts/\ud800"])
def test_pointer_shaped_text_with_unencodable_path_is_plain_content(capsys, tmp_path, build,
                                                                     path):
    input_path = write_input(tmp_path, build(path))
    result = compact_json(capsys, input_path, tmp_path / "work", "--context-limit", "300")
    assert result["violations"] == []


def test_a_changed_archive_file_is_an_error_and_never_pointed_at(capsys, tmp_path):
    """Issue 11: a result file changed between two runs on one workdir is reported."""
    work = tmp_path / "work"
    first = compact_json(capsys, write_input(tmp_path, turns(1, 1, 40_000)), work,
                         "--batch-limit", "1000")
    wrapper = first["messages"][2]["content"][0]["content"]
    (path,) = [e["where"] for e in first["events"] if e["type"] == "stage"
               for e in e["ledger"]]
    assert f"Full output: {path}" in wrapper
    (work / path).write_text("changed by hand", encoding="utf-8")
    again = [*first["messages"], {"role": "assistant", "content": "ok"}]
    second = compact_json(capsys, write_input(tmp_path, again, "again.json"), work,
                          "--batch-limit", "1000", "--context-limit", "300")
    errors = [e for e in second["events"] if e["type"] == "error"]
    assert errors and errors[0]["kind"] == "archive" and path in errors[0]["message"]
    # never pointed at again: no placeholder names it, no ledger entry trusts it
    assert f"[Earlier tool result saved at {path}]" not in json.dumps(second["messages"])
    assert all(e.get("status") == "broken" for e in second["ledger"] if e["where"] == path)
    assert [e["path"] for e in second["events"] if e["type"] == "pointer_broken"] == [path]
    code, out, _ = compact(capsys, write_input(tmp_path, again, "again.json"), work,
                           "--batch-limit", "1000", "--context-limit", "300")
    assert code == 0 and f"error (archive) {path} changed" in out


# -- a history compacted before ------------------------------------------------------------


def compacted_history(request: str = "refactor auth") -> list[dict]:
    """What a saved session holds after one compaction: the summary message, then the agent
    going on with tools (a tool result is no user text: the summary stays the last one)."""
    first = compact_json_history(turns(6, 2, 400, request=request))
    return [*first,
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "after_1", "name": "read_file",
                 "input": {"path": "auth.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "after_1", "content": "y" * 900}]},
            {"role": "assistant", "content": "Done: " + "step; " * 60}]


def compact_json_history(messages: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.json"
        path.write_text(json.dumps(messages), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "tui", "compact", str(path), "--workdir",
             str(Path(folder) / "w"), "--json", "--context-limit", "2000"],
            cwd=ROOT, capture_output=True, text=True, check=True)
    after = json.loads(done.stdout)["messages"]
    assert after[0]["content"].startswith("[Compacted]")
    return after


def test_compacting_a_compacted_history_carries_its_request_not_its_summary(capsys,
                                                                            tmp_path):
    """The last user text of a compacted history may be the summary message itself: taken
    whole as the request, the old summary was nested in the new one (2,711 → 5,542 chars)."""
    history = compacted_history()
    result = compact_json(capsys, write_input(tmp_path, history), tmp_path / "w",
                          "--context-limit", "300")
    assert result["chars_after"] <= result["chars_before"]
    [summary] = [m for m in result["messages"] if m["role"] == "user"]
    assert summary["content"].count("[Compacted]") == 1
    assert "Current user request:\nrefactor auth\n\n" in summary["content"]


def test_a_compaction_that_would_grow_the_history_fails_and_says_so(capsys, tmp_path):
    history = compacted_history()
    code, out, err = compact(capsys, write_input(tmp_path, history), tmp_path / "w",
                             "--context-limit", "300", "--active-request", "x" * 20_000)
    assert code == 1 and out == ""  # the run failed; the input was fine
    assert err.count("\n") == 1 and err.startswith("ctxlab compact: compaction failed: "), err
    assert "would grow the history" in err and "left as it was" in err
