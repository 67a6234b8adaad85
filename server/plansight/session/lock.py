"""The session's one rule for whoever embeds it: one run at a time. A run, a compaction and a
restore hold the lock (the task doing it); whatever asks meanwhile is refused with SessionBusy."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class SessionBusy(Exception):
    """A run is already in progress."""


class RunLock:
    """One run at a time: a run, a compaction and a restore hold it (the task doing it);
    whatever asks meanwhile is refused with SessionBusy."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None

    @property
    def held(self) -> bool:
        return self.task is not None and not self.task.done()

    def refuse_if_held(self, doing: str) -> None:
        if self.held:
            raise SessionBusy(f"A Plansight run is already in progress; cancel it before {doing}.")

    @contextmanager
    def hold(self, doing: str) -> Iterator[None]:
        self.refuse_if_held(doing)
        self.task = asyncio.current_task()
        assert self.task is not None
        try:
            yield
        finally:
            self.task = None
