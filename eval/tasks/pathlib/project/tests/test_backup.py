import os

from backup.copy import back_up
from backup.paths import backup_name
from backup.scan import find_files


def test_backup_name():
    assert backup_name(os.path.join("notes", "todo.txt"), "1") == os.path.join("notes", "todo.1.txt")
    assert backup_name("README", "1") == "README.1"


def test_find_files_and_back_up(tmp_path):
    source = tmp_path / "src"
    (source / "a").mkdir(parents=True)
    (source / ".git").mkdir()
    (source / "a" / "x.txt").write_text("x")
    (source / "y.md").write_text("y")
    (source / ".git" / "config").write_text("z")
    assert find_files(str(source)) == [os.path.join("a", "x.txt"), "y.md"]
    target = tmp_path / "dst"
    assert back_up(str(source), str(target), "7", {".txt"}) == [os.path.join("a", "x.txt")]
    assert (target / "a" / "x.7.txt").read_text() == "x"
    assert back_up(str(source), str(target), "7", {".txt"}) == []
