"""Watches the workspace for changes made outside the agent (watchfiles), reported in batches."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from plansight.atomic import is_temp_file
from plansight.gitignore import GitIgnore

if TYPE_CHECKING:
    from watchfiles import Change, DefaultFilter

# watchfiles pulls in anyio (about 25 ms of a start of 300 ms): it is imported once the watcher
# starts, after `initialize` is answered.

log = logging.getLogger(__name__)

IGNORED_DIRS = (
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "env",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".hypothesis",
    "site-packages",
)


RESTART_PAUSE = 0.2
MAX_RESTART_PAUSE = 30.0


class WorkspaceFilter:
    """watchfiles' default filter with IGNORED_DIRS, then .gitignore and virtual environments."""

    def __init__(self, root: Path) -> None:
        from watchfiles import DefaultFilter

        self.default: DefaultFilter = DefaultFilter(ignore_dirs=IGNORED_DIRS)
        self.gitignore = GitIgnore(root)

    def __call__(self, change: Change, path: str) -> bool:
        if not self.default(change, path):
            return False
        candidate = Path(path)
        if is_temp_file(candidate.name):
            return False  # our own atomic writes' temporary files
        if candidate.name == ".gitignore":
            self.gitignore.invalidate()
        # pyvenv.cfg marks a virtual environment under any name.
        if any(
            (parent / "pyvenv.cfg").exists()
            for parent in candidate.parents
            if parent.is_relative_to(self.gitignore.root) and parent != self.gitignore.root
        ):
            return False
        return not self.gitignore.ignored(candidate, candidate.is_dir())


class WorkspaceWatcher:
    def __init__(self, root: Path, on_change: Callable[[list[str]], None]) -> None:
        self.root = root
        self.on_change = on_change
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

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
        from watchfiles import awatch

        # watchfiles gives up for good on some events (e.g. a file name that is not UTF-8):
        # start it again, with a growing pause should it keep failing.
        pause = RESTART_PAUSE
        while not self._stop.is_set():
            try:
                async for changes in awatch(
                    self.root,
                    watch_filter=WorkspaceFilter(self.root),
                    stop_event=self._stop,
                    debounce=50,
                    step=20,
                    recursive=True,
                ):
                    pause = RESTART_PAUSE
                    paths = sorted({Path(p).relative_to(self.root).as_posix() for _, p in changes})
                    try:
                        self.on_change(paths)
                    except Exception:
                        log.exception("handling file changes failed")
                return
            except Exception as err:
                log.warning("the workspace watcher failed (%s); restarting it in %g s", err, pause)
            with suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), pause)
            pause = min(pause * 2, MAX_RESTART_PAUSE)
