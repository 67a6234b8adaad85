"""Workspace: path confinement, paged streaming reads, staleness tracking and atomic writes."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import tracemalloc
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from plansight.workspace.access import (
    BinaryFileError,
    FileMissingError,
    NotAFileError,
    NotReadError,
    OutsideWorkspaceError,
    StaleFileError,
    UnsavedChangesError,
    Workspace,
)
from plansight.workspace.atomic import TEMP_SUFFIX

from conftest import PATIENCE, wait_until


class Documents:
    """An editor holding some documents open (path → text)."""

    def __init__(self, texts: dict[Path, str] | None = None) -> None:
        self.texts = texts or {}

    def open_text(self, path: Path) -> str | None:
        return self.texts.get(path)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("SECRET\n")
    return ws


def test_resolve_inside_paths(root: Path) -> None:
    (root / "a").mkdir()
    (root / "a" / "b.txt").write_text("b\n")
    ws = Workspace(root)
    assert ws.resolve("a/b.txt").relative == "a/b.txt"
    assert ws.resolve("a/../a/./b.txt").relative == "a/b.txt"
    assert ws.resolve(str(root / "a" / "b.txt")).path == (root / "a" / "b.txt").resolve()
    assert ws.resolve(".").relative == "."
    assert ws.resolve("").relative == "."
    assert ws.resolve("not/yet/there.txt").relative == "not/yet/there.txt"


def test_resolve_refuses_escapes(root: Path) -> None:
    outside = root.parent / "outside"
    (root / "file_link").symlink_to(outside / "secret.txt")
    (root / "dir_link").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "missing.txt")
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    ws = Workspace(root)
    for path in [
        "../outside/secret.txt",
        "..",
        str(outside / "secret.txt"),
        "/etc/passwd",
        "file_link",
        "dir_link/secret.txt",
        "dir_link",
        "dangling",
        "a/../../outside",
    ]:
        with pytest.raises(OutsideWorkspaceError, match="outside the workspace"):
            ws.resolve(path)
    with pytest.raises(OutsideWorkspaceError, match="symbolic link loop"):
        ws.resolve("loop_a")
    with pytest.raises(OutsideWorkspaceError, match="NUL"):
        ws.resolve("a\0b")


def test_symlink_inside_resolves_to_its_target(root: Path) -> None:
    (root / "real.txt").write_text("x\n")
    (root / "alias.txt").symlink_to("real.txt")
    assert Workspace(root).resolve("alias.txt").relative == "real.txt"


def test_root_given_through_a_symlink(tmp_path: Path, root: Path) -> None:
    (root / "f.txt").write_text("f\n")
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    ws = Workspace(alias)
    assert ws.root == root.resolve()
    assert ws.resolve(str(alias / "f.txt")).relative == "f.txt"


async def test_read_page_windows_and_counts(root: Path) -> None:
    (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    ws = Workspace(root)
    page = await ws.read_page("f.txt", 10, 5)
    assert page.lines == ("line 10", "line 11", "line 12", "line 13", "line 14")
    assert (page.first_line, page.last_line, page.total_lines) == (10, 14, 100)
    whole = await ws.read_page("f.txt")
    assert len(whole.lines) == 100 and whole.lines[-1] == "line 100"


async def test_read_page_last_line_without_newline_and_crlf(root: Path) -> None:
    (root / "f.txt").write_bytes(b"one\r\ntwo\r\nthree")
    page = await Workspace(root).read_page("f.txt")
    assert page.lines == ("one", "two", "three")
    assert page.total_lines == 3


async def test_read_page_caps_bytes_and_line_length(root: Path) -> None:
    (root / "wide.txt").write_text(("x" * 5000 + "\n") * 3)
    page = await Workspace(root).read_page("wide.txt", max_line_chars=100)
    assert [len(line) for line in page.lines] == [100, 100, 100]
    assert page.truncated_lines == 3
    (root / "many.txt").write_text(("y" * 99 + "\n") * 3000)
    page = await Workspace(root).read_page("many.txt", 1, 2000, max_bytes=10_000)
    assert page.size_capped and len(page.lines) == 100
    assert page.total_lines == 3000


async def test_read_page_streams_a_big_file(root: Path) -> None:
    _write_big(root / "big.txt")
    ws = Workspace(root)
    tracemalloc.start()
    try:
        page = await ws.read_page("big.txt", 250_001, 10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.total_lines == 500_000
    assert page.lines == ("z" * 99,) * 10
    assert peak < 10_000_000


async def test_read_page_refuses_binary_dirs_and_missing(root: Path) -> None:
    (root / "bin.dat").write_bytes(b"abc\0def")
    (root / "sub").mkdir()
    ws = Workspace(root)
    with pytest.raises(BinaryFileError):
        await ws.read_page("bin.dat")
    with pytest.raises(NotAFileError, match="list_files"):
        await ws.read_page("sub")
    with pytest.raises(FileMissingError, match="does not exist"):
        await ws.read_page("nope.txt")
    os.mkfifo(root / "fifo")
    with pytest.raises(NotAFileError, match="not a regular file"):
        await ws.read_page("fifo")


async def test_read_page_invalid_utf8(root: Path) -> None:
    (root / "latin.txt").write_bytes(b"caf\xe9\nok\n")
    page = await Workspace(root).read_page("latin.txt")
    assert page.invalid_utf8
    assert page.lines == ("caf\ufffd", "ok")


async def test_read_page_prefers_the_editor_text(root: Path) -> None:
    (root / "f.txt").write_text("disk\n")
    docs = Documents({(root / "f.txt").resolve(): "editor\nmore\n"})
    page = await Workspace(root, docs).read_page("f.txt")
    assert page.lines == ("editor", "more") and page.unsaved
    docs.texts[(root / "f.txt").resolve()] = "disk\n"
    page = await Workspace(root, docs).read_page("f.txt")
    assert page.lines == ("disk",) and not page.unsaved


async def test_edit_needs_a_read_and_an_unchanged_file(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("one\n")
    ws = Workspace(root)
    with pytest.raises(NotReadError, match=r"Read f\.txt with read_file before editing it\."):
        await ws.begin_edit("f.txt")
    await ws.read_page("f.txt")
    base = await ws.begin_edit("f.txt")
    assert base.exists and base.text == "one\n"
    target.write_text("two\n")
    with pytest.raises(StaleFileError, match="was modified since you read it"):
        await ws.begin_edit("f.txt")
    with pytest.raises(StaleFileError):
        await ws.verify_unchanged(base)
    await ws.read_page("f.txt")
    assert (await ws.begin_edit("f.txt")).text == "two\n"


async def test_touched_but_unchanged_file_is_not_stale(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("same\n")
    ws = Workspace(root)
    await ws.read_page("f.txt")
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert (await ws.begin_edit("f.txt")).text == "same\n"


async def test_mark_stale_and_forget(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("one\n")
    ws = Workspace(root)
    await ws.read_page("f.txt")
    # An echo of what we saw (same size and mtime) is no external change.
    assert ws.mark_stale([str(target)]) == []
    await ws.begin_edit("f.txt")
    target.write_text("changed\n")
    assert ws.mark_stale(["f.txt", "unknown.txt"]) == ["f.txt", "unknown.txt"]
    with pytest.raises(StaleFileError):
        await ws.begin_edit("f.txt")
    await ws.read_page("f.txt")
    await ws.begin_edit("f.txt")
    ws.forget("f.txt")
    with pytest.raises(NotReadError):
        await ws.begin_edit("f.txt")
    ws.mark_stale(["../outside/secret.txt"])  # ignored, never raises
    ws.forget("/etc/passwd")


async def test_write_is_atomic_keeps_mode_and_allows_another_edit(root: Path) -> None:
    target = root / "run.sh"
    target.write_text("#!/bin/sh\necho one\n")
    target.chmod(0o755)
    ws = Workspace(root)
    await ws.read_page("run.sh")
    base = await ws.begin_edit("run.sh")
    await ws.write(base, "#!/bin/sh\necho two\n")
    assert target.read_text() == "#!/bin/sh\necho two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert not [name for name in _names(root) if name.endswith(TEMP_SUFFIX)]
    # Our own write counts as read: a second edit needs no new read.
    base = await ws.begin_edit("run.sh")
    assert base.text == "#!/bin/sh\necho two\n"


async def test_new_file_gets_parents_and_default_mode(root: Path) -> None:
    ws = Workspace(root)
    base = await ws.begin_edit("deep/er/new.txt")
    assert not base.exists and base.text == ""
    await ws.write(base, "hi\n")
    created = root / "deep" / "er" / "new.txt"
    assert created.read_text() == "hi\n"
    assert stat.S_IMODE(created.stat().st_mode) == 0o644 & ~_umask()
    (root / "plain").write_text("x")
    with pytest.raises(NotAFileError, match="plain is a file"):
        await ws.begin_edit("plain/child.txt")


async def test_new_file_created_meanwhile_is_stale(root: Path) -> None:
    ws = Workspace(root)
    base = await ws.begin_edit("new.txt")
    (root / "new.txt").write_text("someone else\n")
    with pytest.raises(StaleFileError, match="created by someone else"):
        await ws.verify_unchanged(base)


async def test_unsaved_editor_text_blocks_edits(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("disk\n")
    docs = Documents()
    ws = Workspace(root, docs)
    await ws.read_page("f.txt")
    base = await ws.begin_edit("f.txt")
    docs.texts[target.resolve()] = "typed\n"
    with pytest.raises(UnsavedChangesError, match="unsaved changes in the editor"):
        await ws.verify_unchanged(base)
    with pytest.raises(UnsavedChangesError):
        await ws.begin_edit("f.txt")
    assert target.read_text() == "disk\n"


def _write_big(path: Path) -> None:
    line = b"z" * 99 + b"\n"
    with open(path, "wb") as fh:
        for _ in range(50):
            fh.write(line * 10_000)  # 50 MB in all


def _names(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir()]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class HeldExecutor(ThreadPoolExecutor):
    """The loop's threads, holding each call handed to them until `release()`: a write the test
    keeps in flight as long as it needs, instead of one a fast disk finishes first."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.handed = threading.Event()
        self._released = threading.Event()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.handed.set()

        def held() -> Any:
            if not self._released.wait(PATIENCE):
                raise TimeoutError("a held call was never released")
            return fn(*args, **kwargs)

        return super().submit(held)

    def release(self) -> None:
        self._released.set()


async def test_a_started_write_completes_when_the_caller_is_cancelled(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("old\n")
    ws = Workspace(root)
    await ws.read_page("f.txt")
    base = await ws.begin_edit("f.txt")
    threads = HeldExecutor()
    asyncio.get_running_loop().set_default_executor(threads)
    try:
        task = asyncio.create_task(ws.write(base, "new\n"))
        await wait_until(threads.handed.is_set, "the write started")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert target.read_text() == "old\n"  # cancelled while the write was in flight
    finally:
        threads.release()
    await wait_until(lambda: target.read_text() == "new\n", "the write completed")

    async def remembered() -> bool:
        # The completion callback runs on the loop after the file is replaced; until then the
        # workspace still holds the old snapshot and calls the file changed since read.
        try:
            await ws.begin_edit("f.txt")
        except StaleFileError:
            return False
        return True

    await wait_until(remembered, "the written file remembered as read")
    assert (await ws.begin_edit("f.txt")).text == "new\n"  # remembered: no new read needed


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give files away")
async def test_write_keeps_the_owner(root: Path) -> None:
    target = root / "theirs.txt"
    target.write_text("x\n")
    os.chown(target, 1234, 1234)
    ws = Workspace(root)
    await ws.read_page("theirs.txt")
    await ws.write(await ws.begin_edit("theirs.txt"), "y\n")
    assert (target.stat().st_uid, target.stat().st_gid) == (1234, 1234)
