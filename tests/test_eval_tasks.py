"""The evaluation tasks: each reference solution passes its checks, the untouched project and a
half-done solution fail them, and the task format is enforced."""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import pytest

from plansight.eval.checks import check_copy, run_checks
from plansight.eval.selfcheck import Variant, check_tasks, judge, variants
from plansight.eval.tasks import (
    MIN_STEPS,
    Task,
    TaskError,
    changed_paths,
    default_tasks_dir,
    load_task,
    load_tasks,
)

from conftest import FIXTURES

TASKS = load_tasks(default_tasks_dir())


def half_done(task: Task) -> Variant:
    """One solution with a single changed file put back, chosen by the task's name (every
    variant of every task: `plansight eval --check-tasks`)."""
    candidates = [v for v in variants(task) if v.reverted is not None]
    assert candidates, f"{task.name}: the solution changes no file"
    return candidates[zlib.crc32(task.name.encode()) % len(candidates)]


def test_there_are_at_least_twelve_tasks() -> None:
    assert len(TASKS) >= 12


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_task_is_multi_step_across_files(task: Task) -> None:
    assert len(task.steps) >= MIN_STEPS
    changed = changed_paths(task.project_dir, task.solution_dir)
    assert len(changed) >= 2, f"{task.name}: the solution changes {changed}"
    assert not (task.project_dir / "checks").exists()


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_reference_solution_passes(task: Task) -> None:
    result = check_copy(task, task.solution_dir)
    assert result.passed, result.output


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_untouched_project_fails(task: Task) -> None:
    result = check_copy(task, task.project_dir)
    assert not result.passed
    assert result.total > 0, f"the checks did not run: {result.output}"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_half_done_solution_fails(task: Task) -> None:
    verdict = judge(half_done(task))
    assert verdict.ok, verdict.describe()
    assert verdict.result.total > 0


def test_checks_never_change_the_folder_they_judge(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "seed-refactor")
    before = {p: p.read_bytes() for p in task.solution_dir.rglob("*") if p.is_file()}
    workspace = tmp_path / "workspace"
    shutil.copytree(task.solution_dir, workspace)
    assert run_checks(task, workspace).passed
    after = {p.relative_to(workspace) for p in workspace.rglob("*") if p.is_file()}
    assert after == {p.relative_to(task.solution_dir) for p in before}


def write_task(root: Path, spec: str, *, checks: bool = True) -> Path:
    for part in ("project", "solution", "checks"):
        (root / part).mkdir(parents=True)
    if checks:
        (root / "checks" / "test_x.py").write_text("def test_x(project):\n    pass\n")
    (root / "task.toml").write_text(spec)
    return root


STEPS = 'steps = ["a", "b", "c", "d", "e"]\n'


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('title = "t"\n' + STEPS, "'prompt'"),
        ('title = "t"\nprompt = "p"\nsteps = ["a", "b"]\n', "at least 5 steps"),
        ('title = "t"\nprompt = "p"\n' + STEPS + "max_rounds = 0\n", "max_rounds"),
        ('title = "t"\nprompt = "p"\n' + STEPS + "colour = 1\n", "unknown keys"),
        ('title = "t"\nprompt = "p\n', "not valid TOML"),
    ],
)
def test_malformed_task_is_refused_with_a_reason(tmp_path: Path, spec: str, message: str) -> None:
    with pytest.raises(TaskError, match=message):
        load_task(write_task(tmp_path / "bad", spec))


def test_a_task_without_checks_is_refused(tmp_path: Path) -> None:
    root = write_task(tmp_path / "nochecks", 'title = "t"\nprompt = "p"\n' + STEPS, checks=False)
    with pytest.raises(TaskError, match="no test_"):
        load_task(root)


def test_unknown_task_names_are_listed(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"unknown task.*nope.*available: .*seed-refactor"):
        load_tasks(default_tasks_dir(), ["seed-refactor", "nope"])


# A task whose checks are the project's own tests (fixtures/eval_own_tests) ------------------

OWN = FIXTURES / "eval_own_tests" / "tasks" / "median-even"
OWN_SPEC = 'title = "t"\nprompt = "p"\n' + STEPS


def test_a_task_can_name_the_projects_own_tests_as_its_checks() -> None:
    task = load_task(OWN)
    assert task.checks_command == ("tests/test_stats.py",)
    assert task.check_paths == ("tests/test_stats.py",)
    assert not (OWN / "checks").exists()
    verdicts = check_tasks([task])
    assert [(v.variant.label, v.ok) for v in verdicts] == [
        ("solution", True),
        ("project", True),
        ("without stats.py", True),  # the named tests come from the solution: no variant
    ], [v.describe() for v in verdicts]
    assert verdicts[1].result.failures == ("test_median_of_an_even_count",)


def test_an_attempt_cannot_pass_its_own_tests_by_changing_them(tmp_path: Path) -> None:
    task = load_task(OWN)
    cheat = shutil.copytree(task.project_dir, tmp_path / "cheat")
    (cheat / "tests" / "test_stats.py").write_text("def test_nothing():\n    pass\n")
    result = run_checks(task, cheat)
    assert not result.passed and "test_median_of_an_even_count" in result.failures
    assert (cheat / "tests" / "test_stats.py").read_text().startswith("def test_nothing")
    fixed = shutil.copytree(task.project_dir, tmp_path / "fixed")
    shutil.copy2(task.solution_dir / "stats.py", fixed / "stats.py")  # the fix, not the test
    result = run_checks(task, fixed)
    assert result.passed and result.total == 3, result.output


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ('checks = "make test"', "'checks' must be a pytest command line"),
        ("checks = 3", "'checks' must be a pytest command line"),
        ('checks = "pytest ../elsewhere/test_x.py"', "outside the project"),
        ('checks = "pytest \'unclosed"', "'checks' must be a pytest command line"),
    ],
)
def test_a_bad_checks_command_is_refused(tmp_path: Path, checks: str, message: str) -> None:
    root = write_task(tmp_path / "bad", OWN_SPEC + checks + "\n", checks=False)
    (root / "checks").rmdir()
    with pytest.raises(TaskError, match=message):
        load_task(root)


def test_checks_and_a_checks_folder_together_are_refused(tmp_path: Path) -> None:
    root = write_task(tmp_path / "both", OWN_SPEC + 'checks = "pytest tests"\n')
    with pytest.raises(TaskError, match="not both"):
        load_task(root)
    (root / "checks" / "test_x.py").unlink()
    (root / "checks").rmdir()
    assert load_task(root).checks_command == ("tests",)
    python_m = write_task(tmp_path / "python-m", OWN_SPEC + 'checks = "python -m pytest -x t"\n')
    shutil.rmtree(python_m / "checks")
    assert load_task(python_m).check_paths == ("t",)
