"""Where the terminal's cursor is, asked of the terminal itself (DSR 6, "report the cursor's
position"), and the move that puts the live region at the screen's bottom.

Why the region is moved there (`LiveRegion`): a terminal that re-wraps its lines on a resize
counts, in tmux's case, the blank rows below the cursor as lines of the screen. In a window not
yet filled those rows and the region's own rows, re-wrapped at a narrower width, can be more
than the screen holds: tmux then puts the row the cursor is on (the region's top) into the
scrollback and the cursor at the top left, and the region's first rows stay in the scrollback
out of reach of any erase. With no blank row below the region, nothing but the region itself
is below the cursor, and the region is cut to the screen's height.

Only this process's terminal is asked, and only while nothing else reads it (the live region is
up: questions take it down first). Keys already typed are never read here: with any waiting,
the terminal is not asked. Keys typed during the exchange (it takes a round trip to the
terminal) are handed back to the caller, so none is lost.
"""

from __future__ import annotations

import logging
import os
import re
import select
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)

REPORT = re.compile(rb"\x1b\[(\d+);(\d+)R")
# A terminal answers at once (a round trip over ssh at most); one that does not answer within
# this is not asked again (`CursorQuery.answers`).
ANSWER_SECONDS = 1.0


@dataclass(frozen=True)
class CursorReport:
    """The cursor's row (1 is the top), or None; whether the terminal was asked (not when keys
    typed ahead wait to be read); whatever else was read meanwhile (keys typed during the
    exchange)."""

    row: int | None
    asked: bool = False
    typed: bytes = b""


def ask_cursor_row(fd: int, timeout: float = ANSWER_SECONDS) -> CursorReport:
    """Ask the terminal on `fd` (open for reading and writing) where its cursor is."""
    try:
        import fcntl
        import termios
    except ImportError:  # not a POSIX terminal
        return CursorReport(None)
    try:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDWR:
            # The answer could not be read here, and would be read as keys by whoever reads next.
            return CursorReport(None)
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError):
        return CursorReport(None)
    # Unbuffered, unechoed input for the answer: a line-mode terminal would hold it until Enter.
    raw = list(saved)
    raw[3] = saved[3] & ~(termios.ICANON | termios.ECHO | termios.ECHONL)
    raw[6] = list(saved[6])
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 0, 0
    read = b""
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        waiting = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
        if int.from_bytes(waiting, "little"):  # typed ahead: theirs to read, not ours
            return CursorReport(None)
        os.write(fd, b"\x1b[6n")
        deadline = time.monotonic() + timeout
        while (found := REPORT.search(read)) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                log.debug("the terminal did not report its cursor (read %r)", read)
                return CursorReport(None, True, read)
            chunk = os.read(fd, 256)
            if not chunk:
                return CursorReport(None, True, read)
            read += chunk
    except OSError as err:  # write-only, or gone
        log.debug("could not ask the terminal for its cursor: %r", err)
        return CursorReport(None, True, read)
    finally:
        try:
            # TCSANOW, not TCSAFLUSH: anything typed since stays to be read.
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (termios.error, OSError):
            pass
    return CursorReport(int(found.group(1)), True, read[: found.start()] + read[found.end() :])


def to_the_bottom(row: int, rows: int) -> str:
    """The codes that scroll the screen's content down until the cursor's `row` (1 is the top)
    is the last of the screen's `rows`, the cursor moved with it; "" if it is already.

    Every row below the cursor's must be blank: those are the rows that scroll off the bottom.
    The rows coming in at the top are blank."""
    blank = rows - row
    if blank <= 0:
        return ""
    return f"\x1b[{blank}T\x1b[{blank}B"


class CursorQuery:
    """Asks one terminal where its cursor is, until it once does not answer."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.answers = True
        self.typed = b""  # keys read with the answers, for the next line read

    def row(self) -> int | None:
        if not self.answers:
            return None
        report = ask_cursor_row(self.fd)
        self.typed += report.typed
        if report.asked and report.row is None:
            self.answers = False
        return report.row

    def take_typed(self) -> str:
        """The keys read with the answers, as text (once)."""
        typed, self.typed = self.typed, b""
        return typed.decode("utf-8", errors="replace")
