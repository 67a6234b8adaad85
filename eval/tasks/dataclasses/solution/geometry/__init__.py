"""Points, segments and polygons in the plane."""
