import pytest

from gradebook.report import build_report

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
