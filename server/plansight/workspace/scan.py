"""What the watcher reports on, as a filter and as a scan: the workspace under the ignore rules.

`WorkspaceFilter` keeps a path unless watchfiles' default filter drops it (`IGNORED_DIRS`,
editors' swap and backup files, compiled Python), it is one of our own atomic writes'
temporary files, it lies in a virtual environment (a folder holding `pyvenv.cfg`, under any
name), or the workspace's ignore rules exclude it (workspace/ignore.py: the `.gitignore` files,
`.git/info/exclude` and the user's `core.excludesFile`, as git decides). `scan` walks the
workspace under the same filter and stamps every file it keeps (a folder too, if asked): the
watcher's snapshot (workspace/watcher.py) and the scans before and after the agent's commands
(workspace/echoes.py) are such scans.

Plansight's own state folders (its storage, when the workspace holds it: `cd ~ && plansight`)
are never kept: reporting them made every save a change, reported and saved again, without end.

Making a filter finds the rules' files (it runs `git config`): do it off the event loop.
Names that are not UTF-8 cannot be reported (the protocol speaks UTF-8) and are left out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from plansight.workspace.atomic import is_temp_file
from plansight.workspace.ignore import GitIgnoreSources, git_ignore_rules

if TYPE_CHECKING:
    from watchfiles import Change, DefaultFilter

# watchfiles pulls in anyio (about 25 ms of a start of 300 ms): it is imported once a filter is
# made, after `initialize` is answered.

IGNORED_DIRS = (
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "env",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".hypothesis",
    "site-packages",
)

Stamp = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns


def folders_inside(root: Path, folders: Iterable[Path]) -> tuple[str, ...]:
    """Those of `folders` that lie inside the workspace `root` (links resolved), relative."""
    real_root = Path(os.path.realpath(root))
    found: list[str] = []
    for folder in folders:
        real = Path(os.path.realpath(folder))
        if real != real_root and real.is_relative_to(real_root):
            found.append(real.relative_to(real_root).as_posix())
    return tuple(dict.fromkeys(found))


def is_under(relative: str, folders: Iterable[str]) -> bool:
    """`relative` is one of `folders` (relative paths) or lies below one."""
    return any(relative == f or relative.startswith(f + "/") for f in folders)


class WorkspaceFilter:
    """watchfiles' default filter with IGNORED_DIRS, then the ignore rules and virtual
    environments (see the module's docstring). `sources`: the rules' workspace-wide files,
    found now unless given; `skipped`: folders never kept (relative: Plansight's state)."""

    def __init__(
        self, root: Path, sources: GitIgnoreSources | None = None, skipped: Iterable[str] = ()
    ) -> None:
        from watchfiles import DefaultFilter

        self.root = root
        self.default: DefaultFilter = DefaultFilter(ignore_dirs=IGNORED_DIRS)
        self.rules = git_ignore_rules(root, sources)
        self.skipped = tuple(skipped)

    def __call__(self, change: Change, path: str) -> bool:
        if not self.default(change, path):
            return False
        candidate = Path(path)
        if is_temp_file(candidate.name):
            return False  # our own atomic writes' temporary files
        if candidate.name == ".gitignore":
            self.rules.invalidate()
        # info/exclude is in .git, which is never watched, and the user's excludes file is
        # outside the workspace: they are read again with every change instead.
        self.rules.refresh()
        try:
            relative = candidate.relative_to(self.root).as_posix()
        except ValueError:
            return False  # not in the workspace
        if is_under(relative, self.skipped):
            return False
        if any(folder.startswith(relative + "/") for folder in self.skipped):
            # A folder that holds Plansight's state (`.plansight` made for the plan files):
            # its creation is the server's own doing, nobody's change to tell the model of.
            return False
        # pyvenv.cfg marks a virtual environment under any name.
        if any(
            (parent / "pyvenv.cfg").exists()
            for parent in candidate.parents
            if parent.is_relative_to(self.root) and parent != self.root
        ):
            return False
        return not self.rules.matches(relative, candidate.is_dir())

    def keeps_entry(self, path: str, parts: tuple[str, ...], is_dir: bool) -> bool:
        """The same rules for a walk, whose folders above `path` (`parts`, relative to the
        root) were kept already. A string, not a Path: a scan asks for every entry, and making
        a Path of each took a third of it."""
        from watchfiles import Change

        if not self.default(Change.added, path) or is_temp_file(parts[-1]):
            return False
        if is_dir and os.path.exists(os.path.join(path, "pyvenv.cfg")):
            return False
        # Folders only: a walk never enters a skipped one, so no file below it is asked about.
        if is_dir and self.skipped and is_under("/".join(parts), self.skipped):
            return False
        return not self.rules.matches_entry(parts, is_dir)


def _reportable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode's surrogates: the name is not UTF-8
        return False
    return True


def file_stamp(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def folder_stamp(st: os.stat_result) -> Stamp:
    # Its inode alone: what the watcher reports of a folder is its making, removal or renaming
    # (its times change with every file made or removed in it, reported as those files).
    return (st.st_ino, -1, 0, 0)


def stamp_of(path: Path) -> Stamp | None:
    """A file's stamp as `scan` takes it (a folder's as `scan(folders=True)` does), None when
    there is nothing at `path`."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return folder_stamp(st) if stat.S_ISDIR(st.st_mode) else file_stamp(st)


def scan(
    root: Path, keep: WorkspaceFilter, below: str = "", *, folders: bool = False
) -> dict[str, Stamp]:
    """The stamp of every file the watcher reports on, under `below` (relative, "" for all);
    with `folders`, of every folder it reports on too."""
    found: dict[str, Stamp] = {}
    pending = [tuple(below.split("/")) if below else ()]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(root.joinpath(*folder)))
        except OSError:
            continue  # gone, or not a folder (any more)
        for entry in entries:
            if not _reportable(entry.name):
                continue
            parts = (*folder, entry.name)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not keep.keeps_entry(entry.path, parts, is_dir):
                    continue
                if is_dir:
                    pending.append(parts)
                    if folders:
                        found["/".join(parts)] = folder_stamp(entry.stat(follow_symlinks=False))
                else:
                    found["/".join(parts)] = file_stamp(entry.stat(follow_symlinks=False))
            except OSError:
                continue  # removed while we looked
    return found
