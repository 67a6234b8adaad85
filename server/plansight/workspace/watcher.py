"""Watches the workspace for changes made outside the agent (watchfiles), reported in batches.

Nothing may be lost: watchfiles gives up for good on some events, e.g. one for a file whose name
is not UTF-8, and drops the whole batch it was collecting (a real edit of another file at the
same moment included). So the watcher keeps a snapshot of what it last reported (each file's
inode, size, mtime and ctime), and when watchfiles fails it starts a new one and compares the
workspace with the snapshot: what changed meanwhile is reported as one batch, as a recrawl
after an overflow does in watchman. What it reports on, and how the workspace is scanned for
the snapshot, is workspace/scan.py's (the ignore rules included).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

# IGNORED_DIRS: named here too for the session's clean-up of temporary files.
from plansight.workspace.scan import IGNORED_DIRS as IGNORED_DIRS
from plansight.workspace.scan import Stamp, WorkspaceFilter, file_stamp, scan

if TYPE_CHECKING:
    from watchfiles import Change

# watchfiles pulls in anyio (about 25 ms of a start of 300 ms): it is imported once the watcher
# starts, after `initialize` is answered.

log = logging.getLogger(__name__)

WATCHING = "for changes made outside the agent"  # logged (to the editor too) once watching
RESTART_PAUSE = 0.2
MAX_RESTART_PAUSE = 30.0
# A watch that ran this long before it failed starts the pause again from RESTART_PAUSE: the
# pause grows only for failures in a row.
STEADY = 2.0
# watchfiles' error for a name that is not UTF-8 (it hands over str paths only).
_UNDECODABLE = re.compile(r'Unable to decode path "(.*)" to string')
# How much earlier than a change its file's ctime may say (the kernel's coarse clock, a tick of
# 4 ms here) plus watchfiles' own handling of a batch before handing it over.
CLOCK_SLACK_NS = 50_000_000


@dataclass
class Snapshot:
    """What the watcher has reported: each file's stamp as last seen.

    A stamp taken just after a change may show a later change too, one that is still in the
    watcher's next batch: those files are `unsure` (reported again should that batch be lost)
    until the next batch shows whether they changed again.
    """

    files: dict[str, Stamp] = field(default_factory=dict)
    unsure: set[str] = field(default_factory=set)

    @classmethod
    def take(cls, root: Path, keep: WorkspaceFilter, since_ns: int) -> Snapshot:
        """The workspace as it is, watchfiles having watched it since `since_ns`."""
        files = scan(root, keep)
        return cls(files, _changed_after(files, since_ns))

    def update(
        self, root: Path, keep: WorkspaceFilter, paths: Iterable[str], since_ns: int
    ) -> list[str]:
        """Bring the reported `paths` (files or folders, relative) up to date; `since_ns`: when
        watchfiles handed over the batch (and began collecting the next one). Returns the
        files found in new folders that watchfiles did not name (made before it watched the
        folder)."""
        named = set(paths)
        before = set(self.files)
        seen: dict[str, Stamp] = {}
        for rel in named:
            try:
                st = os.lstat(root / rel)
            except OSError:
                st = None
            if st is not None and not stat.S_ISDIR(st.st_mode):
                seen[rel] = file_stamp(st)
                continue
            if self.files.pop(rel, None) is None:  # a folder, or a file we never saw
                prefix = rel + "/"
                for known in [k for k in self.files if k.startswith(prefix)]:
                    del self.files[known]
            parts = tuple(rel.split("/"))
            if st is not None and keep.keeps_entry(str(root / rel), parts, True):
                seen.update(scan(root, keep, rel))  # a new or renamed folder: what it holds
        unnamed = sorted(seen.keys() - before - named)
        self.files.update(seen)
        # Files of the batch before this one that did not change again are sure now.
        self.unsure = _changed_after(seen, since_ns)
        return unnamed

    def changes_since(self, now: dict[str, Stamp]) -> list[str]:
        """What differs between the snapshot and the workspace `now`."""
        changed = (self.files.keys() - now.keys()) | (self.unsure & now.keys())
        changed.update(rel for rel, st in now.items() if self.files.get(rel) != st)
        return sorted(changed)


def _changed_after(files: dict[str, Stamp], since_ns: int) -> set[str]:
    return {rel for rel, st in files.items() if st[3] >= since_ns - CLOCK_SLACK_NS}


class WorkspaceWatcher:
    def __init__(
        self, root: Path, on_change: Callable[[list[str]], None], skipped: Iterable[str] = ()
    ) -> None:
        """`skipped`: folders (relative) never watched nor reported: Plansight's state."""
        self.root = root
        self.on_change = on_change
        self.skipped = tuple(skipped)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.snapshot: Snapshot | None = None
        # Set while every change is sure to be reported (watchfiles watching, the snapshot
        # taken); cleared while it is restarted.
        self.watching = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 2)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    async def _watch(self) -> None:
        # watchfiles gives up for good on some events: start it again (with a growing pause
        # should it keep failing at once) and report what changed while it was not watching.
        pause = RESTART_PAUSE
        said: set[str] = set()  # the names not UTF-8 already logged
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                await self._watch_once()
                return  # stopped
            except Exception as err:
                self.watching.clear()
                if time.monotonic() - started > STEADY:
                    pause = RESTART_PAUSE  # it had worked a while: no failure in a row
                undecodable = _undecodable_name(err)
                if undecodable is not None:
                    # Expected, and no fault of the watcher's: a name that is not UTF-8
                    # changed (watchfiles cannot hand it over). Said once per name; restarted
                    # after the shortest pause however often it happens, or the changes made
                    # meanwhile would be reported up to MAX_RESTART_PAUSE late.
                    wait = RESTART_PAUSE
                    if undecodable not in said:
                        said.add(undecodable)
                        log.info(
                            "%s: a file name that is not UTF-8 changed; such files are not "
                            "reported (the watcher goes on, restarted)",
                            undecodable,
                        )
                else:
                    log.warning(
                        "the workspace watcher failed (%s); restarting it in %g s", err, pause
                    )
                    wait, pause = pause, min(pause * 2, MAX_RESTART_PAUSE)
            with suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), wait)

    async def _watch_once(self) -> None:
        from watchfiles import awatch

        # It runs `git config`: off the event loop.
        keep = await asyncio.to_thread(WorkspaceFilter, self.root, None, self.skipped)
        attempt = _AttemptStop(self._stop)
        batches = awatch(
            self.root,
            watch_filter=keep,
            stop_event=attempt,  # is_set() and set() are all it uses
            debounce=50,
            step=20,
            recursive=True,
        )
        first = asyncio.ensure_future(_next(batches))
        try:
            # awatch watches from its first step (before it first waits for events): what
            # changes from now on reaches it, and what changed before is in the scan below.
            await asyncio.sleep(0)
            taken = await asyncio.to_thread(Snapshot.take, self.root, keep, time.time_ns())
            if self.snapshot is not None:
                missed = self.snapshot.changes_since(taken.files)
                if missed:
                    log.info("reporting %d changes made while the watcher was down", len(missed))
                    self._report(missed)
            self.snapshot = taken
            if not self.watching.is_set():
                self.watching.set()
                log.info("watching %s %s", self.root, WATCHING)
            batch = await first
            while batch is not None:
                handed_over = time.time_ns()
                paths = sorted({Path(p).relative_to(self.root).as_posix() for _, p in batch})
                # A file made in a new folder before its watch was added is named by nobody
                # but the snapshot's look into that folder.
                paths += await asyncio.to_thread(
                    self.snapshot.update, self.root, keep, paths, handed_over
                )
                self._report(paths)
                batch = await _next(batches)
        finally:
            # Stop this awatch (cancelling it would set the watcher's own stop event).
            attempt.set()
            with suppress(BaseException):
                await first
            with suppress(BaseException):
                await batches.aclose()

    def _report(self, paths: list[str]) -> None:
        try:
            self.on_change(paths)
        except Exception:
            log.exception("handling file changes failed")


def _undecodable_name(err: BaseException) -> str | None:
    """The path watchfiles could not decode, if that is what `err` (or an exception grouped
    in it, as anyio raises it) is."""
    if isinstance(err, BaseExceptionGroup):
        for inner in err.exceptions:
            if (found := _undecodable_name(inner)) is not None:
                return found
        return None
    match = _UNDECODABLE.search(str(err))
    return match.group(1) if match is not None else None


class _AttemptStop:
    """Stops one awatch: when the watcher stops, or when this attempt is given up."""

    def __init__(self, watcher_stop: asyncio.Event) -> None:
        self._watcher_stop = watcher_stop
        self._given_up = False

    def is_set(self) -> bool:  # polled by watchfiles' thread every step
        return self._given_up or self._watcher_stop.is_set()

    def set(self) -> None:
        self._given_up = True


async def _next(batches: AsyncIterator[set[tuple[Change, str]]]) -> set[tuple[Change, str]] | None:
    try:
        return await anext(batches)
    except StopAsyncIteration:
        return None
