"""Waiting for a pipe's reader (`plansight run … | cat`) before writing to the terminal: a real
`cat` between a real pipe and a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plansight.cli.pipe import PipeToTheTerminal, is_running, readers_of, unread_bytes

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="readers are found in /proc")


class CatToATerminal:
    """`cat` reading a pipe we write, writing to a pseudo-terminal we also write to directly."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        read_end, self.pipe = os.pipe()
        self.cat = subprocess.Popen(["cat"], stdin=read_end, stdout=self.slave)
        os.close(read_end)
        self.seen = b""

    def screen_until(self, marker: bytes) -> bytes:
        deadline = time.monotonic() + 30
        while marker not in self.seen:
            assert time.monotonic() < deadline, f"no {marker!r} on the terminal: {self.seen!r}"
            self.seen += os.read(self.master, 4096)
        return self.seen

    def wait_for_state(self, state: str) -> None:
        deadline = time.monotonic() + 30
        stat = Path(f"/proc/{self.cat.pid}/stat")
        while (text := stat.read_text())[text.rfind(")") + 2] != state:
            assert time.monotonic() < deadline, f"cat is not in state {state}: {text}"
            time.sleep(0.01)

    def close(self) -> None:
        os.close(self.pipe)
        self.cat.send_signal(signal.SIGCONT)
        self.cat.wait(timeout=30)
        os.close(self.slave)
        os.close(self.master)


@pytest.fixture
def cat() -> Iterator[CatToATerminal]:
    made = CatToATerminal()
    yield made
    made.close()


def test_the_terminal_gets_the_pipes_lines_before_what_is_written_to_it_after_the_wait(
    cat: CatToATerminal,
) -> None:
    # The reader is slow (stopped, as a busy machine may leave it): the wait outlasts it.
    cat.cat.send_signal(signal.SIGSTOP)
    cat.wait_for_state("T")  # stopped in its read, before the line comes
    os.write(cat.pipe, b"through the pipe\n")
    pipe = PipeToTheTerminal(cat.pipe)
    assert unread_bytes(cat.pipe) == len(b"through the pipe\n")
    assert not pipe.wait(longest=0)  # still in the pipe: a reader that does not read
    cat.cat.send_signal(signal.SIGCONT)
    assert pipe.wait(longest=30)
    os.write(cat.slave, b"Approve this plan? ")
    screen = cat.screen_until(b"Approve this plan? ")
    assert screen.index(b"through the pipe") < screen.index(b"Approve this plan? ")


def test_the_reader_is_the_process_reading_not_one_that_inherited_the_writing_end(
    cat: CatToATerminal,
) -> None:
    writer = subprocess.Popen(["sleep", "60"], stdout=cat.pipe)
    try:
        assert readers_of(cat.pipe) == [cat.cat.pid]
    finally:
        writer.kill()
        writer.wait()


def test_a_file_or_a_terminal_has_no_readers(tmp_path: Path, cat: CatToATerminal) -> None:
    with open(tmp_path / "out", "w") as file:
        assert readers_of(file.fileno()) == []
    assert readers_of(cat.slave) == []


def test_the_state_is_read_after_a_command_name_holding_parentheses(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "stat").write_text("7 (a) S (b) R 1 7 7 0 -1\n")
    assert is_running(7, tmp_path)
    (tmp_path / "7" / "stat").write_text("7 (a) R (b) S 1 7 7 0 -1\n")
    assert not is_running(7, tmp_path)
    assert not is_running(8, tmp_path)  # gone
