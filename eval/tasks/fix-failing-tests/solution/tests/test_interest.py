from decimal import Decimal

from bank.interest import compound


def test_no_years_no_interest():
    assert compound(100, 0.05, 0) == Decimal("100")


def test_two_years_at_five_percent():
    assert compound(100, 0.05, 2) == Decimal("110.25")
