"""The session's view of its workspace's changes (session/changes.py): someone else's change is
told to the model, the editor and the checkpoints; the agent's own restores and commands are
told to nobody. Real files and a real watcher; the checkpoints are a recording stand-in."""

from __future__ import annotations

from pathlib import Path

from plansight.engine.events import Event, EventBus, FilesChanged
from plansight.engine.loop import Notices
from plansight.session.changes import WorkspaceChanges
from plansight.tools.context import ChangeRecorder, NoRecorder
from plansight.workspace.access import Workspace

from conftest import wait_until


class HeardCheckpoints:
    """What the checkpoints would hear."""

    def __init__(self) -> None:
        self.outside: list[str] = []
        self.told_watched = False
        self.recorder: ChangeRecorder = NoRecorder()

    def watched(self) -> None:
        self.told_watched = True

    def outside_changed(self, paths: list[str]) -> None:
        self.outside += paths


def changes_of(root: Path) -> tuple[WorkspaceChanges, HeardCheckpoints, list[Event]]:
    events = EventBus()
    heard: list[Event] = []
    events.subscribe(heard.append)
    changes = WorkspaceChanges(
        root, workspace=Workspace(root), notices=Notices(changed_files=set()), events=events
    )
    checkpoints = HeardCheckpoints()
    changes.connect(checkpoints)
    return changes, checkpoints, heard


def files_changed(heard: list[Event]) -> list[str]:
    return [path for event in heard if isinstance(event, FilesChanged) for path in event.paths]


def test_someone_elses_change_reaches_the_model_the_editor_and_the_checkpoints(
    tmp_path: Path,
) -> None:
    changes, checkpoints, heard = changes_of(tmp_path)
    (tmp_path / "theirs.py").write_text("someone else's\n")
    changes.files_changed(["theirs.py"])
    assert files_changed(heard) == ["theirs.py"]
    assert changes.notices.changed_files == {"theirs.py"}
    assert checkpoints.outside == ["theirs.py"]


def test_the_agents_own_restore_is_told_to_nobody_until_someone_changes_the_file(
    tmp_path: Path,
) -> None:
    changes, checkpoints, heard = changes_of(tmp_path)
    (tmp_path / "restored.py").write_text("as the restore left it\n")
    changes.echoes.left_as_they_are(["restored.py"])
    changes.files_changed(["restored.py"])
    assert (files_changed(heard), changes.notices.changed_files, checkpoints.outside) == (
        [],
        set(),
        [],
    )
    (tmp_path / "restored.py").write_text("then changed by someone else\n")
    changes.files_changed(["restored.py"])
    assert files_changed(heard) == ["restored.py"]
    assert checkpoints.outside == ["restored.py"]


def test_reports_held_during_a_restore_are_judged_when_it_ends(tmp_path: Path) -> None:
    changes, _, heard = changes_of(tmp_path)
    changes.echoes.hold()
    (tmp_path / "theirs.py").write_text("someone else's, during the restore\n")
    changes.files_changed(["theirs.py"])
    assert files_changed(heard) == []  # not yet: the restore may have written it
    changes.echoes.release()
    assert files_changed(heard) == ["theirs.py"]


async def test_watching_reports_others_changes_and_tells_the_checkpoints_it_watches(
    tmp_path: Path,
) -> None:
    changes, checkpoints, heard = changes_of(tmp_path)
    assert not changes.command_echoes.watched  # no watcher: commands scan for themselves
    changes.watch()
    watcher = changes.watcher
    assert watcher is not None
    assert checkpoints.told_watched and changes.command_echoes.watched
    try:
        await wait_until(watcher.watching.is_set, "the watcher is watching")
        (tmp_path / "theirs.py").write_text("written by someone else\n")
        await wait_until(lambda: "theirs.py" in files_changed(heard), "someone else's change")
        assert "theirs.py" in checkpoints.outside
    finally:
        await changes.settled()
        await changes.stop_watching()
    assert changes.watcher is None
