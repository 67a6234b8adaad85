"""Asking a terminal where its cursor is (`plansight.cli.cursor`), on a real pseudo-terminal:
the terminal's side answers as tmux or xterm does, or types keys, or says nothing."""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Iterator

import pytest

from plansight.cli.cursor import CursorQuery, ask_cursor_row, to_the_bottom

QUESTION = b"\x1b[6n"


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    """(the terminal's side, the program's side) of a new pseudo-terminal."""
    terminal, program = os.openpty()
    yield terminal, program
    os.close(terminal)
    os.close(program)


def answering(terminal: int, *replies: bytes) -> threading.Thread:
    """The terminal: once asked, sends `replies` in order (keys, its answer)."""

    def run() -> None:
        asked = b""
        while QUESTION not in asked:
            select.select([terminal], [], [], 30)
            asked += os.read(terminal, 64)
        for reply in replies:
            os.write(terminal, reply)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def pending(fd: int) -> bytes:
    """What can be read from `fd` now, without waiting."""
    read = b""
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 256)
        if not chunk:
            break
        read += chunk
    return read


def arrived(program: int, count: int) -> None:
    """Wait until `count` bytes typed at the terminal have reached the program's side: the
    kernel hands them over in the background, and until then nobody has typed ahead."""
    import fcntl
    import termios
    import time

    saved = termios.tcgetattr(program)
    unbuffered = list(saved)
    unbuffered[3] &= ~termios.ICANON  # a line not yet ended is counted only out of line mode
    termios.tcsetattr(program, termios.TCSANOW, unbuffered)
    try:
        waiting = bytearray(4)
        deadline = time.monotonic() + 30
        while True:
            fcntl.ioctl(program, termios.FIONREAD, waiting)
            if int.from_bytes(waiting, "little") >= count:
                return
            assert time.monotonic() < deadline, "the typed keys never arrived"
            select.select([program], [], [], 0.05)
    finally:
        termios.tcsetattr(program, termios.TCSANOW, saved)


def test_the_row_is_the_terminals_answer(pty: tuple[int, int]) -> None:
    terminal, program = pty
    thread = answering(terminal, b"\x1b[17;1R")
    report = ask_cursor_row(program)
    thread.join(30)
    assert (report.row, report.asked, report.typed) == (17, True, b"")


def test_keys_typed_during_the_exchange_are_handed_back(pty: tuple[int, int]) -> None:
    terminal, program = pty
    thread = answering(terminal, b"fi", b"\x1b[3;9R", b"x")
    query = CursorQuery(program)
    assert query.row() == 3
    thread.join(30)
    query.typed += pending(program)  # a key the terminal sent just after its answer waits
    assert query.take_typed() in ("fix", "fi")
    assert query.take_typed() == ""


def test_keys_typed_ahead_stay_for_their_reader_and_the_terminal_is_not_asked(
    pty: tuple[int, int],
) -> None:
    terminal, program = pty
    os.write(terminal, b"next task")
    arrived(program, len(b"next task"))
    report = ask_cursor_row(program)
    assert (report.row, report.asked) == (None, False)
    assert QUESTION not in pending(terminal), "asked anyway"  # (the keys' echo comes back)
    # The terminal is back in its line mode: the keys are still there for the next read.
    os.write(terminal, b"\n")
    assert pending(program).rstrip(b"\r\n") == b"next task"


def test_a_terminal_that_does_not_answer_is_not_asked_again(pty: tuple[int, int]) -> None:
    terminal, program = pty
    query = CursorQuery(program)
    report = ask_cursor_row(program, timeout=0.2)
    assert (report.row, report.asked) == (None, True)
    assert pending(terminal) == QUESTION
    query.answers = False  # what `row` records after such a report
    assert query.row() is None
    assert QUESTION not in pending(terminal), "asked again"


def test_a_descriptor_not_open_for_reading_is_not_asked(pty: tuple[int, int]) -> None:
    terminal, program = pty
    write_only = os.open(os.ttyname(program), os.O_WRONLY | os.O_NOCTTY)
    try:
        report = ask_cursor_row(write_only)
    finally:
        os.close(write_only)
    assert (report.row, report.asked) == (None, False)
    # Its answer would have been read as keys by the next reader of the terminal.
    assert QUESTION not in pending(terminal)


def test_not_a_terminal_is_not_asked() -> None:
    read, write = os.pipe()
    try:
        assert ask_cursor_row(write) == ask_cursor_row(read)
        assert ask_cursor_row(write).row is None
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize(
    ("row", "rows", "codes"),
    [
        (1, 24, "\x1b[23T\x1b[23B"),  # a new window: everything down to the last row
        (22, 24, "\x1b[2T\x1b[2B"),
        (24, 24, ""),  # on the last row already
        (26, 24, ""),  # the window got lower meanwhile: nothing to scroll off
    ],
)
def test_to_the_bottom_scrolls_by_the_blank_rows_below_the_cursor(
    row: int, rows: int, codes: str
) -> None:
    assert to_the_bottom(row, rows) == codes
