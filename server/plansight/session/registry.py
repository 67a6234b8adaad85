"""The sessions of a workspace as stored: which there are, their titles and times, which one
is current, and the move of a version 3 workspace's one session into the first of them.

Layout, in the workspace's storage folder (storage.py):

    sessions/current.json        {"id": "<id>"}: the session a client sees unless it names one
    sessions/<id>/session.json   {"id", "title", "createdAt", "updatedAt"}
    sessions/<id>/plan.json, scratchpad.json, usage.json, conversation.jsonl, history.jsonl

Every file but the pointer is replaced atomically (workspace/atomic.py), so a kill leaves the
old or the new; a damaged pointer is read as none (the session used last is current then).
A session is its folder: one without a readable `session.json` still lists (titled by its id).

Migration (`migrate`): version 3 kept one session's parts in the storage folder itself. They
are moved (renamed, never copied: nothing is lost or doubled) into `sessions/.v3-<id>/`, its
`session.json` written there (the title from the history's first prompt), and that folder
renamed to `sessions/<id>` last; a kill at any point is finished by the next start, which
finds the staging folder and carries on. A read-only view moves nothing: it reads a version 3
folder where it is (`LEGACY`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plansight.session.history import HISTORY
from plansight.session.storage import CONVERSATION, PARTS, SESSIONS, SessionStore
from plansight.workspace.atomic import write_atomic

log = logging.getLogger(__name__)

META = "session.json"
CURRENT = "current.json"
STAGING = ".v3-"
# A version 3 folder seen by a read-only view, before a writing server moved it.
LEGACY = "v3"
TITLE_CHARS = 60
V3_FILES = (*(f"{part}.json" for part in PARTS), CONVERSATION, HISTORY)


class UnknownSession(Exception):
    """No stored session has this id."""


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def title_of(prompt: str) -> str:
    """A session's default title: its first prompt's first non-blank line, at most 60
    characters (cut with an ellipsis)."""
    line = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass
class SessionMeta:
    id: str
    title: str
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


class SessionRegistry:
    """The stored sessions of one workspace's storage folder (`store.directory`)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.folder = store.directory / SESSIONS

    @property
    def read_only(self) -> bool:
        return self.store.read_only

    # Reading --------------------------------------------------------------------------------

    def ids(self) -> list[str]:
        if self.legacy:
            return [LEGACY]
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return []
        return [e.name for e in entries if e.is_dir() and not e.name.startswith(".")]

    @property
    def legacy(self) -> bool:
        """A version 3 folder nobody moved yet, as a read-only view sees it."""
        return self.read_only and not self.folder.is_dir() and self._v3_files() != []

    def folder_of(self, session_id: str) -> Path:
        if self.legacy and session_id == LEGACY:
            return self.store.directory
        if session_id not in self.ids():
            raise UnknownSession(f"No session {session_id!r} in this workspace.")
        return self.folder / session_id

    def meta(self, session_id: str) -> SessionMeta:
        folder = self.folder_of(session_id)
        record = _read_json(folder / META)
        if not isinstance(record, dict):  # a legacy folder, or a damaged file
            stamp = _mtime_iso(folder)
            record = {"title": _first_prompt(folder), "createdAt": stamp, "updatedAt": stamp}
        return SessionMeta(
            id=session_id,
            title=str(record.get("title") or ""),
            created_at=str(record.get("createdAt") or ""),
            updated_at=str(record.get("updatedAt") or record.get("createdAt") or ""),
        )

    def plan_record(self, session_id: str) -> Any:
        """The session's stored plan (`plan.json`), None when it has none."""
        return _read_json(self.folder_of(session_id) / "plan.json")

    def scratchpad(self, session_id: str) -> str:
        record = _read_json(self.folder_of(session_id) / "scratchpad.json")
        return str(record.get("content", "")) if isinstance(record, dict) else ""

    def current(self) -> str | None:
        """The current session's id, if it still exists."""
        ids = self.ids()
        record = _read_json(self.folder / CURRENT)
        chosen = record.get("id") if isinstance(record, dict) else None
        if isinstance(chosen, str) and chosen in ids:
            return chosen
        if not ids:
            return None
        # No pointer (or a deleted session's): the one used last.
        return max(ids, key=lambda i: self.meta(i).updated_at)

    # Writing --------------------------------------------------------------------------------

    def create(self, title: str | None = None) -> str:
        session_id = uuid.uuid4().hex[:12]
        stamp = now_iso()
        (self.folder / session_id).mkdir(parents=True, exist_ok=True)
        self._save_meta(SessionMeta(session_id, title_of(title or ""), stamp, stamp))
        return session_id

    def set_current(self, session_id: str) -> None:
        if self.read_only:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        # Written in place, not replaced: a switch is a click, and a rename costs more than
        # the rest of it on a busy disk. A file a kill cut short is read as no pointer, and
        # the session used last is current then (`current`).
        with (self.folder / CURRENT).open("w", encoding="utf-8") as pointer:
            pointer.write(json.dumps({"id": session_id}))

    def rename(self, session_id: str, title: str) -> SessionMeta:
        meta = self.meta(session_id)
        meta.title = title_of(title)
        self._save_meta(meta)
        return meta

    def touch(self, session_id: str, prompt: str | None = None) -> None:
        """The session was used now; `prompt`: a run's, which titles a session still untitled."""
        meta = self.meta(session_id)
        meta.updated_at = now_iso()
        if prompt is not None and not meta.title:
            meta.title = title_of(prompt)
        self._save_meta(meta)

    def delete(self, session_id: str) -> None:
        folder = self.folder_of(session_id)
        if self.read_only:
            return
        # Renamed away first: a kill mid-way leaves a hidden folder, never half a session.
        doomed = self.folder / f".deleted-{session_id}"
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def _save_meta(self, meta: SessionMeta) -> None:
        if self.read_only:
            return
        write_atomic(self.folder / meta.id / META, json.dumps(meta.to_json()).encode())

    # Version 3 --------------------------------------------------------------------------------

    def _v3_files(self) -> list[str]:
        return [name for name in V3_FILES if (self.store.directory / name).exists()]

    def migrate(self) -> str | None:
        """Move a version 3 session into `sessions/<id>/` (see the module's docstring); its id,
        or None when there was nothing to move. Nothing on a read-only store."""
        if self.read_only:
            return None
        staged = self._staging()
        found = self._v3_files()
        if staged is None and not found:
            return None
        if staged is None:
            staged = self.folder / f"{STAGING}{uuid.uuid4().hex[:12]}"
            staged.mkdir(parents=True)
        session_id = staged.name[len(STAGING) :]
        for name in found:
            os.replace(self.store.directory / name, staged / name)
        if not (staged / META).exists():
            stamp = _mtime_iso(staged)
            title = title_of(_first_prompt(staged))
            write_atomic(
                staged / META,
                json.dumps(SessionMeta(session_id, title, stamp, stamp).to_json()).encode(),
            )
        staged.rename(self.folder / session_id)
        self.set_current(session_id)
        log.info("moved the version 3 session into %s", self.folder / session_id)
        return session_id

    def _staging(self) -> Path | None:
        try:
            return next(p for p in self.folder.iterdir() if p.name.startswith(STAGING))
        except (FileNotFoundError, StopIteration):
            return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _mtime_iso(folder: Path) -> str:
    """When the newest part of a folder was written (a version 3 session's times)."""
    times = [p.stat().st_mtime for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    stamp = datetime.fromtimestamp(max(times), UTC) if times else datetime.now(UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _first_prompt(folder: Path) -> str:
    """The first run's prompt of a session's history (a version 3 session's title)."""
    try:
        with (folder / HISTORY).open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                event = record.get("event") if isinstance(record, dict) else None
                if isinstance(event, dict) and event.get("type") == "runStarted":
                    return str(event.get("prompt", ""))
    except (OSError, ValueError):
        pass
    return ""
