"""The bugs are fixed in the code: the original tests pass unchanged, and so do stricter ones."""

from decimal import Decimal
from pathlib import Path

import pytest

ORIGINAL_TESTS = Path(__file__).parent / "original_tests"


def test_the_original_tests_pass_against_the_code(project, tmp_path):
    copy = project.copy(tmp_path / "copy")
    for original in ORIGINAL_TESTS.glob("*.py.txt"):
        copy.write(f"tests/{original.name.removesuffix('.txt')}", original.read_text("utf-8"))
    run = copy.pytest()
    assert run.ok, run.output
    assert run.passed >= 9


def test_the_project_tests_still_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 9, "tests were removed"


def test_amounts(project):
    amounts = project.module("bank.amounts")
    assert amounts.parse_amount(" $12,345,678.9 ") == Decimal("12345678.9")
    assert amounts.parse_amount("-1,000") == Decimal("-1000")
    with pytest.raises(ValueError):
        amounts.parse_amount("1.2.3")


def test_accounts(project):
    accounts = project.module("bank.accounts")
    account = accounts.Account("bo", Decimal("25"))
    account.withdraw(Decimal("25"), "2024-02-01")  # down to exactly zero is fine
    assert account.balance == 0
    with pytest.raises(accounts.InsufficientFunds):
        account.withdraw(Decimal("0.01"), "2024-02-02")
    account.deposit(Decimal("7"), "2024-02-03")
    with pytest.raises(accounts.InsufficientFunds):
        account.withdraw(Decimal("100"), "2024-02-04")
    assert account.balance == Decimal("7")
    assert account.history == [("2024-02-01", Decimal("-25")), ("2024-02-03", Decimal("7"))]


def test_interest(project):
    compound = project.module("bank.interest").compound
    assert compound(1000, 0.1, 1) == Decimal("1100.00")
    assert compound(1000, 0.05, 3) == Decimal("1157.62")  # 1157.625, rounded half to even
    assert compound(Decimal("200"), 0, 5) == Decimal("200")


def test_statement(project):
    statement_lines = project.module("bank.statement").statement_lines
    history = [
        ("2024-03-05", Decimal("-1200")),
        ("2024-03-01", Decimal("2000")),
        ("2024-03-03", Decimal("-0.5")),
    ]
    assert statement_lines(Decimal("10"), history) == [
        "2024-03-01    2,000.00    2,010.00",
        "2024-03-03       -0.50    2,009.50",
        "2024-03-05   -1,200.00      809.50",
    ]
