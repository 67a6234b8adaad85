"""Atomic file replacement, and the clean-up after a writer killed in the middle of one.

`write_atomic` writes a temporary file in the target's folder and renames it over the target,
so that a reader (and a kill -9 at any moment) sees either the old file or the new one, never a
torn one. The temporary file is hidden and named `.<name>.<pid>.<random>.plansight-tmp`: the
suffix lets a watcher ignore it, the writer's process id lets `remove_leftovers` tell the
litter of a killed writer from a file still being written. `clean_up` is that removal as a
server does it at start-up, in the background: what it removed, or why it could not, is logged.

Fsync policy: the rename alone already survives kill -9 intact. `durable=True` also flushes the
data to disk before the rename, so that a power cut cannot leave an empty file under the name:
the user's files are written so (an fsync costs about 1.5 ms here); Plansight's own session
state, rewritten every round, is not.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".plansight-tmp"
_TEMP_NAME = re.compile(r"\..+\.(\d+)\.[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX))


def json_text(value: Any) -> str:
    """`value` as JSON that always encodes as UTF-8: readable (ensure_ascii=False) unless it
    holds a name that is not UTF-8 (os.fsdecode's lone surrogates), which is written as its
    \\udcXX escapes instead; json.loads reads either back as the same name."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def is_temp_file(name: str) -> bool:
    """Whether a file name is that of a temporary file of `write_atomic`."""
    return name.endswith(TEMP_SUFFIX)


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
    durable: bool = False,
) -> os.stat_result:
    """Replace `path` with `data` through a temporary file and a rename; its folder must exist.

    `mode`: the permission bits of the new file (default 0o600, private). `owner`: the uid and
    gid to give it, where this process may (root may; others keep their own). Returns the stat
    of the file as written. On any failure the target is left as it was and no temporary file
    remains.
    """
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if owner is not None and owner != (os.getuid(), os.getgid()):
                with suppress(PermissionError):
                    os.fchown(handle.fileno(), *owner)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # after chown, which may clear setuid/setgid
            if durable:
                os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())  # the renamed file's, without racing a writer
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return written


def append_whole(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Append `data` with a single write(), which kill -9 cannot cut in half (a full disk
    makes it fail instead, and then nothing of it counts). Creates the file if needed."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        written = os.write(fd, data)
    finally:
        os.close(fd)
    if written != len(data):
        raise OSError(f"short write to {path} ({written} of {len(data)} bytes)")


def umask() -> int:
    """The process's umask. os.umask() can only be read by setting it, which races with other
    threads: ask /proc."""
    with suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def remove_leftovers(root: Path, skip_dirs: Iterable[str] = ()) -> list[Path]:
    """Delete the temporary files under `root` whose writer process is gone (killed mid-write).

    The target of such a write is intact (the rename never happened); only the litter goes.
    Folders named in `skip_dirs` are not entered. Returns the files removed.
    """
    skip = set(skip_dirs)
    removed: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            match = _TEMP_NAME.fullmatch(name)
            if match is None or _process_alive(int(match.group(1))):
                continue
            path = Path(dirpath) / name
            with suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def clean_up(root: Path, skip_dirs: Iterable[str] = ()) -> None:
    """`remove_leftovers`, logged: a failure to look is not the caller's (a start-up thread's)."""
    try:
        removed = remove_leftovers(root, skip_dirs)
    except Exception:
        log.exception("could not look for temporary files left by an interrupted write")
        return
    if removed:
        log.info("removed %d temporary files left by an interrupted write", len(removed))


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except (OverflowError, OSError):
        return False
    with suppress(OSError, IndexError):  # a zombie (killed, not yet reaped) is gone too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True
