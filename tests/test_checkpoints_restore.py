"""Working out and carrying out a restore (checkpoints/restore.py) over a real shadow
repository and workspace: which files a plan item changed and from which checkpoint, what
differs, what is refused and why, and putting it back with a journal that lasts only while it
runs. (Restores through the store, end to end: test_checkpoints_store.py.)"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from plansight.checkpoints.git import Git, find_git
from plansight.checkpoints.manifest import Checkpoint
from plansight.checkpoints.repository import ShadowRepository
from plansight.checkpoints.restore import (
    Change,
    Planner,
    Skipped,
    apply,
    read_journal,
    selector,
    step_baselines,
    write_journal,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")


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
    git = Git(exe, tmp_path / "shadow.git", workspace, home)
    repository = ShadowRepository(git, tmp_path / "hooks")
    repository.create()
    repository.configure([])
    return repository


class Checkpoints:
    """Checkpoints taken of the workspace as it is, one after the other."""

    def __init__(self, repo: ShadowRepository, root: Path) -> None:
        self.repo = repo
        self.root = root
        self.taken: list[Checkpoint] = []

    def take(self, kind: Any = "edit", **fields: Any) -> Checkpoint:
        status = self.repo.status()
        present = [s.path for s in status if (self.root / os.fsdecode(s.path)).exists()]
        gone = [s.path for s in status if not (self.root / os.fsdecode(s.path)).exists()]
        self.repo.stage(present, gone)
        tree = self.repo.write_tree()
        seq = len(self.taken) + 1
        commit = self.repo.commit(tree, f"checkpoint {seq}")
        self.repo.point(commit, f"refs/checkpoints/{seq}")
        fields.setdefault("session", 1)
        checkpoint = Checkpoint(
            seq, commit, tree, kind, f"#{seq}", "2026-12-01T00:00:00Z", **fields
        )
        self.taken.append(checkpoint)
        return checkpoint


def plain(seq: int, kind: Any = "edit", **fields: Any) -> Checkpoint:
    """A checkpoint for the rules that read only its fields."""
    fields.setdefault("session", 1)
    return Checkpoint(seq, f"c{seq}", f"t{seq}", kind, f"#{seq}", "2026-12-01T00:00:00Z", **fields)


# ----- which files, from which checkpoint ---------------------------------------------------------


def test_a_steps_baselines_are_the_checkpoints_before_it_first_changed_each_file() -> None:
    checkpoints = [
        plain(1, "runStart"),
        plain(2, "edit", todo_id="1", agent=("a.py",)),
        plain(3, "command", todo_id="1", agent=("a.py", "b.py")),
        plain(4, "outside", todo_id="1", changed=("c.py",)),  # nobody's step
        plain(5, "edit", todo_id="2", agent=("d.py",)),  # another item
        plain(6, "edit", todo_id="1", session=2, agent=("e.py",)),  # another conversation
        plain(7, "edit", todo_id="1", agent=("f.py",)),
    ]
    baselines = step_baselines(checkpoints, 1, "1")
    assert {path: b.seq if b else None for path, b in baselines.items()} == {
        "a.py": 1,
        "b.py": 2,
        "f.py": 6,
    }
    first = step_baselines([plain(1, "edit", todo_id="1", agent=("a.py",))], 1, "1")
    assert first == {"a.py": None}  # the checkpoint before it is gone (pruned)
    assert step_baselines(checkpoints, 1, "9") == {}


def test_a_selection_is_its_paths_and_everything_inside_them() -> None:
    everything = selector(None)
    assert everything("any/path.py")
    assert selector([""])("x") and selector(["."])("x") and selector(["/"])("x")
    src = selector(["src/", "README.md"])
    assert src("src") and src("src/a.py") and src("src/deep/b.py") and src("README.md")
    assert not src("srcfile.py") and not src("docs/README.md") and not src("README.md.bak")


# ----- what differs, what is refused --------------------------------------------------------------


def test_the_changes_are_what_differs_from_the_baseline(
    repo: ShadowRepository, workspace: Path
) -> None:
    taken = Checkpoints(repo, workspace)
    (workspace / "edit.py").write_text("v1\n")
    (workspace / "deleted.py").write_text("was here\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "other.md").write_text("v1\n")
    baseline = taken.take("runStart")
    (workspace / "edit.py").write_text("v2\n")
    (workspace / "deleted.py").unlink()
    (workspace / "created.py").write_text("new\n")
    (workspace / "docs" / "other.md").write_text("v2\n")
    before = taken.take("beforeRestore")
    planner = Planner(repo, taken.taken, workspace)
    changes, skipped = planner.changes(
        before, {1: (baseline, None)}, selector(["edit.py", "deleted.py", "created.py"])
    )
    assert skipped == []
    by_path = {c.path: c for c in changes}
    assert set(by_path) == {"edit.py", "deleted.py", "created.py"}  # docs/ not selected
    assert (by_path["created.py"].current_mode, by_path["created.py"].target_mode) == (0o100644, 0)
    assert (by_path["deleted.py"].current_mode, by_path["deleted.py"].target_mode) == (0, 0o100644)
    assert all(c.baseline == baseline for c in changes)
    exact, _ = planner.changes(before, {1: (baseline, ["edit.py"])}, selector(None))
    assert [c.path for c in exact] == ["edit.py"]


def test_files_the_checkpoints_do_not_hold_are_skipped_saying_why(
    repo: ShadowRepository, workspace: Path
) -> None:
    empty = repo.write_tree()  # the diff needs real trees: both empty here
    baseline = replace(plain(1, "runStart", uncaptured={"big.bin": "large"}), tree=empty)
    before = replace(plain(2, "beforeRestore", uncaptured={"nested": "repository"}), tree=empty)
    planner = Planner(repo, [baseline, before], workspace)
    changes, skipped = planner.changes(before, {1: (baseline, None)}, selector(None))
    assert changes == []
    assert skipped == [
        Skipped(
            "big.bin", "checkpoint 1 does not hold it: it is larger than the checkpoint size limit"
        ),
        Skipped("nested", "checkpoints do not hold it now: it is a git repository of its own"),
    ]
    _, asked = planner.changes(before, {1: (baseline, ["big.bin"])}, selector(None))
    assert [s.path for s in asked] == ["big.bin"]


def test_a_restore_refuses_unsaved_files_and_unless_forced_others_changes(
    tmp_path: Path, repo: ShadowRepository
) -> None:
    root = tmp_path / "ws"
    checkpoints = [
        plain(1, "runStart"),
        plain(2, "edit", changed=("mine.py",), agent=("mine.py",)),
        plain(3, "outside", changed=("theirs.py",)),
        plain(4, "beforeRestore"),
    ]
    planner = Planner(repo, checkpoints, root)
    before = checkpoints[-1]

    def change(path: str, current_mode: int = 0o100644) -> Change:
        return Change(path, current_mode, 0o100644, "sha", checkpoints[0])

    def unsaved(path: str) -> bool:
        return path == "open.py"

    assert planner.refusal(change("mine.py"), before, False, unsaved) is None
    theirs = planner.refusal(change("theirs.py"), before, False, unsaved)
    # Named after the checkpoint before the one that saw the change (2), not the baseline (1).
    assert theirs is not None and "changed outside Plansight after checkpoint 2" in theirs
    assert planner.refusal(change("theirs.py"), before, True, unsaved) is None
    for force in (False, True):
        assert planner.refusal(change("open.py"), before, force, unsaved) == (
            "it has unsaved changes in the editor"
        )
    # Changed outside before the baseline: the baseline has it as it was then.
    later = Change("theirs.py", 0o100644, 0o100644, "sha", checkpoints[2])
    assert planner.refusal(later, before, False, unsaved) is None
    # A file on disk that no checkpoint holds (ignored, say): writing it could not be undone.
    (root / "ignored.log").write_text("the user's\n")
    unheld = planner.refusal(change("ignored.log", current_mode=0), before, False, unsaved)
    assert unheld is not None and "restore with force to overwrite it" in unheld
    assert planner.refusal(change("ignored.log", current_mode=0), before, True, unsaved) is None


# ----- putting back -------------------------------------------------------------------------------


def test_apply_deletes_and_writes_and_leaves_no_journal(
    repo: ShadowRepository, workspace: Path, tmp_path: Path
) -> None:
    taken = Checkpoints(repo, workspace)
    (workspace / "keep.txt").write_text("original\n")
    baseline = taken.take("runStart")
    (workspace / "keep.txt").write_text("changed\n")
    (workspace / "made" / "deep").mkdir(parents=True)
    (workspace / "made" / "deep" / "new.txt").write_text("new\n")
    before = taken.take("beforeRestore")
    planner = Planner(repo, taken.taken, workspace)
    changes, _ = planner.changes(before, {1: (baseline, None)}, selector(None))
    journal = tmp_path / "restore.journal"
    restored, skipped = apply(workspace, repo, changes, journal)
    assert sorted(restored) == ["keep.txt", "made/deep/new.txt"] and skipped == []
    assert (workspace / "keep.txt").read_text() == "original\n"
    assert not (workspace / "made").exists()  # the folders the deletion emptied go too
    assert not journal.exists() and read_journal(journal) is None


def test_a_file_that_cannot_be_put_back_is_skipped_and_the_rest_restored(
    repo: ShadowRepository, workspace: Path, tmp_path: Path
) -> None:
    taken = Checkpoints(repo, workspace)
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    baseline = taken.take("runStart")
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").mkdir()  # a folder with files where a file was
    (workspace / "a.txt" / "inside").write_text("x\n")
    (workspace / "b.txt").write_text("changed\n")
    before = taken.take("beforeRestore")
    changes, _ = Planner(repo, taken.taken, workspace).changes(
        before, {1: (baseline, None)}, selector(None)
    )
    restored, skipped = apply(
        workspace, repo, [c for c in changes if "/" not in c.path], tmp_path / "j"
    )
    assert restored == ["b.txt"]
    assert skipped == [Skipped("a.txt", "a folder with files in it is in the way")]
    assert (workspace / "a.txt" / "inside").read_text() == "x\n"


def test_nothing_to_put_back_writes_no_journal(
    repo: ShadowRepository, workspace: Path, tmp_path: Path
) -> None:
    journal = tmp_path / "j"
    assert apply(workspace, repo, [], journal) == ([], [])
    assert not journal.exists()


def test_a_journal_names_the_files_of_a_restore_cut_short(tmp_path: Path) -> None:
    journal = tmp_path / "restore.journal"
    assert read_journal(journal) is None
    write_journal(journal, ["a.txt", "dir/é.txt"])
    assert read_journal(journal) == ["a.txt", "dir/é.txt"]
    assert json.loads(journal.read_text())["pid"] == os.getpid()
    assert list(tmp_path.iterdir()) == [journal]  # no pending copy left
    for damaged in ("{not json", '{"pid": 1}', '["a"]'):
        journal.write_text(damaged)
        assert read_journal(journal) == []  # cut short, but which files is unknown
