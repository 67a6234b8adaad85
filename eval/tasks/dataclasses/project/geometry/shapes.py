"""The shapes."""

import math


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Point({self.x!r}, {self.y!r})"

    def __eq__(self, other):
        if not isinstance(other, Point):
            return NotImplemented
        return (self.x, self.y) == (other.x, other.y)

    def distance_to(self, other):
        return math.hypot(self.x - other.x, self.y - other.y)


class Segment:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def __repr__(self):
        return f"Segment({self.start!r}, {self.end!r})"

    def __eq__(self, other):
        if not isinstance(other, Segment):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def length(self):
        return self.start.distance_to(self.end)


class Polygon:
    def __init__(self, points=None, name="polygon"):
        if points is None:
            points = []
        if 0 < len(points) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(points)}")
        self.points = list(points)
        self.name = name

    def __repr__(self):
        return f"Polygon({self.points!r}, name={self.name!r})"

    def __eq__(self, other):
        if not isinstance(other, Polygon):
            return NotImplemented
        return (self.points, self.name) == (other.points, other.name)

    def add(self, point):
        self.points.append(point)

    def edges(self):
        return [
            Segment(self.points[i], self.points[(i + 1) % len(self.points)])
            for i in range(len(self.points))
        ]
