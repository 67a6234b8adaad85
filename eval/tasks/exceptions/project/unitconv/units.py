"""Units and conversions: each unit is a factor of its dimension's base unit."""

UNITS = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "mi": ("length", 1609.344),
    "ft": ("length", 0.3048),
    "g": ("mass", 1.0),
    "kg": ("mass", 1000.0),
    "lb": ("mass", 453.59237),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
}


def convert(value, from_unit, to_unit):
    """value in from_unit, expressed in to_unit; None (and a message) if it cannot be done."""
    for unit in (from_unit, to_unit):
        if unit not in UNITS:
            print(f"unknown unit {unit!r}")
            return None
    from_dim, from_factor = UNITS[from_unit]
    to_dim, to_factor = UNITS[to_unit]
    if from_dim != to_dim:
        print(f"cannot convert {from_dim} ({from_unit}) to {to_dim} ({to_unit})")
        return None
    return value * from_factor / to_factor
