"""Putting one file back as a checkpoint had it: atomically, and never outside the workspace.

A file is written to a temporary file in its own folder and renamed over the old one, so a
kill -9 leaves either the old file or the new one, never a mix; a symbolic link is made the
same way. Regular files go through `workspace.atomic` (durable: these are the user's files),
links through the same temporary names (`.<name>.<pid>.<random>.plansight-tmp`), which the
watcher ignores and the clean-up after a killed process recognises.
"""

from __future__ import annotations

import os
import secrets
import stat
from contextlib import suppress
from pathlib import Path

from plansight.workspace import atomic

MODE_FILE = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000


class RestoreRefused(Exception):
    """This file cannot be put back; the message is the reason shown to the user."""


def target_path(root: Path, relative: str) -> Path:
    """The absolute path of `relative`, refused if it would lead outside `root`."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise RestoreRefused("it is not a plain path inside the workspace")
    path = root.joinpath(*parts)
    parent = Path(os.path.realpath(path.parent))
    if not parent.is_relative_to(root):
        raise RestoreRefused("its folder is a link that leads outside the workspace")
    return path


def _make_parents(root: Path, path: Path) -> None:
    missing: list[Path] = []
    folder = path.parent
    while not folder.exists() and folder != root:
        if folder.is_symlink():  # a dangling link: making it would create something elsewhere
            raise RestoreRefused(f"{folder.relative_to(root).as_posix()} is a broken link")
        missing.append(folder)
        folder = folder.parent
    if not folder.is_dir():
        where = folder.relative_to(root).as_posix()
        raise RestoreRefused(f"{where} is a file, not a folder")
    for created in reversed(missing):
        try:
            created.mkdir()
        except FileExistsError:
            if not created.is_dir():
                where = created.relative_to(root).as_posix()
                raise RestoreRefused(f"{where} is a file, not a folder") from None
    if not Path(os.path.realpath(path.parent)).is_relative_to(root):
        raise RestoreRefused("its folder is a link that leads outside the workspace")


def _clear_way(path: Path) -> os.stat_result | None:
    """The current entry's stat (None if none); an empty folder in the way is removed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        try:
            path.rmdir()
        except OSError:
            raise RestoreRefused("a folder with files in it is in the way") from None
        return None
    return st


def write(root: Path, relative: str, data: bytes, git_mode: int, *, durable: bool = True) -> None:
    """Make `relative` hold `data` (a link target for MODE_SYMLINK), atomically."""
    path = target_path(root, relative)
    _make_parents(root, path)
    current = _clear_way(path)
    if git_mode == MODE_SYMLINK:
        tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{atomic.TEMP_SUFFIX}"
        os.symlink(os.fsdecode(data), tmp)
        try:
            os.replace(tmp, path)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
        return
    executable = git_mode == MODE_EXECUTABLE
    owner: tuple[int, int] | None = None
    if current is not None and stat.S_ISREG(current.st_mode):
        perm = stat.S_IMODE(current.st_mode)
        perm = perm | ((perm & 0o444) >> 2) if executable else perm & ~0o111
        owner = (current.st_uid, current.st_gid)
    else:
        perm = (0o777 if executable else 0o666) & ~atomic.umask()
    atomic.write_atomic(path, data, mode=perm, owner=owner, durable=durable)


def delete(root: Path, relative: str) -> bool:
    """Remove `relative` (a file or a link); False when it was not there."""
    path = target_path(root, relative)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        raise RestoreRefused("it is a folder now")
    path.unlink()
    return True


def remove_empty_folders(root: Path, relatives: list[str]) -> None:
    """Remove the folders of these paths, and theirs, that deleting files left empty."""
    folders = {str(Path(r).parent) for r in relatives}
    seen: set[str] = set()
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        current = folder
        while current not in (".", "") and current not in seen:
            seen.add(current)
            with suppress(OSError):
                (root / current).rmdir()  # fails, as it should, when anything is left in it
            current = str(Path(current).parent)


def remove_temp_files(root: Path, relatives: list[str]) -> None:
    """Delete the temporary files a killed restore left next to these paths (and below)."""
    folders = sorted({(root / r).parent for r in relatives}, key=lambda f: len(f.parts))
    outermost: list[Path] = []
    for folder in folders:
        if not any(folder.is_relative_to(o) for o in outermost):
            outermost.append(folder)
    for folder in outermost:
        atomic.remove_leftovers(folder)
