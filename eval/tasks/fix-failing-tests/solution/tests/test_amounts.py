from decimal import Decimal

import pytest

from bank.amounts import format_amount, parse_amount


def test_parse_plain_and_dollar_amounts():
    assert parse_amount("20") == Decimal("20")
    assert parse_amount("$3.10") == Decimal("3.10")


def test_parse_thousands_separators():
    assert parse_amount("1,234.50") == Decimal("1234.50")


def test_parse_rejects_words():
    with pytest.raises(ValueError):
        parse_amount("ten")


def test_format_amount():
    assert format_amount(Decimal("1234.5")) == "1,234.50"
