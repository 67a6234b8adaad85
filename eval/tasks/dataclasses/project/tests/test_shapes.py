import pytest

from geometry.io import polygon_from_dict, polygon_to_dict
from geometry.measure import bounding_box, perimeter
from geometry.shapes import Point, Polygon, Segment

SQUARE = {"name": "square", "points": [[0, 0], [2, 0], [2, 2], [0, 2]]}


def test_point_repr_and_equality():
    assert repr(Point(1, 2)) == "Point(1, 2)"
    assert Point(1, 2) == Point(x=1, y=2)


def test_segment_length():
    assert Segment(Point(0, 0), Point(3, 4)).length() == 5


def test_polygon_needs_three_points():
    with pytest.raises(ValueError):
        Polygon([Point(0, 0), Point(1, 1)])


def test_round_trip_and_measures():
    square = polygon_from_dict(SQUARE)
    assert polygon_to_dict(square) == SQUARE
    assert perimeter(square) == 8
    assert bounding_box(square) == (Point(0, 0), Point(2, 2))
    assert repr(square).startswith("Polygon([Point(0, 0), Point(2, 0)")
