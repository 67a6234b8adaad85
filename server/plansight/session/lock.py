"""The session's two rules for whoever embeds it: one run at a time, one server per workspace.

`RunLock`: a run, a compaction and a restore hold the lock (the task doing it); whatever asks
meanwhile is refused with SessionBusy.

`StorageClaim`: one live process keeps a workspace's session (its storage folder), as one keeps
its checkpoints: an flock on `session.lock` in the folder, which the kernel drops when the
process ends, however it ends (kill -9 too; the agent's commands do not inherit it). The file
names its holder for the refusal another server gets. A second server is refused outright
unless it asks for the read-only view (below): a writing view would not follow the first one's
changes, and two windows running one conversation would interleave it. Taking the claim also
checks that the folder can be written: a session that cannot be saved is refused at start
(nothing runs, one message), rather than run without its conversation, history and
checkpoints (the undo of the agent's changes). Both refusals are `StorageUnavailable`, whose
message says what is wrong and what to do.

The read-only view (the `readOnly` option) is for those who only look (`plansight plan`,
`history`, `checkpoints`): it takes no claim and writes nothing, so it works beside the server
that keeps the session. `StorageClaim.holder` says who that is (a shared flock taken and dropped
at once: the file is not written), and a `RunLock` made `read_only` refuses everything that
would change the session with `ReadOnly`, naming that server.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CLAIM_FILE = "session.lock"
# A server told to exit (an editor restarting it) may still be closing as the next one starts.
CLAIM_WAIT = 2.0


class SessionBusy(Exception):
    """A run is already in progress."""


class ReadOnly(SessionBusy):
    """This server only looks (the readOnly option): nothing that changes the session runs."""


class RunLock:
    """One run at a time: a run, a compaction and a restore hold it (the task doing it);
    whatever asks meanwhile is refused with SessionBusy."""

    def __init__(self, read_only: StorageClaim | None = None) -> None:
        """`read_only`: the claim of the session this read-only view looks at; everything that
        would change it is refused (`refuse_if_read_only`), naming the server holding it."""
        self.task: asyncio.Task[Any] | None = None
        self.read_only = read_only

    @property
    def held(self) -> bool:
        return self.task is not None and not self.task.done()

    def refuse_if_read_only(self) -> None:
        if self.read_only is not None:
            raise ReadOnly(read_only_refusal(self.read_only))

    def refuse_if_held(self, doing: str) -> None:
        self.refuse_if_read_only()
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


class StorageUnavailable(Exception):
    """This workspace's session cannot be kept here: another live server keeps it, or its folder
    cannot be written. The message says which, and what to do."""


class StorageClaim:
    """This process's claim on one session's storage folder (taken once, held until released)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def take(self, holder: str = "", *, wait: float = CLAIM_WAIT) -> None:
        """Claim the folder for this process (again: nothing happens); `holder`: who this
        server serves, for another server's refusal. StorageUnavailable when it cannot."""
        if self._fd is not None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / CLAIM_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise StorageUnavailable(self._unwritable(err)) from None
        try:
            self._lock(fd, wait)
            try:  # what every save does: a temporary file beside the target, renamed
                probe, name = tempfile.mkstemp(dir=self.directory, prefix=".probe-")
                os.close(probe)
                os.unlink(name)
                since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                record = {"pid": os.getpid(), "holder": holder, "since": since}
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(record).encode(), 0)
            except OSError as err:
                raise StorageUnavailable(self._unwritable(err)) from None
        except BaseException:
            os.close(fd)  # closing drops the flock
            raise
        self._fd = fd

    def holder(self) -> dict[str, Any] | None:
        """Who holds the claim now, as its file says (`pid`, `holder`, `since`; {} when it does
        not say), or None when no live server does. Writes nothing: a shared flock, taken and
        dropped at once, tells whether an exclusive one is held."""
        if self._fd is not None:
            return {"pid": os.getpid()}
        try:
            fd = os.open(self.directory / CLAIM_FILE, os.O_RDONLY)
        except OSError:
            return None  # never claimed (or unreadable: nobody we could name)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                record: Any = None
                with contextlib.suppress(OSError, ValueError):
                    record = json.loads(os.pread(fd, 4096, 0))
                return record if isinstance(record, dict) else {}
            return None
        finally:
            os.close(fd)  # drops the shared flock, if taken

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _lock(self, fd: int, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StorageUnavailable(self._in_use(fd)) from None
                time.sleep(0.05)

    def _in_use(self, fd: int) -> str:
        record: Any = None
        with contextlib.suppress(OSError, ValueError):
            record = json.loads(os.pread(fd, 4096, 0))
        said = []
        if isinstance(record, dict):
            if record.get("pid"):
                said.append(f"server pid {record['pid']}")
            if record.get("holder"):
                said.append(f"for {record['holder']}")
            if record.get("since"):
                said.append(f"since {record['since']}")
        who = f" ({'; '.join(said)})" if said else ""
        return (
            f"Another Plansight server is using this workspace's session{who}, kept in "
            f"{self.directory}. One server at a time keeps a workspace's conversation: let that "
            "one finish, or stop it, then try again."
        )

    def _unwritable(self, err: OSError) -> str:
        why = err.strerror or str(err)
        if err.filename is not None and Path(err.filename) != self.directory:
            why = f"{why}: {err.filename}"
        return (
            f"Plansight cannot save this workspace's session in {self.directory} ({why}). "
            "It does not start without it: nothing would be kept, not even the checkpoints "
            "that undo the agent's changes. Make the folder writable, or set XDG_STATE_HOME "
            "(or the storageDir option) to a folder you can write."
        )


def read_only_refusal(claim: StorageClaim) -> str:
    """Why a read-only view changes nothing: who keeps the session now, if anyone."""
    record = claim.holder()
    if record is None:
        return (
            "read-only: this server was opened read-only (the readOnly option): it shows the "
            "stored session and changes nothing; start Plansight without it to run, edit the "
            "plan, restore, compact or reset."
        )
    pid = f" (pid {record['pid']})" if record.get("pid") else ""
    return (
        f"read-only: another Plansight server{pid} is using this workspace's session, so this "
        "one only shows what is stored and changes nothing; let that one finish, or stop it, "
        "then try again."
    )
