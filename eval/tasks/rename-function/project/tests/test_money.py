from ledger import fmt, parse_amount
from ledger.invoice import invoice


def test_parse_amount():
    assert parse_amount("12.30") == 1230
    assert parse_amount("-4") == -400
    assert parse_amount("1,000.5") == 100050


def test_fmt():
    assert fmt(123456) == "$1,234.56"
    assert fmt(-500) == "-$5.00"
    assert fmt(7, "£") == "£0.07"


def test_invoice_total():
    text = invoice("Ada", [("tea", 2, 350), ("cake", 1, 425)])
    assert text.splitlines()[-1].endswith("€11.25")
