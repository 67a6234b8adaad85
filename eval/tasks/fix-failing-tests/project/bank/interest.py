"""Interest compounded yearly, rounded to cents each year."""

from decimal import ROUND_HALF_EVEN, Decimal

CENT = Decimal("0.01")


def compound(principal, rate, years):
    value = Decimal(principal)
    for _ in range(years - 1):
        value = (value * (1 + Decimal(str(rate)))).quantize(CENT, rounding=ROUND_HALF_EVEN)
    return value
