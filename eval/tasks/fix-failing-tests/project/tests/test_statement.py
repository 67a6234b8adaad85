from decimal import Decimal

from bank.statement import statement_lines


def test_statement_is_in_date_order_with_running_balance():
    history = [("2024-01-03", Decimal("-5")), ("2024-01-01", Decimal("100"))]
    assert statement_lines(Decimal("0"), history) == [
        "2024-01-01      100.00      100.00",
        "2024-01-03       -5.00       95.00",
    ]
