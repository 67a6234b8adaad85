"""Judging an attempt (eval/checks.py): a task's checks run by a pytest of their own against
the folder the agent left. Passed means pytest passed having run at least one check; the
failed checks are named; a check that hangs is a failure, not a hang; the checks see nothing
of the caller's credentials, and the folder judged is never changed. Uses the tiny task under
fixtures/eval_tiny (the real tasks: test_eval_tasks.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plansight.eval.checkfixtures import WORKSPACE_ENV
from plansight.eval.checks import CheckResult, check_copy, check_env, run_checks
from plansight.eval.tasks import Task, load_task

from conftest import FIXTURES

TINY = FIXTURES / "eval_tiny" / "tasks" / "tiny-calc"


@pytest.fixture
def task() -> Task:
    return load_task(TINY)


def task_with_checks(tmp_path: Path, checks: str) -> Task:
    """The tiny task with `checks` as its only check file."""
    root = tmp_path / "task"
    shutil.copytree(TINY, root)
    for old in (root / "checks").glob("test_*.py"):
        old.unlink()
    (root / "checks" / "test_only.py").write_text(checks)
    return load_task(root)


def test_the_solution_passes_every_check(task: Task) -> None:
    result = check_copy(task, task.solution_dir)
    assert result.passed, result.output
    assert (result.total, result.failures) == (2, ())
    assert result.seconds > 0


def test_the_checks_that_failed_are_named(task: Task, tmp_path: Path) -> None:
    half = tmp_path / "half"
    shutil.copytree(task.project_dir, half)
    shutil.copy(task.solution_dir / "calc.py", half / "calc.py")  # add fixed, no util.py
    result = run_checks(task, half)
    assert not result.passed
    assert (result.total, result.failures) == (2, ("test_double_doubles",))
    assert "ModuleNotFoundError" in result.output


def test_no_check_collected_is_no_pass(tmp_path: Path) -> None:
    empty = task_with_checks(tmp_path, "# no checks at all\n")
    result = run_checks(empty, empty.solution_dir)
    assert not result.passed and result.total == 0
    assert result.failures == ("pytest exited with 5",)  # pytest: no tests collected


def test_checks_that_all_skip_are_no_pass(tmp_path: Path) -> None:
    task = task_with_checks(
        tmp_path, "import pytest\n\ndef test_x(project):\n    pytest.importorskip('nowhere')\n"
    )
    result = run_checks(task, task.solution_dir)
    assert not result.passed


def test_a_check_that_hangs_is_a_failure_after_the_timeout(tmp_path: Path) -> None:
    task = task_with_checks(
        tmp_path, "import time\n\ndef test_hang(project):\n    time.sleep(600)\n"
    )
    result = run_checks(task, task.solution_dir, timeout=3)
    assert not result.passed
    assert result.failures == ("timeout after 3 s",)


def test_the_checks_see_the_workspace_and_no_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret")
    monkeypatch.setenv("PLANSIGHT_MODEL", "m")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x --bogus-option")
    task = task_with_checks(
        tmp_path,
        "import os\n\n"
        "def test_env(project):\n"
        "    assert not any(k.startswith(('ANTHROPIC_', 'PLANSIGHT_MODEL')) for k in os.environ)\n"
        "    assert os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] == '1'\n"
        "    assert project.exists('calc.py') and not project.exists('checks')\n",
    )
    result = run_checks(task, task.solution_dir)
    assert result.passed, result.output
    env = check_env(tmp_path)
    assert env[WORKSPACE_ENV] == str(tmp_path.resolve())
    assert "ANTHROPIC_API_KEY" not in env and "PYTEST_ADDOPTS" not in env
    assert "PYTHONPATH" not in env


def test_the_folder_judged_is_left_as_it_was(task: Task, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(task.solution_dir, workspace)
    before = {p.relative_to(workspace): p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    assert run_checks(task, workspace).passed
    after = {p.relative_to(workspace): p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    assert after == before  # no caches, no copied checks


def test_a_result_goes_on_the_wire_without_its_output() -> None:
    result = CheckResult(False, 3, ("test_a",), output="long log", seconds=1.23456)
    assert result.to_wire() == {
        "passed": False,
        "total": 3,
        "failures": ["test_a"],
        "seconds": 1.235,
    }
