from pathlib import Path

from backup.copy import back_up
from backup.paths import backup_name
from backup.scan import find_files


def test_backup_name():
    assert backup_name(Path("notes", "todo.txt"), "1") == Path("notes", "todo.1.txt")
    assert backup_name("README", "1") == Path("README.1")


def test_find_files_and_back_up(tmp_path):
    source = tmp_path / "src"
    (source / "a").mkdir(parents=True)
    (source / ".git").mkdir()
    (source / "a" / "x.txt").write_text("x")
    (source / "y.md").write_text("y")
    (source / ".git" / "config").write_text("z")
    assert find_files(source) == [Path("a", "x.txt"), Path("y.md")]
    target = tmp_path / "dst"
    assert back_up(source, target, "7", {".txt"}) == [Path("a", "x.txt")]
    assert (target / "a" / "x.7.txt").read_text() == "x"
    assert back_up(str(source), str(target), "7", {".txt"}) == []
