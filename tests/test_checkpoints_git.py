"""The user's own git stays out of it: their repository, their config, their environment."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from plansight.checkpoints import CheckpointStore, RestoreRequest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "pre-rebase",
    "post-rewrite",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "fsmonitor-watchman",
)


def user_git(repo: Path, *args: str, home: Path) -> str:
    """The user running git in their repository (optional locks off: reading changes nothing)."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_AUTHOR_NAME": "User",
        "GIT_AUTHOR_EMAIL": "user@example.com",
        "GIT_COMMITTER_NAME": "User",
        "GIT_COMMITTER_EMAIL": "user@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def digest_tree(folder: Path, *, mtimes: bool = False) -> dict[str, tuple[int, int, str]]:
    """Every file and folder under `folder`: mode, mtime if asked, a digest of its bytes."""
    found: dict[str, tuple[int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            found[path.relative_to(folder).as_posix()] = (
                st.st_mode,
                st.st_mtime_ns if mtimes else 0,
                hashlib.sha256(data).hexdigest(),
            )
    return found


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """A HOME whose global config and attribute files would change everything if read. Its
    excludes file is read, by Plansight, as the user's git reads it: only the one configured,
    not git's default place."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    hooks = home / "global-hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    for hook in HOOKS:
        script = hooks / hook
        script.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        script.chmod(0o755)
    (home / ".gitconfig").write_text(
        "[core]\n"
        "\tautocrlf = true\n"
        f"\thooksPath = {hooks}\n"
        f"\texcludesFile = {home / 'global-ignore'}\n"
        f"\tattributesFile = {home / 'global-attributes'}\n"
        "[user]\n\tname = Leaked\n\temail = leaked@example.com\n"
        "[commit]\n\tgpgSign = true\n"
    )
    (home / "global-ignore").write_text("*.private\n")
    (home / "global-attributes").write_text("* text eol=crlf\n")
    (home / ".config" / "git" / "ignore").write_text("*.md\n")
    (home / ".config" / "git" / "attributes").write_text("* text eol=crlf\n")
    return home


@pytest.fixture
def plain_home(tmp_path: Path) -> Path:
    """The HOME the user's own git commands run with in these tests."""
    home = tmp_path / "plain-home"
    home.mkdir()
    return home


@pytest.fixture
def user_repo(tmp_path: Path, plain_home: Path) -> Path:
    """A workspace that is the user's git repository, mid-work."""
    user_home = plain_home
    repo = tmp_path / "repo"
    repo.mkdir()
    user_git(repo, "init", "-q", "-b", "main", home=user_home)
    (repo / "app.py").write_text("print('v1')\n")
    (repo / "lib.py").write_text("LIB = 1\n")
    (repo / "notes.md").write_text("notes\n")
    (repo / ".gitignore").write_text("*.log\n")
    user_git(repo, "add", "-A", home=user_home)
    user_git(
        repo,
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "commit.gpgSign=false",
        "commit",
        "-q",
        "-m",
        "first",
        home=user_home,
    )
    (repo / "lib.py").write_text("LIB = 2  # stashed\n")
    user_git(repo, "-c", "core.hooksPath=/dev/null", "stash", "-q", home=user_home)
    (repo / "app.py").write_text("print('v2, staged')\n")
    user_git(repo, "add", "app.py", home=user_home)
    (repo / "notes.md").write_text("notes, not staged\n")
    (repo / "untracked.txt").write_text("the user's new file\n")
    (repo / "debug.log").write_text("ignored\n")
    for hook in HOOKS:  # the repository's own hooks too
        script = repo / ".git" / "hooks" / hook
        script.write_text(f"#!/bin/sh\necho repo-{hook} >> {repo.parent / 'hook-ran'}\n")
        script.chmod(0o755)
    return repo


def test_the_users_repository_is_untouched_byte_for_byte(
    tmp_path: Path,
    user_repo: Path,
    user_home: Path,
    plain_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home / ".config"))
    status = user_git(user_repo, "status", "--porcelain=v2", "--branch", home=plain_home)
    assert "app.py" in status and "notes.md" in status and "untracked.txt" in status
    stash = user_git(user_repo, "stash", "list", home=plain_home)
    assert stash
    refs = user_git(user_repo, "for-each-ref", home=plain_home)
    git_folder = digest_tree(user_repo / ".git", mtimes=True)
    work_tree = digest_tree(user_repo)

    store = CheckpointStore(tmp_path / "storage", user_repo)
    store.open()
    start = store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (user_repo / "app.py").write_text("print('agent')\n")
    store.snapshot("edit", "Edited app.py", todo_id="1", agent=["app.py"])
    (user_repo / "made.txt").write_text("by a command\n")
    (user_repo / "notes.md").unlink()
    store.snapshot("command", "make", todo_id="1", agent_all=True)
    undo = store.restore(RestoreRequest(todo_id="1"))
    store.restore(RestoreRequest(checkpoint=undo.before.id))
    assert start is not None
    store.restore(RestoreRequest(checkpoint=start.id))
    store.maintain()
    store.close()

    assert digest_tree(user_repo / ".git", mtimes=True) == git_folder
    assert digest_tree(user_repo) == work_tree
    assert user_git(user_repo, "status", "--porcelain=v2", "--branch", home=plain_home) == status
    assert user_git(user_repo, "stash", "list", home=plain_home) == stash
    assert user_git(user_repo, "for-each-ref", home=plain_home) == refs
    assert not (tmp_path / "hook-ran").exists()
    assert not (user_repo.parent / "hook-ran").exists()
    # The snapshot itself saw the work tree as it is, not the user's index or HEAD.
    held = store.git_dir
    shown = subprocess.run(
        ["git", "--git-dir", str(held), "show", f"{start.commit}:app.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown == "print('v2, staged')\n"


def test_the_users_config_and_environment_do_not_leak_in(
    tmp_path: Path, user_repo: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A terminal or a hook may leave these set; each would send git to the user's repository.
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home / ".config"))
    monkeypatch.setenv("GIT_DIR", str(user_repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user_repo / ".git" / "index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(user_repo / ".git" / "objects"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf'='true'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.excludesFile")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(user_home / "global-ignore"))
    git_folder = digest_tree(user_repo / ".git", mtimes=True)
    crlf = b"one\r\ntwo\r\n"
    (user_repo / "dos.py").write_bytes(crlf)
    lf = b"one\ntwo\n"
    (user_repo / "unix.md").write_bytes(lf)
    (user_repo / "keys.private").write_text("excluded by the user's excludes file\n")

    store = CheckpointStore(tmp_path / "storage", user_repo)
    store.open()
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    (user_repo / "dos.py").write_text("changed\n")
    (user_repo / "unix.md").write_text("changed\n")
    store.snapshot("command", "sed", agent_all=True)
    result = store.restore(RestoreRequest(checkpoint=start.id))
    store.close()

    # Not excluded: git's default excludes file (*.md) is not the one configured.
    assert set(result.restored) == {"dos.py", "unix.md"}
    assert (user_repo / "dos.py").read_bytes() == crlf  # no end-of-line conversion either way
    assert (user_repo / "unix.md").read_bytes() == lf
    assert digest_tree(user_repo / ".git", mtimes=True) == git_folder
    assert not (tmp_path / "hook-ran").exists()
    assert not (user_repo.parent / "hook-ran").exists()
    log = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "log", "-1", "--format=%an %G?", start.commit],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout
    assert log.split()[0] == "Plansight"
    # The user's core.excludesFile holds in the checkpoints as in the user's own git.
    held = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "ls-tree", "-r", "--name-only", start.tree],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout.split()
    assert "dos.py" in held and "keys.private" not in held
    assert user_git(user_repo, "check-ignore", "keys.private", home=user_home) == "keys.private\n"
