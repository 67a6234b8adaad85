"""What can go wrong converting a quantity."""


class ConversionError(ValueError):
    """A quantity cannot be read or converted; the message says why."""


class ParseError(ConversionError):
    """The text is not a quantity."""


class UnknownUnitError(ConversionError):
    """A unit is not one we know."""


class IncompatibleUnitsError(ConversionError):
    """The two units measure different things (a length and a mass, say)."""
