"""kill -9 of a process in the middle of a snapshot or a restore, through real processes.

A child process takes snapshots (or restores) of a real workspace; the test kills it at a
random moment: sometimes the whole process group while git holds its index lock (git dies
mid-write), sometimes the Python process alone (its git command lives on, as it would after
a crashed server). Then the store is opened again, as a restarted server opens it, and must
be usable: no stale lock, a repository git finds consistent, snapshots that match the disk,
restores that work. After a killed restore every file is whole: either as it was or as
restored, and no temporary file is left once the store is reopened.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from plansight.checkpoints import CheckpointStore, RestoreRequest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

SEED = 20261201
KILLS = 5
FILES = 600
FIRST = "dir_0/file_000.txt"

CHILD = r"""
import random, sys
from pathlib import Path
from plansight.checkpoints import CheckpointStore, RestoreRequest

mode, storage, root = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
store = CheckpointStore(storage, root)
store.open()
print("open", flush=True)
if mode == "snapshot":
    rng = random.Random(int(sys.argv[4]))
    names = sorted(p for p in root.rglob("*.txt"))
    i = 0
    while True:
        i += 1
        for path in rng.sample(names, 60):
            path.write_text(f"{path.name} version {i}\n" + "x" * rng.randint(0, 4000))
        (root / f"made_{i}.txt").write_text(f"made {i}\n")
        print(f"snap {i}", flush=True)
        store.snapshot("command", f"round {i}", agent_all=True)
        print(f"done {i}", flush=True)
else:
    print("restoring", flush=True)
    result = store.restore(RestoreRequest(checkpoint=sys.argv[4], force=True))
    print(f"restored {len(result.restored)}", flush=True)
"""


def make_workspace(root: Path, version: str, size: int = 2000) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for i in range(FILES):
        rel = f"dir_{i // 50}/file_{i:03d}.txt"
        data = f"{rel} {version}\n".encode() + b"y" * size
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files[rel] = data
    return files


def disk_files(root: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def held_files(store: CheckpointStore, tree: str) -> dict[str, bytes]:
    """A checkpoint's files, read back with git itself."""
    git = ["git", "--git-dir", str(store.git_dir)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", tree], capture_output=True, check=True
    ).stdout
    entries = [item.split(b"\t", 1) for item in listing.split(b"\0") if item]
    shas = [meta.split()[2].decode() for meta, _ in entries]
    out = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{s}\n" for s in shas).encode(),
        capture_output=True,
        check=True,
    ).stdout
    found: dict[str, bytes] = {}
    pos = 0
    for (_, raw), _sha in zip(entries, shas, strict=True):
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        found[raw.decode()] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return found


def assert_repository_sound(store: CheckpointStore) -> None:
    leftovers = [
        name
        for _, _, names in os.walk(store.git_dir)
        for name in names
        if name.endswith(".lock") or name.startswith("tmp_")
    ]
    assert leftovers == []
    fsck = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "fsck", "--no-dangling", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


@contextmanager
def child(mode: str, storage: Path, root: Path, arg: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(storage), str(root), arg],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so that git can be killed with it
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stdout is not None
        process.stdout.close()


def read_until(process: subprocess.Popen[str], prefix: str) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(prefix):
            return line
    raise AssertionError(f"the child ended before printing {prefix!r}")


def kill(
    process: subprocess.Popen[str],
    ready: Callable[[], bool],
    rng: random.Random,
    *,
    group: bool,
    delay: float,
) -> None:
    """Kill soon after `ready()` (git holds its lock, the restore wrote its first file), at a
    random moment: the whole process group (git dies mid-write) or the Python process alone."""
    deadline = time.monotonic() + 5.0
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0002)
    time.sleep(rng.uniform(0.0, delay))
    if group:
        os.killpg(process.pid, signal.SIGKILL)
    else:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_kill_9_during_snapshots_leaves_a_usable_repository(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "ws"
    storage = tmp_path / "cp"
    original = make_workspace(root, "v1")
    first = CheckpointStore(storage, root)
    first.open()
    start = first.snapshot("runStart", "Run started")
    assert start is not None
    first.close()
    for attempt in range(KILLS):
        with child("snapshot", storage, root, str(rng.randrange(1 << 30))) as process:
            read_until(process, f"snap {rng.randint(1, 3)}")
            lock = storage / "git" / "index.lock"
            kill(process, lock.exists, rng, group=attempt % 2 == 0, delay=0.005)

        store = CheckpointStore(storage, root)
        store.open()  # waits for a git command that outlived its server
        assert_repository_sound(store)
        latest = store.snapshot("outside", f"after kill {attempt}")
        assert latest is not None
        assert held_files(store, latest.tree) == disk_files(root)
        store.close()

    store = CheckpointStore(storage, root)
    store.open()
    # Forced: what the child wrote after its last finished snapshot counts as outside changes.
    result = store.restore(RestoreRequest(checkpoint=start.id, force=True))
    assert result.skipped == ()
    assert disk_files(root) == original
    store.close()


@pytest.mark.slow
def test_kill_9_during_a_restore_leaves_every_file_whole(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    root = tmp_path / "ws"
    storage = tmp_path / "cp"
    old = make_workspace(root, "v1", size=8000)
    store = CheckpointStore(storage, root)
    store.open()
    start = store.snapshot("runStart", "Run started")
    assert start is not None
    new = make_workspace(root, "v2", size=8000)
    store.snapshot("command", "rewrite everything", agent_all=True)
    store.close()
    interrupted = 0
    for attempt in range(KILLS):
        with child("restore", storage, root, start.id) as process:
            read_until(process, "restoring")
            first = root / "dir_0" / "file_000.txt"  # the restore writes in path order
            kill(
                process,
                lambda path=first: path.read_bytes() == old[FIRST],
                rng,
                group=attempt % 2 == 0,
                delay=0.02,
            )

        on_disk = disk_files(root)
        whole = {rel: data for rel, data in on_disk.items() if not rel.endswith(".plansight-tmp")}
        assert set(whole) == set(old)
        for rel, data in whole.items():
            assert data in (old[rel], new[rel]), f"{rel} is torn"
        store = CheckpointStore(storage, root)
        store.open()
        assert [rel for rel in disk_files(root) if rel.endswith(".plansight-tmp")] == []
        restored = sum(data == old[rel] for rel, data in whole.items())
        if 0 < restored < len(old):
            assert store.interrupted_restore, "a restore cut short must be reported"
            interrupted += 1
        assert_repository_sound(store)
        make_workspace(root, "v2", size=8000)  # the next round restores from v2 again
        store.close()

    store = CheckpointStore(storage, root)
    store.open()
    result = store.restore(RestoreRequest(checkpoint=start.id, force=True))
    assert result.skipped == ()
    assert disk_files(root) == old
    store.close()
    print(f"{interrupted} of {KILLS} restores were cut short mid-way")
    assert interrupted > 0  # each kill waits for the first restored file: most land mid-way
