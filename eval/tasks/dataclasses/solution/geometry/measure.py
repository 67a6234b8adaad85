"""Measurements of shapes."""

from geometry.shapes import Point


def perimeter(polygon):
    return sum(edge.length() for edge in polygon.edges())


def bounding_box(polygon):
    xs = [p.x for p in polygon.points]
    ys = [p.y for p in polygon.points]
    return Point(min(xs), min(ys)), Point(max(xs), max(ys))
