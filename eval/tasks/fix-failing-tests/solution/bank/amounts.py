"""Amounts as text: '1,234.50', '-20', '$3.10'."""

from decimal import Decimal, InvalidOperation


def parse_amount(text):
    cleaned = text.strip().lstrip("$").replace(",", "")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None


def format_amount(value):
    return f"{value:,.2f}"
