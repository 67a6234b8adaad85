"""What the watcher reports on, as a filter and as a scan (workspace/scan.py), on real files.

The watcher's filter and the scans (its snapshot, the two around each of the agent's commands)
must keep the same paths: a file the scan keeps but the filter drops would be reported as the
agent's or someone's change only after a restart, and the other way round never.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from watchfiles import Change

from plansight.tools.search import RG_COMMON, rg_executable
from plansight.workspace.atomic import TEMP_SUFFIX
from plansight.workspace.ignore import GitIgnoreSources
from plansight.workspace.scan import IGNORED_DIRS, WorkspaceFilter, scan, stamp_of

NOT_UTF8 = b"r\xe9sum\xe9.txt"


@pytest.fixture
def user_excludes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's excludes file at git's default place, in a HOME of the test's own."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    (tmp_path / "config" / "git").mkdir(parents=True)
    path = tmp_path / "config" / "git" / "ignore"
    path.write_text("")
    return path


@pytest.fixture
def ws(tmp_path: Path, user_excludes: Path) -> Path:
    root = tmp_path / "ws"
    files = {
        "README.md": "readme\n",
        "src/app.py": "print('app')\n",
        "src/app.pyc": "compiled\n",  # watchfiles' default filter
        "src/.app.py.swp": "swap\n",
        f"src/.app.py.123.abcd{TEMP_SUFFIX}": "our own atomic write, mid-way\n",
        "node_modules/left-pad/index.js": "x\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/info/exclude": "/scratch/\n",
        "scratch/notes.txt": "excluded by .git/info/exclude\n",
        "src/scratch/kept.txt": "anchored there: kept\n",
        "myenv/pyvenv.cfg": "home = /usr\n",  # a virtual environment under any name
        "myenv/lib/site.py": "x\n",
        ".gitignore": "*.log\nbuild/\n",
        "build/out.o": "x\n",
        "src/debug.log": "x\n",
        "src/.gitignore": "!keep.log\n",
        "src/keep.log": "re-included by src/.gitignore\n",
        "docs/draft.bak": "excluded by the user's excludes file\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    user_excludes.write_text("*.bak\n")
    return root


KEPT_FILES = [
    ".gitignore",
    "README.md",
    "src/.gitignore",
    "src/app.py",
    "src/keep.log",
    "src/scratch/kept.txt",
]


def test_a_scan_stamps_the_files_the_watcher_reports_on(ws: Path) -> None:
    found = scan(ws, WorkspaceFilter(ws))
    assert sorted(found) == KEPT_FILES
    assert found["src/app.py"] == stamp_of(ws / "src" / "app.py")


def test_a_scan_with_folders_stamps_them_too_and_below_narrows_it(ws: Path) -> None:
    keep = WorkspaceFilter(ws)
    found = scan(ws, keep, folders=True)
    assert sorted(found) == sorted([*KEPT_FILES, "docs", "src", "src/scratch"])
    assert found["src"] == stamp_of(ws / "src")
    assert sorted(scan(ws, keep, "src")) == [f for f in KEPT_FILES if f.startswith("src/")]


def test_the_filter_keeps_what_the_scan_keeps(ws: Path) -> None:
    keep = WorkspaceFilter(ws)
    scanned = set(scan(ws, keep, folders=True))
    every = {
        p.relative_to(ws).as_posix()
        for p in ws.rglob("*")
        if p.relative_to(ws).parts[0] not in IGNORED_DIRS  # watchfiles never watches them
    }
    filtered = {rel for rel in every if keep(Change.modified, str(ws / rel))}
    # A virtual environment's folder itself: reported when it is made (the filter looks for
    # pyvenv.cfg above a path), never scanned into.
    assert filtered - scanned == {"myenv"}
    assert scanned <= filtered


def test_a_path_outside_the_workspace_is_not_reported(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("x\n")
    keep = WorkspaceFilter(ws)
    assert not keep(Change.modified, str(tmp_path / "elsewhere.txt"))
    assert keep(Change.modified, str(ws / "README.md"))


def test_a_changed_gitignore_info_exclude_or_excludes_file_applies_to_the_next_change(
    ws: Path, user_excludes: Path
) -> None:
    keep = WorkspaceFilter(ws)
    assert not keep(Change.modified, str(ws / "scratch" / "notes.txt"))
    (ws / ".git" / "info" / "exclude").write_text("*.md\n")
    user_excludes.write_text("")
    (ws / ".gitignore").write_text("")
    # The .gitignore's own change is reported, and makes the filter read the files again.
    assert keep(Change.modified, str(ws / ".gitignore"))
    assert keep(Change.modified, str(ws / "scratch" / "notes.txt"))
    assert keep(Change.modified, str(ws / "docs" / "draft.bak"))
    assert keep(Change.modified, str(ws / "build" / "out.o"))
    assert not keep(Change.modified, str(ws / "README.md"))


def test_a_repository_made_later_has_its_info_exclude_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "local.cfg").write_text("x\n")
    keep = WorkspaceFilter(root)
    assert keep(Change.modified, str(root / "local.cfg"))
    (root / ".git" / "info").mkdir(parents=True)  # git init, mid-session
    (root / ".git" / "info" / "exclude").write_text("local.cfg\n")
    assert not keep(Change.modified, str(root / "local.cfg"))


def test_sources_given_are_used_as_they_are(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "other-ignore").write_text("README.md\n")
    keep = WorkspaceFilter(ws, GitIgnoreSources((tmp_path / "other-ignore",)))
    found = scan(ws, keep)
    assert "README.md" not in found and "scratch/notes.txt" in found


def test_names_that_are_not_utf8_are_left_out(ws: Path) -> None:
    (ws / "src" / os.fsdecode(NOT_UTF8)).write_text("x\n")
    assert sorted(scan(ws, WorkspaceFilter(ws))) == KEPT_FILES


def test_stamp_of_a_missing_path_is_none(ws: Path) -> None:
    assert stamp_of(ws / "nothing-here") is None


def test_the_search_tools_list_what_the_scan_keeps(tmp_path: Path, user_excludes: Path) -> None:
    """rg (list_files, grep) reads .gitignore files, .git/info/exclude and the user's excludes
    file itself: on a tree of only those rules it keeps what the watcher keeps."""
    root = tmp_path / "ws"
    files = {
        ".git/info/exclude": "/data/\n!keep.tmp\n",
        ".gitignore": "*.log\nout/**\n!out/keep.txt\n",
        "src/.gitignore": "!debug.log\ngen/\n",
        "data/big.csv": "",
        "src/data/kept.csv": "",
        "a.tmp": "",
        "src/keep.tmp": "",
        "app.log": "",
        "src/debug.log": "",
        "src/gen/x.py": "",
        "out/a.o": "",
        "out/keep.txt": "",
        "docs/x.bak": "",
        "README.md": "",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    user_excludes.write_text("*.tmp\n*.bak\n")
    listed = subprocess.run(
        [rg_executable(), *RG_COMMON, "--files"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    kept = sorted(scan(root, WorkspaceFilter(root)))
    assert sorted(listed) == kept
    assert kept == [
        ".gitignore",
        "README.md",
        "out/keep.txt",
        "src/.gitignore",
        "src/data/kept.csv",
        "src/debug.log",
        "src/keep.tmp",
    ]
