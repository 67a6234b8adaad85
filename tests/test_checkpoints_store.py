"""The checkpoint store with real git and real files: what a snapshot holds, what a restore does."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from plansight.checkpoints import (
    CheckpointError,
    CheckpointNotFound,
    CheckpointStore,
    CheckpointsUnavailable,
    RestoreRequest,
)
from plansight.workspace.scan import WorkspaceFilter, scan

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "README.md").write_text("# project\n")
    return root


@pytest.fixture
def store(tmp_path: Path, workspace: Path) -> Iterator[CheckpointStore]:
    opened = CheckpointStore(tmp_path / "storage" / "checkpoints", workspace)
    opened.open()
    yield opened
    opened.close()


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file under root (links as their target), except the .git folder."""
    found: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            key = path.relative_to(root).as_posix()
            found[key] = (
                b"-> " + os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            )
    return found


def shadow_paths(store: CheckpointStore, checkpoint_id: str) -> list[str]:
    tree = store.get(checkpoint_id).tree
    out = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "ls-tree", "-r", "--name-only", "-z", tree],
        capture_output=True,
        check=True,
    ).stdout
    return sorted(os.fsdecode(p) for p in out.split(b"\0") if p)


# ----- snapshots ---------------------------------------------------------------------------------


def test_each_checkpoint_lists_what_changed_since_the_one_before(
    store: CheckpointStore, workspace: Path
) -> None:
    first = store.snapshot("runStart", "Run started")
    assert first is not None and first.changed == ()  # the first one "adds" everything
    (workspace / "src" / "app.py").write_text("print('bye')\n")
    edit = store.snapshot("edit", "Edited src/app.py", todo_id="1", agent=["src/app.py"])
    assert edit is not None
    assert (edit.changed, edit.agent, edit.todo_id) == (("src/app.py",), ("src/app.py",), "1")
    assert (
        store.snapshot("command", "ls", todo_id="1", agent_all=True, only_if_changed=True) is None
    )
    same = store.snapshot("itemStart", "#2 started", todo_id="2")
    assert same is not None and same.changed == () and same.tree == edit.tree
    assert [c.id for c in store.checkpoints()] == ["1", "2", "3"]
    assert edit.to_wire() == {
        "id": "2",
        "todoId": "1",
        "label": "Edited src/app.py",
        "createdAt": edit.created_at,
        "paths": ["src/app.py"],
        "kind": "edit",
    }
    assert first.to_wire()["paths"] == []


def test_gitignore_files_are_honoured_nested_ones_too(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "app.log").write_text("noise\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.bin").write_bytes(b"\0" * 10)
    (workspace / "src" / ".gitignore").write_text("generated_*.py\n!generated_keep.py\n")
    (workspace / "src" / "generated_a.py").write_text("x = 1\n")
    (workspace / "src" / "generated_keep.py").write_text("y = 2\n")
    (workspace / "node_modules" / "left-pad").mkdir(parents=True)
    (workspace / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    checkpoint = store.snapshot("runStart", "Run started")
    assert checkpoint is not None
    assert shadow_paths(store, checkpoint.id) == [
        ".gitignore",
        "README.md",
        "src/.gitignore",
        "src/app.py",
        "src/generated_keep.py",
        "src/util.py",
    ]


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


def test_the_users_info_exclude_and_excludes_file_are_honoured_and_read_again(
    tmp_path: Path, workspace: Path, user_excludes: Path
) -> None:
    (workspace / ".git" / "info").mkdir(parents=True)
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.write_text("/data/\n")
    user_excludes.write_text("*.swp\n")
    (workspace / "data").mkdir()
    (workspace / "data" / "big.csv").write_text("1,2\n")
    (workspace / "src" / ".app.py.swp").write_text("swap\n")
    store = CheckpointStore(tmp_path / "storage" / "checkpoints", workspace)
    store.open()
    try:
        first = store.snapshot("runStart", "Run started")
        assert first is not None
        assert shadow_paths(store, first.id) == ["README.md", "src/app.py", "src/util.py"]
        exclude.write_text("")  # the user takes data/ back in, mid-session
        second = store.snapshot("outside", "Changed outside")
        assert second is not None
        assert "data/big.csv" in shadow_paths(store, second.id)
        assert "src/.app.py.swp" not in shadow_paths(store, second.id)
    finally:
        store.close()


def test_a_checkpoint_holds_the_files_the_watcher_reports_on(
    tmp_path: Path, workspace: Path, user_excludes: Path
) -> None:
    """One set of rules: what the checkpoints capture is what the watcher's scan keeps."""
    (workspace / ".git" / "info").mkdir(parents=True)
    (workspace / ".git" / "info" / "exclude").write_text("/scratch/\n!keep.tmp\n")
    user_excludes.write_text("*.tmp\n*.bak\n")
    (workspace / ".gitignore").write_text("logs/\n!logs/\nout/**\n!out/keep.txt\n")
    (workspace / "src" / ".gitignore").write_text("!*.bak\ngen/\n")
    for rel in (
        "scratch/a.txt",
        "src/scratch/b.txt",
        "a.tmp",
        "src/keep.tmp",
        "x.bak",
        "src/y.bak",
        "src/gen/z.py",
        "logs/today.log",
        "out/a.o",
        "out/keep.txt",
    ):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(rel + "\n")
    store = CheckpointStore(tmp_path / "storage" / "checkpoints", workspace)
    store.open()
    try:
        checkpoint = store.snapshot("runStart", "Run started")
        assert checkpoint is not None
        held = shadow_paths(store, checkpoint.id)
    finally:
        store.close()
    watched = sorted(scan(workspace, WorkspaceFilter(workspace)))
    assert held == watched
    assert "src/y.bak" in held and "src/keep.tmp" in held and "out/keep.txt" in held
    assert not {"scratch/a.txt", "a.tmp", "x.bak", "src/gen/z.py", "out/a.o"} & set(held)


def test_bytes_modes_and_links_come_back_exactly_whatever_gitattributes_say(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / ".gitattributes").write_text("* text=auto eol=lf\n*.txt filter=secret ident\n")
    crlf = b"line one\r\nline two\r\n$Id$\r\n"
    binary = bytes(range(256)) * 4
    (workspace / "dos.txt").write_bytes(crlf)
    (workspace / "blob.bin").write_bytes(binary)
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    (workspace / "link").symlink_to("src/app.py")
    store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1", todo_id="1")
    before = tree_files(workspace)
    (workspace / "dos.txt").write_bytes(b"changed\n")
    (workspace / "blob.bin").write_bytes(b"small")
    script.chmod(0o644)
    script.write_text("#!/bin/sh\necho changed\n")
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("README.md")
    store.snapshot("command", "sed", todo_id="1", agent_all=True)

    result = store.restore(RestoreRequest(todo_id="1"))

    assert set(result.restored) == {"dos.txt", "blob.bin", "run.sh", "link"}
    assert tree_files(workspace) == before
    assert (workspace / "dos.txt").read_bytes() == crlf
    assert os.access(script, os.X_OK)
    assert os.readlink(workspace / "link") == "src/app.py"


def test_files_over_the_size_limit_are_listed_never_stored_and_never_touched(
    tmp_path: Path, workspace: Path
) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace, max_file_bytes=1000)
    store.open()
    big = workspace / "data.bin"
    big.write_bytes(b"x" * 5000)
    first = store.snapshot("runStart", "Run started")
    assert first is not None and first.uncaptured == {"data.bin": "large"}
    assert "data.bin" not in shadow_paths(store, first.id)
    store.snapshot("itemStart", "#1", todo_id="1")
    big.write_bytes(b"y" * 6000)  # still too large: not even seen as a change
    (workspace / "model.bin").write_bytes(b"z" * 2000)  # created by the step, too large
    (workspace / "src" / "app.py").write_text("print('changed')\n")
    step = store.snapshot("command", "train", todo_id="1", agent_all=True)
    assert step is not None and step.changed == ("model.bin", "src/app.py")

    result = store.restore(RestoreRequest(todo_id="1"))

    assert result.restored == ("src/app.py",)
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("model.bin", "checkpoints do not hold it now: it is larger than the checkpoint size limit")
    ]
    assert big.read_bytes() == b"y" * 6000
    assert (workspace / "model.bin").exists()
    # Storage stays small: nothing of the large files went into the repository.
    assert store.storage_bytes() < 100_000
    store.close()


def test_a_file_that_grows_over_the_limit_leaves_the_checkpoints_and_is_not_overwritten(
    tmp_path: Path, workspace: Path
) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace, max_file_bytes=1000)
    store.open()
    store.snapshot("runStart", "Run started")
    log = workspace / "src" / "util.py"
    log.write_bytes(b"#" * 4000)
    grown = store.snapshot("outside", "outside changes")
    assert grown is not None and grown.uncaptured == {"src/util.py": "large"}
    assert "src/util.py" in grown.changed
    result = store.restore(RestoreRequest(checkpoint="1"))
    assert result.restored == ()
    assert [s.path for s in result.skipped] == ["src/util.py"]
    assert "restore with force" in result.skipped[0].reason
    assert log.read_bytes() == b"#" * 4000
    store.close()


def test_a_nested_repository_is_not_captured(store: CheckpointStore, workspace: Path) -> None:
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "lib.py").write_text("x = 1\n")
    checkpoint = store.snapshot("runStart", "Run started")
    assert checkpoint is not None
    assert checkpoint.uncaptured == {"vendor/lib": "repository"}
    assert not [p for p in shadow_paths(store, checkpoint.id) if p.startswith("vendor")]


# ----- restores ----------------------------------------------------------------------------------


def test_restoring_a_checkpoint_brings_back_deleted_files_and_removes_created_ones(
    store: CheckpointStore, workspace: Path
) -> None:
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    original = tree_files(workspace)
    (workspace / "src" / "app.py").write_text("print('edited')\n")
    store.snapshot("edit", "Edited src/app.py", agent=["src/app.py"])
    (workspace / "README.md").unlink()
    (workspace / "pkg" / "deep").mkdir(parents=True)
    (workspace / "pkg" / "deep" / "new.py").write_text("new = True\n")
    store.snapshot("command", "make", agent_all=True)

    result = store.restore(RestoreRequest(checkpoint=start.id))

    assert result.restored == ("README.md", "src/app.py")
    assert result.deleted == ("pkg/deep/new.py",)  # version 3: deleted files apart
    assert result.skipped == ()
    assert tree_files(workspace) == original
    assert not (workspace / "pkg").exists()  # the folders the step made went with its file
    assert result.target == start
    assert result.before.kind == "beforeRestore"
    assert result.after is not None and result.after.agent == result.changed


def test_a_restore_can_be_undone_by_restoring_the_checkpoint_it_took_first(
    store: CheckpointStore, workspace: Path
) -> None:
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    (workspace / "src" / "app.py").write_text("print('edited')\n")
    (workspace / "notes.txt").write_text("made by a command\n")
    store.snapshot("command", "edit", agent_all=True)
    edited = tree_files(workspace)
    undo = store.restore(RestoreRequest(checkpoint=start.id))
    assert tree_files(workspace) != edited

    redo = store.restore(RestoreRequest(checkpoint=undo.before.id))

    assert redo.restored == ("notes.txt", "src/app.py")
    assert tree_files(workspace) == edited


def test_undo_by_step_puts_back_that_steps_files_only(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "src" / "app.py").write_text("print('step one')\n")
    store.snapshot("edit", "Edited src/app.py", todo_id="1", agent=["src/app.py"])
    # A command of step 1 creates one file, modifies one and deletes one.
    (workspace / "created.txt").write_text("created by step 1\n")
    (workspace / "src" / "util.py").write_text("def util():\n    return 2\n")
    (workspace / "README.md").unlink()
    store.snapshot("command", "python gen.py", todo_id="1", agent_all=True)
    store.snapshot("itemStart", "#2 started", todo_id="2")
    (workspace / "step2.txt").write_text("step two\n")
    store.snapshot("edit", "Created step2.txt", todo_id="2", agent=["step2.txt"])
    assert store.step_changes("1").keys() == {
        "src/app.py",
        "created.txt",
        "src/util.py",
        "README.md",
    }

    result = store.restore(RestoreRequest(todo_id="1"))

    assert result.restored == ("README.md", "src/app.py", "src/util.py")
    assert result.deleted == ("created.txt",)
    assert (workspace / "src" / "app.py").read_text() == "print('hello')\n"
    assert (workspace / "src" / "util.py").read_text() == "def util():\n    return 1\n"
    assert (workspace / "README.md").read_text() == "# project\n"
    assert not (workspace / "created.txt").exists()
    assert (workspace / "step2.txt").read_text() == "step two\n"  # step 2 kept
    assert result.target is not None and result.target.label == "#1 started"


def test_undo_by_step_limited_to_paths(store: CheckpointStore, workspace: Path) -> None:
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "src" / "app.py").write_text("A\n")
    (workspace / "src" / "util.py").write_text("B\n")
    (workspace / "README.md").write_text("C\n")
    store.snapshot("command", "sed", todo_id="1", agent_all=True)

    result = store.restore(RestoreRequest(todo_id="1", paths=("src/",)))

    assert result.restored == ("src/app.py", "src/util.py")
    assert (workspace / "README.md").read_text() == "C\n"
    only = store.restore(RestoreRequest(checkpoint="1", paths=("README.md",)))
    assert only.restored == ("README.md",)


def test_a_step_that_changed_nothing_restores_nothing(store: CheckpointStore) -> None:
    store.snapshot("itemStart", "#1 started", todo_id="1")
    result = store.restore(RestoreRequest(todo_id="1"))
    assert (result.restored, result.skipped, result.after) == ((), (), None)
    assert result.target is not None and result.target.todo_id == "1"


def test_files_with_unsaved_editor_changes_are_always_skipped(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "src" / "app.py").write_text("A\n")
    (workspace / "README.md").write_text("C\n")
    store.snapshot("command", "sed", todo_id="1", agent_all=True)

    result = store.restore(
        RestoreRequest(todo_id="1", force=True), unsaved=lambda path: path == "README.md"
    )

    assert result.restored == ("src/app.py",)
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("README.md", "it has unsaved changes in the editor")
    ]
    assert (workspace / "README.md").read_text() == "C\n"


def test_files_changed_outside_since_are_skipped_unless_forced(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "src" / "app.py").write_text("agent\n")
    (workspace / "README.md").write_text("agent readme\n")
    store.snapshot("command", "sed", todo_id="1", agent_all=True)
    (workspace / "README.md").write_text("the user's own words\n")  # after the agent

    result = store.restore(RestoreRequest(todo_id="1"))

    assert result.restored == ("src/app.py",)
    assert [s.path for s in result.skipped] == ["README.md"]
    # The user wrote it after the agent's command, checkpoint 3 (not after the step's start, 2).
    assert "changed outside Plansight after checkpoint 3" in result.skipped[0].reason
    assert (workspace / "README.md").read_text() == "the user's own words\n"

    forced = store.restore(RestoreRequest(todo_id="1", force=True))
    assert forced.restored == ("README.md",)
    assert (workspace / "README.md").read_text() == "# project\n"


def test_an_outside_change_seen_in_an_edit_checkpoint_is_not_the_agents(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("runStart", "Run started")
    (workspace / "README.md").write_text("user\n")  # before the edit, no checkpoint between
    (workspace / "src" / "app.py").write_text("agent\n")
    edit = store.snapshot("edit", "Edited src/app.py", agent=["src/app.py"])
    assert edit is not None and edit.changed == ("README.md", "src/app.py")
    assert edit.agent == ("src/app.py",)
    result = store.restore(RestoreRequest(checkpoint="1"))
    assert result.restored == ("src/app.py",)
    assert [s.path for s in result.skipped] == ["README.md"]


def test_earlier_restores_count_as_the_agents_changes(
    store: CheckpointStore, workspace: Path
) -> None:
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    (workspace / "src" / "app.py").write_text("agent\n")
    edit = store.snapshot("edit", "Edited", agent=["src/app.py"])
    assert edit is not None
    store.restore(RestoreRequest(checkpoint=start.id))
    # Going forward again crosses the restore's own change: no outside change in the way.
    result = store.restore(RestoreRequest(checkpoint=edit.id))
    assert result.restored == ("src/app.py",)
    assert (workspace / "src" / "app.py").read_text() == "agent\n"


def test_a_file_not_held_by_the_checkpoints_is_not_overwritten_unless_forced(
    store: CheckpointStore, workspace: Path
) -> None:
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    (workspace / "README.md").unlink()
    store.snapshot("command", "rm", agent_all=True)
    (workspace / ".gitignore").write_text("README.md\n")
    (workspace / "README.md").write_text("ignored, precious\n")
    result = store.restore(RestoreRequest(checkpoint=start.id))
    assert "README.md" not in result.restored
    assert (workspace / "README.md").read_text() == "ignored, precious\n"


def test_a_step_that_turned_a_file_into_a_folder_is_undone(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "README.md").unlink()
    (workspace / "README.md").mkdir()
    (workspace / "README.md" / "index.md").write_text("now a folder\n")
    (workspace / "src" / "util.py").unlink()
    changed = store.snapshot("command", "restructure", todo_id="1", agent_all=True)
    assert changed is not None and set(changed.changed) == {
        "README.md",
        "README.md/index.md",
        "src/util.py",
    }

    result = store.restore(RestoreRequest(todo_id="1"))

    assert result.restored == ("README.md", "src/util.py")
    assert result.deleted == ("README.md/index.md",)
    assert (workspace / "README.md").read_text() == "# project\n"
    assert (workspace / "src" / "util.py").exists()


def test_a_restore_never_writes_through_a_link_that_leads_outside(
    store: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    shutil.rmtree(workspace / "src")
    store.snapshot("command", "rm -r src", agent_all=True)
    (workspace / "src").symlink_to(outside)  # someone swaps a link in

    result = store.restore(RestoreRequest(checkpoint=start.id))

    assert result.restored == ()
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["src"].startswith("it was changed outside Plansight")
    assert reasons["src/app.py"] == "its folder is a link that leads outside the workspace"
    assert list(outside.iterdir()) == []
    # Forced, the link itself goes (it is inside the workspace) and the folder comes back.
    forced = store.restore(RestoreRequest(checkpoint=start.id, force=True))
    assert forced.restored == ("src/app.py", "src/util.py")
    assert forced.deleted == ("src",)  # the link
    assert list(outside.iterdir()) == []
    assert (workspace / "src").is_dir() and not (workspace / "src").is_symlink()


def test_todo_ids_belong_to_their_session(store: CheckpointStore, workspace: Path) -> None:
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "README.md").write_text("session one\n")
    store.snapshot("edit", "Edited README.md", todo_id="1", agent=["README.md"])
    store.new_session()
    store.snapshot("itemStart", "#1 started", todo_id="1")
    assert len(store.checkpoints()) == 3  # newSession keeps the checkpoints
    result = store.restore(RestoreRequest(todo_id="1"))
    assert result.restored == ()
    assert (workspace / "README.md").read_text() == "session one\n"


def test_bad_requests_are_clear_errors(store: CheckpointStore) -> None:
    store.snapshot("runStart", "Run started")
    with pytest.raises(CheckpointNotFound, match="no checkpoint '99'"):
        store.restore(RestoreRequest(checkpoint="99"))
    with pytest.raises(CheckpointError, match="either a checkpoint or a todoId"):
        store.restore(RestoreRequest())
    with pytest.raises(CheckpointError, match="either a checkpoint or a todoId"):
        store.restore(RestoreRequest(checkpoint="1", todo_id="1"))
    assert len(store.checkpoints()) == 1  # a refused restore takes no checkpoint


def test_file_at_reads_a_file_as_a_checkpoint_holds_it(
    store: CheckpointStore, workspace: Path
) -> None:
    first = store.snapshot("runStart", "Run started")
    assert first is not None
    (workspace / "src" / "app.py").write_text("changed\n")
    store.snapshot("edit", "Edited", agent=["src/app.py"])
    assert store.file_at(first.id, "src/app.py") == b"print('hello')\n"
    assert store.file_at(first.id, "missing.py") is None


# ----- storage, reopening, refusal -------------------------------------------------------------


def test_reopening_keeps_the_checkpoints_and_their_ids(tmp_path: Path, workspace: Path) -> None:
    first = CheckpointStore(tmp_path / "cp", workspace)
    first.open()
    first.snapshot("runStart", "Run started")
    (workspace / "README.md").write_text("changed\n")
    first.snapshot("edit", "Edited", agent=["README.md"])
    first.new_session()
    first.close()
    again = CheckpointStore(tmp_path / "cp", workspace)
    again.open()
    assert [c.label for c in again.checkpoints()] == ["Run started", "Edited"]
    assert again.session == 2
    nothing = again.snapshot("runStart", "Run started", only_if_changed=True)
    assert nothing is None  # the index still mirrors the last checkpoint
    third = again.snapshot("runStart", "Run started")
    assert third is not None and third.id == "3"
    again.close()


def test_pruning_keeps_the_newest_and_deletes_what_only_old_ones_held(
    tmp_path: Path, workspace: Path
) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace, max_checkpoints=10)
    store.open()
    for i in range(25):
        (workspace / "README.md").write_text(f"version {i} " + "x" * 2000 + f"{i}\n")
        store.snapshot("edit", f"v{i}", agent=["README.md"])
    old_blob = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "rev-parse", f"{store.get('1').tree}:README.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    assert store.maintain() == 15

    assert [c.id for c in store.checkpoints()] == [str(i) for i in range(16, 26)]
    gone = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "cat-file", "-e", old_blob], check=False
    )
    assert gone.returncode != 0
    result = store.restore(RestoreRequest(checkpoint="16"))
    assert result.restored == ("README.md",)
    assert (workspace / "README.md").read_text().startswith("version 15 ")
    store.close()
    reopened = CheckpointStore(tmp_path / "cp", workspace, max_checkpoints=10)
    reopened.open()
    assert reopened.checkpoints()[0].id == "16"
    reopened.close()


def test_pruning_keeps_storage_under_its_byte_budget(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace, max_bytes=300_000)
    store.open()
    for i in range(30):
        (workspace / "noise.bin").write_bytes(os.urandom(20_000))  # incompressible
        store.snapshot("command", f"gen {i}", agent_all=True)
    assert store.storage_bytes() > 500_000
    store.maintain()
    assert store.storage_bytes() <= 300_000
    assert 10 <= len(store.checkpoints()) < 30
    assert store.checkpoints()[-1].id == "30"
    store.close()


def test_an_undo_whose_checkpoints_were_pruned_says_so(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace, max_checkpoints=10)
    store.open()
    store.snapshot("runStart", "Run started")
    (workspace / "README.md").write_text("step one\n")
    store.snapshot("edit", "Edited README.md", todo_id="1", agent=["README.md"])
    for i in range(9):
        (workspace / "src" / "app.py").write_text(f"{i}\n")
        store.snapshot("edit", "Edited app.py", todo_id="2", agent=["src/app.py"])
    store.maintain()
    result = store.restore(RestoreRequest(todo_id="1"))
    assert result.restored == ()
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("README.md", "the checkpoint from before it was pruned")
    ]
    store.close()


def test_a_second_store_on_the_same_folder_is_refused(tmp_path: Path, workspace: Path) -> None:
    first = CheckpointStore(tmp_path / "cp", workspace)
    first.open()
    second = CheckpointStore(tmp_path / "cp", workspace, lock_wait=0.2)
    with pytest.raises(CheckpointsUnavailable, match="another Plansight server"):
        second.open()
    first.close()
    second.open()
    second.close()


def test_without_git_checkpoints_are_off_and_say_why(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    store = CheckpointStore(tmp_path / "cp", workspace)
    with pytest.raises(CheckpointsUnavailable, match="git program was not found"):
        store.open()


def test_a_damaged_index_is_rebuilt(store: CheckpointStore, workspace: Path) -> None:
    store.snapshot("runStart", "Run started")
    (store.git_dir / "index").write_bytes(b"DIRC garbage")
    (workspace / "README.md").write_text("changed\n")
    checkpoint = store.snapshot("edit", "Edited", agent=["README.md"])
    assert checkpoint is not None
    assert "README.md" in checkpoint.changed
    assert store.restore(RestoreRequest(checkpoint="1")).restored == ("README.md",)


def test_folder_modes_are_not_needed_to_restore_a_read_only_file(
    store: CheckpointStore, workspace: Path
) -> None:
    target = workspace / "src" / "app.py"
    target.chmod(0o444)
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    target.chmod(0o644)
    target.write_text("changed\n")
    target.chmod(0o444)
    store.snapshot("edit", "Edited", agent=["src/app.py"])
    assert store.restore(RestoreRequest(checkpoint=start.id)).restored == ("src/app.py",)
    assert target.read_text() == "print('hello')\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_an_index_left_ahead_by_a_kill_is_recorded_by_the_next_snapshot(
    tmp_path: Path, workspace: Path
) -> None:
    store = CheckpointStore(tmp_path / "cp", workspace)
    store.open()
    store.snapshot("runStart", "Run started")
    # A kill after hashing a change into the index, before its checkpoint was recorded.
    (workspace / "README.md").write_text("changed by someone\n")
    subprocess.run(
        ["git", "update-index", "--add", "README.md"],
        cwd=workspace,
        env={
            "PATH": os.environ["PATH"],
            "GIT_DIR": str(store.git_dir),
            "GIT_WORK_TREE": str(workspace),
            "HOME": str(tmp_path),
        },
        check=True,
    )
    store.close()
    again = CheckpointStore(tmp_path / "cp", workspace)
    again.open()
    (workspace / "src" / "app.py").write_text("edited\n")

    edit = again.snapshot("edit", "Edited src/app.py", agent=["src/app.py"], only=["src/app.py"])

    assert edit is not None
    assert edit.changed == ("README.md", "src/app.py")  # looked at everything once
    assert edit.agent == ("src/app.py",)  # and the README change is not the agent's
    again.close()


def test_a_dry_run_changes_nothing_and_says_what_a_restore_would(
    store: CheckpointStore, workspace: Path
) -> None:
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    (workspace / "src" / "app.py").write_text("edited\n")
    store.snapshot("edit", "Edited", agent=["src/app.py"], only=["src/app.py"])
    before = tree_files(workspace)

    preview = store.restore(RestoreRequest(checkpoint=start.id, dry_run=True))

    assert preview.restored == ("src/app.py",) and preview.after is None
    assert tree_files(workspace) == before
    assert [c.kind for c in store.checkpoints()] == ["runStart", "edit"]  # nothing new changed
    assert store.restore(RestoreRequest(checkpoint=start.id)).restored == preview.restored


# ----- undo by step keeps the later steps' work (version 3) --------------------------------------

FAR = "".join(f"# filler line {n}\n" for n in range(12))  # keeps a() and b() apart for the merge


def edit(store: CheckpointStore, workspace: Path, todo_id: str, path: str, text: str) -> None:
    """Item `todo_id` starts (if it had not) and its edit writes `path`."""
    if store.item_start(todo_id) is None:
        store.snapshot("itemStart", f"#{todo_id} started", todo_id=todo_id)
    (workspace / path).write_text(text)
    store.snapshot("edit", f"Edited {path}", todo_id=todo_id, agent=[path])


def two_functions(a: str, b: str) -> str:
    return f"def a():\n    return {a}\n{FAR}def b():\n    return {b}\n"


def test_undoing_a_step_merges_its_change_out_and_keeps_a_later_steps_change_to_the_file(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "funcs.py").write_text(two_functions("1", "1"))
    store.snapshot("runStart", "Run started")
    edit(store, workspace, "1", "funcs.py", two_functions("'a by #1'", "1"))
    edit(store, workspace, "2", "funcs.py", two_functions("'a by #1'", "'b by #2'"))

    result = store.restore(RestoreRequest(todo_id="1"))

    assert (workspace / "funcs.py").read_text() == two_functions("1", "'b by #2'")
    assert (result.restored, result.deleted, result.skipped) == (("funcs.py",), (), ())
    assert result.also_undone == ()
    assert "alsoUndone" not in result.to_wire()
    # The file as merged is what the restore's checkpoint holds: undoing the undo is exact.
    assert result.after is not None
    assert store.file_at(result.after.id, "funcs.py") == two_functions("1", "'b by #2'").encode()
    store.restore(RestoreRequest(checkpoint=result.before.id))
    assert (workspace / "funcs.py").read_text() == two_functions("'a by #1'", "'b by #2'")


def test_a_step_whose_change_overlaps_a_later_one_is_skipped_naming_it_unless_forced(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "same.py").write_text("x = 0\n")
    store.snapshot("runStart", "Run started")
    edit(store, workspace, "1", "same.py", "x = 1\n")
    edit(store, workspace, "2", "same.py", "x = 2\n")

    result = store.restore(RestoreRequest(todo_id="1"))

    assert (workspace / "same.py").read_text() == "x = 2\n"
    assert (result.restored, result.deleted, result.also_undone) == ((), (), ())
    assert [s.path for s in result.skipped] == ["same.py"]
    assert result.skipped[0].reason.startswith("overlaps the changes of #2")

    forced = store.restore(RestoreRequest(todo_id="1", force=True))

    assert (workspace / "same.py").read_text() == "x = 0\n"
    assert forced.restored == ("same.py",) and forced.skipped == ()
    assert forced.to_wire()["alsoUndone"] == [{"path": "same.py", "todoIds": ["2"]}]


def test_a_file_a_step_created_and_a_later_step_changed_is_not_deleted_unless_forced(
    store: CheckpointStore, workspace: Path
) -> None:
    """The scenario a user hit: #1 writes hello.py, #3 adds a docstring to it, undo #1."""
    store.snapshot("runStart", "Run started")
    edit(store, workspace, "1", "hello.py", "print('hello')\n")
    edit(store, workspace, "2", "other.py", "pass\n")
    edit(store, workspace, "3", "hello.py", '"""Says hello."""\nprint(\'hello\')\n')

    result = store.restore(RestoreRequest(todo_id="1"))

    assert (workspace / "hello.py").read_text() == '"""Says hello."""\nprint(\'hello\')\n'
    assert (result.restored, result.deleted) == ((), ())
    assert [(s.path, s.reason.split(" (")[0]) for s in result.skipped] == [
        ("hello.py", "overlaps the changes of #3")
    ]
    assert "with force to delete it" in result.skipped[0].reason

    forced = store.restore(RestoreRequest(todo_id="1", force=True))

    assert not (workspace / "hello.py").exists()
    assert (workspace / "other.py").read_text() == "pass\n"  # #2's file: not #1's business
    assert forced.to_wire() == {
        "restored": [],
        "deleted": ["hello.py"],
        "skipped": [],
        "alsoUndone": [{"path": "hello.py", "todoIds": ["3"]}],
    }


def test_undoing_a_step_deletes_what_it_created_alone_and_brings_back_what_it_deleted(
    store: CheckpointStore, workspace: Path
) -> None:
    store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "made.py").write_text("made = True\n")
    (workspace / "README.md").unlink()
    store.snapshot("command", "make", todo_id="1", agent_all=True)
    edit(store, workspace, "2", "src/app.py", "print('step two')\n")

    result = store.restore(RestoreRequest(todo_id="1"))

    assert not (workspace / "made.py").exists()
    assert (workspace / "README.md").read_text() == "# project\n"
    assert (workspace / "src" / "app.py").read_text() == "print('step two')\n"
    assert result.to_wire() == {"restored": ["README.md"], "deleted": ["made.py"], "skipped": []}


def test_a_dry_run_of_a_step_undo_answers_the_same_and_changes_nothing(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "funcs.py").write_text(two_functions("1", "1"))
    (workspace / "same.py").write_text("x = 0\n")
    store.snapshot("runStart", "Run started")
    store.snapshot("itemStart", "#1 started", todo_id="1")
    (workspace / "funcs.py").write_text(two_functions("'a by #1'", "1"))
    (workspace / "same.py").write_text("x = 1\n")
    (workspace / "hello.py").write_text("print('hello')\n")
    (workspace / "made.py").write_text("made = True\n")
    store.snapshot("command", "gen", todo_id="1", agent_all=True)
    edit(store, workspace, "2", "funcs.py", two_functions("'a by #1'", "'b by #2'"))
    edit(store, workspace, "2", "same.py", "x = 2\n")
    edit(store, workspace, "3", "hello.py", '"""Says hello."""\nprint(\'hello\')\n')
    on_disk = tree_files(workspace)
    taken = len(store.checkpoints())

    for force in (False, True):
        preview = store.restore(RestoreRequest(todo_id="1", force=force, dry_run=True))
        assert tree_files(workspace) == on_disk
        assert len(store.checkpoints()) == taken
        done = store.restore(RestoreRequest(todo_id="1", force=force))
        assert done.to_wire() == preview.to_wire()
        if not force:
            assert done.to_wire()["restored"] == ["funcs.py"]
            assert done.to_wire()["deleted"] == ["made.py"]
            assert [s["path"] for s in done.to_wire()["skipped"]] == ["hello.py", "same.py"]
            store.restore(RestoreRequest(checkpoint=done.before.id))  # back, to force it
            on_disk, taken = tree_files(workspace), len(store.checkpoints())
    assert done.to_wire()["alsoUndone"] == [
        {"path": "hello.py", "todoIds": ["3"]},
        {"path": "same.py", "todoIds": ["2"]},
    ]
    assert not (workspace / "hello.py").exists() and not (workspace / "made.py").exists()
    assert (workspace / "same.py").read_text() == "x = 0\n"


def test_a_step_taken_up_again_after_a_later_one_changed_its_file_is_an_overlap(
    store: CheckpointStore, workspace: Path
) -> None:
    """#1, then #2, then #1 again change funcs.py: #2's change lies inside #1's, and undoing
    #1 would lose it without a word; so it is an overlap, named."""
    (workspace / "funcs.py").write_text(two_functions("1", "1"))
    store.snapshot("runStart", "Run started")
    edit(store, workspace, "1", "funcs.py", two_functions("'a by #1'", "1"))
    edit(store, workspace, "2", "funcs.py", two_functions("'a by #1'", "'b by #2'"))
    edit(store, workspace, "1", "funcs.py", two_functions("'a again'", "'b by #2'"))

    result = store.restore(RestoreRequest(todo_id="1"))

    assert (workspace / "funcs.py").read_text() == two_functions("'a again'", "'b by #2'")
    assert [(s.path, s.reason.split(" (")[0]) for s in result.skipped] == [
        ("funcs.py", "overlaps the changes of #2")
    ]
    forced = store.restore(RestoreRequest(todo_id="1", force=True))
    assert (workspace / "funcs.py").read_text() == two_functions("1", "1")
    assert forced.to_wire()["alsoUndone"] == [{"path": "funcs.py", "todoIds": ["2"]}]
