"""Atomic replacement: old or new file, never torn, no litter; leftovers of dead writers only."""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.workspace.atomic import (
    TEMP_SUFFIX,
    clean_up,
    is_temp_file,
    remove_leftovers,
    write_atomic,
)

from conftest import wait_until_sync


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if is_temp_file(p.name))


def test_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")
    inode = target.stat().st_ino
    st = write_atomic(target, b"new", mode=0o640)
    assert target.read_bytes() == b"new"
    assert target.stat().st_ino != inode  # replaced by a rename, not rewritten in place
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert (st.st_size, st.st_mtime_ns, st.st_ino) == (
        3,
        target.stat().st_mtime_ns,
        target.stat().st_ino,
    )
    assert _temp_files(tmp_path) == []


def test_a_new_file_is_private_unless_a_mode_is_given(tmp_path: Path) -> None:
    write_atomic(tmp_path / "state.json", b"{}", durable=True)
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_target_and_no_litter(tmp_path: Path) -> None:
    target = tmp_path / "folder"
    target.mkdir()
    (target / "inside.txt").write_text("kept\n")
    with pytest.raises(OSError):
        write_atomic(target, b"cannot replace a folder with a file")
    assert (target / "inside.txt").read_text() == "kept\n"
    assert _temp_files(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "f.txt", b"its folder must exist")


# The writer dies by SIGKILL between writing its temporary file and renaming it.
KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from plansight.workspace import atomic
atomic.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
atomic.write_atomic(Path(sys.argv[1]), b"half", durable=True)
"""


def _killed_mid_write(target: Path) -> Path:
    run = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(target)], timeout=60)
    assert run.returncode == -signal.SIGKILL
    [temp] = [p for p in target.parent.iterdir() if is_temp_file(p.name)]
    assert temp.name.startswith(f".{target.name}.") and temp.name.endswith(TEMP_SUFFIX)
    return temp


def test_leftovers_of_a_killed_writer_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("intact\n")
    dead = _killed_mid_write(tmp_path / "sub" / "f.txt")
    # A writer still at work: this process, and another live one.
    ours = tmp_path / f".g.txt.{os.getpid()}.abc{TEMP_SUFFIX}"
    ours.write_text("being written")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        theirs = tmp_path / f".h.txt.{sleeper.pid}.abc{TEMP_SUFFIX}"
        theirs.write_text("being written")
        # A name that only looks similar is not ours to delete.
        lookalike = tmp_path / f"notes{TEMP_SUFFIX}"
        lookalike.write_text("mine")
        skipped = tmp_path / "node_modules"
        skipped.mkdir()
        hidden = _killed_mid_write(skipped / "x.txt")

        removed = remove_leftovers(tmp_path, skip_dirs=("node_modules",))
        assert removed == [dead]
        assert not dead.exists() and (tmp_path / "sub" / "f.txt").read_text() == "intact\n"
        assert ours.exists() and theirs.exists() and lookalike.exists() and hidden.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_writer_killed_but_not_yet_reaped_counts_as_gone(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        child.send_signal(signal.SIGKILL)
        # Not reaped: a zombie, whose pid still answers kill(pid, 0). Wait for the state.
        stat_file = Path(f"/proc/{child.pid}/stat")
        wait_until_sync(
            lambda: stat_file.read_text().rsplit(")", 1)[1].split()[0] == "Z",
            "the killed child is a zombie",
        )
        leftover = tmp_path / f".f.txt.{child.pid}.abc{TEMP_SUFFIX}"
        leftover.write_text("half")
        assert remove_leftovers(tmp_path) == [leftover]
    finally:
        child.wait()


def test_the_start_up_clean_up_says_what_it_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = _killed_mid_write(tmp_path / "f.txt")
    with caplog.at_level(logging.INFO, logger="plansight.workspace.atomic"):
        clean_up(tmp_path)
    assert not dead.exists()
    assert "removed 1 temporary files left by an interrupted write" in caplog.text
