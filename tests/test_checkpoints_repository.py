"""The shadow repository (checkpoints/repository.py): git plumbing on Plansight's own
repository over a real workspace in tmp_path. It is set up as Plansight configures it, sees
the work tree as git does (the workspace's .gitignore files and Plansight's excludes apply,
a nested repository is named as such), and what goes into it comes out byte for byte.
(Checkpoints built on it: test_checkpoints_store.py; the user's git kept out: _git.py.)"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from plansight.checkpoints.git import Git, GitError, find_git
from plansight.checkpoints.repository import BULK_FILES, ShadowRepository, Status, TreeChange

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

ABSENT = "0" * 40


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def repo(tmp_path: Path, workspace: Path) -> ShadowRepository:
    exe, _version = find_git()
    home = tmp_path / "home"
    home.mkdir()
    repository = ShadowRepository(
        Git(exe, tmp_path / "shadow.git", workspace, home), tmp_path / "hooks"
    )
    repository.create()
    repository.configure(["/build/"])
    return repository


def snapshot(repo: ShadowRepository, label: str, ref: str) -> tuple[str, str]:
    """Everything git sees in the work tree, committed and kept by `ref`: (commit, tree)."""
    status = repo.status()
    repo.stage([s.path for s in status if not s.nested_repository], [])
    tree = repo.write_tree()
    commit = repo.commit(tree, label)
    repo.point(commit, ref)
    return commit, tree


def test_a_new_repository_exists_and_is_configured_once(repo: ShadowRepository) -> None:
    assert repo.exists()
    config = (repo.git_dir / "config").read_text()
    assert "autocrlf = false" in config and "hooksPath" in config and "auto = 0" in config
    assert (repo.git_dir / "info" / "exclude").read_text() == "/build/\n"
    assert "-text -eol -filter" in (repo.git_dir / "info" / "attributes").read_text()
    assert repo.hooks_dir.is_dir() and list(repo.hooks_dir.iterdir()) == []
    written = (repo.git_dir / "config").stat().st_mtime_ns
    repo.configure(["/build/"])  # the same: not written again
    assert (repo.git_dir / "config").stat().st_mtime_ns == written
    repo.configure(["/build/", "/dist/"])
    assert (repo.git_dir / "info" / "exclude").read_text() == "/build/\n/dist/\n"
    assert repo.head() is None  # nothing committed yet


def test_creating_again_starts_from_nothing(repo: ShadowRepository, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    snapshot(repo, "one", "refs/checkpoints/1")
    repo.create()
    assert repo.refs("refs/checkpoints/") == {}
    assert repo.head() is None


def test_status_sees_what_git_sees_ignores_and_excludes_applied(
    repo: ShadowRepository, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n")
    (workspace / "debug.log").write_text("noise\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_bytes(b"\x7fELF")
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "lib.c").write_text("int x;\n")
    assert sorted(repo.status(), key=lambda s: s.path) == [
        Status(b".gitignore", untracked=True, nested_repository=False),
        Status(b"src/app.py", untracked=True, nested_repository=False),
        Status(b"vendor/lib", untracked=True, nested_repository=True),
    ]


def test_what_is_committed_comes_out_byte_for_byte_with_modes_and_links(
    repo: ShadowRepository, workspace: Path
) -> None:
    data = b"line\r\nmixed\nendings\r\n\x00binary"
    (workspace / "crlf.txt").write_bytes(data)
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "link").symlink_to("crlf.txt")
    commit, tree = snapshot(repo, "all", "refs/checkpoints/1")
    assert repo.head() == commit
    assert repo.refs("refs/checkpoints/") == {"refs/checkpoints/1": commit}
    entries = repo.ls_tree(tree, ["crlf.txt", "run.sh", "link", "absent.txt"])
    assert {path: mode for path, (mode, _sha) in entries.items()} == {
        "crlf.txt": 0o100644,
        "run.sh": 0o100755,
        "link": 0o120000,
    }
    blobs = repo.blobs([sha for _mode, sha in entries.values()])
    assert blobs[entries["crlf.txt"][1]] == data
    assert blobs[entries["link"][1]] == b"crlf.txt"
    assert repo.status() == []  # the index and HEAD agree with the disk now


def test_diff_lists_each_changed_path_with_both_sides(
    repo: ShadowRepository, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("keep\n")
    (workspace / "edit.txt").write_text("v1\n")
    (workspace / "gone.txt").write_text("gone\n")
    _, first = snapshot(repo, "one", "refs/checkpoints/1")
    (workspace / "edit.txt").write_text("v2\n")
    (workspace / "gone.txt").unlink()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "new.txt").write_text("new\n")
    status = repo.status()
    repo.stage(
        [s.path for s in status if (workspace / s.path.decode()).exists()],
        [s.path for s in status if not (workspace / s.path.decode()).exists()],
    )
    second = repo.write_tree()
    changes = {c.path: c for c in repo.diff(first, second)}
    assert set(changes) == {"edit.txt", "gone.txt", "sub/new.txt"}
    assert changes["gone.txt"].new_mode == 0 and changes["gone.txt"].new_sha == ABSENT
    assert changes["sub/new.txt"].old_mode == 0 and changes["sub/new.txt"].new_mode == 0o100644
    edit = changes["edit.txt"]
    assert repo.blobs([edit.old_sha, edit.new_sha]) == {
        edit.old_sha: b"v1\n",
        edit.new_sha: b"v2\n",
    }
    assert repo.diff(first, second, ["sub/new.txt"]) == [changes["sub/new.txt"]]
    assert repo.diff(first, first) == []
    assert all(isinstance(c, TreeChange) for c in changes.values())


def test_many_files_at_once_are_all_stored(repo: ShadowRepository, workspace: Path) -> None:
    """From BULK_FILES on, the objects go into one pack: none may be lost."""
    for i in range(BULK_FILES + 5):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n")
    _, tree = snapshot(repo, "bulk", "refs/checkpoints/1")
    names = [f"f{i}.txt" for i in range(BULK_FILES + 5)]
    entries = repo.ls_tree(tree, names)
    blobs = repo.blobs([sha for _mode, sha in entries.values()])
    assert [blobs[entries[name][1]] for name in names] == [
        f"file {i}\n".encode() for i in range(BULK_FILES + 5)
    ]
    assert repo.missing(sha for _mode, sha in entries.values()) == set()


def test_missing_names_what_the_repository_does_not_hold(
    repo: ShadowRepository, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    commit, tree = snapshot(repo, "one", "refs/checkpoints/1")
    unknown = "1234567890" * 4
    assert repo.missing([commit, tree, unknown]) == {unknown}
    assert repo.missing([]) == set()
    with pytest.raises(GitError, match="missing from the checkpoint repository"):
        repo.blobs([unknown])


def test_refs_are_set_and_deleted_together_and_gc_drops_only_what_none_holds(
    repo: ShadowRepository, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("old\n")
    first, first_tree = snapshot(repo, "one", "refs/checkpoints/1")
    old_blob = repo.ls_tree(first_tree, ["a.txt"])["a.txt"][1]
    (workspace / "a.txt").write_text("new\n")
    second, second_tree = snapshot(repo, "two", "refs/checkpoints/2")
    assert repo.refs("refs/checkpoints/") == {
        "refs/checkpoints/1": first,
        "refs/checkpoints/2": second,
    }
    repo.gc()
    assert repo.missing([first, old_blob]) == set()  # still held by refs/checkpoints/1
    repo.update_refs({"refs/checkpoints/1": None, "HEAD": second})
    assert repo.refs("refs/checkpoints/") == {"refs/checkpoints/2": second}
    repo.gc()
    assert repo.missing([first, old_blob, second, second_tree]) == {first, old_blob}
    assert repo.storage_bytes() > 0
    assert repo.count_objects()["count"] == 0  # all packed


def test_leftovers_of_killed_git_commands_are_removed_and_nothing_else(
    repo: ShadowRepository, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    snapshot(repo, "one", "refs/checkpoints/1")
    left = [
        repo.git_dir / "index.lock",
        repo.git_dir / "refs" / "checkpoints" / "2.lock",
        repo.git_dir / "objects" / "pack" / "tmp_pack_abc",
        repo.git_dir / "objects" / "ab" / ".tmp-obj",
        repo.git_dir / "sharedindex_0000",
        repo.git_dir / "gc.pid",
    ]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    repo.remove_leftovers()
    assert [path for path in left if path.exists()] == []
    assert repo.exists() and repo.refs("refs/checkpoints/")  # the repository itself is intact
    repo.remove_index()
    assert not (repo.git_dir / "index").exists()
    assert {s.path for s in repo.status()} == {b"a.txt"}  # staged against HEAD: all new again


def test_blobs_merge_three_ways_or_say_they_cannot(repo: ShadowRepository, tmp_path: Path) -> None:
    lines = [f"line {n}\n" for n in range(10)]
    base = repo.hash_blob("".join(lines).encode())
    ours = repo.hash_blob("".join(["FIRST\n", *lines[1:]]).encode())
    theirs = repo.hash_blob("".join([*lines[:-1], "LAST\n"]).encode())
    scratch = tmp_path / "scratch"

    merged = repo.merge_blobs(ours, base, theirs, scratch)

    assert merged is not None
    assert repo.blobs([merged])[merged] == "".join(["FIRST\n", *lines[1:-1], "LAST\n"]).encode()
    clash = repo.hash_blob("".join(["OTHER\n", *lines[1:]]).encode())
    assert repo.merge_blobs(ours, base, clash, scratch) is None  # the same line, two ways
    binary = [repo.hash_blob(b"\0bin" + bytes([n])) for n in range(3)]
    assert repo.merge_blobs(binary[1], binary[0], binary[2], scratch) is None
    assert list(scratch.iterdir()) == []  # its temporary files go
