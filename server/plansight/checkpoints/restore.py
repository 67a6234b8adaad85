"""What a restore puts back, file by file, what it skips and why, and putting it back.

A restore compares the workspace as it is now (the checkpoint taken first, `before`) with
what is to be put back: one checkpoint's files, or, undoing a plan item, each file the item's
edits and commands changed as it was just before the item first changed it (its *baseline*,
the checkpoint before that change). It then skips, with a reason:

- a file with unsaved changes in the editor, always;
- unless forced, a file someone other than the agent changed after its baseline: some later
  checkpoint lists it in `changed` but not in `agent` (see store.py), and a file that is there
  now though no checkpoint holds it (ignored, or over the size limit), as writing over it
  could not be undone;
- a file a checkpoint does not hold (over the size limit, a repository of its own).

Undoing a plan item reverts the item's own change to each file and nothing else, as `git
revert` does (`Planner.revert`): where later items changed the file too, the item's change is
taken back by a three-way merge onto the file as it is now (base: the file after the item,
ours: now, theirs: before it), so their changes stay. Where the two overlap (the merge
conflicts, or one side created, deleted or linked the file) the file is skipped, naming the
later items, unless forced: then it goes back to how it was before the item, and the result
names the later items whose changes were lost too (`also_undone`).

Putting back: deletions first (deepest first, then the folders they emptied), then writes,
each atomic (files.py). A journal names the files while it runs, so that the store can clean
up after a kill.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from plansight.checkpoints import files
from plansight.checkpoints.files import MODE_SYMLINK, RestoreRefused
from plansight.checkpoints.manifest import UNCAPTURED_REASONS, Checkpoint
from plansight.checkpoints.repository import GITLINK, ShadowRepository
from plansight.workspace.atomic import json_text

AGENT_KINDS = frozenset({"edit", "command"})  # a plan item's own changes


@dataclass(frozen=True)
class RestoreRequest:
    """What a user asked to restore, as it goes from the front door (the language server) to
    the store unchanged: the files of one `checkpoint`, or those plan item `todo_id` changed
    (exactly one of the two); `paths` limits it to those files or folders (relative, "/");
    with `conversation`, the conversation and plan go back too; `force`: over files someone
    else changed since; `dry_run`: change nothing, say what would be restored and skipped."""

    checkpoint: str | None = None
    todo_id: str | None = None
    paths: tuple[str, ...] | None = None
    conversation: bool = False
    force: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class AlsoUndone:
    """A file a forced undo of a plan item put back as it was before the item, losing what
    these later items (ids, in order) changed in it too."""

    path: str
    todo_ids: tuple[str, ...]


@dataclass(frozen=True)
class RestoreResult:
    restored: tuple[str, ...]  # written back, relative with "/"
    skipped: tuple[Skipped, ...]
    before: Checkpoint  # taken first: restoring to it undoes this restore
    after: Checkpoint | None  # the files as restored (None when nothing changed)
    target: Checkpoint | None  # what the conversation goes back to, if asked
    deleted: tuple[str, ...] = ()  # removed, relative with "/"
    also_undone: tuple[AlsoUndone, ...] = ()

    @property
    def changed(self) -> tuple[str, ...]:
        """Every file the restore wrote back or deleted."""
        return tuple(sorted((*self.restored, *self.deleted)))

    def to_wire(self) -> dict[str, Any]:
        """`plansight/restore`'s result (`alsoUndone` only when some work was lost)."""
        wire: dict[str, Any] = {
            "restored": list(self.restored),
            "deleted": list(self.deleted),
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }
        if self.also_undone:
            wire["alsoUndone"] = [
                {"path": a.path, "todoIds": list(a.todo_ids)} for a in self.also_undone
            ]
        return wire


@dataclass(frozen=True)
class Change:
    path: str
    current_mode: int  # 0: absent now
    target_mode: int  # 0: absent in the baseline (putting it back deletes it)
    target_sha: str  # the blob written back: the baseline's, or a merge's
    baseline: Checkpoint  # the checkpoint whose version is put back
    current_sha: str = ""  # the blob now (as the checkpoint taken first holds it)


@dataclass(frozen=True)
class Revert:
    """What undoing a plan item does to one file: `change` None when nothing (`reason` then
    says why it is skipped, if it is); `lost`: the later items whose changes go too."""

    change: Change | None
    reason: str | None = None
    lost: tuple[str, ...] = ()


def step_baselines(
    checkpoints: Sequence[Checkpoint], session: int, todo_id: str
) -> dict[str, Checkpoint | None]:
    """Each file item `todo_id`'s edits and commands changed, with the checkpoint just before
    the item first changed it (None when that one was pruned)."""
    baselines: dict[str, Checkpoint | None] = {}
    previous: Checkpoint | None = None
    for checkpoint in checkpoints:
        if (
            checkpoint.session == session
            and checkpoint.todo_id == todo_id
            and checkpoint.kind in AGENT_KINDS
        ):
            for path in checkpoint.agent:
                baselines.setdefault(path, previous)
        previous = checkpoint
    return baselines


def step_ends(
    checkpoints: Sequence[Checkpoint], session: int, todo_id: str
) -> dict[str, Checkpoint]:
    """Each file item `todo_id`'s edits and commands changed, with the checkpoint of the
    item's last change to it (which holds the file as the item left it)."""
    ends: dict[str, Checkpoint] = {}
    for checkpoint in checkpoints:
        if (
            checkpoint.session == session
            and checkpoint.todo_id == todo_id
            and checkpoint.kind in AGENT_KINDS
        ):
            for path in checkpoint.agent:
                ends[path] = checkpoint
    return ends


def selector(paths: Sequence[str] | None) -> Callable[[str], bool]:
    """Whether a path is one of `paths` or inside one of them (None: every path)."""
    if paths is None:
        return lambda path: True
    wanted = [p.strip("/") for p in paths]
    if any(w in ("", ".") for w in wanted):
        return lambda path: True
    return lambda path: any(path == w or path.startswith(w + "/") for w in wanted)


class Planner:
    """Works out a restore over the store's checkpoints and repository."""

    def __init__(
        self, repository: ShadowRepository, checkpoints: Sequence[Checkpoint], root: Path
    ) -> None:
        self.repository = repository
        self.checkpoints = checkpoints
        self.root = root
        self._sets: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def changes(
        self,
        before: Checkpoint,
        groups: Mapping[int, tuple[Checkpoint, list[str] | None]],
        selected: Callable[[str], bool],
    ) -> tuple[list[Change], list[Skipped]]:
        """What differs between now and each group's baseline (its paths, or every path)."""
        changes: list[Change] = []
        skipped: list[Skipped] = []
        for baseline, group in groups.values():
            exact = set(group) if group is not None else None
            diff = [
                c
                for c in self.repository.diff(before.tree, baseline.tree, group)
                if (c.path in exact if exact is not None else selected(c.path))
            ]
            for item in diff:
                if item.path in baseline.uncaptured:  # there then, but not kept: unknown
                    skipped.append(_not_held(item.path, baseline))
                elif item.new_mode != GITLINK:
                    changes.append(
                        Change(
                            item.path,
                            item.old_mode,
                            item.new_mode,
                            item.new_sha,
                            baseline,
                            item.old_sha,
                        )
                    )
            # Files the checkpoints do not hold never show in a diff: say so where they matter.
            listed = {c.path for c in diff}
            if exact is not None:
                others = exact - listed
            else:
                appeared = set(baseline.uncaptured) ^ set(before.uncaptured)
                others = {p for p in appeared if selected(p)} - listed
            for path in sorted(others):
                if path in baseline.uncaptured:
                    skipped.append(_not_held(path, baseline))
                elif path in before.uncaptured:
                    reason = UNCAPTURED_REASONS[before.uncaptured[path]]
                    skipped.append(Skipped(path, f"checkpoints do not hold it now: {reason}"))
        return changes, skipped

    def refusal(
        self, change: Change, before: Checkpoint, force: bool, unsaved: Callable[[str], bool]
    ) -> str | None:
        """Why this file must not be put back, or None."""
        path = change.path
        if unsaved(path):
            return "it has unsaved changes in the editor"
        if force:
            return None
        since = change.baseline
        previous = since  # the checkpoint before the one looked at: the change came after it
        for checkpoint in self.checkpoints:
            if since.seq < checkpoint.seq <= before.seq:
                changed, agent = self._sets_of(checkpoint)
                if path in changed and path not in agent:
                    return (
                        f"it was changed outside Plansight after checkpoint {previous.id} "
                        "(restore with force to overwrite it)"
                    )
            if since.seq <= checkpoint.seq <= before.seq:
                previous = checkpoint
        if change.current_mode == 0 and _is_file_or_link(self.root / path):
            return (
                "a file the checkpoints do not hold (ignored, or over the size limit) is there "
                "now; restore with force to overwrite it"
            )
        return None

    def revert(
        self, change: Change, todo_id: str, session: int, scratch: Path, force: bool
    ) -> Revert:
        """Undoing item `todo_id` of `session` for this file: its own change taken back and
        the later items' kept (a three-way merge), or, where they overlap, skipped naming
        them, or with `force` the file as before the item and them named. `scratch`: a
        folder of Plansight's own for the merge's temporary files."""
        path = change.path
        end = step_ends(self.checkpoints, session, todo_id).get(path)
        if end is None:  # not one of the item's files: nothing of it to merge
            return Revert(change)
        item_left = self.repository.ls_tree(end.tree, [path]).get(path)
        now = (change.current_mode, change.current_sha) if change.current_mode else None
        before = (change.target_mode, change.target_sha) if change.target_mode else None
        # Another item's change between the item's own (it was taken up again) cannot be told
        # apart from the item's: an overlap.
        between = self.later_items(path, todo_id, session, change.baseline, until=end)
        if now == item_left and not between:  # no one changed it since the item: plain undo
            return Revert(change)
        plain = (MODE_SYMLINK, GITLINK)
        if now is not None and item_left is not None and before is not None and not between:
            if all(mode not in plain for mode, _ in (now, item_left, before)):
                merged = self.repository.merge_blobs(now[1], item_left[1], before[1], scratch)
                if merged is not None:
                    # The item's change of mode is taken back too, unless a later one's stays.
                    mode = before[0] if now[0] == item_left[0] else now[0]
                    if (mode, merged) == now:
                        return Revert(None)  # the later items took the item's change back
                    return Revert(replace(change, target_mode=mode, target_sha=merged))
        # They overlap: the same lines, or one side created, deleted or linked the file.
        later = self.later_items(path, todo_id, session, change.baseline)
        if force:
            return Revert(change, lost=later)
        what = "delete it" if before is None else "put it back as it was before it"
        if not later:
            return Revert(None, f"overlaps later changes to it (undo with force to {what})")
        named = ", ".join(f"#{t}" for t in later)
        return Revert(
            None,
            f"overlaps the changes of {named} (undo with force to {what}, losing them)",
        )

    def later_items(
        self,
        path: str,
        todo_id: str,
        session: int,
        baseline: Checkpoint,
        until: Checkpoint | None = None,
    ) -> tuple[str, ...]:
        """The other plan items whose edits or commands changed `path` after `baseline` (and
        before `until`)."""
        found: list[str] = []
        for checkpoint in self.checkpoints:
            if (
                checkpoint.seq > baseline.seq
                and (until is None or checkpoint.seq < until.seq)
                and checkpoint.session == session
                and checkpoint.kind in AGENT_KINDS
                and checkpoint.todo_id is not None
                and checkpoint.todo_id != todo_id
                and checkpoint.todo_id not in found
                and path in self._sets_of(checkpoint)[1]
            ):
                found.append(checkpoint.todo_id)
        return tuple(found)

    def _sets_of(self, checkpoint: Checkpoint) -> tuple[frozenset[str], frozenset[str]]:
        found = self._sets.get(checkpoint.seq)
        if found is None:
            found = self._sets[checkpoint.seq] = (
                frozenset(checkpoint.changed),
                frozenset(checkpoint.agent),
            )
        return found


def apply(
    root: Path, repository: ShadowRepository, actions: Sequence[Change], journal: Path
) -> tuple[list[str], list[Skipped]]:
    """Put the files back; what was restored and what could not be."""
    restored: list[str] = []
    skipped: list[Skipped] = []
    if not actions:
        return restored, skipped
    write_journal(journal, [a.path for a in actions])
    try:
        writes = [a for a in actions if a.target_mode != 0]
        blobs = repository.blobs([a.target_sha for a in writes])
        deletes = sorted(
            (a for a in actions if a.target_mode == 0),
            key=lambda a: a.path.count("/"),
            reverse=True,
        )
        for action in deletes:
            try:
                files.delete(root, action.path)
                restored.append(action.path)
            except (OSError, RestoreRefused) as err:
                skipped.append(Skipped(action.path, _reason(err)))
        files.remove_empty_folders(root, [a.path for a in deletes])
        for action in writes:
            try:
                files.write(root, action.path, blobs[action.target_sha], action.target_mode)
                restored.append(action.path)
            except (OSError, RestoreRefused) as err:
                skipped.append(Skipped(action.path, _reason(err)))
    finally:
        journal.unlink(missing_ok=True)
    return restored, skipped


def write_journal(journal: Path, paths: list[str]) -> None:
    record = json_text({"pid": os.getpid(), "paths": paths})  # names that are not UTF-8 too
    pending = journal.with_name(journal.name + ".new")
    pending.write_text(record, encoding="utf-8")
    os.replace(pending, journal)  # a kill leaves no journal or the whole of it


def read_journal(journal: Path) -> list[str] | None:
    """The paths of a restore that was cut short, or None when none was."""
    try:
        text = journal.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return [str(p) for p in json.loads(text)["paths"]]
    except (ValueError, KeyError, TypeError):
        return []


def _is_file_or_link(path: Path) -> bool:
    # A folder in the way is dealt with when writing (removed if the restore emptied it).
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _not_held(path: str, checkpoint: Checkpoint) -> Skipped:
    reason = UNCAPTURED_REASONS[checkpoint.uncaptured[path]]
    return Skipped(path, f"checkpoint {checkpoint.id} does not hold it: {reason}")


def _reason(err: BaseException) -> str:
    if isinstance(err, RestoreRefused):
        return str(err)
    if isinstance(err, OSError):
        return f"it could not be written: {err.strerror or err}"
    return str(err)
