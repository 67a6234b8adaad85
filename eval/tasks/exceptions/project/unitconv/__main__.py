"""python -m unitconv QUANTITY UNIT: '12 km' mi -> '7.45645 mi'."""

import sys

from unitconv.parse import parse_quantity
from unitconv.units import convert


def main(argv=None):
    quantity_text, to_unit = sys.argv[1:] if argv is None else argv
    quantity = parse_quantity(quantity_text)
    if quantity is None:
        return 0
    value, unit = quantity
    result = convert(value, unit, to_unit.lower())
    if result is None:
        return 0
    print(f"{result:g} {to_unit.lower()}")
    return 0


sys.exit(main())
