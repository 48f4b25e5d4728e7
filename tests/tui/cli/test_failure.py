"""Every command fails in one line, whatever the message quotes or whatever flag is wrong."""

from __future__ import annotations

import pytest

from tui.cli import SUBCOMMANDS, main
from tui.cli.failure import fail, one_line


def test_newlines_and_lone_surrogates_are_escaped_so_the_line_stays_one(capsys):
    assert fail("ctxlab watch", "/w/.ctxlab is a link (to /x\nrm -rf ~\ud800)", 2) == 2
    err = capsys.readouterr().err
    assert err == "ctxlab watch: /w/.ctxlab is a link (to /x\\nrm -rf ~\\ud800)\n"


@pytest.mark.parametrize("text", ["plain", "é and 中文", "tab\tstays"])
def test_printable_text_is_unchanged(text):
    assert one_line(text) == text


COMMANDS = [name for name, _module in SUBCOMMANDS]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("mistake", [["--no-such-flag"], ["--help-me", "extra"]],
                         ids=["unknown flag", "unknown words"])
def test_an_unknown_flag_is_one_line_naming_the_command_and_its_help(capsys, command,
                                                                      mistake):
    """Before, argparse printed the whole usage block (a dozen lines for replay) and blamed
    an unknown flag on ``ctxlab`` rather than the subcommand it was given to."""
    assert main([command, *mistake]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"ctxlab {command}: ")
    assert line.endswith(f"(try 'ctxlab {command} --help')")


@pytest.mark.parametrize(("argv", "message"), [
    (["watch", "--port", "x"], "ctxlab watch: --port: invalid int value: 'x'"),
    (["compare", "--bogus"], "ctxlab compare: unrecognized arguments: --bogus"),
    (["replay"], "ctxlab replay: the following arguments are required: PATH"),
    (["nonsense"], "ctxlab: COMMAND: invalid choice: 'nonsense'"),
    (["demo", "--break", "nope"], "ctxlab demo: --break 'nope': unknown switch"),
])
def test_argparse_type_errors_are_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(message), err
    assert "usage:" not in err
