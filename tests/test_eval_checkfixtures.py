"""The `project` fixture's toolbox for task checks (eval/checkfixtures.py), on real project
folders in tmp_path: files are looked at without caches, modules are imported afresh each
time, the project's own tests are run and counted, and a mutant is made by replacing one
function's body. (The plugin at work in a checks run: test_eval_checks.py.)"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plansight.eval import checkfixtures
from plansight.eval.checkfixtures import Project, identifiers, module_functions


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """A small package (its name unique to this test: modules are imported in this process)."""
    root = tmp_path / "proj"
    name = f"pkg_{tmp_path.name.replace('-', '_')}"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / name / "shapes.py").write_text(
        "from math import pi\n\n\n"
        "class Circle:\n"
        "    def __init__(self, r):\n        self.r = r\n\n"
        "    def area(self):\n        return pi * self.r ** 2\n\n\n"
        "def double(x):\n    return 2 * x\n"
    )
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "junk.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_shapes.py").write_text(
        f"from {name}.shapes import double\n\n"
        "def test_double():\n    assert double(2) == 4\n\n"
        "def test_more():\n    assert double(0) == 0\n"
    )
    found = Project(root)
    yield found
    found.forget_modules()
    if str(found.path) in sys.path:
        sys.path.remove(str(found.path))


def package(project: Project) -> str:
    return next(p.name for p in project.path.iterdir() if p.name.startswith("pkg_"))


def test_files_are_listed_read_and_parsed_without_caches(project: Project) -> None:
    name = package(project)
    assert project.tree() == [f"{name}/__init__.py", f"{name}/shapes.py", "tests/test_shapes.py"]
    assert project.tree("tests/*.py") == ["tests/test_shapes.py"]
    assert project.exists(f"{name}/shapes.py") and not project.exists("missing.py")
    assert "def double" in project.read(f"{name}/shapes.py")
    assert isinstance(project.syntax(f"{name}/shapes.py"), ast.Module)
    project.write("new/deep.txt", "x\n")
    assert project.read("new/deep.txt") == "x\n"


def test_a_module_is_imported_afresh_after_forgetting(project: Project) -> None:
    name = package(project)
    first = project.module(f"{name}.shapes")
    assert first.double(3) == 6
    project.write(f"{name}/shapes.py", "def double(x):\n    return 'changed'\n")
    project.forget_modules()
    assert f"{name}.shapes" not in sys.modules
    assert project.module(f"{name}.shapes").double(3) == "changed"


def test_a_module_of_the_same_name_from_elsewhere_is_not_used(
    project: Project, tmp_path: Path
) -> None:
    name = package(project)
    other = Project(tmp_path / "other")
    other.write(f"{name}/__init__.py", "")
    other.write(f"{name}/shapes.py", "def double(x):\n    return 'other'\n")
    try:
        assert other.module(f"{name}.shapes").double(1) == "other"
        assert project.module(f"{name}.shapes").double(1) == 2
    finally:
        other.forget_modules()
        sys.path.remove(str(other.path))


def test_a_copy_leaves_the_caches_and_the_original_alone(project: Project, tmp_path: Path) -> None:
    copy = project.copy(tmp_path / "copy")
    assert copy.tree() == project.tree()
    assert not (copy.path / "__pycache__").exists()
    copy.write("extra.py", "")
    assert not project.exists("extra.py")


def test_replace_body_makes_a_mutant_of_one_function_or_method(project: Project) -> None:
    name = package(project)
    shapes = f"{name}/shapes.py"
    project.replace_body(shapes, "double", "return 0")
    project.replace_body(shapes, "Circle.area", "value = 1\nreturn value")
    module = project.module(f"{name}.shapes")
    assert module.double(5) == 0
    assert module.Circle(2).area() == 1
    assert module.Circle(2).r == 2  # __init__ untouched
    with pytest.raises(AssertionError, match=r"defines no function 'Square\.area'"):
        project.replace_body(shapes, "Square.area", "return 0")
    with pytest.raises(AssertionError, match="defines no function 'triple'"):
        project.replace_body(shapes, "triple", "return 0")


def test_functions_and_names_of_a_module(project: Project) -> None:
    name = package(project)
    module = project.module(f"{name}.shapes")
    assert set(module_functions(module)) == {"double"}  # not the imported pi, not the class
    names = set(identifiers(project.syntax(f"{name}/shapes.py")))
    assert {"pi", "Circle", "area", "double", "self", "r", "x"} <= names


def test_the_projects_own_tests_are_run_and_counted(project: Project) -> None:
    run = project.pytest()
    assert run.ok, run.output
    assert (run.passed, run.failed, run.errors) == (2, 0, 0)
    project.replace_body(f"{package(project)}/shapes.py", "double", "return x * 3")
    broken = project.pytest()
    assert not broken.ok and (broken.passed, broken.failed) == (1, 1)


def test_run_executes_python_in_the_project_with_it_on_the_path(project: Project) -> None:
    name = package(project)
    done = project.run("-c", f"import {name}.shapes as s, os; print(s.double(21), os.getcwd())")
    assert done.returncode == 0, done.stderr
    value, cwd = done.stdout.split()
    assert value == "42" and Path(cwd) == project.path
    env = project.env({"EXTRA": "1"})
    assert env["PYTHONPATH"] == str(project.path) and env["EXTRA"] == "1"
    assert checkfixtures.WORKSPACE_ENV not in env


def test_a_test_run_is_ok_only_with_a_pass_and_no_failure() -> None:
    # Qualified: imported into this module, a class named Test* would be collected by pytest.
    assert checkfixtures.TestRun(0, "", 3, 0, 0).ok
    assert not checkfixtures.TestRun(0, "", 0, 0, 0).ok  # nothing ran
    assert not checkfixtures.TestRun(1, "", 3, 1, 0).ok
    assert not checkfixtures.TestRun(0, "", 3, 0, 1).ok
