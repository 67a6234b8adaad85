"""The watcher's reports of the agent's own changes, told apart from everyone else's.

The watcher reports every change of the workspace, the agent's own included, and late (its
latency, longer on a busy machine). The agent's edits are told apart by the workspace (its
write stamps). What its restores and its commands changed is kept here (`Echoes`): each such
file's or folder's stamp as the agent left it (None: removed), and so are the folders above
each file it edited or restored (a write into folders that did not exist makes them). A
report of that file while it still has that stamp is the agent's own echo; once the stamp
differs, the file was changed again, by someone else.

While a restore or a command runs, the watcher's reports are held, and judged once what it
changed is known. What a command changed is the difference between two scans of the workspace
under the watcher's rules (what it would report: workspace/scan.py), one just before the
command and one after it ends (however it ends: exit, timeout, cancel). A change someone else
made while the command ran is counted as the command's: nothing tells them apart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from plansight.workspace.scan import Stamp, WorkspaceFilter, scan, stamp_of

log = logging.getLogger(__name__)


class ChangeRecorder(Protocol):
    """Told when the agent is about to change files and when it did (checkpoints listen)."""

    async def before_edit(self, path: str) -> None:
        """Called before an accepted edit of `path` (relative to the root) is written."""

    def edited(self, path: str) -> None:
        """After an edit was written (`path` relative to the root)."""

    async def before_command(self) -> None:
        """Called before an approved command runs."""

    def command_ran(self, command: str) -> None:
        """After a command ended (or was stopped): it may have changed any file."""

    def made_and_removed(self, paths: list[str]) -> None:
        """Paths Plansight made for a command and removed after it (the sandbox's placeholders
        at absent control paths): the watcher may report them, as the agent's own."""

    async def settled(self) -> None:
        """Returns once what was told so far is recorded (the run ends after that)."""


class NoRecorder:
    """Nothing listens."""

    async def before_edit(self, path: str) -> None:
        return None

    def edited(self, path: str) -> None:
        return None

    async def before_command(self) -> None:
        return None

    def command_ran(self, command: str) -> None:
        return None

    def made_and_removed(self, paths: list[str]) -> None:
        return None

    async def settled(self) -> None:
        return None


# Kept at most (the oldest go first): a build writing a whole tree of files is not a leak.
MAX_ECHOES = 100_000


class Echoes:
    """The agent's own changes the watcher may still report, and the reports held meanwhile.

    `judge(own, others)` gets each report split in two, once nothing holds it back.
    """

    def __init__(
        self,
        root: Path,
        judge: Callable[[list[str], list[str]], None],
        skipped: Iterable[str] = (),
    ) -> None:
        """`skipped`: folders (relative) that commands' scans leave out: Plansight's state."""
        self.root = root
        self.skipped = tuple(skipped)
        self._judge = judge
        self._left: dict[str, Stamp | None] = {}
        self._holds = 0
        self._held: list[str] = []

    def report(self, paths: Iterable[str]) -> None:
        """Files (or folders) that changed, relative: judged now, or when the hold ends."""
        if self._holds:
            self._held.extend(paths)
            return
        own: list[str] = []
        others: list[str] = []
        for path in dict.fromkeys(paths):
            (own if self._is_echo(path) else others).append(path)
        self._judge(own, others)

    def hold(self) -> None:
        """Hold the reports until `release` (a restore or a command is changing files)."""
        self._holds += 1

    def release(self) -> None:
        self._holds -= 1
        if self._holds == 0 and self._held:
            held, self._held = self._held, []
            self.report(held)

    def left(self, stamps: Mapping[str, Stamp | None]) -> None:
        """The agent left these files so (its restore, its command)."""
        for path, stamp in stamps.items():
            self._left.pop(path, None)  # moved to the end: the newest
            self._left[path] = stamp
        while len(self._left) > MAX_ECHOES:
            del self._left[next(iter(self._left))]

    def left_as_they_are(self, paths: Iterable[str]) -> None:
        """These files (and the folders above them, which writing them may have made) are as
        the agent left them."""
        paths = list(paths)
        folders = dict.fromkeys(f for path in paths for f in folders_above(path))
        self.left({path: stamp_of(self.root / path) for path in [*folders, *paths]})

    def left_folders_above(self, path: str) -> None:
        """The folders above a file the agent wrote are as it left them (it may have made
        them); the file itself is told apart by the workspace's write stamps."""
        self.left({folder: stamp_of(self.root / folder) for folder in folders_above(path)})

    def _is_echo(self, path: str) -> bool:
        if path not in self._left:
            return False
        if stamp_of(self.root / path) == self._left[path]:
            return True
        del self._left[path]  # changed again since: someone else's change
        return False


class CommandEchoes:
    """The session's `ChangeRecorder`: tells `inner` (the checkpointer, or nothing), and, once
    a watcher reports changes (`watched`), finds what each command changed and tells `echoes`.
    """

    def __init__(self, echoes: Echoes, inner: ChangeRecorder) -> None:
        self.echoes = echoes
        self.inner = inner
        self.watched = False  # without a watcher, nothing reports a command's changes
        self._before: tuple[WorkspaceFilter, dict[str, Stamp]] | None = None
        self._judging: asyncio.Task[None] | None = None

    async def before_edit(self, path: str) -> None:
        await self.inner.before_edit(path)

    def edited(self, path: str) -> None:
        self.inner.edited(path)
        if self.watched:
            # The file is known to be the agent's by the workspace's write stamps; the folders
            # above it are not, and a write makes those missing: the watcher reports them too.
            self.echoes.left_folders_above(path)

    async def before_command(self) -> None:
        await self._judged()  # the previous command's end scan: this one's start follows it
        if not self.watched:
            await self.inner.before_command()
            return
        self.echoes.hold()
        try:
            # Beside the checkpointer's wait (it reads files, this only looks at their stamps).
            _, (keep, found) = await asyncio.gather(
                self.inner.before_command(),
                asyncio.to_thread(_first_scan, self.echoes.root, self.echoes.skipped),
            )
        except BaseException:  # cancelled or failed: the command will not run
            self.echoes.release()
            raise
        self._before = (keep, found)

    def made_and_removed(self, paths: list[str]) -> None:
        self.inner.made_and_removed(paths)
        if self.watched:
            self.echoes.left(dict.fromkeys(paths))  # gone, as the agent left them

    def command_ran(self, command: str) -> None:
        self.inner.command_ran(command)
        before, self._before = self._before, None
        if before is not None:
            self._judging = asyncio.ensure_future(self._judge(*before))

    async def settled(self) -> None:
        await self._judged()
        await self.inner.settled()

    async def _judged(self) -> None:
        if self._judging is not None:
            await asyncio.shield(asyncio.wait([self._judging]))

    async def _judge(self, keep: WorkspaceFilter, before: dict[str, Stamp]) -> None:
        try:
            after = await asyncio.to_thread(scan, self.echoes.root, keep, folders=True)
            changed = {
                path: after.get(path)
                for path in before.keys() | after.keys()
                if before.get(path) != after.get(path)
            }
            self.echoes.left(changed)
            # Judged with the held reports: own (stale for edits), unless changed since.
            self.echoes.report(sorted(changed))
        except Exception:
            log.exception("could not tell what a command changed")
        finally:
            self.echoes.release()


def folders_above(path: str) -> list[str]:
    """The folders between the workspace root and a file's relative path, outermost first."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]


def _first_scan(root: Path, skipped: Iterable[str]) -> tuple[WorkspaceFilter, dict[str, Stamp]]:
    """A filter of its own for a command, the same for both scans (the ignore rules as the
    command found them), and the scan before it."""
    keep = WorkspaceFilter(root, skipped=skipped)
    return keep, scan(root, keep, folders=True)
