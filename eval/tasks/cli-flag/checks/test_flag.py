"""--ignore-blank: in the core, on the command line, in --help and the README, with tests."""

import pytest

TEXT = "one\n\n   \n\ttwo\n\t\nthree"


def test_core_counts_with_and_without_the_option(project, tmp_path):
    core = project.module("linecount.core")
    assert core.count_lines(TEXT) == 6
    assert core.count_lines(TEXT, ignore_blank=True) == 3
    assert core.count_lines("", ignore_blank=True) == 0
    path = tmp_path / "t.txt"
    path.write_text(TEXT, encoding="utf-8")
    assert core.count_file(str(path)) == 6
    assert core.count_file(str(path), ignore_blank=True) == 3


def test_command_line(project, tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(TEXT, encoding="utf-8")
    second.write_text("x\n\n", encoding="utf-8")
    plain = project.run("-m", "linecount", str(first), str(second))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == f"      6 {first}\n      2 {second}\n      8 total\n"
    flagged = project.run("-m", "linecount", "--ignore-blank", str(first), str(second))
    assert flagged.returncode == 0, flagged.stderr
    assert flagged.stdout == f"      3 {first}\n      1 {second}\n      4 total\n"
    after = project.run("-m", "linecount", str(second), "--ignore-blank")
    assert after.stdout == f"      1 {second}\n"


def test_help_describes_the_flag(project):
    result = project.run("-m", "linecount", "--help")
    assert result.returncode == 0
    described = result.stdout.lower().split("--ignore-blank")
    assert len(described) > 1, "--help does not list --ignore-blank"
    assert any(word in described[-1] for word in ("blank", "empty", "whitespace"))


def test_readme_documents_the_flag(project):
    assert "--ignore-blank" in project.read("README.md")


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3


@pytest.mark.parametrize(
    ("function", "broken"),
    [
        ("count_lines", "return len(text.splitlines())"),
        (
            "count_file",
            "with open(path, encoding='utf-8') as handle:\n    return len(handle.read().splitlines())",
        ),
    ],
)
def test_tests_cover_the_flag(project, tmp_path, function, broken):
    mutant = project.copy(tmp_path / "mutant")
    mutant.replace_body("linecount/core.py", function, broken)
    run = mutant.pytest()
    assert run.failed, f"the tests pass although {function} ignores --ignore-blank"
