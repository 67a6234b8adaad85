"""Quantities as text: '12.5 km', '3kg', '-2 h'."""

import re

from unitconv.errors import ParseError

QUANTITY = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$")


def parse_quantity(text):
    """'12.5 km' -> (12.5, 'km'); ParseError when the text is not a quantity."""
    match = QUANTITY.match(text)
    if match is None:
        raise ParseError(f"cannot parse {text!r} as a quantity")
    return float(match.group(1)), match.group(2).lower()
