"""wordfreq.py and report.py: hints, docstrings, main guards, tests, same output."""

import inspect
import typing

import pytest

from plansight.eval.checkfixtures import module_functions

MODULES = ("wordfreq", "report")
TEXT = "Red fish, blue fish. Red FISH!\nOne 'fish', two fish; red.\n"
REPORT_2 = "11 words\nfish         5\nred          3"


@pytest.mark.parametrize("name", MODULES)
def test_every_function_is_fully_annotated(project, name):
    module = project.module(name)
    functions = module_functions(module)
    assert functions, f"{name} defines no functions"
    for fname, function in functions.items():
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function)  # the annotations must resolve
        for param in signature.parameters.values():
            assert param.name in hints, f"{name}.{fname}: parameter {param.name} has no hint"
        assert "return" in hints, f"{name}.{fname} has no return annotation"


@pytest.mark.parametrize("name", MODULES)
def test_module_and_functions_have_docstrings(project, name):
    module = project.module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no module docstring"
    for fname, function in module_functions(module).items():
        assert (function.__doc__ or "").strip(), f"{name}.{fname} has no docstring"


def test_importing_has_no_side_effects(project):
    result = project.run("-c", "import wordfreq, report")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == ""


def test_functions_behave_as_before(project):
    wordfreq = project.module("wordfreq")
    report = project.module("report")
    assert wordfreq.words("The 'cat' isn't HERE") == ["the", "cat", "isn't", "here"]
    assert wordfreq.word_count(TEXT) == 11
    assert wordfreq.top_words(TEXT) == [("fish", 5), ("red", 3), ("blue", 1)]
    assert [tuple(pair) for pair in wordfreq.top_words(TEXT, 2)] == [("fish", 5), ("red", 3)]
    assert report.format_report(TEXT, 2) == REPORT_2


def test_scripts_print_what_they_printed(project, tmp_path):
    text = tmp_path / "fish.txt"
    text.write_text(TEXT, encoding="utf-8")
    count = project.run("wordfreq.py", str(text))
    assert (count.returncode, count.stdout) == (0, "11 words\n")
    report = project.run("report.py", str(text), "2")
    assert (report.returncode, report.stdout) == (0, REPORT_2 + "\n")
    default = project.run("report.py")  # sample.txt, top 3
    assert default.returncode == 0
    assert default.stdout == "22 words\nthe          5\nmat          2\non           2\n"


def test_tests_exist_and_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 4, run.output


@pytest.mark.parametrize(
    ("path", "function", "broken"),
    [
        ("wordfreq.py", "words", "return []"),
        ("wordfreq.py", "word_count", "return -1"),
        ("wordfreq.py", "top_words", "return []"),
        ("report.py", "format_report", "return ''"),
    ],
)
def test_tests_catch_a_broken_function(project, tmp_path, path, function, broken):
    mutant = project.copy(tmp_path / "mutant")
    mutant.replace_body(path, function, broken)
    run = mutant.pytest()
    assert run.returncode != 0 and run.failed, f"the tests miss a broken {function}"
