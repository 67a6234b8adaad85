"""Checking the tasks themselves: `plansight eval --check-tasks`.

For each task: its reference solution passes its checks, the untouched project fails them,
and each file the solution changes is needed (the solution with that one file put back as the
project has it fails too: a half-done solution does not pass), except the files the task
lists as `optional` and, in a task whose checks are the project's own tests, the test files
they name (the checks take those from the solution). A file the solution deletes is put back:
that must fail too, so the checks must see it gone (or the task names it `optional`). A wrong
verdict says how to fix the task.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from plansight.eval.checks import CheckResult, check_copy, run_checks
from plansight.eval.tasks import Task, changed_paths, revert_one


@dataclass(frozen=True)
class Variant:
    """One version of a task's project and the verdict its checks must give."""

    task: Task
    label: str  # "solution", "project", or "without <path>"
    must_pass: bool
    reverted: str | None = None  # the one path of the solution put back
    change: str = "changes"  # what the solution does to `reverted`: changes, adds, deletes


@dataclass(frozen=True)
class Verdict:
    variant: Variant
    result: CheckResult

    @property
    def ok(self) -> bool:
        return self.result.passed == self.variant.must_pass

    def describe(self) -> str:
        want = "pass" if self.variant.must_pass else "fail"
        got = "passed" if self.result.passed else "failed"
        text = f"{self.variant.task.name}: {self.variant.label} must {want}, {got}"
        if not self.ok and self.result.passed is False:
            text += "\n" + self.result.output
        elif not self.ok and self.variant.reverted is not None:
            text += "\n  " + fix_hint(self.variant)
        return text


def fix_hint(variant: Variant) -> str:
    """How to fix a task whose checks pass with one file of the solution undone."""
    path = variant.reverted
    optional = f'or, if that is acceptable, list it in task.toml: optional = ["{path}"]'
    if variant.change == "deletes":
        return (
            f"The solution deletes {path}, and the checks pass with it still there. Check "
            f'that it is gone (e.g. `assert not project.exists("{path}")`, or a test of the '
            f"project's own that fails while it exists), {optional}."
        )
    if variant.change == "adds":
        return (
            f"The checks pass without {path}, which the solution adds: check what it is for, "
            f"{optional}."
        )
    return (
        f"The checks pass with {path} as the project has it: check what the solution's "
        f"change to it does, {optional}."
    )


def variants(task: Task, *, half_done: bool = True) -> Iterator[Variant]:
    yield Variant(task, "solution", must_pass=True)
    yield Variant(task, "project", must_pass=False)
    if half_done:
        for path in changed_paths(task.project_dir, task.solution_dir):
            if path in task.optional or task.is_check_path(path):
                continue
            if not (task.solution_dir / path).exists():
                label, change = f"with {path} put back (the solution deletes it)", "deletes"
            elif not (task.project_dir / path).exists():
                label, change = f"without {path}", "adds"
            else:
                label, change = f"without {path}", "changes"
            yield Variant(task, label, must_pass=False, reverted=path, change=change)


def judge(variant: Variant) -> Verdict:
    task = variant.task
    if variant.reverted is None:
        source = task.solution_dir if variant.must_pass else task.project_dir
        return Verdict(variant, check_copy(task, source))
    with tempfile.TemporaryDirectory(prefix=f"plansight-half-{task.name}-") as scratch:
        workspace = revert_one(task, variant.reverted, Path(scratch) / "workspace")
        return Verdict(variant, run_checks(task, workspace))


def check_tasks(
    tasks: list[Task],
    *,
    half_done: bool = True,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for task in tasks:
        for variant in variants(task, half_done=half_done):
            verdict = judge(variant)
            verdicts.append(verdict)
            if on_verdict is not None:
                on_verdict(verdict)
    return verdicts


def main(argv: list[str] | None = None) -> int:
    """`python -m plansight.eval.selfcheck [TASK ...]`: every variant of the tasks named
    (default: all); exit status 1 when a verdict is wrong."""
    import argparse

    from plansight.eval.tasks import TaskError, default_tasks_dir, load_tasks

    parser = argparse.ArgumentParser(
        prog="python -m plansight.eval.selfcheck", description=main.__doc__
    )
    parser.add_argument("tasks", nargs="*", help="task names (default: every task)")
    parser.add_argument("--tasks-dir", type=Path, default=default_tasks_dir())
    args = parser.parse_args(argv)
    try:
        tasks = load_tasks(args.tasks_dir, args.tasks or None)
    except TaskError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    def show(verdict: Verdict) -> None:
        mark = "ok " if verdict.ok else "BAD"
        print(f"{mark} {verdict.describe()} ({verdict.result.seconds:.1f} s)", flush=True)

    verdicts = check_tasks(tasks, on_verdict=show)
    wrong = [v for v in verdicts if not v.ok]
    print(f"{len(verdicts) - len(wrong)} of {len(verdicts)} verdicts as they must be")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
