"""Which paths the workspace's ignore rules exclude (workspace/ignore.py), as git itself decides.

The watcher reports a change outside the agent only where the user's ignore rules do not exclude
it, so a build folder or a log being written never reaches the model as "changed outside"; the
echo scans and the checkpoints follow the same rules. The cases below are git's documented rules
(gitignore(5)): nested `.gitignore` files, `.git/info/exclude` and the user's
`core.excludesFile`, written as a table on real files; the same table is checked against
`git check-ignore` where git is installed, so that the table cannot drift from git either.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from plansight.workspace.ignore import (
    GitIgnoreSources,
    PathRules,
    PatternList,
    excludes_file,
    git_ignore_rules,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@dataclass(frozen=True)
class Case:
    why: str
    ignore_files: dict[str, str]  # folder ("" for the root) → .gitignore text
    ignored: tuple[str, ...]  # paths, a trailing "/" for a directory
    kept: tuple[str, ...]
    info_exclude: str = ""  # .git/info/exclude
    user_excludes: str = ""  # the user's excludes file, at git's default place


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME and XDG_CONFIG_HOME of the test's own (git's default excludes file is in the
    latter), no system configuration: the developer's own git settings stay out of it."""
    home = tmp_path / "user" / "home"
    config = tmp_path / "user" / "config"
    (config / "git").mkdir(parents=True)
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield config


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
    Case(
        "a backslash makes a leading # or ! and a trailing space part of the name",
        {"": "\\#notes\n\\!important\nspaced\\ \n"},
        ("#notes", "!important", "src/spaced "),
        ("notes", "important", "spaced"),
    ),
    Case(
        "patterns of .git/info/exclude apply to the whole workspace, below the .gitignore files",
        {"": "!keep.tmp\n"},
        ("a.tmp", "src/b.tmp", "local/", "local/x.txt"),
        ("keep.tmp", "src/keep.tmp", "src/local/", "x.txt"),
        info_exclude="*.tmp\n/local/\n",
    ),
    Case(
        "the user's excludes file applies everywhere, below .git/info/exclude and .gitignore",
        {"": "", "docs": "!*.bak\n"},
        ("a.bak", "src/a.swp", ".idea/", ".idea/workspace.xml"),
        ("docs/a.bak", "important.swp", "src/important.swp", "a.txt"),
        info_exclude="!important.swp\n",
        user_excludes="*.bak\n*.swp\n.idea/\n",
    ),
    Case(
        "nested negation: each folder's file overrides those above it, for what is below it",
        {"": "*.log\n", "a": "!keep.log\n", "a/b": "keep.log\n"},
        ("x.log", "keep.log", "a/x.log", "a/b/keep.log", "a/b/c/keep.log"),
        ("a/keep.log", "a/c/keep.log"),
    ),
    Case(
        "a folder excluded above comes back by a deeper negation, with what is inside it",
        {"": "build/\n", "pkg": "!build/\n"},
        ("build/", "build/x.o", "lib/build/", "lib/build/x.o"),
        ("pkg/build/", "pkg/build/x.o", "pkg/sub/build/"),
    ),
    Case(
        "a re-included folder leaves the lower rules in force for the files inside it",
        {"": "logs/\n!logs/\n"},
        ("logs/a.log",),
        ("logs/", "logs/a.txt"),
        info_exclude="*.log\n",
    ),
    Case(
        "a pattern ending in a slash matches every folder and no file",
        {"": "*/\n!src/\n"},
        ("docs/", "docs/a.md", "src/sub/", "src/sub/b.py"),
        ("src/", "src/a.py", "a.txt"),
    ),
    Case(
        "a negation in info/exclude cannot bring back what a .gitignore excludes",
        {"": "*.env\n"},
        ("prod.env", "deploy/dev.env"),
        ("env.txt",),
        info_exclude="!prod.env\n",
        user_excludes="!*.env\n",
    ),
)


def build(root: Path, case: Case, config: Path) -> None:
    """The case's files under `root` (a git repository's top folder when git made `.git`)."""
    for folder, text in case.ignore_files.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitignore").write_text(text)
    if case.info_exclude:
        (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text(case.info_exclude)
    (config / "git" / "ignore").write_text(case.user_excludes)
    for rel in (*case.ignored, *case.kept):
        path = root / rel.rstrip("/")
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")


def git_check_ignore(root: Path, paths: list[str]) -> set[str]:
    """What git itself says is ignored of `paths` (relative to `root`, a repository)."""
    out = subprocess.run(
        ["git", "check-ignore", "--stdin"],
        cwd=root,
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 1), out.stderr
    return set(out.stdout.splitlines())


def decided(rules: PathRules, case: Case) -> tuple[set[str], set[str]]:
    """The case's paths the rules exclude, and those they keep."""
    paths = (*case.ignored, *case.kept)
    ignored = {rel for rel in paths if rules.matches(rel.rstrip("/"), rel.endswith("/"))}
    return ignored, set(paths) - ignored


@pytest.mark.parametrize("case", CASES, ids=[c.why for c in CASES])
def test_paths_are_ignored_as_git_ignores_them(
    tmp_path: Path, user_config: Path, case: Case
) -> None:
    root = tmp_path / "ws"
    build(root, case, user_config)
    assert decided(git_ignore_rules(root), case) == (set(case.ignored), set(case.kept))


@needs_git
def test_the_table_is_what_git_itself_decides(tmp_path: Path, user_config: Path) -> None:
    for index, case in enumerate(CASES):
        root = tmp_path / str(index)
        root.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        build(root, case, user_config)
        # Without the trailing slash: git looks at the disk to tell a folder (with one it
        # would match "out/" to "out/**", which it does not do to the folder itself).
        paths = [rel.rstrip("/") for rel in (*case.ignored, *case.kept)]
        assert git_check_ignore(root, paths) == {rel.rstrip("/") for rel in case.ignored}, case.why


@needs_git
@pytest.mark.parametrize("where", ["global", "repository"])
def test_core_excludes_file_is_where_git_config_says(
    tmp_path: Path, user_config: Path, where: str
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    home = Path(os.environ["HOME"])
    (home / "my-ignore").write_text("*.secret\n")
    (user_config / "git" / "ignore").write_text("*.md\n")  # the default: not read once set
    scope = "--global" if where == "global" else "--local"
    subprocess.run(
        ["git", "config", scope, "core.excludesFile", "~/my-ignore"], cwd=root, check=True
    )
    for name in ("a.secret", "docs/b.secret", "README.md", "app.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    rules = git_ignore_rules(root)
    ours = {p for p in ("a.secret", "docs/b.secret", "README.md", "app.py") if rules.matches(p)}
    assert ours == {"a.secret", "docs/b.secret"}
    assert git_check_ignore(root, ["a.secret", "docs/b.secret", "README.md", "app.py"]) == ours


def test_without_git_the_excludes_file_is_gits_default(
    tmp_path: Path, user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    assert excludes_file(tmp_path) == user_config / "git" / "ignore"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert excludes_file(tmp_path) == Path(os.environ["HOME"]) / ".config" / "git" / "ignore"


@needs_git
def test_a_worktree_uses_its_repositorys_info_exclude(tmp_path: Path, user_config: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=main, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], cwd=main, check=True)
    (main / ".git" / "info" / "exclude").write_text("*.local\n")
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], cwd=main, check=True)
    worktree = tmp_path / "wt"
    assert (worktree / ".git").is_file()  # "gitdir: ...", not a folder
    (worktree / "a.local").write_text("x\n")
    (worktree / "a.txt").write_text("x\n")
    rules = git_ignore_rules(worktree)
    assert rules.matches("a.local") and not rules.matches("a.txt")
    assert git_check_ignore(worktree, ["a.local", "a.txt"]) == {"a.local"}


def test_a_changed_gitignore_is_read_again_after_invalidate(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    rules = git_ignore_rules(tmp_path)
    assert rules.matches("a.log")
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    assert rules.matches("a.log")  # cached until told
    rules.invalidate()
    assert not rules.matches("a.log") and rules.matches("b.tmp")


def test_a_changed_info_exclude_or_excludes_file_is_read_again_on_refresh(
    tmp_path: Path, user_config: Path
) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    exclude = tmp_path / ".git" / "info" / "exclude"
    exclude.write_text("*.log\n")
    rules = git_ignore_rules(tmp_path)
    assert rules.matches("a.log") and not rules.refresh()  # unchanged: nothing read again
    exclude.write_text("*.tmp\n")
    (user_config / "git" / "ignore").write_text("*.bak\n")
    assert rules.refresh()
    assert [rules.matches(p) for p in ("a.log", "b.tmp", "c.bak")] == [False, True, True]
    assert rules.root_lines() == ["*.bak", "*.tmp"]  # the user's first: git reads it first


def test_an_unreadable_gitignore_ignores_nothing(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").mkdir()  # not a file: cannot be read
    assert not git_ignore_rules(tmp_path).matches("a.log")


def test_other_pattern_lists_use_the_same_matcher(tmp_path: Path) -> None:
    """The same rules for lists of another name and built-in ones (as for secret files)."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / ".plansightignore").write_text("!public.pem\n")
    defaults = PatternList("built-in", (".env", "*.pem", "secrets/"))
    rules = PathRules(tmp_path, files=[defaults], per_folder=".plansightignore")
    found = {
        p
        for p in (".env", "app/.env", "key.pem", "config/public.pem", "secrets/a", "a.txt")
        if rules.matches(p)
    }
    assert found == {".env", "app/.env", "key.pem", "secrets/a"}
    assert rules.root_lines() == [".env", "*.pem", "secrets/"]


def test_the_sources_are_the_excludes_file_then_info_exclude(
    tmp_path: Path, user_config: Path
) -> None:
    # Without a repository: where `git init` would put it, so that one made later counts.
    assert GitIgnoreSources.find(tmp_path).files == (
        user_config / "git" / "ignore",
        tmp_path / ".git" / "info" / "exclude",
    )
    (tmp_path / ".git").write_text("gitdir: elsewhere/repo\n")  # a submodule's, say
    assert GitIgnoreSources.find(tmp_path).files == (
        user_config / "git" / "ignore",
        tmp_path / "elsewhere" / "repo" / "info" / "exclude",
    )
