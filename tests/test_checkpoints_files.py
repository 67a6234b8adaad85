"""Putting one file back (checkpoints/files.py), on real files: the bytes and the mode come
back, links come back as links, nothing is ever written outside the workspace, and what is in
the way is either cleared (an empty folder) or refused with a reason the user reads.
(Restores as a whole, through the store: test_checkpoints_store.py.)"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from plansight.checkpoints import files
from plansight.checkpoints.files import (
    MODE_EXECUTABLE,
    MODE_FILE,
    MODE_SYMLINK,
    RestoreRefused,
    target_path,
)
from plansight.workspace.atomic import TEMP_SUFFIX, is_temp_file


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside").mkdir()
    return workspace


def litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if is_temp_file(p.name))


@pytest.mark.parametrize("relative", ["", "/etc/passwd", "../outside/x", "a/../b", "a//b", "./a"])
def test_a_path_that_is_not_plainly_inside_is_refused(root: Path, relative: str) -> None:
    with pytest.raises(RestoreRefused, match="not a plain path inside the workspace"):
        target_path(root, relative)


def test_a_path_through_a_link_that_leads_outside_is_refused(root: Path) -> None:
    (root / "out").symlink_to(root.parent / "outside")
    with pytest.raises(RestoreRefused, match="leads outside the workspace"):
        files.write(root, "out/x.txt", b"pwned", MODE_FILE)
    assert not (root.parent / "outside" / "x.txt").exists()
    assert target_path(root, "sub/x.txt") == root / "sub" / "x.txt"


def test_a_file_is_written_with_its_folders_and_no_litter(root: Path) -> None:
    files.write(root, "a/b/c.txt", b"bytes\r\n\x00", MODE_FILE)
    written = root / "a" / "b" / "c.txt"
    assert written.read_bytes() == b"bytes\r\n\x00"
    assert not os.access(written, os.X_OK)
    assert litter(root) == []


def test_the_executable_bit_follows_the_checkpoint_and_other_bits_stay(root: Path) -> None:
    script = root / "run.sh"
    script.write_text("old\n")
    script.chmod(0o640)
    files.write(root, "run.sh", b"#!/bin/sh\n", MODE_EXECUTABLE)
    assert stat.S_IMODE(script.stat().st_mode) == 0o750  # x where r was, nothing more
    files.write(root, "run.sh", b"plain\n", MODE_FILE)
    assert stat.S_IMODE(script.stat().st_mode) == 0o640
    assert script.read_text() == "plain\n"


def test_a_new_executable_gets_the_umask_s_modes(root: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    files.write(root, "new.sh", b"#!/bin/sh\n", MODE_EXECUTABLE)
    assert stat.S_IMODE((root / "new.sh").stat().st_mode) == 0o777 & ~mask


def test_a_link_comes_back_as_a_link_replacing_a_file(root: Path) -> None:
    (root / "link").write_text("a file now\n")
    files.write(root, "link", b"target/elsewhere.txt", MODE_SYMLINK)
    assert (root / "link").is_symlink()
    assert os.readlink(root / "link") == "target/elsewhere.txt"
    assert litter(root) == []


def test_writing_over_a_link_replaces_the_link_not_its_target(root: Path) -> None:
    target = root / "target.txt"
    target.write_text("target\n")
    (root / "link").symlink_to("target.txt")
    files.write(root, "link", b"a file again\n", MODE_FILE)
    assert not (root / "link").is_symlink()
    assert (root / "link").read_text() == "a file again\n"
    assert target.read_text() == "target\n"


def test_an_empty_folder_in_the_way_is_removed_a_full_one_refused(root: Path) -> None:
    (root / "empty").mkdir()
    files.write(root, "empty", b"file\n", MODE_FILE)
    assert (root / "empty").read_text() == "file\n"
    (root / "full").mkdir()
    (root / "full" / "keep.txt").write_text("keep\n")
    with pytest.raises(RestoreRefused, match="a folder with files in it is in the way"):
        files.write(root, "full", b"file\n", MODE_FILE)
    assert (root / "full" / "keep.txt").read_text() == "keep\n"


def test_a_file_where_a_folder_should_be_is_refused(root: Path) -> None:
    (root / "a").write_text("a file\n")
    with pytest.raises(RestoreRefused, match="a is a file, not a folder"):
        files.write(root, "a/b/c.txt", b"x", MODE_FILE)
    assert (root / "a").read_text() == "a file\n"


def test_a_broken_link_where_a_folder_should_be_is_refused(root: Path) -> None:
    (root / "gone").symlink_to("missing")  # inside, but not there: making it makes "missing"
    with pytest.raises(RestoreRefused, match="gone is a broken link"):
        files.write(root, "gone/x.txt", b"x", MODE_FILE)
    assert not (root / "missing").exists()


def test_delete_removes_files_and_links_and_says_what_was_not_there(root: Path) -> None:
    (root / "f.txt").write_text("x\n")
    (root / "link").symlink_to("f.txt")
    assert files.delete(root, "link") is True
    assert (root / "f.txt").exists()  # a link's target stays
    assert files.delete(root, "f.txt") is True
    assert not (root / "f.txt").exists()
    assert files.delete(root, "f.txt") is False
    (root / "now_a_folder").mkdir()
    with pytest.raises(RestoreRefused, match="it is a folder now"):
        files.delete(root, "now_a_folder")
    with pytest.raises(RestoreRefused):
        files.delete(root, "../outside/x")


def test_only_folders_left_empty_are_removed_up_to_the_root(root: Path) -> None:
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "keep.txt").write_text("keep\n")
    (root / "x" / "y").mkdir(parents=True)
    files.remove_empty_folders(root, ["a/b/c/gone.txt", "x/y/gone.txt", "top.txt"])
    assert not (root / "a" / "b").exists()
    assert (root / "a" / "keep.txt").exists()
    assert not (root / "x").exists()
    assert root.is_dir()


def test_temporary_files_of_a_killed_restore_are_removed_others_kept(root: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid names no process now
    (root / "sub" / "deeper").mkdir(parents=True)
    left = root / "sub" / "deeper" / f".f.txt.{dead.pid}.abcd{TEMP_SUFFIX}"
    left.write_text("half")
    ours = root / "sub" / f".g.txt.{os.getpid()}.abcd{TEMP_SUFFIX}"  # a write going on
    ours.write_text("being written")
    elsewhere = root / "other" / f".h.txt.{dead.pid}.abcd{TEMP_SUFFIX}"
    elsewhere.parent.mkdir()
    elsewhere.write_text("half")
    files.remove_temp_files(root, ["sub/f.txt", "sub/deeper/f.txt"])
    assert not left.exists()
    assert ours.exists()
    assert elsewhere.exists()  # not next to a restored path
