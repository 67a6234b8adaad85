"""Waiting for a pipe's reader to pass on what was written, before writing to the terminal.

With `plansight run … | cat`, the transcript goes through the pipe and the reader copies it to
the terminal, while reviews and questions are written to the terminal directly. Two writers
to one terminal keep no order: a question written at once lands above the lines still in the
pipe (or in the reader, between its read and its write), and they end up on the question's
line. Before writing to the terminal, the UI waits until the pipe is empty and its reader is
not running (asleep in its next read, or in a write the terminal has not yet taken), for at
most a second: a reader that does not read (`| less` showing a full page) is not waited on.

Linux only beyond the pipe's count (`FIONREAD`): the readers are found in /proc.
"""

from __future__ import annotations

import array
import fcntl
import logging
import os
import stat
import termios
import time
from pathlib import Path

log = logging.getLogger(__name__)

LONGEST_WAIT = 1.0  # seconds
POLL = 0.002


def unread_bytes(fd: int) -> int | None:
    """How many bytes written to the pipe `fd` its reader has not read; None if not known."""
    count = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
    except OSError:
        return None
    return count[0]


def readers_of(fd: int, proc: Path = Path("/proc")) -> list[int]:
    """The other processes that hold the pipe `fd` open: its readers, in a shell pipeline."""
    try:
        info = os.fstat(fd)
    except OSError:
        return []
    if not stat.S_ISFIFO(info.st_mode):
        return []
    name = f"pipe:[{info.st_ino}]"
    own = os.getpid()
    found = []
    try:
        processes = [p for p in os.scandir(proc) if p.name.isdigit() and int(p.name) != own]
    except OSError:
        return []
    for process in processes:
        try:
            with os.scandir(os.path.join(process.path, "fd")) as links:
                if any(_reads(process.path, entry, name) for entry in links):
                    found.append(int(process.name))
        except OSError:  # gone, or another user's
            continue
    return found


def _reads(process: str, fd: os.DirEntry[str], name: str) -> bool:
    """Whether the descriptor `fd` of `process` is the pipe `name`, open for reading (a child
    that inherited the writing end is not a reader, however busy)."""
    try:
        if os.readlink(fd.path) != name:
            return False
        info = Path(process, "fdinfo", fd.name).read_text()
    except OSError:
        return False
    flags = next((line.split()[1] for line in info.splitlines() if line.startswith("flags:")), "1")
    return int(flags, 8) & os.O_ACCMODE == os.O_RDONLY


def is_running(pid: int, proc: Path = Path("/proc")) -> bool:
    """Whether `pid` is on a CPU or waiting for one (between its read and its write, say)."""
    try:
        stat_line = (proc / str(pid) / "stat").read_text()
    except OSError:
        return False
    # "pid (comm) S …": the command may hold spaces and parentheses; the state follows the last.
    return stat_line[stat_line.rfind(")") + 2 :][:1] == "R"


class PipeToTheTerminal:
    """The pipe stdout is, and the wait for its reader to catch up."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._readers: list[int] | None = None  # found at the first wait

    def wait(self, longest: float = LONGEST_WAIT) -> bool:
        """Wait until what was written has left the pipe and its reader; False on time out."""
        deadline = time.monotonic() + longest
        if self._readers is None:
            self._readers = readers_of(self.fd)
        while True:
            unread = unread_bytes(self.fd)
            if unread == 0 and not any(is_running(pid) for pid in self._readers):
                return True
            if unread is None or time.monotonic() > deadline:
                log.debug("the pipe's reader did not catch up (%s bytes unread)", unread)
                return False
            time.sleep(POLL)
