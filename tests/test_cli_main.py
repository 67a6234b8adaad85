"""`plansight` on the command line: version, help for every argument, no command at all."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from plansight import __version__
from plansight.__main__ import build_parser, main


def plansight(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_version() -> None:
    done = plansight("--version")
    assert (done.returncode, done.stdout) == (0, f"plansight {__version__}\n")


def test_no_command_prints_the_whole_help_and_exits_2() -> None:
    done = plansight()
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("usage: plansight")
    for name in ("lsp", "run", "demo", "--version"):
        assert name in done.stderr
    assert "plansight demo" in done.stderr  # where to start


def test_help_exits_0_on_stdout() -> None:
    done = plansight("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: plansight")


@pytest.mark.parametrize("command", ["lsp", "run", "demo"])
def test_every_argument_has_a_help_text(command: str) -> None:
    parser = subcommands(build_parser())[command]
    for action in parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, (command, action.dest)
    assert parser.description


def test_every_command_has_a_help_line() -> None:
    parser = build_parser()
    listed = {
        choice.dest: choice.help
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }
    assert set(listed) == set(subcommands(parser)) and all(listed.values())


def test_a_missing_prompt_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run"])
    assert exited.value.code == 2
    assert "prompt" in capsys.readouterr().err
