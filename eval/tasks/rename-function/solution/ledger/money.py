"""Amounts of money, kept as whole cents."""


def parse_amount(text):
    """'12.30' or '-4' -> cents (1230, -400)."""
    text = text.strip().replace(",", "")
    negative = text.startswith("-")
    whole, _, frac = text.lstrip("-").partition(".")
    cents = int(whole or "0") * 100 + int((frac + "00")[:2])
    return -cents if negative else cents


def format_money(cents, symbol="$"):
    """Cents as money text: 123456 -> '$1,234.56', -500 -> '-$5.00'."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{symbol}{whole:,}.{rest:02d}"
