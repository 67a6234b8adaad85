"""``python -m bench durations``: seconds per test file, from pytest's ``--durations`` report.

pytest reports each test's setup, call and teardown (``--durations=0`` lists them all, and
``--durations-min=0`` keeps the ones under 5 ms it otherwise hides); this sums them by the
file the test is in and prints one row per file, the slowest first, so that bench/RESULTS.md
can say where the suite's time goes.

- ``python -m bench durations OUTPUT`` reads a report saved from such a run (``-``: stdin);
- ``python -m bench durations --run [PYTEST ARGS ...]`` runs ``python -m pytest -q
  --durations=0 --durations-min=0`` with those arguments (pytest's output goes to stderr as it
  comes) and reads its report; the exit status is pytest's.

The figures are test time, not wall time: with pytest-xdist the files ran side by side, so
they add up to more than the run took. pytest prints each duration to 10 ms, so a file's
total is good to about 5 ms per phase of its tests. A module-scoped fixture's setup is
charged to the file's first test, as pytest reports it: the file still pays for it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

PHASES = ("setup", "call", "teardown")
# One line of the report: "1.23s call     tests/test_x.py::test_y[param]".
_LINE = re.compile(
    r"^\s*(?P<seconds>\d+(?:\.\d+)?)s\s+(?P<phase>setup|call|teardown)\s+(?P<node>\S.*?)\s*$"
)
PYTEST_DURATIONS = ("--durations=0", "--durations-min=0")


@dataclass(frozen=True)
class FileDurations:
    """The seconds one test file's tests took, by phase."""

    path: str
    tests: int
    setup: float
    call: float
    teardown: float

    @property
    def total(self) -> float:
        return self.setup + self.call + self.teardown


def parse(lines: Iterable[str]) -> list[FileDurations]:
    """The files of a ``--durations`` report, the slowest first (then by name).

    Only the report's own lines count (the rest of pytest's output is skipped); a test is
    counted once however many of its phases are listed.
    """
    phases: dict[str, dict[str, float]] = {}
    tests: dict[str, set[str]] = {}
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            continue
        node = match["node"]
        path = node.split("::", 1)[0]
        by_phase = phases.setdefault(path, dict.fromkeys(PHASES, 0.0))
        by_phase[match["phase"]] += float(match["seconds"])
        tests.setdefault(path, set()).add(node)
    files = [
        FileDurations(path, len(tests[path]), p["setup"], p["call"], p["teardown"])
        for path, p in phases.items()
    ]
    return sorted(files, key=lambda f: (-round(f.total, 6), f.path))


def render_text(files: Sequence[FileDurations]) -> str:
    total = sum(f.total for f in files) or 1.0
    width = max([len("file"), *(len(f.path) for f in files)])
    rows = [
        f"{'file':<{width}}  {'tests':>5}  {'setup':>8}  {'call':>8}  {'teardown':>8}  "
        f"{'total':>8}  {'share':>6}"
    ]
    for f in files:
        rows.append(
            f"{f.path:<{width}}  {f.tests:>5}  {f.setup:>7.2f}s  {f.call:>7.2f}s  "
            f"{f.teardown:>7.2f}s  {f.total:>7.2f}s  {100 * f.total / total:>5.1f}%"
        )
    rows.append(_summary(files))
    return "\n".join(rows)


def render_markdown(files: Sequence[FileDurations]) -> str:
    total = sum(f.total for f in files) or 1.0
    rows = [
        "| file | tests | setup | call | teardown | total | share |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for f in files:
        rows.append(
            f"| {f.path} | {f.tests} | {f.setup:.2f} s | {f.call:.2f} s | {f.teardown:.2f} s "
            f"| {f.total:.2f} s | {100 * f.total / total:.1f} % |"
        )
    rows.append("")
    rows.append(_summary(files))
    return "\n".join(rows)


def _summary(files: Sequence[FileDurations]) -> str:
    tests = sum(f.tests for f in files)
    seconds = sum(f.total for f in files)
    return f"{_count(len(files), 'file')}, {_count(tests, 'test')}, {seconds:.2f} s of test time"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def run_pytest(args: Sequence[str]) -> tuple[list[str], int]:
    """Run the suite (or the part `args` name) with the full durations report: its lines and
    pytest's exit status."""
    command = [sys.executable, "-m", "pytest", "-q", *PYTEST_DURATIONS, *args]
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stderr.write(line)  # the run's progress, as pytest shows it
            lines.append(line)
    return lines, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench durations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "report", nargs="?", help="a saved `pytest --durations=0` report ('-': standard input)"
    )
    parser.add_argument(
        "--run",
        nargs=argparse.REMAINDER,
        metavar="PYTEST ARGS",
        help="run pytest with the arguments that follow and read its report",
    )
    args = parser.parse_args(argv)
    if (args.run is None) == (args.report is None):
        parser.error("give either a saved report or --run [PYTEST ARGS ...]")
    status = 0
    if args.run is not None:
        lines, status = run_pytest(args.run)  # failed tests still took their time: shown
    elif args.report == "-":
        lines = sys.stdin.readlines()
    else:
        try:
            lines = Path(args.report).read_text(encoding="utf-8").splitlines()
        except OSError as err:
            parser.error(f"cannot read {args.report}: {err.strerror or err}")
    files = parse(lines)
    if not files:
        print(
            "no durations in the report: run pytest with --durations=0 --durations-min=0",
            file=sys.stderr,
        )
        return 1
    print(render_markdown(files) if args.markdown else render_text(files))
    return status


if __name__ == "__main__":
    sys.exit(main())
