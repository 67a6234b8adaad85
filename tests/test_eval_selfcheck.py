"""Checking the tasks themselves (eval/selfcheck.py, `plansight eval --check-tasks`) on the
tiny task under fixtures/eval_tiny: its solution must pass, its project fail, and the solution
with any one needed file put back fail too; a task whose checks let a half-done solution pass
is reported as wrong. (Every variant of the real tasks: test_eval_tasks.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plansight.eval.checks import CheckResult
from plansight.eval.selfcheck import Variant, Verdict, check_tasks, main, variants
from plansight.eval.tasks import Task, load_task

from conftest import FIXTURES

TASKS = FIXTURES / "eval_tiny" / "tasks"


@pytest.fixture
def task() -> Task:
    return load_task(TASKS / "tiny-calc")


def test_the_variants_are_solution_project_and_each_needed_file_left_undone(task: Task) -> None:
    found = [(v.label, v.must_pass, v.reverted) for v in variants(task)]
    assert found == [
        ("solution", True, None),
        ("project", False, None),
        ("without calc.py", False, "calc.py"),
        ("without util.py", False, "util.py"),
    ]  # README.md is optional: leaving it undone may pass
    assert [v.label for v in variants(task, half_done=False)] == ["solution", "project"]


def test_every_verdict_of_a_sound_task_is_as_it_must_be(task: Task) -> None:
    heard: list[Verdict] = []
    verdicts = check_tasks([task], on_verdict=heard.append)
    assert heard == verdicts
    assert [v.ok for v in verdicts] == [True, True, True, True], [v.describe() for v in verdicts]
    assert verdicts[0].describe() == "tiny-calc: solution must pass, passed"
    assert verdicts[2].describe() == "tiny-calc: without calc.py must fail, failed"


def test_checks_too_weak_for_a_half_done_solution_are_caught(task: Task, tmp_path: Path) -> None:
    weak = tmp_path / "tasks" / "weak"
    shutil.copytree(task.root, weak)
    (weak / "checks" / "test_calc.py").write_text(
        "def test_add_adds(project):\n    assert project.module('calc').add(2, 3) == 5\n"
    )
    verdicts = check_tasks([load_task(weak)])
    wrong = [v.variant.label for v in verdicts if not v.ok]
    assert wrong == ["without util.py"]  # util.py is never checked: leaving it out passes
    assert main(["--tasks-dir", str(tmp_path / "tasks")]) == 1


def test_a_wrong_verdict_shows_why_only_when_the_checks_failed(task: Task) -> None:
    variant = Variant(task, "solution", must_pass=True)
    failed = Verdict(variant, CheckResult(False, 2, ("test_add_adds",), output="AssertionError"))
    assert not failed.ok
    assert failed.describe() == "tiny-calc: solution must pass, failed\nAssertionError"
    passed = Verdict(Variant(task, "project", must_pass=False), CheckResult(True, 2, output="x"))
    assert not passed.ok and passed.describe() == "tiny-calc: project must fail, passed"


def test_the_command_says_how_many_verdicts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--tasks-dir", str(TASKS), "tiny-calc"]) == 0
    out = capsys.readouterr().out
    assert "ok  tiny-calc: solution must pass, passed" in out
    assert out.rstrip().endswith("4 of 4 verdicts as they must be")
    assert main(["--tasks-dir", str(TASKS), "nope"]) == 2
    assert "unknown task(s): nope" in capsys.readouterr().err


def test_a_file_the_solution_deletes_must_be_checked_as_gone(task: Task, tmp_path: Path) -> None:
    root = tmp_path / "tasks" / "deletes"
    shutil.copytree(task.root, root)
    (root / "project" / "legacy.py").write_text("def add(a, b):\n    return a - b\n")
    verdicts = check_tasks([load_task(root)])
    (wrong,) = [v for v in verdicts if not v.ok]
    assert wrong.variant.label == "with legacy.py put back (the solution deletes it)"
    message = " ".join(wrong.describe().split())
    assert message.startswith(
        "deletes: with legacy.py put back (the solution deletes it) must fail, passed"
    )
    assert 'assert not project.exists("legacy.py")' in message
    assert 'optional = ["legacy.py"]' in message
    # Either fix makes every verdict right: a check that it is gone ...
    checks = root / "checks" / "test_calc.py"
    checks.write_text(
        checks.read_text()
        + '\n\ndef test_legacy_is_gone(project):\n    assert not project.exists("legacy.py")\n'
    )
    assert all(v.ok for v in check_tasks([load_task(root)]))


def test_a_half_done_variant_that_passes_says_how_to_fix_the_task(task: Task) -> None:
    variant = next(v for v in variants(task) if v.reverted == "util.py")
    passed = Verdict(variant, CheckResult(True, 2, output="x"))
    text = " ".join(passed.describe().split())
    assert text.startswith("tiny-calc: without util.py must fail, passed")
    assert "which the solution adds" in text and 'optional = ["util.py"]' in text
