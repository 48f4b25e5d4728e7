"""bash keeps the provider's keys out of the command's reach and out of what it prints.

The command's environment drops keys and tokens (``env`` shows none of them), and any
value of a dropped variable that the command still finds (a ``.bashrc``, ``/proc``) is
replaced by ``[redacted NAME]`` in the result and in the spooled whole output.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.tools import ToolRunner

KEY = "sk-ant-unit-0123456789abcdef"


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """ctxlab's own environment holds a key; a file outside the workspace holds it too."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_unit_token_value_42")
    monkeypatch.setenv("CTXLAB_PLAIN", "plain-value-kept")
    rc = tmp_path / "home-bashrc"
    rc.write_text(f"export ANTHROPIC_API_KEY={KEY}\n", encoding="utf-8")
    return rc


def test_env_in_bash_shows_no_provider_key_and_keeps_the_rest(run, keyed):
    result = run("bash", command="env")
    assert KEY not in result.content and "ghp_unit_token_value_42" not in result.content
    assert "ANTHROPIC_API_KEY" not in result.content and "GITHUB_TOKEN=" not in result.content
    assert "PATH=" in result.content and "CTXLAB_PLAIN=plain-value-kept" in result.content


def test_a_key_the_command_reads_from_a_file_is_redacted(run, keyed):
    result = run("bash", command=f"cat {keyed}")
    assert KEY not in result.content
    assert result.content == "export ANTHROPIC_API_KEY=[redacted ANTHROPIC_API_KEY]"


def test_a_spooled_whole_output_holds_no_key_even_split_across_reads(workspace, keyed, tmp_path):
    spool = tmp_path / "spool"
    runner = ToolRunner(workspace, bash_timeout=20, output_cap=1000, spool_dir=spool)
    # 64 KiB reads: a key every 97 bytes lands across many read boundaries
    command = f"for i in $(seq 3000); do printf 'line %05d ' $i; cat {keyed}; done"
    outcome = asyncio.run(runner.run("bash", {"command": command}))
    assert outcome.full_output is not None and outcome.meta["truncated"]
    whole = outcome.full_output.read_bytes()
    assert KEY.encode() not in whole and KEY not in outcome.content
    assert whole.count(b"[redacted ANTHROPIC_API_KEY]") == 3000


def test_a_passed_variable_reaches_the_command_but_not_its_output(workspace, keyed):
    from core.tools.secrets import ToolSecrets

    secrets = ToolSecrets.from_environ(pass_env=("GITHUB_TOKEN",))
    runner = ToolRunner(workspace, bash_timeout=5)

    async def go() -> str:
        with secrets.applied():
            outcome = await runner.run("bash", {"command": 'echo "${#GITHUB_TOKEN}:$GITHUB_TOKEN"'})
        return outcome.content

    assert asyncio.run(go()) == "23:[redacted GITHUB_TOKEN]"
