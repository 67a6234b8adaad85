"""Checkpoints of a workspace in a git repository of Plansight's own, and restores from them.

`CheckpointStore(directory, root)` keeps its repository in `directory/git` with the workspace
as work tree (as Cline's shadow git does); the workspace's own `.git` is never touched: its
index, refs, stash, hooks and configuration stay exactly as they were. Only plumbing commands
and `git status` run, none of which runs a hook; the environment and the configuration are
Plansight's alone (git.py, repository.py).

What a snapshot holds: every file git would see with the workspace's `.gitignore` files
(nested ones included), its `.git/info/exclude` and the user's `core.excludesFile` (the same
rules as the watcher's, workspace/ignore.py; the latter two read again before every snapshot
that looks at everything), minus `BUILTIN_EXCLUDES` and minus files over `max_file_bytes`
(10 MiB by default), which are listed as *uncaptured* and never restored over or deleted.
Bytes are kept exactly (no end-of-line or filter conversion, whatever `.gitattributes` say).
A folder holding a repository of its own (a nested clone) is not captured either, nor is a
protected file (a secret, workspace/secrets.py): its patterns go first into the repository's
info/exclude (so that `git status` need not list them), and every path a scan finds is checked
against the rules again (a `.gitignore` may re-include one), so no object ever holds one; a
protected file is listed as uncaptured (`protected`), and a restore leaves it alone, naming it.
A restore skips a control file (workspace/control.py: `.vscode/`, `.envrc`, ...) unless forced,
as the user forcing it is the user deciding; nothing in a `.git` folder is ever put back.

How it stays fast: the repository's index is a dedicated one that mirrors the last checkpoint,
so `git status` (stat data plus the untracked cache) finds what changed since and only those
files are hashed; a large batch (the first snapshot) goes straight into one pack file.

What the agent changed, as opposed to anyone else: each checkpoint records the paths changed
since the one before (`changed`) and which of those the agent changed (`agent`): the file of
an `edit` checkpoint, everything a `command` checkpoint found (the embedder takes an `outside`
checkpoint before a command when someone else may have changed files meanwhile), the files a
`restore` put back. A file counts as changed by someone else since a checkpoint when a later
checkpoint lists it in `changed` but not in `agent` (restore.py).

Robustness: one store per folder at a time (an flock, inherited by every git command, so that
a git process outliving a killed server still holds it); on open, the lock files and temporary
objects of git commands killed mid-way are removed, refs and HEAD are made to agree with the
manifest, and the temporary files of a restore killed mid-way are removed (each restored file
is replaced atomically, so none is half-written). Storage stays bounded: `maintain()` prunes
all but the newest `max_checkpoints` (500) checkpoints and, while the repository is over
`max_bytes` (1 GiB), the older half of the rest (the newest 10 always stay), then deletes the
objects nothing refers to any more.
"""

from __future__ import annotations

import datetime
import fcntl
import logging
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plansight.checkpoints import files
from plansight.checkpoints.git import Git, GitError, GitUnavailable, find_git
from plansight.checkpoints.manifest import UNCAPTURED_REASONS, Checkpoint, Kind, Manifest
from plansight.checkpoints.repository import ShadowRepository
from plansight.checkpoints.restore import (
    AGENT_KINDS,
    AlsoUndone,
    Change,
    Planner,
    RestoreRequest,
    RestoreResult,
    Skipped,
    apply,
    read_journal,
    selector,
    step_baselines,
)
from plansight.workspace import atomic
from plansight.workspace.control import ControlFiles, is_git_internal
from plansight.workspace.ignore import GitIgnoreSources
from plansight.workspace.secrets import ProtectedPaths

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_CHECKPOINTS = 500
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
MIN_KEPT = 10
LOCK_WAIT = 5.0  # seconds to wait for the folder lock (a killed server's git may still run)
# Never worth a checkpoint: repositories, dependency and cache folders, and the temporary
# files of Plansight's atomic writes.
BUILTIN_EXCLUDES = (".git", "node_modules/", "__pycache__/", ".venv/", "*" + atomic.TEMP_SUFFIX)
_JOURNAL = "restore-journal.json"
_REF = "refs/checkpoints/"
_SCRATCH = "tmp"
CONTROL_REASON = (
    "it is a control file (it steers your tools: git, the editor, Plansight); restore with "
    "force to put it back"
)
CONTROL_GIT_REASON = "it is inside a git folder, which a restore never writes"


class CheckpointsUnavailable(Exception):
    """Checkpoints cannot work here; the message says why (shown to the user)."""


class CheckpointError(Exception):
    """An expected failure of a request (unknown checkpoint, bad arguments)."""


class CheckpointNotFound(CheckpointError):
    pass


@dataclass(frozen=True)
class StepFile:
    """A file a plan item changed: the checkpoint holding it as it was before (None when that
    one was pruned), and what undoing the item does to it now."""

    path: str
    before: Checkpoint | None
    change: Literal["added", "modified", "deleted"]  # added: undoing deletes it


@dataclass
class _Scan:
    update: list[bytes]  # paths to (re)hash into the index, or to leave it when missing
    drop: list[bytes]  # tracked paths no longer captured (too large, unreadable, a folder)
    changed: set[str]
    uncaptured: dict[str, str]


def checkpoints_folder(storage: Path) -> Path:
    """Where a session's storage folder keeps its checkpoints."""
    return storage / "checkpoints"


def ever_taken(directory: Path) -> bool:
    """Whether a checkpoint was ever taken in ``directory`` (a session's checkpoints folder):
    without its repository there is none to list or restore, and saying so needs no store
    opened (opening one creates it, and a session's start snapshots the whole workspace)."""
    return (directory / "git" / "HEAD").is_file()


def _escaped(path: str) -> str:
    """`path` as an exclude pattern that matches it alone (git's glob characters escaped)."""
    return "".join(f"\\{c}" if c in "\\*?[]!# " else c for c in path)


def _readable(st: os.stat_result) -> bool:
    """Readable by this process as far as the mode says (no access() call for most files)."""
    euid = os.geteuid()
    return euid == 0 or (st.st_uid == euid and bool(st.st_mode & stat.S_IRUSR))


def _now() -> str:
    now = datetime.datetime.now(datetime.UTC)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class _Aim:
    """What a restore puts back (CheckpointStore._aim)."""

    groups: dict[int, tuple[Checkpoint, list[str] | None]]  # baseline seq → (it, its paths)
    skipped: list[Skipped]
    target: Checkpoint | None
    doing: str  # "undoing step #2", for the checkpoint before
    done: str  # "Undid step #2", for the checkpoint after


class CheckpointStore:
    """The checkpoints of one workspace. Thread-safe; every method blocks (run it off-loop)."""

    def __init__(
        self,
        directory: Path,
        root: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_checkpoints: int = DEFAULT_MAX_CHECKPOINTS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        lock_wait: float = LOCK_WAIT,
        protected: ProtectedPaths | None = None,
        skipped: Sequence[str] = (),
    ) -> None:
        """`protected`: the workspace's secret files (default: Plansight's defaults and the
        workspace's .plansightignore); `skipped`: folders (relative) never captured nor
        restored: Plansight's state inside the workspace."""
        self.directory = directory
        self.skipped = tuple(skipped)
        self.root = Path(os.path.realpath(root))
        self.protected = protected if protected is not None else ProtectedPaths(self.root)
        self.control = ControlFiles(self.root, self.protected.options.control)
        self.max_file_bytes = max_file_bytes
        self.max_checkpoints = max(max_checkpoints, MIN_KEPT)
        self.max_bytes = max_bytes
        self.lock_wait = lock_wait
        self.git_dir = directory / "git"
        self.manifest = Manifest(directory / "checkpoints.jsonl")
        self.interrupted_restore: list[str] = []  # paths of a restore a kill cut short
        self._lock = threading.RLock()
        self._lock_fd: int | None = None
        self._repository: ShadowRepository | None = None
        self._scan_first = False  # the next snapshot scans, whatever it is asked
        self._ignore_sources: GitIgnoreSources | None = None  # found on open
        self._read_only = False  # opened by open_read_only: the manifest is read again each time

    # ----- opening ---------------------------------------------------------------------------

    def open_read_only(self) -> None:
        """Open the store to read it only, beside the server that keeps it (no folder lock
        taken, nothing created, repaired or removed: reads of our own repository, `ls-tree`
        and `cat-file`, write nothing); a store never created lists no checkpoints.
        CheckpointsUnavailable without git."""
        with self._lock:
            if self._repository is not None:
                return
            git = Git(_git_program(), self.git_dir, self.root, self.directory / "home")
            self.manifest.load(repair=False)
            self._read_only = True
            self._repository = ShadowRepository(git, self.directory / "no-hooks")

    def open(self) -> None:
        """Make the repository usable (creating it the first time); CheckpointsUnavailable."""
        with self._lock:
            if self._repository is not None:
                return
            exe = _git_program()
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._take_folder_lock()
            except OSError as err:
                raise CheckpointsUnavailable(
                    f"checkpoints are off: cannot use {self.directory} ({err.strerror or err})"
                ) from err
            try:
                home = self.directory / "home"  # an empty HOME: no one's dotfiles
                home.mkdir(exist_ok=True)
                git = Git(exe, self.git_dir, self.root, home, self._lock_fd)
                repository = ShadowRepository(git, self.directory / "no-hooks")
                self._recover_journal()
                # A merge's temporary files (restore.py), left if a kill came mid-way.
                shutil.rmtree(self.directory / _SCRATCH, ignore_errors=True)
                repository.remove_leftovers()
                if not repository.exists():
                    self.manifest.path.unlink(missing_ok=True)  # nothing to restore from
                    repository.create()
                self._ignore_sources = GitIgnoreSources.find(self.root)
                repository.configure(self._excludes())
                self.manifest.load()
                self._reconcile(repository)
            except (OSError, GitError) as err:
                self._release_folder_lock()
                raise CheckpointsUnavailable(f"checkpoints are off: {err}") from err
            self._repository = repository

    def close(self) -> None:
        with self._lock:
            self._repository = None
            self._release_folder_lock()

    def _take_folder_lock(self) -> None:
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.lock_wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                # Held by another server, or by a git command a killed server left running
                # (it ends within moments): wait a little for the latter.
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise CheckpointsUnavailable(
                        "checkpoints are off: another Plansight server is using this "
                        f"workspace's checkpoints ({self.directory})"
                    ) from None
                time.sleep(0.05)
        self._lock_fd = fd

    def _release_folder_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    def _excludes(self) -> list[str]:
        """The user's workspace-wide ignore rules, then Plansight's own (last: they win)."""
        sources = self._ignore_sources
        # The secrets first: the user's own rules after them may re-include what they ignore
        # (the scan checks every path against the secrets' rules all the same).
        excludes = self.protected.patterns()
        excludes += sources.lines() if sources is not None else []
        excludes += BUILTIN_EXCLUDES
        storage = Path(os.path.realpath(self.directory))
        if storage.is_relative_to(self.root):  # storage inside the workspace: never itself
            excludes.append("/" + storage.relative_to(self.root).as_posix() + "/")
        excludes += [f"/{_escaped(folder)}/" for folder in self.skipped]
        return excludes

    def _reconcile(self, repository: ShadowRepository) -> None:
        """Make the refs and HEAD say what the manifest says (a kill may have come between)."""
        kept = self.manifest.checkpoints
        missing = repository.missing(c.commit for c in kept)
        if missing:
            log.error("%d checkpoints lost their objects; dropping them", len(missing))
            self.manifest.keep([c for c in kept if c.commit not in missing])
            kept = self.manifest.checkpoints
        refs = repository.refs(_REF)
        wanted = {f"{_REF}{c.seq}": c.commit for c in kept}
        updates: dict[str, str | None] = {ref: None for ref in refs if ref not in wanted}
        updates.update({ref: sha for ref, sha in wanted.items() if refs.get(ref) != sha})
        if kept and repository.head() != kept[-1].commit:
            updates["HEAD"] = kept[-1].commit
        repository.update_refs(updates)
        # Killed between hashing files into the index and recording their checkpoint: the
        # index is ahead of the last checkpoint, and only a scan records those changes as such.
        self._scan_first = bool(kept) and repository.write_tree() != kept[-1].tree

    def _recover_journal(self) -> None:
        journal = self.directory / _JOURNAL
        paths = read_journal(journal)
        if paths is None:
            return
        self.interrupted_restore = paths
        files.remove_temp_files(self.root, paths)
        log.warning(
            "a restore of %d files was cut short; each is either as it was or restored",
            len(paths),
        )
        journal.unlink(missing_ok=True)

    def _repo(self) -> ShadowRepository:
        if self._repository is None:
            raise CheckpointError("the checkpoint store is not open")
        return self._repository

    # ----- reading ---------------------------------------------------------------------------

    @property
    def session(self) -> int:
        return self.manifest.session

    def checkpoints(self) -> list[Checkpoint]:
        """All kept checkpoints, oldest first."""
        with self._lock:
            if self._read_only:  # as the server keeping them has them now
                self.manifest.load(repair=False)
            return list(self.manifest.checkpoints)

    def get(self, checkpoint_id: str) -> Checkpoint:
        with self._lock:
            for checkpoint in self.manifest.checkpoints:
                if checkpoint.id == checkpoint_id:
                    return checkpoint
        raise CheckpointNotFound(
            f"there is no checkpoint {checkpoint_id!r} (it may have been pruned: the newest "
            f"{self.max_checkpoints} are kept)"
        )

    def latest(self) -> Checkpoint | None:
        with self._lock:
            return self.manifest.checkpoints[-1] if self.manifest.checkpoints else None

    def item_start(self, todo_id: str) -> Checkpoint | None:
        """The first checkpoint taken as this item (of the current session) became in progress."""
        with self._lock:
            for checkpoint in self.manifest.checkpoints:
                if (
                    checkpoint.session == self.session
                    and checkpoint.kind == "itemStart"
                    and checkpoint.todo_id == todo_id
                ):
                    return checkpoint
        return None

    def restore_target(
        self, *, checkpoint: str | None = None, todo_id: str | None = None
    ) -> Checkpoint | None:
        """What a restore goes back to as a whole (for the conversation): the checkpoint, or
        for a step the one taken as it became in progress (else the one before its first
        change)."""
        with self._lock:
            if checkpoint is not None:
                return self.get(checkpoint)
            if todo_id is None:
                raise CheckpointError("give either a checkpoint or a todoId to restore")
            started = self.item_start(todo_id)
            if started is not None:
                return started
            known = [b for b in self.step_changes(todo_id).values() if b is not None]
            return min(known, key=lambda c: c.seq, default=None)

    def step_changes(self, todo_id: str) -> dict[str, Checkpoint | None]:
        """The files this item's edits and commands changed, each with the checkpoint holding
        it as it was before the item changed it (None when that checkpoint was pruned)."""
        with self._lock:
            return step_baselines(self.manifest.checkpoints, self.session, todo_id)

    def steps(self) -> dict[str, list[StepFile]]:
        """Each plan item of the current session with the files its edits and commands changed
        (in the order they were first changed) and that differ now from how they were before it
        (as the latest checkpoint holds them), each with its checkpoint from before the item
        changed it and what undoing the item would do to it."""
        with self._lock:
            repository = self._repo()
            latest = self.latest()
            session = [c for c in self.manifest.checkpoints if c.session == self.session]
            items: list[str] = []
            for checkpoint in session:
                if checkpoint.todo_id is not None and checkpoint.todo_id not in items:
                    if checkpoint.kind in AGENT_KINDS:
                        items.append(checkpoint.todo_id)
            found: dict[str, list[StepFile]] = {}
            steps = {t: step_baselines(self.manifest.checkpoints, self.session, t) for t in items}
            everything = sorted({p for files_of in steps.values() for p in files_of})
            # "Now" is the latest checkpoint (taken after each change the agent makes).
            now = repository.ls_tree(latest.tree, everything) if latest and everything else {}
            held: dict[int, dict[str, tuple[int, str]]] = {}
            for files_of in steps.values():
                for start in {b.seq: b for b in files_of.values() if b is not None}.values():
                    if start.seq not in held:
                        wanted = [p for p, b in files_of.items() if b is start]
                        held[start.seq] = repository.ls_tree(start.tree, wanted)
            # Each file as it was before each item that changed it, oldest first: a file now as
            # it was before an earlier item holds nothing of a later one's change (a forced undo
            # of the earlier item took it back too), so the later item no longer lists it.
            befores: dict[str, list[tuple[int, tuple[int, str] | None]]] = {}
            for files_of in steps.values():
                for path, baseline in files_of.items():
                    if baseline is not None:
                        before_of = held.get(baseline.seq, {}).get(path)
                        befores.setdefault(path, []).append((baseline.seq, before_of))
            for todo_id, files_of in steps.items():
                listed: list[StepFile] = []
                for path, baseline in files_of.items():
                    current = now.get(path)
                    change: Literal["added", "modified", "deleted"]
                    if baseline is None:
                        change = "modified" if current is not None else "deleted"
                        listed.append(StepFile(path, None, change))
                        continue
                    before = held.get(baseline.seq, {}).get(path)
                    if before == current:
                        continue  # as it was before the step (undone, or made and removed)
                    if any(
                        seq < baseline.seq and earlier == current
                        for seq, earlier in befores.get(path, [])
                    ):
                        continue  # as it was before an earlier step: this one's change is gone
                    change = (
                        "added" if before is None else "deleted" if current is None else "modified"
                    )
                    listed.append(StepFile(path, baseline, change))
                found[todo_id] = listed
            return found

    def file_at(self, checkpoint_id: str, path: str) -> bytes | None:
        """A file's bytes at a checkpoint (a link's target for a link); None if it had none."""
        with self._lock:
            checkpoint = self.get(checkpoint_id)
            repository = self._repo()
            entry = repository.ls_tree(checkpoint.tree, [path]).get(path)
            return None if entry is None else repository.blobs([entry[1]])[entry[1]]

    # ----- snapshots -------------------------------------------------------------------------

    def new_session(self) -> int:
        """A new conversation begins: item ids from now on are those of a new plan."""
        with self._lock:
            return self.manifest.start_session()

    def resume_session(self, session_id: str, plan_id: str) -> int:
        """Another of the workspace's sessions is taken up again (Manifest.resume_session)."""
        with self._lock:
            return self.manifest.resume_session(session_id, plan_id)

    def snapshot(
        self,
        kind: Kind,
        label: str,
        *,
        todo_id: str | None = None,
        agent: Iterable[str] = (),
        agent_all: bool = False,
        only_if_changed: bool = False,
        extra: Mapping[str, Any] | None = None,
        only: Sequence[str] | None = None,
    ) -> Checkpoint | None:
        """Record the workspace as it is now; None when `only_if_changed` and nothing changed.

        `agent`: the paths the agent itself changed since the last checkpoint (`agent_all`:
        every change found is the agent's, as after its command). `only`: look at these paths
        alone (no `git status`, so a few milliseconds on any workspace), for when the caller
        knows what it changed; what anyone else changed meanwhile is then found, as theirs,
        by the next snapshot that looks at everything.
        """
        with self._lock:
            return self._snapshot(
                kind,
                label,
                todo_id=todo_id,
                agent=set(agent),
                agent_all=agent_all,
                only_if_changed=only_if_changed,
                extra=extra,
                only=only,
            )

    def _snapshot(
        self,
        kind: Kind,
        label: str,
        *,
        todo_id: str | None,
        agent: set[str],
        agent_all: bool = False,
        only_if_changed: bool = False,
        extra: Mapping[str, Any] | None = None,
        only: Sequence[str] | None = None,
    ) -> Checkpoint | None:
        repository = self._repo()
        last = self.latest()
        if self._scan_first:
            only, self._scan_first = None, False
        if only is None:  # `git status` applies the excludes (naming paths, nothing does)
            repository.set_excludes(self._excludes())
        try:
            scan = self._scan(repository, only)
        except GitError as err:
            if "index" not in str(err):
                raise
            # A damaged index (git replaces it atomically, so it should not happen): rebuild.
            log.error("the checkpoint index is unreadable (%s); rebuilding it", err)
            repository.remove_index()
            scan = self._scan(repository, None)
        repository.stage(scan.update, scan.drop)
        if scan.update or scan.drop or last is None:
            tree = repository.write_tree()
        else:
            tree = last.tree
        changed = set(scan.changed)
        uncaptured = scan.uncaptured
        if last is not None:
            if only is not None:  # the other uncaptured files are as the last scan saw them
                uncaptured = {
                    **{p: r for p, r in last.uncaptured.items() if p not in only},
                    **uncaptured,
                }
            changed |= set(uncaptured).symmetric_difference(last.uncaptured)
        if only_if_changed and last is not None and not changed and tree == last.tree:
            return None
        seq = self.manifest.next_seq
        commit = repository.commit(tree, f"{seq} {kind}: {label}")
        checkpoint = Checkpoint(
            seq=seq,
            commit=commit,
            tree=tree,
            kind=kind,
            label=label,
            created_at=_now(),
            session=self.session,
            todo_id=todo_id,
            # The very first snapshot "adds" every file: that is no change anyone made.
            changed=tuple(sorted(changed)) if last is not None else (),
            agent=tuple(sorted(changed if agent_all else agent & changed)),
            uncaptured=dict(sorted(uncaptured.items())),
            extra=dict(extra or {}),
        )
        self.manifest.append(checkpoint)  # from here on the checkpoint exists (see _reconcile)
        repository.point(commit, f"{_REF}{seq}")
        return checkpoint

    def _scan(self, repository: ShadowRepository, only: Sequence[str] | None) -> _Scan:
        """What changed since the index (the last checkpoint), and what cannot be captured.

        `only`: look at these paths alone, without `git status` (the caller knows that
        nothing else changed, as after a restore).
        """
        if only is None:
            entries = [(s.path, s.untracked, s.nested_repository) for s in repository.status()]
        else:
            entries = [(os.fsencode(p), False, False) for p in only]
        scan = _Scan(update=[], drop=[], changed=set(), uncaptured={})
        secret = self.protected.matcher()
        for raw, untracked, nested in entries:
            path = os.fsdecode(raw)
            if nested:
                scan.uncaptured[path] = "repository"
                continue
            try:
                st: os.stat_result | None = os.lstat(self.root / path)
            except FileNotFoundError:
                st = None
            except OSError:
                continue
            reason = self._uncapturable(path, st, secret)
            if reason is not None:
                scan.uncaptured[path] = reason
                if not untracked:
                    scan.drop.append(raw)
                    scan.changed.add(path)
                continue
            if st is None and untracked:
                continue  # gone again since git listed it
            if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                if not untracked:  # a file became a folder (its files are listed too)
                    scan.drop.append(raw)
                    scan.changed.add(path)
                continue
            scan.update.append(raw)
            scan.changed.add(path)
        return scan

    def _uncapturable(
        self, path: str, st: os.stat_result | None, secret: Callable[[str, bool], bool]
    ) -> str | None:
        if st is not None and (
            secret(path, False)
            # A link is protected by its target too (a few more system calls: links only).
            or (stat.S_ISLNK(st.st_mode) and self.protected.protects(path))
        ):
            return "protected"
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > self.max_file_bytes:
            return "large"
        if not _readable(st) and not os.access(self.root / path, os.R_OK):
            return "unreadable"
        return None

    # ----- restoring -------------------------------------------------------------------------

    def restore(
        self,
        request: RestoreRequest,
        *,
        unsaved: Callable[[str], bool] = lambda path: False,
        current_todo: str | None = None,
        before_extra: Mapping[str, Any] | None = None,
        after_extra: Mapping[str, Any] | None = None,
    ) -> RestoreResult:
        """Put files back as they were at `request.checkpoint`, or as they were before item
        `request.todo_id` (of the current session) changed them; `request.paths` limits it to
        those files (or folders). The request's `conversation` is the embedder's business.

        Undoing an item takes back its own change to each file and keeps what later items
        changed (a three-way merge); where they overlap the file is skipped naming them, or
        with `force` goes back to how it was before the item (`also_undone` names them).
        Skipped, with the reason: files `unsaved` says the editor holds unsaved changes of
        (always), files changed since by anyone but the agent (unless `force`), and files the
        checkpoints do not hold (restore.py). `restored`: files written back; `deleted`: those
        removed. A checkpoint is taken first (`before`) and, when
        anything was restored, after (`after`, its changes the agent's). `current_todo`: the
        plan item in progress, for those two checkpoints; `before_extra`, `after_extra`: what
        the embedder keeps with them. `dry_run`: change nothing, say what a restore would do
        (`restored`, `deleted` then list what it would put back or remove; what someone
        changed since the last checkpoint is recorded first, as a restore would).
        """
        if (request.checkpoint is None) == (request.todo_id is None):
            raise CheckpointError("give either a checkpoint or a todoId to restore")
        selected = selector(request.paths)
        with self._lock:
            repository = self._repo()
            aim = self._aim(request, selected)
            before = self._before_restore(aim.doing, request.dry_run, current_todo, before_extra)
            planner = Planner(repository, self.manifest.checkpoints, self.root)
            changes, not_held = planner.changes(before, aim.groups, selected)
            skipped = [*aim.skipped, *not_held]
            actions, lost = self._decide(
                planner, changes, before, request, selected, unsaved, skipped
            )
            deleting = {a.path for a in actions if a.target_mode == 0}
            done_paths: list[str] = [a.path for a in actions]
            after = None
            if not request.dry_run:
                done_paths, failed = apply(
                    self.root, repository, actions, self.directory / _JOURNAL
                )
                skipped += failed
                if done_paths:
                    count = f"{len(done_paths)} file{'s' if len(done_paths) != 1 else ''}"
                    after = self._snapshot(
                        "restore",
                        f"{aim.done} ({count})",
                        todo_id=current_todo,
                        agent=set(done_paths),
                        only_if_changed=True,
                        extra=after_extra,
                        only=done_paths,
                    )
            return RestoreResult(
                restored=tuple(sorted(p for p in done_paths if p not in deleting)),
                deleted=tuple(sorted(p for p in done_paths if p in deleting)),
                skipped=tuple(sorted(skipped, key=lambda s: s.path)),
                also_undone=tuple(
                    AlsoUndone(path, lost[path]) for path in sorted(done_paths) if path in lost
                ),
                before=before,
                after=after,
                target=aim.target,
            )

    def _aim(self, request: RestoreRequest, selected: Callable[[str], bool]) -> _Aim:
        """What a restore puts back: the files of each baseline checkpoint (None: all of a
        checkpoint's), and the files it cannot (their baseline pruned)."""
        if request.checkpoint is not None:
            chosen = self.get(request.checkpoint)
            assert chosen is not None
            return _Aim(
                {chosen.seq: (chosen, None)},
                [],
                chosen,
                f"restoring checkpoint {request.checkpoint}",
                f"Restored checkpoint {request.checkpoint}",
            )
        todo_id = request.todo_id
        assert todo_id is not None
        groups: dict[int, tuple[Checkpoint, list[str] | None]] = {}
        skipped: list[Skipped] = []
        baselines = step_baselines(self.manifest.checkpoints, self.session, todo_id)
        for path, baseline in sorted(baselines.items()):
            if not selected(path):
                continue
            if baseline is None:
                skipped.append(Skipped(path, "the checkpoint from before it was pruned"))
            else:
                group = groups.setdefault(baseline.seq, (baseline, []))[1]
                assert group is not None
                group.append(path)
        target = self.restore_target(todo_id=todo_id)
        return _Aim(groups, skipped, target, f"undoing step #{todo_id}", f"Undid step #{todo_id}")

    def _before_restore(
        self,
        doing: str,
        dry_run: bool,
        current_todo: str | None,
        extra: Mapping[str, Any] | None,
    ) -> Checkpoint:
        """The checkpoint a restore starts from: taken now (so the restore can be undone), or
        for a dry run only what someone changed since the last one."""
        if dry_run:
            found = self._snapshot(
                "outside",
                "Changed outside Plansight",
                todo_id=current_todo,
                agent=set(),
                only_if_changed=True,
                extra=extra,
            )
            before: Checkpoint | None = found or self.latest()
        else:
            before = self._snapshot(
                "beforeRestore", f"Before {doing}", todo_id=current_todo, agent=set(), extra=extra
            )
        assert before is not None
        return before

    def _decide(
        self,
        planner: Planner,
        changes: list[Change],
        before: Checkpoint,
        request: RestoreRequest,
        selected: Callable[[str], bool],
        unsaved: Callable[[str], bool],
        skipped: list[Skipped],
    ) -> tuple[list[Change], dict[str, tuple[str, ...]]]:
        """Which changes a restore makes; the others are added to `skipped` with the reason.
        Also what undoing an item takes of later items' work (`force`), by path."""
        force, todo_id = request.force, request.todo_id
        # Secrets are left alone, and named: those checkpoints held before they were
        # protected, and those they never held.
        secret = UNCAPTURED_REASONS["protected"]
        named = {s.path for s in skipped}
        files, folders = self.protected.files_to_hide()
        secrets = {p.relative_to(self.root).as_posix() for p in [*files, *folders]}
        secrets |= {p for p, why in before.uncaptured.items() if why == "protected"}
        skipped += [
            Skipped(path, secret)
            for path in sorted(secrets)
            if selected(path) and path not in named
        ]
        named |= secrets
        actions: list[Change] = []
        lost: dict[str, tuple[str, ...]] = {}
        for change in changes:
            if self.protected.protects(change.path):
                if change.path not in named:
                    skipped.append(Skipped(change.path, secret))
                continue
            reason = planner.refusal(change, before, force, unsaved)
            if reason is None and self.control.is_control(change.path):
                # Putting back a control file (an editor's settings, say) changes what the
                # user's tools do next: only a restore the user forced does it, and never
                # anything in a `.git` folder.
                if is_git_internal(change.path):
                    reason = CONTROL_GIT_REASON
                elif not force:
                    reason = CONTROL_REASON
            if reason is None and todo_id is not None:
                # Undoing an item takes back its own change only (restore.py).
                revert = planner.revert(
                    change, todo_id, self.session, self.directory / _SCRATCH, force
                )
                if revert.change is None:
                    if revert.reason is not None:
                        skipped.append(Skipped(change.path, revert.reason))
                    continue
                change = revert.change
                if revert.lost:
                    lost[change.path] = revert.lost
            if reason is None:
                actions.append(change)
            else:
                skipped.append(Skipped(change.path, reason))
        return actions, lost

    # ----- keeping storage bounded ----------------------------------------------------------

    @property
    def lock(self) -> threading.RLock:
        """Held by every change of the repository (a prune among them): others' writes of
        objects into it (a parallel worker's change set, plansight/parallel) hold it too, so
        that no prune removes their objects before a ref keeps them."""
        return self._lock

    def storage_bytes(self) -> int:
        """What the repository's objects take on disk."""
        with self._lock:
            return self._repo().storage_bytes()

    def maintain(self) -> int:
        """Prune old checkpoints and pack the repository; returns how many were pruned.

        Takes a second or more on a large workspace (a repack): call it when nothing waits.
        """
        with self._lock:
            repository = self._repo()
            pruned = self._prune_to(repository, self.max_checkpoints)
            counts = repository.count_objects()
            if pruned or counts.get("count", 0) > 1000 or counts.get("packs", 0) > 20:
                repository.gc()
            while (
                len(self.manifest.checkpoints) > MIN_KEPT
                and repository.storage_bytes() > self.max_bytes
            ):
                pruned += self._prune_to(
                    repository, max(MIN_KEPT, len(self.manifest.checkpoints) // 2)
                )
                repository.gc()
            return pruned

    def _prune_to(self, repository: ShadowRepository, keep: int) -> int:
        kept = self.manifest.checkpoints
        if len(kept) <= keep:
            return 0
        dropped, kept = kept[:-keep], kept[-keep:]
        self.manifest.keep(kept)
        repository.update_refs({f"{_REF}{c.seq}": None for c in dropped})
        log.info("pruned %d checkpoints (keeping %d)", len(dropped), len(kept))
        return len(dropped)


def _git_program() -> str:
    """The git program the checkpoints run; CheckpointsUnavailable, in words, without one."""
    try:
        exe, _ = find_git()
    except GitUnavailable as err:
        raise CheckpointsUnavailable(str(err)) from err
    return exe
