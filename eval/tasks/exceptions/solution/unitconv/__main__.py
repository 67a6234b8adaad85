"""python -m unitconv QUANTITY UNIT: '12 km' mi -> '7.45645 mi'."""

import sys

from unitconv.errors import ConversionError
from unitconv.parse import parse_quantity
from unitconv.units import convert


def main(argv=None):
    quantity_text, to_unit = sys.argv[1:] if argv is None else argv
    try:
        value, unit = parse_quantity(quantity_text)
        result = convert(value, unit, to_unit.lower())
    except ConversionError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{result:g} {to_unit.lower()}")
    return 0


sys.exit(main())
