"""The session's view of changes to its workspace: the agent's own told apart from others'.

`WorkspaceChanges` owns the session's watcher (started by `watch`, stopped by `stop_watching`)
and the echo detection (workspace/echoes.py): the watcher's reports go to `files_changed`; the
agent's own changes (its restores and commands) only make their files stale for the next edit,
while a change made by someone else is also told to the model (at its next turn, through the
notices), to the editor (a `FilesChanged` event) and to the checkpoints (an `outside`
checkpoint before the agent's next change). `command_echoes` is the session's change recorder:
it finds what each command changed, once a watcher reports changes, and tells the checkpoints.

The checkpoints need the echoes at their construction and this module needs the checkpoints, so
they are connected in a second step, `connect`, before the session starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from plansight.engine.events import EventBus, FilesChanged
from plansight.engine.loop import Notices
from plansight.tools.context import ChangeRecorder, NoRecorder
from plansight.workspace.access import Workspace
from plansight.workspace.echoes import CommandEchoes, Echoes
from plansight.workspace.watcher import WorkspaceWatcher


class ChangeCheckpoints(Protocol):
    """What the checkpoints hear of the workspace's changes (checkpoints/facade.py)."""

    @property
    def recorder(self) -> ChangeRecorder:
        """What the agent's edits and commands tell of the files they change."""

    def watched(self) -> None:
        """A watcher reports changes from now on."""

    def outside_changed(self, paths: list[str]) -> None:
        """Someone else than the agent changed these files."""


class WorkspaceChanges:
    def __init__(
        self, root: Path, *, workspace: Workspace, notices: Notices, events: EventBus
    ) -> None:
        self.root = root
        self.workspace = workspace
        self.notices = notices
        self.events = events
        # What the agent's restores and commands left on disk, so that the watcher's reports
        # of them are not told to the model (or the editor) as someone else's changes.
        self.echoes = Echoes(root, self._judge, workspace.state_folders)
        self.command_echoes = CommandEchoes(self.echoes, NoRecorder())
        self.checkpoints: ChangeCheckpoints | None = None
        self.watcher: WorkspaceWatcher | None = None

    def connect(self, checkpoints: ChangeCheckpoints) -> None:
        """Tell `checkpoints` of the changes made by others and of the agent's commands."""
        self.checkpoints = checkpoints
        self.command_echoes.inner = checkpoints.recorder

    def watch(self) -> None:
        """Start the watcher (on the event loop)."""
        self.watcher = WorkspaceWatcher(
            self.root, self.files_changed, skipped=self.workspace.state_folders
        )
        self.watcher.start()
        # The agent's commands' changes are found from now on, to be told apart.
        self.command_echoes.watched = True
        if self.checkpoints is not None:
            self.checkpoints.watched()

    def files_changed(self, paths: list[str]) -> None:
        """The watcher's report of changed files (relative): stale for edits; the model, the
        editor and the checkpoints hear of those changed by someone else than the agent."""
        self.echoes.report(paths)  # judged by `_judge`, after a restore or command

    def _judge(self, own: list[str], others: list[str]) -> None:
        # The agent's restores and commands: read again before an edit, but nobody else's.
        self.workspace.mark_stale(own)
        external = self.workspace.mark_stale(others)  # drops the echoes of our own writes
        if not external:
            return
        if self.checkpoints is not None:
            self.checkpoints.outside_changed(external)
        self.notices.changed_files.update(external)
        self.events.emit(FilesChanged(tuple(external)))

    async def settled(self) -> None:
        """Once the last command's end scan is done (a stopped command's too)."""
        await self.command_echoes.settled()

    async def stop_watching(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()
            self.watcher = None
