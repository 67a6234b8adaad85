"""fmt is now format_money, everywhere, with no trace of the old name."""

import re

from plansight.eval.checkfixtures import identifiers

LEDGER = """\
2023-12-30,coffee,-3.5
2024-01-02,refund,12
"""
EXPECTED = """\
2023-12-30  coffee                     -$3.50
2024-01-02  refund                     $12.00

2023-12  total       -$3.50
2024-01  total       $12.00
balance $8.50
"""


def test_format_money_formats_cents(project):
    money = project.module("ledger.money")
    assert money.format_money(123456) == "$1,234.56"
    assert money.format_money(-500) == "-$5.00"
    assert money.format_money(7, "£") == "£0.07"
    assert money.format_money(0, symbol="€") == "€0.00"


def test_package_exports_the_new_name_only(project):
    ledger = project.module("ledger")
    assert ledger.format_money(1230) == "$12.30"
    assert not hasattr(ledger, "fmt")
    assert not hasattr(project.module("ledger.money"), "fmt")


def test_no_code_uses_the_old_name(project):
    files = project.tree("**/*.py")
    assert "ledger/money.py" in files
    for path in files:
        names = set(identifiers(project.syntax(path)))
        assert "fmt" not in names, f"{path} still uses fmt"


def test_readme_documents_the_new_name(project):
    readme = project.read("README.md")
    assert "format_money(" in readme
    assert not re.search(r"\bfmt\b", readme)


def test_cli_output_is_unchanged(project, tmp_path):
    ledger = tmp_path / "small.csv"
    ledger.write_text(LEDGER, encoding="utf-8")
    result = project.run("-m", "ledger.cli", str(ledger))
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED


def test_invoice_is_unchanged(project):
    invoice = project.module("ledger.invoice").invoice
    assert invoice("Bo", [("pen", 3, 120)], symbol="$") == (
        "Invoice for Bo\n  3 x pen                     $3.60\n                 total        $3.60"
    )
    assert invoice("Ada", [("tea", 2, 350)]).endswith("€7.00")


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3
