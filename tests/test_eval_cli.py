"""`plansight eval`'s command line (eval/cli.py): what each option takes and its default, and
what it refuses before anything runs. (The command end to end: test_eval_replay.py.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.eval.cli import add_eval_command


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="plansight", exit_on_error=False)
    add_eval_command(top.add_subparsers(dest="command"))
    return top


def parse(*args: str) -> argparse.Namespace:
    return parser().parse_args(["eval", *args])


def test_the_defaults_run_every_task_and_arm_once_two_at_a_time() -> None:
    args = parse()
    assert (args.tasks, args.arms, args.repeat, args.parallel) == (None, None, 1, 2)
    assert (args.max_rounds, args.max_attempt_cost, args.max_attempt_seconds) == (40, 2.0, 1800.0)
    assert (args.budget, args.prices, args.model) == (None, None, None)
    assert (args.record, args.replay, args.out, args.tasks_dir) == (None, None, None, None)
    assert args.check_tasks is False


def test_lists_paths_and_money_are_read_as_such() -> None:
    args = parse(
        "--tasks", " a, b,,c ", "--arms", "plan,noplan", "--repeat", "3",
        "--max-attempt-cost", "none", "--budget", "12.5", "--replay", "rec", "--out", "o",
    )  # fmt: skip
    assert args.tasks == ["a", "b", "c"] and args.arms == ["plan", "noplan"]
    assert args.repeat == 3 and args.max_attempt_cost is None and args.budget == 12.5
    assert args.replay == Path("rec") and args.out == Path("o")
    assert parse("--max-attempt-cost", "OFF").max_attempt_cost is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat", "0"], "must be at least 1"),
        (["--parallel", "-1"], "must be at least 1"),
        (["--max-rounds", "x"], "invalid _positive value"),
        (["--budget", "0"], "must be above 0"),
        (["--max-attempt-cost", "-2"], "must be above 0"),
    ],
)
def test_impossible_values_are_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(*args)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_declaring_the_command_imports_nothing_heavy() -> None:
    """`plansight --help` stays quick: the eval's own modules load only when it runs."""
    probe = (
        "import argparse, sys\n"
        "from plansight.eval.cli import add_eval_command\n"
        "top = argparse.ArgumentParser()\n"
        "add_eval_command(top.add_subparsers())\n"
        "top.parse_args(['eval', '--repeat', '2'])\n"
        "heavy = ('plansight.eval.', 'PIL', 'rich')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['plansight.eval.cli']"
