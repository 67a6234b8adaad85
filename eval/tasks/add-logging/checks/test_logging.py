"""Logging through module loggers, to stderr, with --verbose; stdout exactly as before."""

import ast
import logging
import re

import pytest

GOOD = "food,12.50\nrent,800\n"
BAD = "# spending\nfood,3\nnot a row\nfun,x\ntravel,20.25\n"
EXPECTED = (
    "food         15.50\n"
    "rent        800.00\n"
    "travel       20.25\n"
    "total       835.75\n"
)


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def files(tmp_path):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text(BAD, encoding="utf-8")
    return good, bad


@pytest.fixture
def records():
    handler = Records()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler.records
    root.removeHandler(handler)
    root.setLevel(old_level)


def test_stdout_is_unchanged(project, files):
    good, bad = files
    for flags in ([], ["--verbose"]):
        result = project.run("-m", "csvsum", *flags, str(good), str(bad))
        assert result.returncode == 0, result.stderr
        assert result.stdout == EXPECTED, flags


def test_warnings_reach_stderr_by_default(project, files):
    good, bad = files
    result = project.run("-m", "csvsum", str(good), str(bad))
    warned = [line for line in result.stderr.splitlines() if str(bad) in line]
    assert any(re.search(r"\b3\b", line) for line in warned), result.stderr
    assert any(re.search(r"\b4\b", line) for line in warned), result.stderr
    assert str(good) not in result.stderr, "debug messages show without --verbose"


def test_verbose_logs_each_file(project, files):
    good, bad = files
    result = project.run("-m", "csvsum", "--verbose", str(good), str(bad))
    assert str(good) in result.stderr and str(bad) in result.stderr


@pytest.mark.parametrize("name", ["csvsum.reader", "csvsum.summary"])
def test_module_has_its_own_logger(project, name):
    module = project.module(name)
    loggers = [v for v in vars(module).values() if isinstance(v, logging.Logger)]
    assert any(logger.name == name for logger in loggers), f"{name} has no logger of its own"


def test_records_come_from_the_module_loggers(project, files, records):
    good, bad = files
    reader = project.module("csvsum.reader")
    summary = project.module("csvsum.summary")
    rows = reader.read_rows(str(bad))
    assert rows == [("food", 3.0), ("travel", 20.25)]
    mine = [r for r in records if r.name == "csvsum.reader"]
    assert any(r.levelno == logging.DEBUG and str(bad) in r.getMessage() for r in mine)
    warnings = [r.getMessage() for r in mine if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and all(str(bad) in w for w in warnings), warnings
    records.clear()
    summary.summarize([("a", 1.0), ("b", 2.0), ("a", 3.0), ("c", 0.5)])
    info = [r for r in records if r.name == "csvsum.summary" and r.levelno == logging.INFO]
    assert info and re.search(r"\b4\b", info[0].getMessage())


@pytest.mark.parametrize("path", ["csvsum/reader.py", "csvsum/summary.py"])
def test_no_print_for_diagnostics(project, path):
    for node in ast.walk(project.syntax(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "print", f"{path} prints"


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
