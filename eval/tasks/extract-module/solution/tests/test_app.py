import datetime as dt

import pytest

from dates import business_days, is_weekend, parse_date, parse_range


def test_parse_date_accepts_slashes():
    assert parse_date("2024/03/01") == dt.date(2024, 3, 1)


def test_parse_range_rejects_backwards_ranges():
    with pytest.raises(ValueError):
        parse_range("2024-03-02..2024-03-01")


def test_business_days_skips_weekends_and_holidays():
    start, end = parse_range("2024-03-01..2024-03-10")
    assert business_days(start, end) == 6
    assert business_days(start, end, {dt.date(2024, 3, 4)}) == 5
    assert is_weekend(dt.date(2024, 3, 2))
