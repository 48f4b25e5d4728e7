"""core.tools.secrets: which variables the tools lose, and that a known value never survives
redaction."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.tools.secrets import (
    MIN_SECRET_CHARS,
    Redactor,
    StreamRedactor,
    ToolSecrets,
    check_env_name,
    is_secret_name,
    marker,
    redact_file,
    tool_environment,
)

ENVIRON = {
    "PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "TERM": "xterm",
    "USER": "u", "SHELL": "/bin/bash", "PWD": "/w", "VIRTUAL_ENV": "/w/.venv",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "CTXLAB_MODEL": "claude-x", "KEYTIMEOUT": "1",
    "ANTHROPIC_API_KEY": "sk-ant-api03-aaaaaaaaaaaa", "ANTHROPIC_BASE_URL": "http://gw:8080",
    "OPENAI_API_KEY": "sk-openai-bbbbbbbbbbbb", "CLAUDE_CODE_OAUTH_TOKEN": "oauth-cccccccccc",
    "AWS_SECRET_ACCESS_KEY": "awssecretdddddddd", "AWS_SESSION_TOKEN": "awssessioneeeeeeee",
    "AWS_ACCESS_KEY_ID": "AKIAFFFFFFFFFFFF", "GITHUB_TOKEN": "ghp_gggggggggggg",
    "GH_TOKEN": "gho_hhhhhhhhhhhh", "HF_TOKEN": "hf_iiiiiiiiiiii", "NPM_TOKEN": "npm_jjjjjjjj",
    "DB_PASSWORD": "hunter2hunter2", "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/gcp.json",
    "STRIPE_SECRET": "sk_live_kkkkkkkk", "MY_SERVICE_KEY": "llllllllllll",
    "GITLAB_PAT": "glpat-mmmmmmmm", "mixed_Api_Key": "nnnnnnnnnnnn",
}
DROPPED = {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
           "CLAUDE_CODE_OAUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
           "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "NPM_TOKEN",
           "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "STRIPE_SECRET", "MY_SERVICE_KEY",
           "GITLAB_PAT", "mixed_Api_Key"}


def test_the_tool_environment_drops_keys_tokens_and_provider_settings_and_keeps_the_rest():
    env = tool_environment(ENVIRON)
    assert set(ENVIRON) - set(env) == DROPPED
    assert all(env[k] == ENVIRON[k] for k in env)


def test_a_passed_name_is_kept_and_only_that_one():
    env = tool_environment(ENVIRON, pass_env=("GITHUB_TOKEN", "NOT_SET_ANYWHERE"))
    assert set(ENVIRON) - set(env) == DROPPED - {"GITHUB_TOKEN"}
    assert "NOT_SET_ANYWHERE" not in env


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "TERM", "SSH_AUTH_SOCK", "KEYTIMEOUT",
                                  "CTXLAB_MODEL", "LC_ALL", "PYTHONPATH"])
def test_ordinary_names_are_not_secret(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize("name", ["A B", "", "1X", "X=Y", "--json"])
def test_a_pass_env_argument_must_be_a_name(name):
    with pytest.raises(ValueError, match="not an environment variable name"):
        check_env_name(name)


def test_every_dropped_value_long_enough_is_redacted_and_passed_ones_too():
    secrets = ToolSecrets.from_environ(ENVIRON, pass_env=("GITHUB_TOKEN",),
                                       extra=[("anthropic API key", "sk-given-in-code-1")])
    text = " ".join(ENVIRON.values()) + " sk-given-in-code-1"
    out = secrets.redactor.redact(text)
    for name in DROPPED:
        assert ENVIRON[name] not in out
    assert marker("GITHUB_TOKEN") in out and marker("anthropic API key") in out
    assert "/usr/bin:/bin" in out and "claude-x" in out  # kept variables are not secrets
    assert secrets.env["GITHUB_TOKEN"] == ENVIRON["GITHUB_TOKEN"]


def test_short_values_are_not_treated_as_secrets():
    redactor = Redactor.of([("A_TOKEN", "x" * (MIN_SECRET_CHARS - 1)), ("B_TOKEN", ""),
                            ("C_TOKEN", None)])
    assert redactor.values == {}
    assert redactor.redact("xxxxxxx") == "xxxxxxx"


def test_a_secret_containing_another_is_replaced_whole():
    redactor = Redactor.of([("SHORT_KEY", "abcdefgh"), ("LONG_KEY", "abcdefgh-and-more")])
    assert redactor.redact("[abcdefgh-and-more|abcdefgh]") == \
        f"[{marker('LONG_KEY')}|{marker('SHORT_KEY')}]"


# -- the invariant, over random text, random secrets and random piece boundaries ---------------

SECRET = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=MIN_SECRET_CHARS,
                 max_size=40)
TEXT = st.text(alphabet=st.sampled_from("ab01-_ \n\x00é😀"), max_size=200)
NAMES = ("FIRST_KEY", "SECOND_TOKEN", "THIRD_SECRET")


def pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def streamed(redactor: Redactor, parts: list[str]) -> str:
    stream = StreamRedactor(redactor)
    return "".join(stream.feed(p) for p in parts) + stream.flush()


@settings(max_examples=300, deadline=None)
@given(secrets=st.lists(SECRET, min_size=1, max_size=3), fillers=st.lists(TEXT, min_size=1,
       max_size=6), picks=st.lists(st.integers(0, 2), max_size=6),
       cuts=st.lists(st.integers(0, 500), max_size=12))
def test_a_secret_anywhere_split_anywhere_is_never_left(secrets, fillers, picks, cuts):
    redactor = Redactor.of(zip(NAMES, secrets, strict=False))
    # the secrets inserted between random fillers, possibly adjacent or overlapping
    text = fillers[0] + "".join(secrets[i % len(secrets)] + f
                                for i, f in zip(picks, [*fillers[1:], ""], strict=False))
    whole = redactor.redact(text)
    split = streamed(redactor, pieces(text, cuts))
    for secret in secrets:
        assert secret not in whole and secret not in split
    assert split == whole  # the pieces change nothing about the result


@settings(max_examples=200, deadline=None)
@given(secrets=st.lists(SECRET, min_size=1, max_size=3), text=TEXT,
       cuts=st.lists(st.integers(0, 250), max_size=12))
def test_text_without_secrets_is_unchanged(secrets, text, cuts):
    redactor = Redactor.of(zip(NAMES, secrets, strict=False))
    assume(not any(s in text for s in secrets))
    assert redactor.redact(text) == text
    assert streamed(redactor, pieces(text, cuts)) == text


def test_a_file_with_a_secret_is_rewritten_and_a_clean_one_left_alone(tmp_path):
    redactor = Redactor.of([("A_TOKEN", "tok-0123456789")])
    dirty, clean = tmp_path / "dirty.txt", tmp_path / "clean.txt"
    dirty.write_text("x" * 10 + "tok-0123456789" + "y\n" * 5, encoding="utf-8")
    clean.write_text("nothing here\n", encoding="utf-8")
    before = clean.stat()
    assert redact_file(dirty, redactor, chunk=7) == 1
    assert dirty.read_text(encoding="utf-8") == "x" * 10 + marker("A_TOKEN") + "y\n" * 5
    assert redact_file(clean, redactor) == 0
    assert clean.stat().st_mtime_ns == before.st_mtime_ns and clean.stat().st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.txt", "dirty.txt"]


def test_a_file_with_a_255_byte_name_is_redacted_and_its_temp_is_one_the_sweep_knows(tmp_path):
    """The rewrite's temp name fits NAME_MAX (a fixed suffix did not) and is the archive's
    own kind, so a killed rewrite leaves nothing the sweep cannot recognise."""
    from core.archive.atomic import temp_name

    redactor = Redactor.of([("A_TOKEN", "tok-0123456789")])
    long = tmp_path / ("n" * 251 + ".log")
    long.write_text("tok-0123456789\n", encoding="utf-8")
    assert redact_file(long, redactor) == 1
    assert long.read_text(encoding="utf-8") == marker("A_TOKEN") + "\n"
    assert [p.name for p in tmp_path.iterdir()] == [long.name]
    assert len(os.path.basename(temp_name(long))) <= 255
