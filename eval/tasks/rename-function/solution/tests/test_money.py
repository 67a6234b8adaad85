from ledger import format_money, parse_amount
from ledger.invoice import invoice


def test_parse_amount():
    assert parse_amount("12.30") == 1230
    assert parse_amount("-4") == -400
    assert parse_amount("1,000.5") == 100050


def test_format_money():
    assert format_money(123456) == "$1,234.56"
    assert format_money(-500) == "-$5.00"
    assert format_money(7, "£") == "£0.07"


def test_invoice_total():
    text = invoice("Ada", [("tea", 2, 350), ("cake", 1, 425)])
    assert text.splitlines()[-1].endswith("€11.25")
