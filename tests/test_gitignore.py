"""Which paths .gitignore files exclude (gitignore.py), as git itself decides.

The watcher reports a change outside the agent only where the user's .gitignore does not
exclude it, so a build folder or a log being written never reaches the model as "changed
outside". The cases below are git's documented rules (gitignore(5)), written as a table on real
files; the same table is checked against `git check-ignore` where git is installed, so that the
table cannot drift from git either.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from plansight.workspace.ignore import GitIgnore


@dataclass(frozen=True)
class Case:
    why: str
    ignore_files: dict[str, str]  # folder ("" for the root) → .gitignore text
    ignored: tuple[str, ...]  # paths, a trailing "/" for a directory
    kept: tuple[str, ...]


CASES = (
    Case(
        "a name without a slash matches at any depth",
        {"": "*.log\n"},
        ("a.log", "src/deep/b.log"),
        ("a.log.txt", "log", "src/a.txt"),
    ),
    Case(
        "comments, blank lines and trailing spaces are not patterns",
        {"": "# *.py\n\n   \nnotes.txt   \n"},
        ("notes.txt",),
        ("main.py", "# *.py"),
    ),
    Case(
        "a trailing slash matches directories only, and everything inside them",
        {"": "build/\n"},
        ("build/", "build/out.bin", "src/build/", "src/build/x/y.o"),
        ("lib/build", "src/sub/build"),  # files named build
    ),
    Case(
        "a leading slash anchors the pattern to the folder of the .gitignore",
        {"": "/todo.txt\n"},
        ("todo.txt",),
        ("docs/todo.txt",),
    ),
    Case(
        "a slash inside the pattern anchors it too, and * stops at a slash",
        {"": "doc/*.txt\n"},
        ("doc/a.txt",),
        ("doc/sub/a.txt", "x/doc/a.txt", "a.txt"),
    ),
    Case(
        "? is one character other than a slash",
        {"": "file?.md\n"},
        ("file1.md", "sub/fileA.md"),
        ("file.md", "file10.md"),
    ),
    Case(
        "brackets match one character of a set, a range, or (with !) outside it",
        {"": "[ab].txt\nv[0-9].bin\nx[!0-9].dat\n"},
        ("a.txt", "b.txt", "v7.bin", "xq.dat"),
        ("c.txt", "ab.txt", "vx.bin", "x5.dat"),
    ),
    Case(
        "a leading **/ matches in every folder",
        {"": "**/cache\n"},
        ("cache", "a/b/cache", "a/c/cache/", "a/c/cache/x.txt"),
        ("cached", "a/mycache"),
    ),
    Case(
        "/**/ in the middle matches zero or more folders",
        {"": "a/**/b.txt\n"},
        ("a/b.txt", "a/x/b.txt", "a/x/y/b.txt"),
        ("b.txt", "z/a/b.txt"),
    ),
    Case(
        "a trailing /** matches everything inside, not the folder itself",
        {"": "out/**\n"},
        ("out/a", "out/b/c.txt"),
        ("out/", "output/a"),
    ),
    Case(
        "! re-includes what an earlier pattern excluded; the last match wins",
        {"": "*.log\n!keep.log\nagain.log\n!again.log\n*.log.*\n"},
        ("a.log", "x.log.1"),
        ("keep.log", "src/keep.log", "again.log"),
    ),
    Case(
        "a file cannot be re-included when a folder above it is excluded",
        {"": "build/\n!build/keep.txt\n"},
        ("build/keep.txt",),
        (),
    ),
    Case(
        "a pattern for a folder's contents leaves the folder, so a file in it can come back",
        {"": "doc/*\n!doc/keep.txt\nout/**\n!out/keep.txt\n"},
        ("doc/a.txt", "out/a.txt"),
        ("doc/", "doc/keep.txt", "out/", "out/keep.txt"),
    ),
    Case(
        "a nested .gitignore applies below its folder, anchored there",
        {"": "", "pkg": "*.tmp\n/local.cfg\n"},
        ("pkg/a.tmp", "pkg/sub/b.tmp", "pkg/local.cfg"),
        ("a.tmp", "other/c.tmp", "pkg/sub/local.cfg", "local.cfg"),
    ),
    Case(
        "a deeper .gitignore overrides the one above it",
        {"": "*.log\n", "logs": "!important.log\n"},
        ("debug.log", "logs/debug.log"),
        ("logs/important.log",),
    ),
    Case(
        "a plain name excludes a folder of that name and its contents",
        {"": "node_cache\n"},
        ("node_cache/", "node_cache/pkg/index.js", "web/node_cache/"),
        ("node_cache_old/",),
    ),
)


def build(root: Path, case: Case) -> None:
    for folder, text in case.ignore_files.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitignore").write_text(text)
    for rel in (*case.ignored, *case.kept):
        path = root / rel.rstrip("/")
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")


@pytest.mark.parametrize("case", CASES, ids=[c.why for c in CASES])
def test_paths_are_ignored_as_git_ignores_them(tmp_path: Path, case: Case) -> None:
    build(tmp_path, case)
    rules = GitIgnore(tmp_path)
    for rel in case.ignored:
        assert rules.ignored(tmp_path / rel.rstrip("/"), rel.endswith("/")), (case.why, rel)
    for rel in case.kept:
        assert not rules.ignored(tmp_path / rel.rstrip("/"), rel.endswith("/")), (case.why, rel)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_table_is_what_git_itself_decides(tmp_path: Path) -> None:
    for index, case in enumerate(CASES):
        root = tmp_path / str(index)
        root.mkdir()
        build(root, case)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        # Without the trailing slash: git looks at the disk to tell a folder (with one it
        # would match "out/" to "out/**", which it does not do to the folder itself).
        paths = [rel.rstrip("/") for rel in (*case.ignored, *case.kept)]
        out = subprocess.run(
            ["git", "check-ignore", "--stdin"],
            cwd=root,
            input="\n".join(paths) + "\n",
            capture_output=True,
            text=True,
        )
        assert out.returncode in (0, 1), out.stderr
        ignored = set(out.stdout.splitlines())
        assert ignored == {rel.rstrip("/") for rel in case.ignored}, case.why


def test_a_changed_gitignore_is_read_again_after_invalidate(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    rules = GitIgnore(tmp_path)
    assert rules.ignored(tmp_path / "a.log")
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    assert rules.ignored(tmp_path / "a.log")  # cached until told
    rules.invalidate()
    assert not rules.ignored(tmp_path / "a.log") and rules.ignored(tmp_path / "b.tmp")


def test_paths_outside_the_root_count_as_ignored(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    rules = GitIgnore(root)
    assert rules.ignored(tmp_path / "elsewhere.txt")
    assert not rules.ignored(root / "inside.txt")


def test_an_unreadable_gitignore_ignores_nothing(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").mkdir()  # not a file: cannot be read
    assert not GitIgnore(tmp_path).ignored(tmp_path / "a.log")
