"""The date helpers live in dates.py; nothing imports them from app any more."""

import ast
import datetime as dt

import pytest

HELPERS = ("parse_date", "parse_range", "is_weekend", "business_days")


def imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_dates_module_holds_the_helpers(project):
    dates = project.module("dates")
    for name in HELPERS:
        assert getattr(dates, name).__module__ == "dates", f"dates.{name} is not defined there"
    assert dates.parse_date("2024/02/29") == dt.date(2024, 2, 29)
    assert dates.parse_range("2024-01-01..2024-01-07") == (dt.date(2024, 1, 1), dt.date(2024, 1, 7))
    with pytest.raises(ValueError):
        dates.parse_range("2024-01-07")
    assert dates.is_weekend(dt.date(2024, 1, 6)) and not dates.is_weekend(dt.date(2024, 1, 8))
    holiday = {dt.date(2024, 1, 1)}
    assert dates.business_days(dt.date(2024, 1, 1), dt.date(2024, 1, 14), holiday) == 9


def test_app_no_longer_defines_them(project):
    tree = project.syntax("app.py")
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert not defined & set(HELPERS), f"app.py still defines {sorted(defined & set(HELPERS))}"


@pytest.mark.parametrize("path", ["report.py", "holidays.py", "dates.py"])
def test_modules_do_not_depend_on_app(project, path):
    assert "app" not in set(imported_modules(project.syntax(path))), f"{path} imports app"


def test_tests_import_the_helpers_from_dates(project):
    tests = project.tree("tests/**/*.py")
    assert tests
    modules = set()
    for path in tests:
        modules |= set(imported_modules(project.syntax(path)))
    assert "dates" in modules
    assert "app" not in modules


def test_cli_is_unchanged(project, tmp_path):
    holidays = tmp_path / "days.txt"
    holidays.write_text("2024-05-01 # May Day\n\n2024/05/09\n", encoding="utf-8")
    result = project.run("app.py", "2024-04-29..2024-05-12", "--holidays", str(holidays))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "8 working days\n4 weekend days from 2024-04-29 to 2024-05-12\n"
    )
    backwards = project.run("app.py", "2024-05-12..2024-04-29")
    assert backwards.returncode != 0 and "before it starts" in backwards.stderr


def test_library_modules_work_without_app(project, tmp_path):
    holidays = tmp_path / "days.txt"
    holidays.write_text("2024-12-25\n", encoding="utf-8")
    code = (
        "import sys, datetime as dt\n"
        "sys.modules['app'] = None  # importing app now fails\n"
        "import report, holidays\n"
        f"assert holidays.load_holidays({str(holidays)!r}) == {{dt.date(2024, 12, 25)}}\n"
        "print(report.weekend_report(dt.date(2024, 12, 20), dt.date(2024, 12, 23)))\n"
    )
    result = project.run("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2 weekend days from 2024-12-20 to 2024-12-23\n"


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3
