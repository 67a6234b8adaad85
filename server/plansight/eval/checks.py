"""Running a task's checks on a folder: the verdict of an attempt.

The checks are copied into a temporary folder of their own (never into the workspace, so the
agent cannot have seen or changed them) and run by a separate `python -m pytest` with the
`plansight.eval.checkfixtures` plugin and nothing auto-loaded. A task whose checks are the
project's own tests (`checks = "pytest tests/test_x.py"` in task.toml) runs that command in a
copy of the workspace, with the test files it names put there from the task's solution (so a
run cannot pass by changing the tests), the project's own pytest configuration, nothing
auto-loaded. The verdict is "passed" only
when pytest exits 0 having run at least one check; the names of failed checks come from its
JUnit XML report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from plansight.eval.checkfixtures import WORKSPACE_ENV
from plansight.eval.tasks import IGNORED_NAMES, Task, copy_tree

DEFAULT_TIMEOUT = 300.0
OUTPUT_TAIL = 4000
PYTEST_INI = "[pytest]\naddopts =\nconsider_namespace_packages = false\n"


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    total: int
    failures: tuple[str, ...] = field(default=())  # the checks that failed or errored
    output: str = ""  # the tail of pytest's output
    seconds: float = 0.0

    def to_wire(self) -> dict[str, object]:
        return {
            "passed": self.passed,
            "total": self.total,
            "failures": list(self.failures),
            "seconds": round(self.seconds, 3),
        }


def check_env(workspace: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PYTEST_", "PLANSIGHT_"))
    }
    env.pop("PYTHONPATH", None)
    env[WORKSPACE_ENV] = str(workspace.resolve())
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _junit_results(report: Path) -> tuple[int, list[str]]:
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return 0, []
    total = 0
    failures: list[str] = []
    for case in root.iter("testcase"):
        if case.find("skipped") is not None:
            continue  # a skipped check did not run: checks that all skip are no pass
        total += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failures.append(case.get("name") or "?")
    return total, failures


def _own_tests(task: Task, workspace: Path, scratch: Path) -> tuple[list[str], Path]:
    """The command and folder for a task whose checks are the project's own tests."""
    copy = copy_tree(workspace, scratch / "workspace")
    for path in task.check_paths:
        reference, target = task.solution_dir / path, copy / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        if reference.is_dir():
            shutil.copytree(reference, target, ignore=shutil.ignore_patterns(*IGNORED_NAMES))
        elif reference.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(reference, target)
    return _pytest(scratch, *(task.checks_command or ())), copy


def run_checks(task: Task, workspace: Path, *, timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Run `task`'s checks against `workspace` (read, copied or executed, never changed)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"plansight-checks-{task.name}-") as scratch:
        if task.checks_command is not None:
            command, cwd = _own_tests(task, workspace, Path(scratch))
            return _run(command, cwd, workspace, Path(scratch) / "junit.xml", timeout, started)
        checks = copy_tree(task.checks_dir, Path(scratch) / "checks")
        (checks / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
        command = _pytest(
            Path(scratch),
            "-p",
            "plansight.eval.checkfixtures",
            "--import-mode=importlib",
            f"--rootdir={checks}",
            str(checks),
        )
        report = Path(scratch) / "junit.xml"
        return _run(command, Path(scratch), workspace, report, timeout, started)


def _pytest(scratch: Path, *arguments: str) -> list[str]:
    """pytest as both kinds of checks run it: quiet, no cache left behind, its temporary files
    and its report (`junit.xml`, read by `_run`) in `scratch`."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--basetemp={scratch / 'tmp'}",
        f"--junitxml={scratch / 'junit.xml'}",
        *arguments,
    ]


def _run(
    command: list[str], cwd: Path, workspace: Path, report: Path, timeout: float, started: float
) -> CheckResult:
    try:
        proc = subprocess.run(
            command,
            cwd=cwd,
            env=check_env(workspace),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else err.stdout
        return CheckResult(
            passed=False,
            total=0,
            failures=(f"timeout after {timeout:g} s",),
            output=(out or "")[-OUTPUT_TAIL:],
            seconds=time.monotonic() - started,
        )
    total, failures = _junit_results(report)
    output = (proc.stdout + proc.stderr)[-OUTPUT_TAIL:]
    if proc.returncode != 0 and not failures:
        failures = [f"pytest exited with {proc.returncode}"]
    return CheckResult(
        passed=proc.returncode == 0 and total > 0,
        total=total,
        failures=tuple(failures),
        output=output,
        seconds=time.monotonic() - started,
    )


def check_copy(task: Task, source: Path, *, timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Run the checks on a fresh copy of `source` (the project or the reference solution)."""
    with tempfile.TemporaryDirectory(prefix=f"plansight-eval-{task.name}-") as scratch:
        return run_checks(task, copy_tree(source, Path(scratch) / "workspace"), timeout=timeout)
