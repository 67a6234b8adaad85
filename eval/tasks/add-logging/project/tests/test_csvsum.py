from csvsum.reader import read_rows
from csvsum.summary import format_summary, summarize


def test_read_rows_skips_comments_and_malformed_rows(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("# header\nfood,12.5\nbad row\nrent,x\nfood,1\n")
    assert read_rows(path) == [("food", 12.5), ("food", 1.0)]


def test_summary():
    totals = summarize([("b", 1.0), ("a", 2.0), ("b", 0.5)])
    assert totals == {"a": 2.0, "b": 1.5}
    assert format_summary(totals) == "a            2.00\nb            1.50\ntotal        3.50"
