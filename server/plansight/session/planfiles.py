"""Each session's plan as a file in the workspace (protocol version 4), kept in step both ways.

One source of truth: the file is written from the plan (plan/planfile.py's form) and read
into it; nothing else is kept that could drift. `PlanFiles` (one per workspace, made by
`Sessions`) owns the files' life:

- Written: every change of the loaded session's plan or scratchpad (the engine's events), a
  switch to another session and a rename schedule one write, `DEBOUNCE` later, so that a burst
  of changes costs one write and none waits more than 200 ms. The write is atomic (a temporary
  file and a rename, workspace/atomic.py). A session's first file is created at its first plan
  or scratchpad; a deleted file is written again.
- Read back: a watcher on the plans folder (watchfiles) reports saves; a file whose text is
  not what the server last wrote is read as the user's edit (`Session.edit_from_file`: the
  model told as for `plansight/editPlan`, `todos` to every client). Saved against an older
  version than the plan's now, it is merged per item with the plan now (plan/planfile.py's
  `merge_items`, from the plan as that version was written). Before each write the file is
  read first, so a save that the watcher has not reported yet is merged, not overwritten.
- A file that cannot be read is not applied: its text is kept at once as
  `<name>.rejected.md` beside it, and the listeners of `problems` (the LSP front door's
  diagnostics) hear of the line and why; the file is written from the plan again at the
  plan's next change.

The file's name is `<slug>-<id4>.md`, the slug from the session's title when it is first
written, and it stays: a rename changes the title line only, so the editor tab, the
`.gitignore` entry or the link a teammate has keeps working (docs/plan-file.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plansight.engine.events import Event, PlanChanged, ScratchpadChanged
from plansight.plan.plan import PlanError
from plansight.plan.planfile import (
    PlanFileError,
    format_plan_file,
    merge_items,
    normalize_notes,
    normalize_scratchpad,
    parse_plan_file,
)
from plansight.workspace.atomic import is_temp_file, write_atomic

if TYPE_CHECKING:
    from plansight.session.sessions import Sessions

log = logging.getLogger(__name__)

DEBOUNCE = 0.02  # s: changes this close together are one write (the goal is <= 200 ms)
REJECTED = ".rejected.md"
KEPT_VERSIONS = 64  # the plan as each recent version was written, for a stale save's merge
SLUG_CHARS = 40


@dataclass(frozen=True)
class PlanFileProblem:
    """Why a saved plan file was not applied; `line` 0-based."""

    line: int
    message: str


ProblemListener = Callable[[Path, list[PlanFileProblem]], None]


def plans_folder(root: Path, option: str | None) -> tuple[Path | None, str | None]:
    """The plans folder the `plansDirectory` option names (None: no plan files), and why it
    was refused, if it was: it must resolve inside the workspace (links followed), not be the
    workspace itself."""
    if option is None:
        return None, None
    real_root = Path(os.path.realpath(root))
    folder = Path(os.path.realpath(real_root / option))
    if folder == real_root or not folder.is_relative_to(real_root):
        return None, (
            f"plansDirectory {option!r} resolves to {folder}, outside the workspace {real_root}; "
            "plan files are written inside the workspace only, so none are written. Set it to "
            "a folder inside the workspace (the default is .plansight/plans) or to false."
        )
    return folder, None


def slug_of(title: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")
    return words[:SLUG_CHARS].rstrip("-") or "plan"


class PlanFiles:
    def __init__(self, sessions: Sessions, folder: Path | None) -> None:
        self.sessions = sessions
        self.engine = sessions.engine
        self.folder = folder
        self.problems: list[ProblemListener] = []  # told of each file's problems (or none)
        self._written: dict[Path, str] = {}  # the text the server last wrote (or read) there
        self._paths: dict[str, Path] = {}  # each session's file, once found or made
        self._versions: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._rejected: set[Path] = set()  # files whose problems are shown now
        self._handle: asyncio.TimerHandle | None = None
        self._watch: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.writes = 0  # files written (bench/plan_file.py)
        if folder is not None:
            self.engine.events.subscribe(self._on_event)
            sessions.on_switch.append(lambda _: self.schedule())

    @property
    def enabled(self) -> bool:
        return self.folder is not None and not self.engine.lock.read_only

    def path_of(self, session_id: str) -> Path | None:
        """Session `session_id`'s plan file (it may not exist yet); None without plan files."""
        if self.folder is None:
            return None
        known = self._paths.get(session_id)
        if known is not None:
            return known
        short = session_id[:4]
        candidates = sorted(self.folder.glob(f"*-{short}.md")) if self.folder.is_dir() else []
        for candidate in candidates:
            if _session_in(candidate) == session_id:
                self._paths[session_id] = candidate
                return candidate
        taken = {_session_in(c) for c in candidates} - {None}
        if taken:  # another session's four characters: more of the id tells them apart
            short = session_id[:8]
        try:
            title = self.sessions.registry.meta(session_id).title
        except Exception:
            title = ""
        # Named from the title it has when first written (kept once it exists: `flush`).
        return self.folder / f"{slug_of(title)}-{short}.md"

    def relative(self) -> str | None:
        """The loaded session's plan file, relative to the workspace (None: no plan files)."""
        loaded = self.sessions.loaded
        path = self.path_of(loaded) if loaded is not None and self.enabled else None
        return path.relative_to(self.engine.workspace.root).as_posix() if path else None

    # Writing --------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PlanChanged | ScratchpadChanged):
            self.schedule()

    def schedule(self) -> None:
        """Write the loaded session's file soon (once for a burst of changes)."""
        if not self.enabled or self._handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a tool's own use): at once
            self.flush()
            return
        self._handle = loop.call_later(DEBOUNCE, self.flush)

    def flush(self) -> None:
        """Write the loaded session's file now, reading a save not read back yet first."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        session_id = self.sessions.loaded
        if not self.enabled or session_id is None:
            return
        path = self.path_of(session_id)
        assert path is not None and self.folder is not None
        disk = _read(path)
        if disk is not None and path not in self._written:
            # First sight since this server started: the stored plan is the truth (a killed
            # server's last change may never have reached the file, and reading its older
            # text as the user's edit would undo that change). A text that differs is kept
            # beside it, never lost.
            self._written[path] = disk
            self._keep_first_sight(path, disk, session_id)
        elif disk is not None and disk != self._written.get(path):
            if self._watch is not None and not disk.strip():
                return  # being written (truncated, not yet filled): the watcher reports it
            # A save the watcher has not reported yet: read first, so nothing is lost.
            self.read_back(path, disk)
        state, scratchpad = self.engine.plan.state, self.engine.scratchpad.content
        if disk is None and not state.items and not scratchpad.strip():
            return  # nothing to show yet: no file for an empty session
        try:
            title = self.sessions.registry.meta(session_id).title
        except Exception:
            title = ""
        items = [item.to_wire() for item in state.items]
        text = format_plan_file(title, session_id, state.version, items, scratchpad)
        self._versions[(session_id, state.version)] = items
        if len(self._versions) > KEPT_VERSIONS:
            del self._versions[next(iter(self._versions))]
        if text == disk:
            self._written[path] = text
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text.encode(), mode=0o644)
        except OSError as err:
            log.warning("could not write the plan file %s: %s", path, err)
            return
        self._written[path] = text
        self._paths[session_id] = path
        self.writes += 1
        self._start_watching()

    def _keep_first_sight(self, path: Path, disk: str, session_id: str) -> None:
        state = self.engine.plan.state
        try:
            parsed = parse_plan_file(disk, {i.id for i in state.items})
        except PlanFileError:
            parsed = None
        mine = [item.to_wire() for item in state.items]
        if (
            parsed is not None
            and [_key(i) for i in parsed.items] == [_key(i) for i in mine]
            and parsed.scratchpad == normalize_scratchpad(self.engine.scratchpad.content)
        ):
            return
        kept = path.with_name(path.name[: -len(".md")] + REJECTED)
        try:
            write_atomic(kept, disk.encode(), mode=0o644)
        except OSError as err:
            log.warning("could not keep %s: %s", kept, err)
            return
        log.info(
            "plan file %s differed from session %s's stored plan; kept as %s",
            path,
            session_id,
            kept.name,
        )

    # Reading --------------------------------------------------------------------------------

    def read_back(self, path: Path, text: str) -> bool:
        """The user's save of `path`: applied to the loaded session's plan when it is its file
        and reads as a plan; True when it was read (applied, or nothing changed)."""
        session_id = self.sessions.loaded
        if session_id is None or self.path_of(session_id) != path:
            return False
        state = self.engine.plan.state
        mine = [item.to_wire() for item in state.items]
        known = {str(i["id"]) for i in mine}
        try:
            parsed = parse_plan_file(text, known | self._ids_of_versions(session_id))
        except PlanFileError as err:
            self._reject(path, text, err.line, err.reason)
            return False
        if parsed.session is not None and parsed.session != session_id:
            self._reject(path, text, 1, f"this file is session {parsed.session}'s, not this one's")
            return False
        items: list[dict[str, Any]] | None = parsed.items
        conflicts: list[str] = []
        if parsed.version is not None and parsed.version != state.version:
            base = self._versions.get((session_id, parsed.version))
            if base is not None:
                merged = merge_items(base, mine, parsed.items)
                items, conflicts = merged.items, merged.conflicts
        if items is not None and [_key(i) for i in items] == [_key(i) for i in mine]:
            items = None
        scratchpad: str | None = parsed.scratchpad
        if scratchpad == normalize_scratchpad(self.engine.scratchpad.content):
            scratchpad = None
        self._written[path] = text  # read: a rewrite below is the server's again
        if items is None and scratchpad is None:
            self._accepted(path)
            return True
        try:
            self.engine.edit_from_file(items, scratchpad, conflicts)
        except PlanError as err:
            line = parsed.lines.get(_first_id(str(err)), 0) if parsed.lines else 0
            self._reject(path, text, line, str(err))
            return False
        self._accepted(path)
        return True

    def _ids_of_versions(self, session_id: str) -> set[str]:
        return {
            str(item["id"])
            for (owner, _), items in self._versions.items()
            if owner == session_id
            for item in items
        }

    def _reject(self, path: Path, text: str, line: int, reason: str) -> None:
        kept = path.with_name(path.name[: -len(".md")] + REJECTED)
        try:
            write_atomic(kept, text.encode(), mode=0o644)
            where = f"your text is kept in {kept.name}"
        except OSError as err:
            where = f"your text could not be kept ({err}): copy it before the plan changes"
        self._written[path] = text  # not read again until it changes
        self._rejected.add(path)
        message = (
            f"Plansight did not apply this plan file: {reason} The plan is unchanged; {where}, "
            "and this file is written from the plan again at its next change."
        )
        log.info("plan file %s not applied: line %d: %s", path, line + 1, reason)
        self._tell(path, [PlanFileProblem(line, message)])

    def _accepted(self, path: Path) -> None:
        if path in self._rejected:
            self._rejected.discard(path)
            self._tell(path, [])

    def _tell(self, path: Path, problems: list[PlanFileProblem]) -> None:
        for listener in list(self.problems):
            try:
                listener(path, problems)
            except Exception:
                log.exception("a plan file listener failed")

    # Watching -------------------------------------------------------------------------------

    def _start_watching(self) -> None:
        if self._watch is not None or self.folder is None:
            return
        with suppress(RuntimeError):
            self._watch = asyncio.get_running_loop().create_task(self._watch_folder())

    async def _watch_folder(self) -> None:
        from watchfiles import awatch

        assert self.folder is not None
        try:
            async for batch in awatch(
                self.folder, stop_event=self._stop, debounce=30, step=10, recursive=False
            ):
                self.changed({Path(p) for _, p in batch})
        except Exception as err:  # the folder removed, say: written again at the next change
            log.info("stopped watching the plans folder %s: %s", self.folder, err)
        self._watch = None

    def changed(self, paths: set[Path]) -> None:
        """The watcher's report: the loaded session's file saved (read back) or deleted
        (written again)."""
        session_id = self.sessions.loaded
        if session_id is None:
            return
        mine = self.path_of(session_id)
        if mine is None or mine not in paths or is_temp_file(mine.name):
            return
        disk = _read(mine)
        if disk is None:
            self._written.pop(mine, None)
            self.schedule()  # deleted: written again
        elif not disk.strip():
            self.schedule()  # emptied (or caught mid-write): written again from the plan
        elif disk != self._written.get(mine):
            self.read_back(mine, disk)

    async def close(self) -> None:
        if self._handle is not None:
            self.flush()
        self._stop.set()
        if self._watch is not None:
            with suppress(Exception):
                await asyncio.wait_for(self._watch, 2)


def _regular_bytes(path: Path, limit: int | None = None) -> bytes:
    """A plan file's bytes (the first `limit`), read only from a regular file at that very
    path: a link (to a secret elsewhere, say) or a FIFO is no plan file. OSError otherwise;
    such a path is then written again from the plan (the rename replaces the link itself)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read() if limit is None else handle.read(limit)
    finally:
        os.close(fd)


def _read(path: Path) -> str | None:
    try:
        return _regular_bytes(path).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        log.warning("could not read the plan file %s: %s", path, err)
        return None


def _session_in(path: Path) -> str | None:
    """The session id a plan file's header names."""
    try:
        start = _regular_bytes(path, 400).decode("utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r"<!--\s*plansight:\s*session\s+(\S+?),", start)
    return found.group(1) if found else None


def _key(item: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(item["id"]),
        str(item["text"]).strip(),
        str(item["status"]),
        normalize_notes(str(item.get("notes") or "")),
    )


def _first_id(message: str) -> str:
    found = re.search(r"#(\S+?)[:\s]", message)
    return found.group(1) if found else ""
