"""Errors are exceptions of one hierarchy; the command line reports them on stderr, status 2."""

import ast

import pytest


def errors(project):
    return project.module("unitconv.errors")


def test_exception_hierarchy(project):
    module = errors(project)
    assert issubclass(module.ConversionError, ValueError)
    for name in ("ParseError", "UnknownUnitError", "IncompatibleUnitsError"):
        assert issubclass(getattr(module, name), module.ConversionError), name


def test_parse_raises(project):
    module = errors(project)
    parse = project.module("unitconv.parse").parse_quantity
    assert parse("-2 H") == (-2.0, "h")
    for text in ("twelve km", "12", "", "1.2.3 m"):
        with pytest.raises(module.ParseError):
            parse(text)


def test_convert_raises(project):
    module = errors(project)
    convert = project.module("unitconv.units").convert
    assert convert(3, "ft", "m") == pytest.approx(0.9144)
    with pytest.raises(module.UnknownUnitError, match="parsec"):
        convert(1, "m", "parsec")
    with pytest.raises(module.UnknownUnitError, match="stone"):
        convert(1, "stone", "kg")
    with pytest.raises(module.IncompatibleUnitsError):
        convert(1, "s", "g")


@pytest.mark.parametrize("path", ["unitconv/parse.py", "unitconv/units.py"])
def test_library_code_does_not_print(project, path):
    for node in ast.walk(project.syntax(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "print", f"{path} still prints"


def test_cli_success_is_unchanged(project):
    result = project.run("-m", "unitconv", "12 km", "MI")
    assert (result.returncode, result.stdout, result.stderr) == (0, "7.45645 mi\n", "")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["ten km", "m"], "ten km"),
        (["10 km", "furlong"], "furlong"),
        (["10 km", "kg"], "mass"),
    ],
)
def test_cli_errors_go_to_stderr_with_status_2(project, args, words):
    result = project.run("-m", "unitconv", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and words in result.stderr


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3
