"""build_report is a short composition of four functions, each with its contract and a test."""

import ast

import pytest

from plansight.eval.checkfixtures import identifiers

PARTS = ("parse_scores", "student_percentages", "letter_grade", "format_report")
SCORES = [
    "# a comment",
    "zed, quiz, 7, 10",
    "",
    "amy, quiz, 10, 10",
    "amy, exam, 60, 90",
    "kim, quiz, 8.5, 10",
    "kim, exam, 81, 90",
]
REPORT = (
    "student   score  grade\n"
    "----------------------\n"
    "kim       89.5%  B\n"
    "amy       70.0%  C\n"
    "zed       70.0%  C\n"
    "mean      76.5%"
)


def report_module(project):
    return project.module("gradebook.report")


def test_build_report_keeps_its_behaviour(project):
    report = report_module(project)
    assert report.build_report(SCORES) == REPORT
    assert report.build_report([]) == "student   score  grade\n----------------------"
    for bad, number in ((["a,b,1,2", "a,b,x,2"], 2), (["a,b,3,2"], 1), (["a,b"], 1)):
        with pytest.raises(ValueError, match=f"line {number}"):
            report.build_report(bad)


def test_parse_scores(project):
    parse = report_module(project).parse_scores
    records = parse(SCORES)
    assert [tuple(r) for r in records] == [
        ("zed", "quiz", 7.0, 10.0),
        ("amy", "quiz", 10.0, 10.0),
        ("amy", "exam", 60.0, 90.0),
        ("kim", "quiz", 8.5, 10.0),
        ("kim", "exam", 81.0, 90.0),
    ]
    with pytest.raises(ValueError, match="line 3"):
        parse(["", "#", "a,b,1,0"])


def test_student_percentages(project):
    percentages = report_module(project).student_percentages
    result = percentages([("a", "x", 1.0, 4.0), ("b", "x", 3.0, 3.0), ("a", "y", 2.0, 2.0)])
    assert result == pytest.approx({"a": 50.0, "b": 100.0})


def test_letter_grade(project):
    grade = report_module(project).letter_grade
    cases = {100: "A", 90: "A", 89.99: "B", 80: "B", 79.5: "C", 70: "C", 65: "D", 60: "D"}
    for percent, letter in {**cases, 59.9: "F", 0: "F"}.items():
        assert grade(percent) == letter, percent


def test_format_report(project):
    text = report_module(project).format_report({"x": 100.0, "long name": 55.0})
    assert text == (
        "student     score  grade\n"
        "------------------------\n"
        "x          100.0%  A\n"
        "long name   55.0%  F\n"
        "mean        77.5%"
    )


def test_build_report_is_a_short_composition(project):
    tree = project.syntax("gradebook/report.py")
    build = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "build_report")
    body = build.body[1:] if ast.get_docstring(build) else build.body
    lines = (body[-1].end_lineno or 0) - body[0].lineno + 1
    assert lines <= 8, f"build_report still has {lines} lines of code"
    used = set(identifiers(build))
    assert set(PARTS) - {"letter_grade"} <= used, "build_report does not use the new functions"


def test_tests_cover_each_function(project):
    used = set()
    for path in project.tree("tests/**/*.py"):
        used |= set(identifiers(project.syntax(path)))
    missing = [name for name in PARTS if name not in used]
    assert not missing, f"no test uses {missing}"
    run = project.pytest()
    assert run.ok and run.passed >= 6, run.output


@pytest.mark.parametrize(
    ("function", "broken"),
    [
        ("parse_scores", "return []"),
        ("student_percentages", "return {}"),
        ("letter_grade", "return 'X'"),
        ("format_report", "return ''"),
    ],
)
def test_tests_catch_a_broken_function(project, tmp_path, function, broken):
    mutant = project.copy(tmp_path / "mutant")
    mutant.replace_body("gradebook/report.py", function, broken)
    assert mutant.pytest().failed, f"the tests miss a broken {function}"
