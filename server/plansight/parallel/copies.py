"""A worker's copy of the workspace, and its change set, made with git on Plansight's own
checkpoint repository (never the user's `.git`).

The copy is the tree of a checkpoint (the workspace as it is at the start: tracked and
untracked files, `.gitignore` honoured, protected files and files too large to checkpoint left
out, as checkpoints leave them) checked out into a folder under Plansight's storage with an
index of the worker's own: the objects are already in the repository, so nothing is hashed and
only the files are written (several writers at once), or, when the last finished worker's
folder is kept, only the files that differ from it. Hard links would be cheaper still, but a
command that writes a file in place (`>>`, `sed -i` on some systems) would then write the
user's file too.

When the worker ends, its folder is hashed into the same repository with its index (only what
changed since the checkout is read again: git's stat cache) and the result tree, with the base
it started from, is kept by refs under `refs/plansight/workers/`, which no checkpoint prune
removes: the change set survives a restart and costs only the changed files' objects.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from plansight.checkpoints.git import Git

REF_PREFIX = "refs/plansight/workers/"
# The worker's own index is a plain one: the repository's split index and untracked cache are
# tuned for the checkpoints' index, and a split index would leave shared files in its folder.
INDEX_CONFIG = ("core.splitIndex=false", "core.untrackedCache=false", "core.fsmonitor=false")
# Parallel checkout (git 2.32+; an older git ignores the keys): four writers whatever the
# cores, as the wait is on the file system more than on the CPU; below 100 files one is enough.
# The last finished worker's folder and index, kept for the next worker's copy.
SPARE = ".spare"
CHECKOUT_CONFIG = ("checkout.workers=4", "checkout.thresholdForParallelism=100")


@dataclass(frozen=True)
class FileChange:
    """One file a worker changed: lines added and removed (0 and 0 for a binary file)."""

    path: str
    added: int
    removed: int
    status: str  # git's: A (added), M (modified), D (deleted), T (type changed)
    old_mode: int
    new_mode: int
    old_sha: str
    new_sha: str
    binary: bool = False

    def to_wire(self) -> dict[str, object]:
        return {"path": self.path, "added": self.added, "removed": self.removed}

    def to_record(self) -> dict[str, object]:
        return {
            "path": self.path,
            "added": self.added,
            "removed": self.removed,
            "status": self.status,
            "oldMode": self.old_mode,
            "newMode": self.new_mode,
            "oldSha": self.old_sha,
            "newSha": self.new_sha,
            "binary": self.binary,
        }

    @classmethod
    def from_record(cls, raw: dict[str, object]) -> FileChange:
        return cls(
            path=str(raw["path"]),
            added=int(str(raw["added"])),
            removed=int(str(raw["removed"])),
            status=str(raw["status"]),
            old_mode=int(str(raw["oldMode"])),
            new_mode=int(str(raw["newMode"])),
            old_sha=str(raw["oldSha"]),
            new_sha=str(raw["newSha"]),
            binary=bool(raw.get("binary", False)),
        )


class WorkerCopy:
    """git on the checkpoint repository with one worker's index and folder (blocking calls)."""

    def __init__(self, exe: str, git_dir: Path, folder: Path, index: Path, home: Path) -> None:
        self.folder = folder
        self.index = index
        self.git = Git(exe, git_dir, folder, home)
        self.git.env["GIT_INDEX_FILE"] = str(index)

    def _run(self, args: list[str], *, data: bytes | None = None, tree: bool = False) -> bytes:
        """git `args`; `tree`: in the worker's folder (else in no work tree: the folder may
        be gone already)."""
        return self.git.run(args, input=data, config=INDEX_CONFIG, work_tree=tree)

    def check_out(self, tree: str) -> None:
        """Write `tree` into the (new, empty) folder.

        One `read-tree --reset -u`: the index is written with each file's stat data, so the
        `add --all` at the worker's end reads again only the files that changed (a bare
        `checkout-index` leaves the stat data empty and the end hashed all of them again).
        The files are written by parallel checkout: on a 20,000-file tree it took 3-5 s where
        one writer took 16-40 s on the same (busy) machine; writing files is the whole cost
        of a worker's start, and waiting on the file system is what the extra writers hide.

        Cheaper still, the last finished worker's folder is reused when one is kept (`park`):
        its index knows each file's stat data, so only the files that differ from `tree` are
        written (0.1-0.2 s on 20,000 files). No hard links either way: a command writing a
        file in place would write the user's file too."""
        if self._take_spare():
            # What the last worker left that its index does not hold (ignored files, anything
            # written after its end was hashed) goes; the rest is rewritten where it differs.
            self._run(["clean", "-ffdxq"], tree=True)
        else:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.index.unlink(missing_ok=True)
            self.folder.mkdir(parents=True)
        self.git.run(
            ["read-tree", "--reset", "-u", tree],
            config=(*INDEX_CONFIG, *CHECKOUT_CONFIG),
            work_tree=True,
        )

    def result_tree(self) -> str:
        """The folder as it is now, hashed into the repository: its tree."""
        self._run(["add", "--all", "."], tree=True)
        return self._run(["write-tree"], tree=True).decode().strip()

    def keep(self, key: str, base: str, result: str) -> None:
        """Refs that keep the base and the result (as commits) from any prune."""
        commits = {
            name: self._run(["commit-tree", tree, "-m", f"worker {key} {name}"]).decode().strip()
            for name, tree in (("base", base), ("result", result))
        }
        commands = "".join(f"update {REF_PREFIX}{key}/{n} {sha}\n" for n, sha in commits.items())
        self._run(["update-ref", "--stdin"], data=commands.encode())

    def changes(self, base: str, result: str) -> list[FileChange]:
        """What differs between the two trees, file by file."""
        raw = self._run(["diff-tree", "-r", "--no-renames", "-z", "--raw", base, result])
        counts = self._numstat(base, result)
        found: list[FileChange] = []
        parts = raw.split(b"\0")
        for i in range(0, len(parts) - 1, 2):
            head, name = parts[i], parts[i + 1]
            if not head.startswith(b":"):
                continue
            old_mode, new_mode, old_sha, new_sha, status = head[1:].decode().split(" ")
            path = os.fsdecode(name)
            added, removed, binary = counts.get(path, (0, 0, False))
            found.append(
                FileChange(
                    path,
                    added,
                    removed,
                    status[:1],
                    int(old_mode, 8),
                    int(new_mode, 8),
                    old_sha,
                    new_sha,
                    binary,
                )
            )
        return found

    def _numstat(self, base: str, result: str) -> dict[str, tuple[int, int, bool]]:
        """Lines added and removed per file. Counted here: the repository marks every path
        `-diff` (bytes kept exactly as they are), which makes git count every file as binary."""
        raw = self._run(["diff-tree", "-r", "--no-renames", "-z", base, result])
        parts = raw.split(b"\0")
        pairs: dict[str, tuple[str, str]] = {}
        for i in range(0, len(parts) - 1, 2):
            if parts[i].startswith(b":"):
                fields = parts[i][1:].decode().split(" ")
                pairs[os.fsdecode(parts[i + 1])] = (fields[2], fields[3])
        blobs = self.blobs([sha for pair in pairs.values() for sha in pair])
        counts: dict[str, tuple[int, int, bool]] = {}
        for path, (old, new) in pairs.items():
            before, after = blobs.get(old, b""), blobs.get(new, b"")
            if b"\0" in before or b"\0" in after:
                counts[path] = (0, 0, True)
                continue
            added = removed = 0
            matcher = difflib.SequenceMatcher(
                None, before.splitlines(), after.splitlines(), autojunk=False
            )
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag in ("replace", "delete"):
                    removed += i2 - i1
                if tag in ("replace", "insert"):
                    added += j2 - j1
            counts[path] = (added, removed, False)
        return counts

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The contents of these blobs."""
        wanted = [s for s in dict.fromkeys(shas) if s and set(s) != {"0"}]
        if not wanted:
            return {}
        out = self.git.run(
            ["cat-file", "--batch"],
            input="".join(f"{s}\n" for s in wanted).encode(),
            work_tree=False,
        )
        found: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            size = int(out[pos:end].split()[2])
            found[sha] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return found

    def merge(
        self, ours: bytes, base: bytes, theirs: bytes, scratch: Path, label: str
    ) -> tuple[bytes, bool]:
        """The three-way merge of the workspace's text (`ours`) and the worker's (`theirs`)
        from the text the worker started from: the merged bytes, and whether the two changed
        the same lines (then both sides are in the text between conflict markers)."""
        scratch.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=scratch, prefix="merge-") as folder:
            names = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                path = Path(folder) / name
                path.write_bytes(data)
                names.append(str(path))
            # The exit code is the number of conflicts (negative on an error such as binary).
            code, merged = self.git.run_with_code(
                work_tree=False,
                args=["merge-file", "-p", "-L", "workspace", "-L", "base", "-L", label, *names],
                ok_codes=tuple(range(256)),
            )
        return merged, code != 0

    def forget(self, key: str) -> None:
        """The change set's refs go (its objects go with the next prune)."""
        commands = "".join(f"delete {REF_PREFIX}{key}/{n}\n" for n in ("base", "result"))
        self.git.run(
            ["update-ref", "--stdin"],
            input=commands.encode(),
            ok_codes=(0, 1, 128),
            work_tree=False,
        )

    @property
    def _spare(self) -> Path:
        # Beside the items' folders (`<workers>/<key>/tree`); no item's key starts with a dot.
        return self.folder.parent.parent / SPARE

    def _take_spare(self) -> bool:
        """Move the kept folder and its index into place: True when there was one. Renames
        only, so two workers starting at once never share one (the loser checks out anew)."""
        taken = self.folder.parent / SPARE
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(self._spare, taken)
        except OSError:
            return False
        try:
            shutil.rmtree(self.folder, ignore_errors=True)
            os.rename(taken / "tree", self.folder)
            os.replace(taken / "index", self.index)
            return True
        except OSError:
            # A half-taken folder is not used: files its index does not know would stay.
            shutil.rmtree(self.folder, ignore_errors=True)
            return False
        finally:
            shutil.rmtree(taken, ignore_errors=True)

    def park(self) -> None:
        """Keep the folder with its index (just written by `result_tree`, so they agree) for
        the next worker's copy; one is kept, any other is removed."""
        parking = self.folder.parent / ".parking"
        shutil.rmtree(parking, ignore_errors=True)
        try:
            parking.mkdir()
            os.rename(self.folder, parking / "tree")
            os.rename(self.index, parking / "index")
            os.rename(parking, self._spare)  # refused when one is kept already
        except OSError:
            pass
        shutil.rmtree(parking, ignore_errors=True)
        self.remove_folder()

    def remove_folder(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.index.unlink(missing_ok=True)
