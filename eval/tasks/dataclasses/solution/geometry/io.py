"""Polygons to and from JSON-ready dicts."""

from geometry.shapes import Point, Polygon


def polygon_from_dict(data):
    return Polygon(
        points=[Point(x=p[0], y=p[1]) for p in data["points"]],
        name=data.get("name", "polygon"),
    )


def polygon_to_dict(polygon):
    return {"name": polygon.name, "points": [[p.x, p.y] for p in polygon.points]}
