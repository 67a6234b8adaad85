"""Filesystem access confined to one folder: path checks, paged reads, staleness, atomic writes.

Protected files (secrets, workspace/secrets.py) are neither read nor written: `read_page` and
`begin_edit` refuse them with a `ProtectedFileError`, and the editor's buffer of one is never
asked for. Control files (workspace/control.py) are read as any file; `begin_edit` marks an
edit of one (`EditBase.control`: whoever reviews it must ask the user), and refuses anything
under a `.git` folder with a `ControlFileError`.

How a page of lines is cut from a file is `textpages`'s; the atomic write itself is
`atomic`'s.

The editor's side: a `DocumentSource` gives the text of open documents (the language server's,
synchronously); one that is also an `EditorFiles` is asked through the editor instead (ACP's
`fs/read_text_file` / `fs/write_text_file`, asynchronous): reads see its unsaved buffers, and
accepted edits are written by the editor, so that its undo works. The checks stay the same.

Knows nothing of tools or models. Every error is a `WorkspaceError` whose message is written so
that whoever shows it (the model, a user) knows what to do next.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import logging
import os
import stat
from collections import deque
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from plansight.workspace.atomic import write_atomic
from plansight.workspace.control import ControlFiles, is_git_internal
from plansight.workspace.secrets import ProtectedPaths, protected_message
from plansight.workspace.textpages import (
    BOM,
    BOM_BYTES,
    Scan,
    TextPage,
    page_from_scan,
    page_from_text,
    scan_lines,
)

log = logging.getLogger(__name__)

# Open flags for reads: never follow a symlink swapped in after the path was checked, and never
# block on a FIFO.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NEW_FILE_MODE = 0o644
_VERSIONS_KEPT = 16
PLAN_FILE_MESSAGE = (
    "{path} is a Plansight plan file: it is written from your plan, so the file tools never "
    "change it; use the todo tool to change the plan (read_file may read it; the user's own "
    "edits of it are read back into the plan)."
)


class DocumentSource(Protocol):
    """Text of documents open in an editor, unsaved changes included."""

    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` if it is open there, else None."""
        ...


class WorkspaceError(Exception):
    """An expected failure; the message says what went wrong and how to go on."""


class OutsideWorkspaceError(WorkspaceError):
    pass


class FileMissingError(WorkspaceError):
    pass


class NotAFileError(WorkspaceError):
    pass


class BinaryFileError(WorkspaceError):
    pass


class NotReadError(WorkspaceError):
    pass


class StaleFileError(WorkspaceError):
    pass


class UnsavedChangesError(WorkspaceError):
    pass


class NotWritableError(WorkspaceError):
    pass


class ProtectedFileError(WorkspaceError):
    pass


class ControlFileError(WorkspaceError):
    """A write the file tools never make (anything under `.git`)."""


@dataclass(frozen=True)
class WorkspacePath:
    """A path checked to lie inside the workspace."""

    path: Path  # absolute, symlinks resolved
    relative: str  # relative to the root, "/"-separated; "." for the root itself


@dataclass(frozen=True)
class FileSnapshot:
    """The file on disk as last seen by a read or a write of ours."""

    size: int
    mtime_ns: int
    digest: bytes  # sha256 of the bytes on disk


@dataclass(frozen=True)
class EditBase:
    """What an edit starts from: the document as it is on disk, checked to be safe to replace."""

    target: WorkspacePath
    exists: bool
    text: str  # "" for a new file; without a byte order mark, which `bom` records
    valid_utf8: bool
    snapshot: FileSnapshot | None  # the disk state `text` came from (None for a new file)
    mode: int | None  # permission bits to keep (None for a new file)
    owner: tuple[int, int] | None  # uid and gid to keep, where we may (None for a new file)
    bom: bool = False  # the file starts with a UTF-8 byte order mark, kept when it is written
    control: bool = False  # a control file: its review always asks the user (workspace/control)


@runtime_checkable
class EditorFiles(Protocol):
    """A document source that reads and writes files through the editor (ACP's `fs/*`)."""

    can_write: bool  # False: the workspace writes the disk itself, as without an editor

    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` as last read through it (synchronous callers: a
        restore's check for unsaved changes), else None."""
        ...

    async def read_text(self, path: Path) -> str | None:
        """The editor's text of `path` (its buffer, unsaved changes included, or the file), or
        None when the editor cannot say."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Write `text` as the whole of `path` through the editor; OSError when it refuses."""
        ...


class Workspace:
    """One workspace root; every path given to it is relative to the root (or absolute inside)."""

    def __init__(
        self,
        root: Path,
        documents: DocumentSource | None = None,
        protected: ProtectedPaths | None = None,
        control: ControlFiles | None = None,
        state_folders: Sequence[str] = (),
    ) -> None:
        """`state_folders`: Plansight's own storage where it lies inside the root (relative):
        never watched, checkpointed, listed or searched."""
        self._root = Path(os.path.realpath(root))
        self.documents = documents
        self.protected = protected if protected is not None else ProtectedPaths(self._root)
        # The user's protect.control patterns come with the protect options.
        self.control = (
            control
            if control is not None
            else ControlFiles(self._root, self.protected.options.control)
        )
        self.state_folders = tuple(state_folders)
        # The plan files' folder (relative; None: no plan files): the file tools refuse it.
        self.plans_folder: str | None = None
        self._snapshots: dict[Path, FileSnapshot] = {}
        self._stale: set[Path] = set()
        # Digests of the versions of each file seen on disk (read, replaced or written by us).
        self._versions: dict[Path, deque[bytes]] = {}

    @property
    def root(self) -> Path:
        return self._root

    # ----- paths -------------------------------------------------------------------------------

    def resolve(self, path: str | os.PathLike[str]) -> WorkspacePath:
        """Check that `path` stays inside the root once `..` and symlinks are resolved."""
        raw = os.fspath(path)
        if "\0" in raw:
            raise OutsideWorkspaceError(f"Invalid path {raw!r}: it contains a NUL character.")
        candidate = raw if os.path.isabs(raw) else os.path.join(self._root, raw or ".")
        real = Path(os.path.realpath(candidate))
        if not real.is_relative_to(self._root):
            raise OutsideWorkspaceError(
                f"{raw} is outside the workspace ({self._root}); only files inside it can be "
                "used. Use a path relative to the workspace root."
            )
        # realpath (non-strict) leaves a symlink loop unresolved instead of failing.
        try:
            os.stat(real)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise OutsideWorkspaceError(f"{raw} is a symbolic link loop.") from err
        relative = real.relative_to(self._root).as_posix()
        return WorkspacePath(real, relative or ".")

    def resolve_shareable(self, path: str | os.PathLike[str]) -> WorkspacePath:
        """`resolve`, refusing a protected path (by its name, or a link's target's) with a
        ProtectedFileError, a link out to a secret (`~/.ssh`) included."""
        try:
            target = self.resolve(path)
        except OutsideWorkspaceError:
            if "\0" not in os.fspath(path) and self.protected.protects(path):
                raise ProtectedFileError(protected_message(os.fspath(path))) from None
            raise
        if self.protected.protects(path) or self.protected.matches(
            target.relative, target.path.is_dir()
        ):
            raise ProtectedFileError(protected_message(os.fspath(path)))
        return target

    def _edit_control(self, path: str | os.PathLike[str], target: WorkspacePath) -> bool:
        """Whether an edit of `path` (resolved to `target`) changes a control file: by the
        name given or the file it resolves to (a link `cfg -> .vscode/settings.json`). Raises
        ControlFileError for a path in a `.git` folder, which the file tools never write."""
        given = os.path.normpath(os.fspath(path))
        lexical = (
            Path(given).relative_to(self._root).as_posix()
            if os.path.isabs(given) and Path(given).is_relative_to(self._root)
            else given.replace(os.sep, "/")
        )
        for relative in (lexical, target.relative):
            if is_git_internal(relative):
                raise ControlFileError(self.control.message(relative))
            if self.plans_folder is not None and Path(relative).is_relative_to(self.plans_folder):
                raise ControlFileError(PLAN_FILE_MESSAGE.format(path=relative))
        return self.control.is_control(lexical) or self.control.is_control(
            target.relative, target.path.is_dir()
        )

    def _resolve_quietly(self, path: str | os.PathLike[str]) -> Path | None:
        try:
            return self.resolve(path).path
        except WorkspaceError:
            return None

    # ----- reads -------------------------------------------------------------------------------

    async def read_page(
        self,
        path: str,
        first_line: int = 1,
        max_lines: int = 2000,
        *,
        max_bytes: int = 100_000,
        max_line_chars: int = 2000,
    ) -> TextPage:
        """Lines `first_line`.. of a file (the editor's text when it is open), streamed from disk.

        Records what is on disk, so that a later edit can tell whether the file changed since.
        A protected file is refused (ProtectedFileError), its editor buffer too.
        """
        target = self.resolve_shareable(path)
        try:
            self._check_regular_file(target)
            try:
                snapshot, scan = await asyncio.to_thread(
                    _scan_file, target.path, first_line - 1, max_lines, max_bytes, max_line_chars
                )
            except OSError as err:
                raise _read_error(target, err) from err
        except FileMissingError:
            self.forget(target.path)  # the reader now knows it is gone: creating it is fine
            raise
        editor_text = self._unsaved(target, snapshot.digest, await self._editor_text(target))
        if editor_text is not None:
            page = page_from_text(
                target.relative, editor_text, first_line, max_lines, max_bytes, max_line_chars
            )
        elif scan.binary:
            raise BinaryFileError(
                f"{target.relative} is a binary file (it contains NUL bytes); read_file shows "
                "text files only."
            )
        else:
            page = page_from_scan(target.relative, scan, first_line, max_line_chars)
        self._remember(target.path, snapshot)
        return page

    # ----- staleness ---------------------------------------------------------------------------

    def mark_stale(self, paths: Iterable[str | os.PathLike[str]]) -> list[str]:
        """Someone else changed these files: edits are refused until they are read again.

        A change whose size and mtime equal our snapshot is the echo of our own write (a watcher
        sees those too) and is ignored. Returns the paths that were not such echoes.
        """
        external: list[str] = []
        for raw in paths:
            real = self._resolve_quietly(raw)
            snapshot = self._snapshots.get(real) if real is not None else None
            if real is None or snapshot is None:
                external.append(os.fspath(raw))
                continue
            try:
                st = os.stat(real)
            except OSError:
                st = None
            if st is None or (st.st_size, st.st_mtime_ns) != (snapshot.size, snapshot.mtime_ns):
                self._stale.add(real)
                external.append(os.fspath(raw))
        return external

    def has_unsaved_changes(self, path: str) -> bool:
        """Whether the editor holds text of this file that was never on disk (a restore then
        leaves the file alone). Reads the file: a small, blocking call."""
        try:
            target = self.resolve(path)
        except WorkspaceError:
            return False
        if self._open_text(target) is None:
            return False
        try:
            data = target.path.read_bytes()
        except OSError:
            data = b""  # gone from disk while the editor still holds it: compare with nothing
        return self._unsaved_text(target, hashlib.sha256(data).digest()) is not None

    def wrote_for_the_user(self, path: str | os.PathLike[str]) -> None:
        """Plansight wrote this file other than by the model's edit (a worker's change taken
        in): the watcher's report of it is our own write, not someone else's change, yet the
        model reads it again before editing it. Reads the file: a small, blocking call."""
        real = self._resolve_quietly(path)
        if real is None:
            return
        try:
            data, st = _read_bytes(real)  # the bytes and the stat of one opened regular file
        except (OSError, NotAFileError):
            self.forget(real)
            return
        self._snapshots[real] = FileSnapshot(
            st.st_size, st.st_mtime_ns, hashlib.sha256(data).digest()
        )
        self._stale.add(real)

    def forget(self, path: str | os.PathLike[str]) -> None:
        """Drop what we know of a file: editing it needs a new read."""
        real = self._resolve_quietly(path)
        if real is not None:
            self._snapshots.pop(real, None)
            self._stale.discard(real)

    # ----- edits -------------------------------------------------------------------------------

    async def begin_edit(self, path: str) -> EditBase:
        """The current document of `path` if it may be replaced now, else a WorkspaceError.

        An existing file must have been read and be unchanged since, and be one the user running
        the server could write; a file with unsaved editor changes is never replaced. A missing
        file is a new one (its parents are created later), unless it was there when last read:
        then someone deleted it, which counts as a change. A protected path is refused, and so
        is any path in a `.git` folder (ControlFileError); a control file's base says so.
        """
        target = self.resolve_shareable(path)
        control = self._edit_control(path, target)
        if target.path.is_dir():
            raise NotAFileError(f"{target.relative} is a folder, not a file.")
        if not target.path.exists():
            if target.path in self._snapshots:
                raise _deleted_error(target)
            self._check_creatable(target)
            await self._check_no_unsaved(target, "")
            return EditBase(target, False, "", True, None, None, None, control=control)
        self._check_regular_file(target)
        snapshot = self._snapshots.get(target.path)
        if snapshot is None:
            raise NotReadError(f"Read {target.relative} with read_file before editing it.")
        data, st = await self._load(target)
        current = FileSnapshot(st.st_size, st.st_mtime_ns, _digest_if(data, snapshot, st))
        if target.path in self._stale or current.digest != snapshot.digest:
            raise _stale_error(target)
        _check_writable(target, st)
        bom = data.startswith(BOM_BYTES)
        body = data[len(BOM_BYTES) :] if bom else data
        try:
            text, valid = body.decode("utf-8"), True
        except UnicodeDecodeError:
            text, valid = body.decode("utf-8", errors="replace"), False
        await self._check_no_unsaved(target, text)
        mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
        return EditBase(target, True, text, valid, snapshot, mode, owner, bom, control)

    async def verify_unchanged(self, base: EditBase) -> None:
        """Raise unless the file is still as `base` saw it (the user may have typed meanwhile)."""
        target = base.target
        if base.snapshot is None:
            if _lexists(target.path):
                raise StaleFileError(
                    f"{target.relative} was created by someone else meanwhile; read it with "
                    "read_file before editing."
                )
            await self._check_no_unsaved(target, "")
            return
        try:
            data, st = await self._load(target)
        except FileMissingError:
            raise _deleted_error(target) from None
        digest = _digest_if(data, base.snapshot, st)
        if target.path in self._stale or digest != base.snapshot.digest:
            raise _stale_error(target)
        _check_writable(target, st)  # its mode may have changed while the review was open
        await self._check_no_unsaved(target, base.text)

    async def write(self, base: EditBase, text: str) -> FileSnapshot:
        """Replace the file atomically with `text` (UTF-8) and remember it as read.

        A byte order mark the file had is written again. Raises OSError when the disk refuses;
        the file is then left as it was.
        """
        mode = base.mode if base.mode is not None else _NEW_FILE_MODE & ~_umask()
        path = base.target.path
        data = text.encode("utf-8")
        if base.bom:
            data = BOM_BYTES + data.removeprefix(BOM_BYTES)
        if isinstance(self.documents, EditorFiles) and self.documents.can_write:
            task = asyncio.ensure_future(self._write_through_editor(self.documents, path, text))
        else:
            task = asyncio.ensure_future(
                asyncio.to_thread(_write_file, self._root, path, data, mode, base.owner)
            )

        def remember(done: asyncio.Future[FileSnapshot]) -> None:
            # The model knows what it just wrote: it may edit again without another read.
            if not done.cancelled() and done.exception() is None:
                self._remember(path, done.result())

        task.add_done_callback(remember)
        # Once started, a write completes (and is remembered) even if the caller is cancelled.
        return await asyncio.shield(task)

    async def _write_through_editor(
        self, editor: EditorFiles, path: Path, text: str
    ) -> FileSnapshot:
        """The editor writes the file (its undo then knows the change); what it left on disk is
        what the next edit is checked against."""
        await editor.write_text(path, text)
        # An editor may hold the text in its buffer before it is on disk: that is our text, not
        # the user's unsaved work.
        written = hashlib.sha256(text.encode("utf-8")).digest()
        versions = self._versions.setdefault(path, deque(maxlen=_VERSIONS_KEPT))
        if written not in versions:
            versions.append(written)
        data, st = await asyncio.to_thread(_read_bytes, path)
        return FileSnapshot(st.st_size, st.st_mtime_ns, hashlib.sha256(data).digest())

    async def _load(self, target: WorkspacePath) -> tuple[bytes, os.stat_result]:
        try:
            return await asyncio.to_thread(_read_bytes, target.path)
        except OSError as err:
            raise _read_error(target, err) from err

    # ----- helpers -----------------------------------------------------------------------------

    def _open_text(self, target: WorkspacePath) -> str | None:
        if self.documents is None or self.protected.matches(target.relative):
            return None  # a secret's buffer is never read
        return self.documents.open_text(target.path)

    async def _editor_text(self, target: WorkspacePath) -> str | None:
        if isinstance(self.documents, EditorFiles):
            return await self.documents.read_text(target.path)
        return self._open_text(target)

    def _check_regular_file(self, target: WorkspacePath) -> None:
        try:
            st = os.stat(target.path)
        except FileNotFoundError:
            raise FileMissingError(f"{target.relative} does not exist.") from None
        except OSError as err:
            raise FileMissingError(f"{target.relative} cannot be read: {err.strerror}.") from err
        if stat.S_ISDIR(st.st_mode):
            raise NotAFileError(
                f"{target.relative} is a folder, not a file; use list_files to see its files."
            )
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(f"{target.relative} is not a regular file.")

    def _check_creatable(self, target: WorkspacePath) -> None:
        for ancestor in target.path.parents:
            if ancestor.exists():
                if not ancestor.is_dir():
                    where = ancestor.relative_to(self._root).as_posix()
                    raise NotAFileError(
                        f"Cannot create {target.relative}: {where} is a file, not a folder."
                    )
                return

    def _remember(self, path: Path, snapshot: FileSnapshot) -> None:
        self._snapshots[path] = snapshot
        self._stale.discard(path)
        versions = self._versions.setdefault(path, deque(maxlen=_VERSIONS_KEPT))
        if snapshot.digest not in versions:
            versions.append(snapshot.digest)

    def _unsaved_text(self, target: WorkspacePath, disk_digest: bytes) -> str | None:
        return self._unsaved(target, disk_digest, self._open_text(target))

    def _unsaved(self, target: WorkspacePath, disk_digest: bytes, text: str | None) -> str | None:
        """The editor's `text` of the file if it holds changes that were never on disk.

        An editor that has not reloaded yet after our write still shows an earlier version of
        the file: that is no user work, so it counts as saved. Editors do not show a byte order
        mark: the text matches a version with or without one.
        """
        if text is None:
            return None
        seen = (disk_digest, *self._versions.get(target.path, ()))
        body = text.removeprefix(BOM).encode("utf-8")
        if (
            hashlib.sha256(body).digest() in seen
            or hashlib.sha256(BOM_BYTES + body).digest() in seen
        ):
            return None
        return text

    async def _check_no_unsaved(self, target: WorkspacePath, disk_text: str) -> None:
        disk_digest = hashlib.sha256(disk_text.encode("utf-8")).digest()
        if self._unsaved(target, disk_digest, await self._editor_text(target)) is not None:
            raise UnsavedChangesError(
                f"{target.relative} has unsaved changes in the editor; ask the user to save or "
                "revert it, then read it again."
            )


def _read_error(target: WorkspacePath, err: OSError) -> WorkspaceError:
    if isinstance(err, FileNotFoundError):
        return FileMissingError(f"{target.relative} does not exist.")
    return WorkspaceError(f"{target.relative} cannot be read: {err.strerror or err}.")


def _write_file(
    root: Path, path: Path, data: bytes, mode: int, owner: tuple[int, int] | None
) -> FileSnapshot:
    """Create missing parents inside the root, then replace the file atomically and durably."""
    parent = path.parent
    if not parent.is_dir():
        parent.mkdir(parents=True, exist_ok=True)
        # A symlink created in the meantime must not carry the write outside.
        if not Path(os.path.realpath(parent)).is_relative_to(root):
            raise OutsideWorkspaceError(f"{path} is outside the workspace.")
    st = write_atomic(path, data, mode=mode, owner=owner, durable=True)
    return FileSnapshot(st.st_size, st.st_mtime_ns, hashlib.sha256(data).digest())


def _deleted_error(target: WorkspacePath) -> StaleFileError:
    return StaleFileError(
        f"{target.relative} was deleted since you read it. Read it again with read_file before "
        "writing it: recreating it could undo a deletion the user meant."
    )


def _check_writable(target: WorkspacePath, st: os.stat_result) -> None:
    """Refuse to replace a file that the user running the server could not write.

    A rename in a writable folder gets past a read-only file, and gives a file of another user
    to this one: neither may happen behind the user's back. (Root may write anything and keeps
    the owner, as `atomic.write_atomic` gives the file back.)
    """
    effective = os.access in os.supports_effective_ids
    if not os.access(target.path, os.W_OK, effective_ids=effective):
        raise NotWritableError(
            f"{target.relative} is read-only ({stat.filemode(st.st_mode)}) for the user "
            "Plansight runs as, so it was left as it is; tell the user if it must change."
        )
    if st.st_uid != os.geteuid() and os.geteuid() != 0:
        raise NotWritableError(
            f"{target.relative} belongs to another user (uid {st.st_uid}): replacing it would make "
            "it the Plansight user's, so it was left as it is; tell the user if it must change."
        )


def _stale_error(target: WorkspacePath) -> StaleFileError:
    return StaleFileError(
        f"{target.relative} was modified since you read it; read it again with read_file "
        "before editing."
    )


def _digest_if(data: bytes, snapshot: FileSnapshot, st: os.stat_result) -> bytes:
    # Size and mtime unchanged: the file is the one we saw, no need to hash it.
    if (st.st_size, st.st_mtime_ns) == (snapshot.size, snapshot.mtime_ns):
        return snapshot.digest
    return hashlib.sha256(data).digest()


def _lexists(path: Path) -> bool:
    # A single stat: cheap enough to do on the event loop.
    return os.path.lexists(path)


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads: ask /proc.
    with suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(f"{path.name} is not a regular file.")
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def _read_bytes(path: Path) -> tuple[bytes, os.stat_result]:
    fd, st = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(), st


def _scan_file(
    path: Path, first: int, count: int, max_bytes: int, max_line_chars: int
) -> tuple[FileSnapshot, Scan]:
    fd, st = _open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        # Keep enough bytes of each line for max_line_chars characters of up to 4 bytes each.
        scan = scan_lines(handle, first, count, max_bytes, max_line_chars * 4 + 4)
    return FileSnapshot(st.st_size, st.st_mtime_ns, scan.digest), scan
