"""Checking the tasks themselves: `plansight eval --check-tasks`.

For each task: its reference solution passes its checks, the untouched project fails them,
and each file the solution changes is needed (the solution with that one file put back as the
project has it fails too: a half-done solution does not pass), except the files the task
lists as `optional`.
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
        return text


def variants(task: Task, *, half_done: bool = True) -> Iterator[Variant]:
    yield Variant(task, "solution", must_pass=True)
    yield Variant(task, "project", must_pass=False)
    if half_done:
        for path in changed_paths(task.project_dir, task.solution_dir):
            if path not in task.optional:
                yield Variant(task, f"without {path}", must_pass=False, reverted=path)


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
