"""The shadow repository: git plumbing on Plansight's own repository, one method per command.

It knows git's formats and nothing of checkpoints' meaning. Its configuration is written in
full by Plansight (no hooks, no end-of-line or filter conversion, no global excludes or
attributes; the untracked cache, a split index and index version 4, each measured to make a
snapshot faster in bench/checkpoints.py; no automatic gc), and its excludes are
Plansight's: the workspace's `.gitignore` files apply as git applies them, plus `excludes` (its
info/exclude: the store puts the user's `.git/info/exclude` and `core.excludesFile` there, read
by workspace/ignore.py, git's own reading of them being kept away from the user's config).
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plansight.checkpoints.git import Git, GitError

log = logging.getLogger(__name__)

# From this many files on, hashing writes the objects into one pack file (bulk check-in)
# instead of a loose file per object: far less to write, and a small repository.
BULK_FILES = 64
# What git says of a path below a symbolic link (a folder replaced by a link).
BEYOND_LINK = "beyond a symbolic link"
# The highest-precedence attributes: bytes go in and come out exactly as they are on disk.
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
GITLINK = 0o160000


@dataclass(frozen=True)
class Status:
    """One `git status` line: how a path differs from the repository's index (and HEAD)."""

    path: bytes
    untracked: bool
    nested_repository: bool  # an untracked folder with a repository of its own


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees (mode 0: absent on that side)."""

    path: str
    old_mode: int
    old_sha: str
    new_mode: int
    new_sha: str


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        pending = path.with_name(path.name + ".new")
        pending.write_text(text)
        os.replace(pending, path)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ShadowRepository:
    def __init__(self, git: Git, hooks_dir: Path) -> None:
        self.git = git
        self.git_dir = git.git_dir
        self.hooks_dir = hooks_dir

    # ----- setting up ------------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file() and (self.git_dir / "objects").is_dir()

    def create(self) -> None:
        """A new, empty repository (whatever a kill left of an earlier attempt goes)."""
        shutil.rmtree(self.git_dir, ignore_errors=True)
        self.git.run(["init", "-q", "--template="], work_tree=False)

    def configure(self, excludes: Iterable[str]) -> None:
        """Write the whole configuration, the excludes and the attributes as Plansight wants."""
        self.hooks_dir.mkdir(exist_ok=True)
        config = "\n".join(
            [
                "[core]",
                "\trepositoryformatversion = 0",
                "\tfilemode = true",
                "\tbare = false",
                "\tlogAllRefUpdates = false",
                "\tautocrlf = false",
                "\tsafecrlf = false",
                "\tsymlinks = true",
                "\tignoreCase = false",
                "\tfsmonitor = false",
                "\tuntrackedCache = true",
                "\tsplitIndex = true",
                "\tquotePath = false",
                f"\thooksPath = {_quote(str(self.hooks_dir))}",
                f"\texcludesFile = {_quote(os.devnull)}",
                f"\tattributesFile = {_quote(os.devnull)}",
                "[index]",
                "\tversion = 4",
                # The untracked cache serves `--untracked-files=all` only when configured so.
                "[status]",
                "\tshowUntrackedFiles = all",
                "[gc]",
                "\tauto = 0",
                "[commit]",
                "\tgpgSign = false",
                "[pack]",
                "\tthreads = 1",
                "",
            ]
        )
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        _write_if_changed(self.git_dir / "config", config)
        _write_if_changed(info / "attributes", _ATTRIBUTES)
        self.set_excludes(excludes)

    def set_excludes(self, excludes: Iterable[str]) -> None:
        """Make info/exclude hold these patterns (written only when they changed: git's
        untracked cache starts again whenever the file does)."""
        _write_if_changed(
            self.git_dir / "info" / "exclude", "".join(f"{line}\n" for line in excludes)
        )

    def remove_leftovers(self) -> None:
        """Lock files and temporary objects of git commands killed mid-way.

        Only safe while nothing else uses the repository: the store holds its folder lock,
        which every git command it starts inherits.
        """
        if not self.git_dir.is_dir():
            return
        for dirpath, _dirnames, filenames in os.walk(self.git_dir):
            for name in filenames:
                if (
                    name.endswith(".lock")
                    or name.startswith(("tmp_", ".tmp-", "sharedindex_"))
                    or name == "gc.pid"
                ):
                    try:
                        os.unlink(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    log.info("removed %s, left by an interrupted git command", name)

    def remove_index(self) -> None:
        (self.git_dir / "index").unlink(missing_ok=True)

    # ----- reading the work tree -------------------------------------------------------------

    def status(self) -> list[Status]:
        """What differs from the index (worktree) or the index from HEAD, untracked included."""
        out = self.git.run(
            [
                "status",
                "--porcelain",
                "-z",
                "--untracked-files=all",
                "--no-renames",
                "--ignore-submodules=all",
            ]
        )
        found: list[Status] = []
        for entry in out.split(b"\0"):
            if len(entry) < 4:
                continue
            xy, raw = entry[:2], entry[3:]
            untracked = xy == b"??"
            nested = untracked and raw.endswith(b"/")
            found.append(Status(raw.rstrip(b"/") if nested else raw, untracked, nested))
        return found

    def stage(self, update: Sequence[bytes], drop: Sequence[bytes]) -> None:
        """Hash `update` into the index (a missing one leaves it); take `drop` out of it."""
        if update:
            try:
                self._update(update)
            except GitError as err:
                if BEYOND_LINK not in str(err):
                    raise
                # A folder was replaced by a symbolic link: git refuses the paths it held
                # ("beyond a symbolic link"), and the whole snapshot (and with it every
                # restore, which snapshots first) failed. Their entries go, the link is
                # recorded as the link it is, and nothing is read through it. Looked for
                # only after git refused: the common snapshot pays nothing.
                beyond = [p for p in update if self._beyond_link(p)]
                self._force_remove(beyond)
                left = set(beyond)
                self._update([p for p in update if p not in left])
        if drop:
            self.git.run(
                ["update-index", "--force-remove", "-z", "--stdin"],
                input=b"\0".join(drop) + b"\0",
            )

    def _update(self, paths: Sequence[bytes]) -> None:
        if not paths:
            return
        bulk = ["core.bigFileThreshold=1"] if len(paths) >= BULK_FILES else []
        self.git.run(
            ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
            input=b"\0".join(paths) + b"\0",
            config=bulk,
        )

    def _force_remove(self, paths: Sequence[bytes]) -> None:
        if paths:
            self.git.run(
                ["update-index", "--force-remove", "-z", "--stdin"],
                input=b"\0".join(paths) + b"\0",
            )

    def _beyond_link(self, path: bytes) -> bool:
        """Whether a folder on the way to `path` (in the work tree) is a link or no folder."""
        folder = os.fsencode(self.git.work_tree)
        for part in path.split(b"/")[:-1]:
            folder = os.path.join(folder, part)
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return True
            except OSError:
                return False  # gone: git removes its entry itself
        return False

    def write_tree(self) -> str:
        return self.git.run(["write-tree"]).decode().strip()

    # ----- commits and refs ------------------------------------------------------------------

    def commit(self, tree: str, message: str) -> str:
        """A parentless commit of `tree`: pruning one never keeps another alive."""
        return self.git.run(["commit-tree", tree, "-m", message]).decode().strip()

    def point(self, commit: str, ref: str) -> None:
        """Make `commit` HEAD (status compares with it) and keep it alive with `ref`."""
        self.git.run(
            ["update-ref", "--stdin"],
            input=f"update HEAD {commit}\ncreate {ref} {commit}\n".encode(),
        )

    def refs(self, prefix: str) -> dict[str, str]:
        listed = self.git.run(["for-each-ref", "--format=%(refname) %(objectname)", prefix])
        return dict(line.split(" ", 1) for line in listed.decode().splitlines() if line)

    def head(self) -> str | None:
        out = self.git.run(["rev-parse", "-q", "--verify", "HEAD"], ok_codes=(0, 1))
        return out.decode().strip() or None

    def update_refs(self, updates: Mapping[str, str | None]) -> None:
        """Set (sha) or delete (None) refs, HEAD included, in one transaction."""
        commands = [
            f"delete {ref}\n" if sha is None else f"update {ref} {sha}\n"
            for ref, sha in updates.items()
        ]
        if commands:
            self.git.run(["update-ref", "--stdin"], input="".join(commands).encode())

    def missing(self, shas: Iterable[str]) -> set[str]:
        wanted = list(shas)
        if not wanted:
            return set()
        out = self.git.run(
            ["cat-file", "--batch-check"], input="".join(f"{s}\n" for s in wanted).encode()
        )
        return {line.split()[0] for line in out.decode().splitlines() if line.endswith("missing")}

    # ----- reading trees ---------------------------------------------------------------------

    def diff(self, old: str, new: str, paths: Sequence[str] | None = None) -> list[TreeChange]:
        if old == new:
            return []
        args = ["diff-tree", "-r", "-z", "--no-renames", "--raw", old, new]
        if paths is not None and len(paths) <= 1000:  # pathspecs only narrow the walk
            args += ["--", *paths]
        out = self.git.run(args).split(b"\0")
        changes: list[TreeChange] = []
        for i in range(0, len(out) - 1, 2):
            meta = out[i].decode()
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, _status = meta[1:].split(" ")
            changes.append(
                TreeChange(
                    os.fsdecode(out[i + 1]), int(old_mode, 8), old_sha, int(new_mode, 8), new_sha
                )
            )
        return changes

    def ls_tree(self, tree: str, paths: Sequence[str]) -> dict[str, tuple[int, str]]:
        """Mode and blob of each of `paths` that `tree` holds as a file or link."""
        out = self.git.run(["ls-tree", "-r", "-z", "--full-tree", tree, "--", *paths])
        entries: dict[str, tuple[int, str]] = {}
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, raw = item.split(b"\t", 1)
            mode, kind, sha = meta.decode().split(" ")
            if kind == "blob":
                entries[os.fsdecode(raw)] = (int(mode, 8), sha)
        return entries

    def blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self.git.run(
            ["cat-file", "--batch"], input="".join(f"{s}\n" for s in wanted).encode()
        )
        found: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            if len(header) != 3:
                raise GitError(f"object {sha} is missing from the checkpoint repository")
            size = int(header[2])
            found[sha] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return found

    def hash_blob(self, data: bytes) -> str:
        """Store `data` as a blob (exactly these bytes, no filters); its id."""
        out = self.git.run(["hash-object", "-w", "--no-filters", "--stdin"], input=data)
        return out.decode().strip()

    def merge_blobs(self, ours: str, base: str, theirs: str, scratch: Path) -> str | None:
        """The three-way merge of blobs `ours` and `theirs` from their common `base`, stored
        as a blob (its id), or None when they conflict (or cannot be merged: binary).

        `git merge-file` of this git (2.39) reads files only: the blobs are written to a
        temporary folder inside `scratch` (Plansight's storage, never the workspace).
        """
        blobs = self.blobs([ours, base, theirs])
        scratch.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=scratch, prefix="merge-") as folder:
            names = []
            for name, sha in (("ours", ours), ("base", base), ("theirs", theirs)):
                path = Path(folder) / name
                path.write_bytes(blobs[sha])
                names.append(str(path))
            # The exit code is the number of conflicts (capped at 127), negative on an error
            # such as binary input: anything but 0 is no clean merge.
            code, merged = self.git.run_with_code(
                ["merge-file", "-p", "-q", *names], ok_codes=tuple(range(256))
            )
        return self.hash_blob(merged) if code == 0 else None

    # ----- storage ---------------------------------------------------------------------------

    def count_objects(self) -> dict[str, int]:
        out = self.git.run(["count-objects", "-v"], work_tree=False).decode()
        pairs = (line.split(": ", 1) for line in out.splitlines() if ": " in line)
        return {key: int(value) for key, value in pairs if value.strip().isdigit()}

    def storage_bytes(self) -> int:
        counts = self.count_objects()
        return (counts.get("size", 0) + counts.get("size-pack", 0)) * 1024

    def gc(self) -> None:
        """Pack everything reachable into one pack and delete every object nothing refers to."""
        self.git.run(["pack-refs", "--all", "--prune"], work_tree=False)
        self.git.run(["repack", "-a", "-d", "-q", "--no-write-bitmap-index"], work_tree=False)
        self.git.run(["prune", "--expire=now"], work_tree=False)
