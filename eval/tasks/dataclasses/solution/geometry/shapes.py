"""The shapes."""

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Point:
    x: float
    y: float

    def distance_to(self, other):
        return math.hypot(self.x - other.x, self.y - other.y)


@dataclass
class Segment:
    start: Point
    end: Point

    def length(self):
        return self.start.distance_to(self.end)


@dataclass
class Polygon:
    points: list[Point] = field(default_factory=list)
    name: str = "polygon"

    def __post_init__(self):
        self.points = list(self.points)
        if 0 < len(self.points) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(self.points)}")

    def add(self, point):
        self.points.append(point)

    def edges(self):
        return [
            Segment(self.points[i], self.points[(i + 1) % len(self.points)])
            for i in range(len(self.points))
        ]
