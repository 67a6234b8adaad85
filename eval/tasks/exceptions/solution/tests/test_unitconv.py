import pytest

from unitconv.errors import IncompatibleUnitsError, ParseError, UnknownUnitError
from unitconv.parse import parse_quantity
from unitconv.units import convert


def test_parse_quantity():
    assert parse_quantity(" 12.5 KM ") == (12.5, "km")
    with pytest.raises(ParseError):
        parse_quantity("twelve km")


def test_convert():
    assert convert(1, "km", "m") == 1000
    assert convert(2, "h", "min") == pytest.approx(120)


def test_convert_failures_raise():
    with pytest.raises(UnknownUnitError, match="furlong"):
        convert(1, "furlong", "m")
    with pytest.raises(IncompatibleUnitsError):
        convert(1, "km", "kg")
