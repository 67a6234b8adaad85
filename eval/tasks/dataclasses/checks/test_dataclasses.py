"""Point, Segment and Polygon are dataclasses with the same constructors and behaviour."""

import ast
import dataclasses

import pytest

HAND_WRITTEN = {"__init__", "__repr__", "__eq__", "__hash__"}


def shapes(project):
    return project.module("geometry.shapes")


@pytest.mark.parametrize(
    ("name", "fields"),
    [("Point", ["x", "y"]), ("Segment", ["start", "end"]), ("Polygon", ["points", "name"])],
)
def test_is_a_dataclass_with_the_same_fields(project, name, fields):
    cls = getattr(shapes(project), name)
    assert dataclasses.is_dataclass(cls), f"{name} is not a dataclass"
    assert [f.name for f in dataclasses.fields(cls)] == fields


def test_hand_written_methods_are_gone(project):
    tree = project.syntax("geometry/shapes.py")
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            assert not methods & HAND_WRITTEN, f"{node.name} keeps {sorted(methods & HAND_WRITTEN)}"


def test_point_is_frozen_and_hashable(project):
    point_cls = shapes(project).Point
    point = point_cls(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3
    assert point == point_cls(x=1, y=2) and point != point_cls(2, 1)
    assert len({point_cls(1, 2), point_cls(1, 2), point_cls(0, 0)}) == 2
    assert repr(point) == "Point(x=1, y=2)"


def test_constructors_keep_their_signatures(project):
    module = shapes(project)
    point_cls, segment_cls, polygon_cls = module.Point, module.Segment, module.Polygon
    seg = segment_cls(point_cls(0, 0), end=point_cls(3, 4))
    assert seg.length() == 5 and seg == segment_cls(start=point_cls(0, 0), end=point_cls(3, 4))
    triangle = polygon_cls([point_cls(0, 0), point_cls(1, 0), point_cls(0, 1)], "tri")
    assert triangle.name == "tri"
    assert polygon_cls(name="empty").points == []
    assert polygon_cls().name == "polygon"
    with pytest.raises(ValueError):
        polygon_cls([point_cls(0, 0), point_cls(1, 1)])
    with pytest.raises(ValueError):
        polygon_cls(points=[point_cls(0, 0)], name="bad")


def test_polygons_do_not_share_a_default_list(project):
    module = shapes(project)
    first = module.Polygon()
    first.add(module.Point(5, 5))
    assert module.Polygon().points == []
    assert len(first.edges()) == 1


def test_measures_and_io_still_work(project):
    io = project.module("geometry.io")
    measure = project.module("geometry.measure")
    data = {"name": "l", "points": [[0, 0], [4, 0], [4, 3]]}
    polygon = io.polygon_from_dict(data)
    assert io.polygon_to_dict(polygon) == data
    assert measure.perimeter(polygon) == 12
    low, high = measure.bounding_box(polygon)
    assert (low.x, low.y, high.x, high.y) == (0, 0, 4, 3)
    assert io.polygon_from_dict({"points": [[0, 0], [1, 0], [1, 1]]}).name == "polygon"


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 4
