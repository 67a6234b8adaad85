"""Convert quantities between units of length, mass and time."""
