"""``ctxlab memory``: list, show, check, reindex, watch and consolidate, as a user runs them."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.memory.store import MemoryStore
from tui.cli.cmd_memory import main

REPO = Path(__file__).resolve().parents[3]


def doc(name: str, description: str, type_: str = "user", body: str = "body") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}\n"


def hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    root = tmp_path / ".memory"
    root.mkdir()
    (root / "tabs.md").write_text(doc("tabs", "User prefers tabs"), encoding="utf-8")
    (root / "deploy.md").write_text(doc("deploy day", "Deploys on Fridays", "project",
                                        "Deploy on [bold]Friday[/bold]."), encoding="utf-8")
    (root / "broken.md").write_text("no frontmatter", encoding="utf-8")
    (root / "weird.md").write_text(doc("w", "d", "opinion"), encoding="utf-8")
    return root


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_json_splits_valid_and_invalid_and_changes_nothing(mem, capsys):
    before = hashes(mem.parent)
    code, out, err = cli(capsys, "check", "--dir", str(mem), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["valid"] == [
        {"file": "deploy.md", "name": "deploy day", "type": "project",
         "description": "Deploys on Fridays"},
        {"file": "tabs.md", "name": "tabs", "type": "user", "description": "User prefers tabs"}]
    assert [(f["file"], f["reason"].split(" ")[0]) for f in data["invalid"]] == [
        ("broken.md", "no"), ("weird.md", "unknown")]
    assert hashes(mem.parent) == before
    assert sorted(p.name for p in mem.iterdir()) == ["broken.md", "deploy.md", "tabs.md",
                                                     "weird.md"]


def test_check_human_output_and_strict_exit(mem, capsys):
    code, out, _ = cli(capsys, "check", "--dir", str(mem))
    assert code == 0 and "2 valid" in out and "broken.md" in out and "unknown type" in out
    assert cli(capsys, "check", "--dir", str(mem), "--strict")[0] == 1


def test_list_json_and_table(mem, capsys):
    code, out, _ = cli(capsys, "list", "--dir", str(mem), "--json")
    assert code == 0 and [r["file"] for r in json.loads(out)] == ["deploy.md", "tabs.md"]
    code, out, _ = cli(capsys, "list", "--dir", str(mem))
    assert code == 0 and "Deploys on Fridays" in out and "2 invalid files" in out


def test_dir_may_come_before_the_action(mem, capsys):
    code, out, _ = cli(capsys, "--dir", str(mem), "--json", "list")
    assert code == 0 and len(json.loads(out)) == 2


def test_show_prints_the_record_verbatim(mem, capsys):
    code, out, _ = cli(capsys, "show", "deploy day", "--dir", str(mem))
    assert code == 0 and "Deploy on [bold]Friday[/bold]." in out
    code, out, _ = cli(capsys, "show", "deploy", "--dir", str(mem), "--json")
    assert json.loads(out)["body"] == "Deploy on [bold]Friday[/bold]."


@pytest.mark.parametrize(("argv", "message"), [
    (("show", "nope"), "no memory record named 'nope'"),
    (("show", "broken"), "broken.md is not a valid record: no frontmatter"),
    (("show", "../../etc/passwd"), "no memory record named"),
])
def test_bad_input_is_one_line_and_exit_2(mem, capsys, argv, message):
    code, out, err = cli(capsys, *argv, "--dir", str(mem))
    assert code == 2 and out == "" and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("action", ["list", "check", "reindex", "watch", "consolidate"])
def test_a_missing_folder_is_exit_2(tmp_path, capsys, action):
    code, _, err = cli(capsys, action, "--dir", str(tmp_path / "nope"))
    assert code == 2 and "memory folder not found" in err and err.count("\n") == 1
    assert not (tmp_path / "nope").exists()


def test_a_file_given_as_dir_is_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = cli(capsys, "list", "--dir", str(tmp_path / "file"))
    assert code == 2 and "not a folder" in err


def test_an_unknown_action_is_an_argparse_error(mem, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate", "--dir", str(mem)])
    assert exc.value.code == 2


def test_reindex_writes_the_index_and_prints_the_event(mem, capsys):
    code, out, _ = cli(capsys, "reindex", "--dir", str(mem), "--json")
    event = json.loads(out)
    assert code == 0 and event["type"] == "index_rebuilt" and event["trigger"] == "command"
    assert (event["records"], event["invalid"]) == (2, 2)
    assert (mem / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [deploy day](deploy.md) - Deploys on Fridays\n- [tabs](tabs.md) - User prefers tabs\n")
    code, out, _ = cli(capsys, "reindex", "--dir", str(mem))
    assert code == 0 and "2 records, 2 invalid" in out


def test_consolidate_merges_duplicates_offline(mem, capsys):
    (mem / "tabs-2.md").write_text(doc("tabs_pref", "User prefers tabs"), encoding="utf-8")
    broken = (mem / "broken.md").read_bytes()
    code, out, _ = cli(capsys, "consolidate", "--dir", str(mem), "--json")
    result = json.loads(out)
    assert code == 0 and result["ok"] and (result["before"], result["after"]) == (3, 2)
    assert result["history"].startswith(".history/")
    assert {e["type"] for e in result["events"]} >= {"memory_consolidated", "index_rebuilt"}
    assert (mem / "broken.md").read_bytes() == broken
    code, out, _ = cli(capsys, "consolidate", "--dir", str(mem))
    assert code == 0 and "consolidated 2 to 2 records (nothing to merge)" in out


def test_consolidate_names_every_removed_record_and_keeps_distinct_ones(mem, capsys):
    for i in range(3):  # one description, three different facts: all stay
        (mem / f"port-{i}.md").write_text(doc(f"port {i}", "project note", "project",
                                              f"Listen on {8000 + i}."), encoding="utf-8")
    (mem / "tabs-2.md").write_text(doc("tabs again", "x", body="  body\n"), encoding="utf-8")
    os.utime(mem / "tabs-2.md", ns=(2 * 10**18,) * 2)  # the newer copy of tabs.md's fact
    code, out, _ = cli(capsys, "consolidate", "--dir", str(mem), "--json")
    result = json.loads(out)
    assert code == 0 and (result["before"], result["after"]) == (6, 5)
    assert result["dropped"] == ["tabs.md"]
    (event,) = [e for e in result["events"] if e["type"] == "memory_consolidated"]
    assert event["dropped"] == ["tabs.md"]
    assert all((mem / f"port-{i}.md").exists() for i in range(3))
    (mem / "tabs.md").write_text(doc("tabs", "User prefers tabs", body="body"),
                                 encoding="utf-8")
    os.utime(mem / "tabs.md", ns=(10**18,) * 2)
    code, out, _ = cli(capsys, "consolidate", "--dir", str(mem))
    assert code == 0 and "consolidated 6 to 5 records" in out
    assert "removed tabs.md" in out and "/old/tabs.md" in out


def test_the_ctxlab_command_routes_to_memory(mem, capsys):
    from tui.cli import main as ctxlab

    assert ctxlab(["memory", "list", "--dir", str(mem), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_watch_in_process_stops_on_sigint(mem, capsys):
    original = signal.getsignal(signal.SIGINT)

    def interrupt_once_watching() -> None:
        deadline = time.monotonic() + 30
        while signal.getsignal(signal.SIGINT) is original:  # not watching yet
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt_once_watching, daemon=True)
    thread.start()
    code = main(["watch", "--dir", str(mem), "--json"])
    thread.join(5)
    assert code == 0 and (mem / "MEMORY.md").exists()
    assert signal.getsignal(signal.SIGINT) is original
    assert "watching" in capsys.readouterr().err


# -- watch as a real process ----------------------------------------------------------------


def _read_line(stream, timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert box, f"no line within {timeout}s"
    return box[0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_watch_json_prints_one_event_per_change_until_a_signal(mem, sig):
    MemoryStore(mem).rebuild_index("startup", notify=False)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli.cmd_memory", "watch", "--dir", str(mem), "--json"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "watching" in _read_line(proc.stderr, 30)
        (mem / "new.md").write_text(doc("new", "added by hand"), encoding="utf-8")
        deadline = time.monotonic() + 30
        while True:
            event = json.loads(_read_line(proc.stdout, 30))
            assert event["type"] == "index_rebuilt" and event["trigger"] == "watch"
            assert event["changed"] == ["new.md"] and isinstance(event["t"], float)
            if event["records"] == 3 or time.monotonic() > deadline:
                break
        assert event["records"] == 3
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    for line in out.splitlines():
        assert json.loads(line)["type"] == "index_rebuilt"
