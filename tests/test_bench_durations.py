"""Seconds per test file (bench/durations.py) from a captured pytest report
(fixtures/durations/pytest_output.txt): only the report's lines count, each phase of each test
is added to its file, and the files come slowest first; the command reads a saved report or
runs pytest itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import FIXTURES, REPO

SAMPLE = FIXTURES / "durations" / "pytest_output.txt"


@pytest.fixture(scope="module")
def durations() -> ModuleType:
    """bench/durations.py, loaded from its file: bench/ is not on the tests' import path."""
    spec = importlib.util.spec_from_file_location(
        "bench_durations", REPO / "bench" / "durations.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def bench(
    *args: str, cwd: Path = REPO, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "server")])}
    return subprocess.run(
        [sys.executable, "-m", "bench", "durations", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_each_files_phases_are_added_up_slowest_file_first(durations: ModuleType) -> None:
    files = durations.parse(SAMPLE.read_text().splitlines())
    found = [(f.path, f.tests, f.setup, f.call, f.teardown) for f in files]
    assert found == [
        (
            "tests/test_lsp_server.py",
            2,
            pytest.approx(3.02),
            pytest.approx(13.06),
            pytest.approx(1.11),
        ),
        ("tests/test_many.py", 3, 0.0, pytest.approx(2.70), 0.0),  # after test_slow's line
        ("tests/test_slow.py", 1, 0.0, pytest.approx(2.50), 0.0),
        ("tests/sub/test_nested.py", 1, pytest.approx(0.25), pytest.approx(0.50), 0.0),
        ("tests/test_params.py", 2, 0.0, pytest.approx(0.30), 0.0),  # ids with spaces and ::
        ("tests/test_tiny.py", 1, 0.0, 0.0, 0.0),
    ]
    assert files[0].total == pytest.approx(17.19)


def test_lines_outside_the_report_are_not_counted(durations: ModuleType) -> None:
    assert durations.parse(["FAILED tests/t.py::x - took 2.50s call", "1 passed in 3.00s"]) == []
    assert durations.parse(["", "  0.50s call     tests/a.py::t  "])[0].call == pytest.approx(0.5)


def test_the_table_gives_each_files_share_and_the_sums(durations: ModuleType) -> None:
    files = durations.parse(SAMPLE.read_text().splitlines())
    text = durations.render_text(files).splitlines()
    assert text[0].split() == ["file", "tests", "setup", "call", "teardown", "total", "share"]
    assert text[1].split() == [
        "tests/test_lsp_server.py", "2", "3.02s", "13.06s", "1.11s", "17.19s", "73.3%"
    ]  # fmt: skip
    assert [line.split()[0] for line in text[1:-1]] == [f.path for f in files]
    assert text[-1] == "6 files, 10 tests, 23.44 s of test time"
    markdown = durations.render_markdown(files).splitlines()
    assert markdown[0] == "| file | tests | setup | call | teardown | total | share |"
    assert markdown[2] == (
        "| tests/test_lsp_server.py | 2 | 3.02 s | 13.06 s | 1.11 s | 17.19 s | 73.3 % |"
    )
    assert markdown[-1] == "6 files, 10 tests, 23.44 s of test time"


def test_the_command_reads_a_saved_report_or_standard_input() -> None:
    saved = bench(str(SAMPLE))
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.splitlines()[1].startswith("tests/test_lsp_server.py")
    piped = bench("--markdown", "-", stdin=SAMPLE.read_text())
    assert piped.returncode == 0 and piped.stdout.startswith("| file |")


def test_the_command_says_what_is_wrong(tmp_path: Path) -> None:
    assert bench().returncode == 2
    (tmp_path / "plain.txt").write_text("3 passed in 0.01s\n")
    empty = bench(str(tmp_path / "plain.txt"))
    assert empty.returncode == 1 and "--durations=0 --durations-min=0" in empty.stderr
    missing = bench(str(tmp_path / "missing.txt"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_the_command_runs_pytest_and_passes_its_status_on(tmp_path: Path) -> None:
    (tmp_path / "test_two.py").write_text(
        "def test_fast():\n    pass\n\n\ndef test_fails():\n    assert False\n"
    )
    ran = bench("--run", "test_two.py", "-p", "no:cacheprovider", cwd=tmp_path)
    assert ran.returncode == 1  # pytest's: a test failed
    assert "1 failed, 1 passed" in ran.stderr  # pytest's own output, as it ran
    rows = ran.stdout.splitlines()
    assert rows[1].split()[:2] == ["test_two.py", "2"]
    assert rows[-1].startswith("1 file, 2 tests")
