"""The backup package uses pathlib instead of os.path; paths come back as Path objects."""

import ast
from pathlib import Path

import pytest

OS_FUNCTIONS = {"path", "walk", "makedirs", "listdir", "mkdir", "scandir"}


def make_tree(root):
    for relative, text in {
        "a/x.txt": "x",
        "a/b/deep.txt": "deep",
        "a/.hidden/skip.txt": "no",
        ".cache/skip.txt": "no",
        "y.md": "y",
        ".env": "hidden file, not a hidden folder",
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("path", ["backup/paths.py", "backup/scan.py", "backup/copy.py"])
def test_no_os_path(project, path):
    for node in ast.walk(project.syntax(path)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert not (node.value.id == "os" and node.attr in OS_FUNCTIONS), f"os.{node.attr}"
        if isinstance(node, ast.ImportFrom):
            assert node.module not in ("os", "os.path"), f"{path} imports from {node.module}"
        if isinstance(node, ast.Import):
            assert "os.path" not in {a.name for a in node.names}


def test_backup_name_returns_a_path(project):
    backup_name = project.module("backup.paths").backup_name
    assert backup_name("notes/todo.txt", "20240101") == Path("notes/todo.20240101.txt")
    assert backup_name(Path("a/b.tar.gz"), "1") == Path("a/b.tar.1.gz")
    assert backup_name("README", "x") == Path("README.x")
    assert isinstance(backup_name("README", "x"), Path)


def test_find_files_returns_sorted_relative_paths(project, tmp_path):
    find_files = project.module("backup.scan").find_files
    make_tree(tmp_path)
    expected = [Path(".env"), Path("a/b/deep.txt"), Path("a/x.txt"), Path("y.md")]
    for root in (tmp_path, str(tmp_path)):
        found = find_files(root)
        assert found == expected and all(isinstance(p, Path) for p in found)
    assert find_files(tmp_path, {".md"}) == [Path("y.md")]


def test_back_up_copies_with_stamps(project, tmp_path):
    back_up = project.module("backup.copy").back_up
    source, target = tmp_path / "src", tmp_path / "dst"
    make_tree(source)
    copied = back_up(str(source), str(target), "9", {".txt"})
    assert copied == [Path("a/b/deep.txt"), Path("a/x.txt")]
    assert (target / "a/b/deep.9.txt").read_text(encoding="utf-8") == "deep"
    assert not (target / "a/.hidden").exists()
    assert back_up(source, target, "9", {".txt"}) == []
    ensure_dir = project.module("backup.paths").ensure_dir
    made = ensure_dir(str(tmp_path / "new" / "deeper"))
    assert Path(made) == tmp_path / "new" / "deeper" and Path(made).is_dir()
    ensure_dir(tmp_path / "new" / "deeper")  # a second time is fine


def test_cli_output_is_unchanged(project, tmp_path):
    source = tmp_path / "src"
    make_tree(source)
    result = project.run("-m", "backup.cli", str(source), str(tmp_path / "dst"), "3", ".md", ".txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "copied a/b/deep.txt\ncopied a/x.txt\ncopied y.md\n3 files\n"


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 2
