"""What `plansight eval` does with its arguments (eval/main.py), run in this process on the tiny
task under fixtures/eval_tiny: `--check-tasks` reports each verdict and fails on a wrong one,
and arguments that cannot go together are refused (exit 2) before anything runs. (The command
as a process, its other usage errors, replays and a recorded live run: test_eval_replay.py.)"""

from __future__ import annotations

import argparse
import io
import shutil
from pathlib import Path

import pytest

from plansight.eval.cli import add_eval_command
from plansight.eval.main import run_eval

from conftest import FIXTURES

TASKS = FIXTURES / "eval_tiny" / "tasks"


def eval_args(*args: str) -> argparse.Namespace:
    top = argparse.ArgumentParser(prog="plansight")
    add_eval_command(top.add_subparsers(dest="command"))
    return top.parse_args(["eval", "--tasks-dir", str(TASKS), *args])


def run(*args: str) -> tuple[int, str]:
    stream = io.StringIO()
    code = run_eval(eval_args(*args), stream)
    return code, " ".join(stream.getvalue().split())  # unwrapped, as a reader sees it


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_check_tasks_reports_every_verdict() -> None:
    code, shown = run("--check-tasks")
    assert code == 0, shown
    assert "ok tiny-calc: solution must pass, passed" in shown
    assert "ok tiny-calc: without util.py must fail, failed" in shown
    assert shown.endswith("4 of 4 verdicts as they must be")


def test_check_tasks_fails_on_a_wrong_verdict(tmp_path: Path) -> None:
    shutil.copytree(TASKS / "tiny-calc", tmp_path / "tiny-calc")
    (tmp_path / "tiny-calc" / "checks" / "test_calc.py").write_text(
        "def test_nothing(project):\n    pass\n"  # passes the untouched project too
    )
    stream = io.StringIO()
    args = eval_args("--check-tasks")
    args.tasks_dir = tmp_path
    assert run_eval(args, stream) == 1
    assert "WRONG tiny-calc: project must fail, passed" in stream.getvalue()


def test_check_tasks_says_how_to_fix_a_deleted_file_left_unchecked(tmp_path: Path) -> None:
    shutil.copytree(TASKS / "tiny-calc", tmp_path / "tiny-calc")
    (tmp_path / "tiny-calc" / "project" / "legacy.py").write_text("OLD = [1]\n")
    stream = io.StringIO()
    args = eval_args("--check-tasks")
    args.tasks_dir = tmp_path
    assert run_eval(args, stream) == 1
    shown = " ".join(stream.getvalue().split())
    assert (
        "WRONG tiny-calc: with legacy.py put back (the solution deletes it) must fail, passed"
        in shown
    )
    assert 'Check that it is gone (e.g. `assert not project.exists("legacy.py")`' in shown
    assert 'list it in task.toml: optional = ["legacy.py"]' in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replay", "rec", "--model", "m"], "--model does not apply to a replay"),
        (["--prices", "1,2"], "--prices takes four numbers"),
        (["--replay", "nowhere"], "no recordings folder at nowhere"),
        (["--replay", "rec", "--reminder-after", "4"], "--reminder-after does not apply"),
        (["--arms", "plan,remind0"], "unknown arm 'remind0'"),
    ],
)
def test_what_cannot_run_is_refused_saying_why(args: list[str], message: str) -> None:
    code, shown = run(*args)
    assert code == 2
    assert shown.startswith("plansight eval:") and message in shown


def test_a_replay_of_recordings_for_other_tasks_is_refused() -> None:
    recordings = FIXTURES.parent / "eval" / "recordings"
    code, shown = run("--replay", str(recordings))
    assert code == 2
    assert "no recording matches the tasks and arms chosen" in shown


def test_an_auth_token_is_a_credential_too_and_the_cost_limit_needs_a_price(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token")
    code, shown = run("--model", "my-model")
    assert code == 2 and "no list price known for my-model" in shown
    assert "no ANTHROPIC_API_KEY" not in shown
