"""Stored change sets: one folder per worker under `<storage>/workers/`, kept until taken in
or dropped, so that a crash or a restart loses nothing a worker did.

A change set is the parent session's and its item's: two sessions of one workspace may each
have an item "1", so the folder (and the refs, copies.py) is named by both
(`<session>.<item>`, `worker_key`). Before that, folders were named by the item alone: such a
record keeps its folder and refs (its `key` is not stored, the item's alone is read), and is
listed and taken in as any other, under the parent session it names.

`record.json` (written atomically) holds the worker's item, session, status, start and end, its
summary, the trees it started from and ended with (kept alive by refs, copies.py), its files,
and what the user decided for each file so far (a take-in cut short goes on where it stopped).
The record is written before `workerFinished` is sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from plansight.parallel.copies import FileChange
from plansight.workspace.atomic import write_atomic

log = logging.getLogger(__name__)

WorkerStatus = Literal["running", "completed", "failed", "cancelled"]
RECORD = "record.json"


def safe_name(name: str) -> str:
    """A folder and ref name part for any string: its safe characters (never a dot), and a
    digest where some were not."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:40]
    if safe == name and safe:
        return safe
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def worker_key(parent_session: str | None, todo_id: str) -> str:
    """The folder and ref name of session `parent_session`'s worker on item `todo_id`: the two
    safe names apart by a dot, which neither holds (nor does any start with one: `.spare`)."""
    return f"{safe_name(parent_session or '_')}.{safe_name(todo_id)}"


@dataclass(frozen=True)
class WorkerRecord:
    todo_id: str
    session_id: str  # the worker's own session
    parent_session: str | None
    status: WorkerStatus
    started_at: str
    finished_at: str | None = None
    summary: str = ""
    base: str = ""  # the tree it started from
    result: str = ""  # the tree it ended with
    files: tuple[FileChange, ...] = ()
    decided: dict[str, str] = field(default_factory=dict)  # path → applied | rejected | skipped
    # Its folder's and refs' name: `worker_key`, or the item's alone for a record stored
    # before change sets were the session's too (read as "", never written so).
    stored_key: str = ""

    @property
    def key(self) -> str:
        return self.stored_key or safe_name(self.todo_id)

    def of(self, parent_session: str | None) -> bool:
        """Whether it is session `parent_session`'s."""
        return self.parent_session == parent_session

    def to_wire(self) -> dict[str, Any]:
        """An entry of `plansight/workers`."""
        return {
            "todoId": self.todo_id,
            "sessionId": self.session_id,
            "status": self.status,
            "files": [f.to_wire() for f in self.files],
            "startedAt": self.started_at,
            # Additions of ours: when it ended, what it said, and each file's decision so far.
            "finishedAt": self.finished_at,
            "summary": self.summary,
            "decided": dict(self.decided),
            **({"parentSessionId": self.parent_session} if self.parent_session else {}),
        }

    def to_record(self) -> dict[str, Any]:
        return {
            "todoId": self.todo_id,
            "sessionId": self.session_id,
            "parentSession": self.parent_session,
            "status": self.status,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "summary": self.summary,
            "base": self.base,
            "result": self.result,
            "files": [f.to_record() for f in self.files],
            "decided": self.decided,
            "key": self.key,
        }

    @classmethod
    def from_record(cls, raw: dict[str, Any]) -> WorkerRecord:
        return cls(
            todo_id=str(raw["todoId"]),
            session_id=str(raw["sessionId"]),
            parent_session=raw.get("parentSession"),
            status=raw["status"],
            started_at=str(raw["startedAt"]),
            finished_at=raw.get("finishedAt"),
            summary=str(raw.get("summary", "")),
            base=str(raw.get("base", "")),
            result=str(raw.get("result", "")),
            files=tuple(FileChange.from_record(f) for f in raw.get("files", [])),
            decided={str(k): str(v) for k, v in dict(raw.get("decided", {})).items()},
            stored_key=str(raw.get("key") or ""),
        )

    def deciding(self, path: str, decision: str) -> WorkerRecord:
        return replace(self, decided={**self.decided, path: decision})


class WorkerRecords:
    """The `workers/` folder of a workspace's storage."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def folder_of(self, key: str) -> Path:
        return self.folder / key

    def save(self, record: WorkerRecord) -> None:
        folder = self.folder_of(record.key)
        folder.mkdir(parents=True, exist_ok=True)
        data = json.dumps(record.to_record(), indent=1).encode()
        write_atomic(folder / RECORD, data, durable=True)

    def load(self, parent_session: str | None, todo_id: str) -> WorkerRecord | None:
        """Session `parent_session`'s change set of item `todo_id`, wherever it is stored."""
        found = self._read(self.folder_of(worker_key(parent_session, todo_id)) / RECORD)
        if found is not None:
            return found
        # One stored before change sets were the session's too: in the item's folder.
        legacy = self._read(self.folder_of(safe_name(todo_id)) / RECORD)
        return legacy if legacy is not None and legacy.of(parent_session) else None

    def all(self) -> list[WorkerRecord]:
        if not self.folder.is_dir():
            return []
        found = [
            self._read(p / RECORD)
            for p in sorted(self.folder.iterdir())
            if p.is_dir() and not p.name.startswith(".")
        ]
        return sorted((r for r in found if r is not None), key=lambda r: r.started_at)

    def remove(self, key: str) -> None:
        shutil.rmtree(self.folder_of(key), ignore_errors=True)

    @staticmethod
    def _read(path: Path) -> WorkerRecord | None:
        try:
            return WorkerRecord.from_record(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as err:
            log.warning("ignoring the worker record %s: %s", path, err)
            return None
