import pytest

from unitconv.parse import parse_quantity
from unitconv.units import convert


def test_parse_quantity():
    assert parse_quantity(" 12.5 KM ") == (12.5, "km")
    assert parse_quantity("twelve km") is None


def test_convert():
    assert convert(1, "km", "m") == 1000
    assert convert(2, "h", "min") == pytest.approx(120)


def test_convert_failures_return_none():
    assert convert(1, "furlong", "m") is None
    assert convert(1, "km", "kg") is None
