from linecount.cli import main
from linecount.core import count_lines


def test_count_lines():
    assert count_lines("a\nb\n") == 2
    assert count_lines("a\nb") == 2
    assert count_lines("") == 0


def test_cli_prints_counts_and_total(tmp_path, capsys):
    one = tmp_path / "one.txt"
    two = tmp_path / "two.txt"
    one.write_text("x\n")
    two.write_text("x\ny\n\n")
    assert main([str(one), str(two)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"      1 {one}", f"      3 {two}", "      4 total"]


def test_count_lines_can_ignore_blank_lines():
    text = "a\n\n   \n\tb\n"
    assert count_lines(text) == 4
    assert count_lines(text, ignore_blank=True) == 2


def test_cli_ignore_blank(tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text("x\n \n\ny\n")
    assert main(["--ignore-blank", str(one)]) == 0
    assert capsys.readouterr().out == f"      2 {one}\n"
