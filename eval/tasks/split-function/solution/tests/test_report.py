import pytest

from gradebook.report import (
    build_report,
    format_report,
    letter_grade,
    parse_scores,
    student_percentages,
)

SCORES = """\
# student,assignment,score,max
ada,essay,18,20
ada,exam,45,50
bo,essay,12,20
bo,exam,30,50
cy,essay,20,20
"""


def test_build_report():
    assert build_report(SCORES.splitlines()) == (
        "student   score  grade\n"
        "----------------------\n"
        "cy       100.0%  A\n"
        "ada       90.0%  A\n"
        "bo        60.0%  D\n"
        "mean      83.3%"
    )


def test_malformed_line_names_its_number():
    with pytest.raises(ValueError, match="line 2"):
        build_report(["ada,essay,1,2", "bo,essay,3"])


def test_parse_scores():
    assert parse_scores(["", "# c", "ada, essay, 18, 20"]) == [("ada", "essay", 18.0, 20.0)]
    with pytest.raises(ValueError, match="line 1"):
        parse_scores(["ada,essay,21,20"])


def test_student_percentages():
    records = [("ada", "a", 1.0, 2.0), ("ada", "b", 2.0, 2.0), ("bo", "a", 0.0, 4.0)]
    assert student_percentages(records) == {"ada": 75.0, "bo": 0.0}


def test_letter_grade():
    assert [letter_grade(p) for p in (95, 90, 89.9, 70, 60, 59.9)] == ["A", "A", "B", "C", "D", "F"]


def test_format_report():
    assert format_report({"bo": 50.0, "ada": 50.0}).splitlines()[2:] == [
        "ada       50.0%  F",
        "bo        50.0%  F",
        "mean      50.0%",
    ]
