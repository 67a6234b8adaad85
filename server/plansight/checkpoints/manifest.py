"""What each checkpoint is: its record, and the JSON Lines file that lists them, oldest first.

The git repository holds the files; this file holds what git cannot say cheaply: why a
checkpoint was taken, the plan item in progress, which paths changed since the checkpoint
before it and which of those the agent changed. One record per line, appended with a single
`write()` (which kill -9 cannot cut in half); rewritten atomically only when old checkpoints
are pruned. A damaged last line (a full disk) is dropped on load.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from plansight.workspace import atomic

log = logging.getLogger(__name__)

# Why a checkpoint was taken. The agent's own changes are those of `edit`, `command` and
# `restore` checkpoints (in `agent`); every other change a checkpoint records was made by
# someone else (the user, their tools).
Kind = Literal["runStart", "itemStart", "edit", "command", "outside", "beforeRestore", "restore"]
KINDS: tuple[Kind, ...] = (
    "runStart",
    "itemStart",
    "edit",
    "command",
    "outside",
    "beforeRestore",
    "restore",
)

# Why a file present in the workspace is not in a checkpoint.
UNCAPTURED_REASONS: Mapping[str, str] = {
    "large": "it is larger than the checkpoint size limit",
    "unreadable": "it could not be read",
    "repository": "it is a git repository of its own",
    "protected": "it is a protected file (a secret), which checkpoints never hold",
}


@dataclass(frozen=True)
class Checkpoint:
    seq: int  # 1, 2, ...: the id, never reused in this storage folder
    commit: str  # the git commit holding the workspace's files
    tree: str  # its tree
    kind: Kind
    label: str
    created_at: str  # ISO 8601, UTC
    session: int  # which conversation it belongs to (newSession/reset start another)
    todo_id: str | None = None
    changed: tuple[str, ...] = ()  # paths changed since the checkpoint before, by anyone
    agent: tuple[str, ...] = ()  # those the agent changed (edits, commands, restores)
    uncaptured: Mapping[str, str] = field(default_factory=dict)  # path → UNCAPTURED_REASONS key
    extra: Mapping[str, Any] = field(default_factory=dict)  # the embedder's (plan, conversation)

    @property
    def id(self) -> str:
        return str(self.seq)

    def to_wire(self) -> dict[str, Any]:
        """The protocol's `Checkpoint` (plus `kind`, an optional field of ours)."""
        wire: dict[str, Any] = {"id": self.id}
        if self.todo_id is not None:
            wire["todoId"] = self.todo_id
        wire["label"] = self.label
        wire["createdAt"] = self.created_at
        # PROTOCOL.md: empty for a run's first checkpoint.
        wire["paths"] = [] if self.kind == "runStart" else list(self.changed)
        wire["kind"] = self.kind
        # Version 4: the session whose step it is (checkpoints are the workspace's).
        if isinstance(session_id := self.extra.get("sessionId"), str):
            wire["sessionId"] = session_id
        return wire

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": "checkpoint",
            "seq": self.seq,
            "commit": self.commit,
            "tree": self.tree,
            "kind": self.kind,
            "label": self.label,
            "createdAt": self.created_at,
            "session": self.session,
        }
        if self.todo_id is not None:
            record["todoId"] = self.todo_id
        if self.changed:
            record["changed"] = list(self.changed)
        if self.agent:
            record["agent"] = list(self.agent)
        if self.uncaptured:
            record["uncaptured"] = dict(self.uncaptured)
        if self.extra:
            record["extra"] = dict(self.extra)
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Checkpoint:
        kind = record["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown checkpoint kind {kind!r}")
        todo = record.get("todoId")
        return cls(
            seq=int(record["seq"]),
            commit=str(record["commit"]),
            tree=str(record["tree"]),
            kind=kind,
            label=str(record["label"]),
            created_at=str(record["createdAt"]),
            session=int(record["session"]),
            todo_id=None if todo is None else str(todo),
            changed=tuple(str(p) for p in record.get("changed", ())),
            agent=tuple(str(p) for p in record.get("agent", ())),
            uncaptured={str(k): str(v) for k, v in record.get("uncaptured", {}).items()},
            extra=dict(record.get("extra", {})),
        )


class Manifest:
    """The checkpoints of one storage folder, in memory and in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.checkpoints: list[Checkpoint] = []
        self.session = 1
        self._next_seq = 1

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def load(self, *, repair: bool = True) -> None:
        """`repair=False`: a damaged tail is left as it is (a read-only view's: the server
        keeping the checkpoints may be appending to the file at that moment)."""
        self.checkpoints = []
        self.session = 1
        self._next_seq = 1
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        lines = text.splitlines()
        good = 0
        for number, line in enumerate(lines, 1):
            try:
                self._apply(json.loads(line))
            except (ValueError, KeyError, TypeError) as err:
                log.error(
                    "%s: line %d is damaged (%s); keeping the lines before it",
                    self.path,
                    number,
                    err,
                )
                break
            good += 1
        if repair and (good != len(lines) or (text and not text.endswith("\n"))):
            self.rewrite()

    def _apply(self, record: Mapping[str, Any]) -> None:
        if record["type"] == "session":
            self.session = int(record["session"])
        elif record["type"] == "checkpoint":
            checkpoint = Checkpoint.from_json(record)
            self.checkpoints.append(checkpoint)
            self._next_seq = max(self._next_seq, checkpoint.seq + 1)
        elif record["type"] == "next":
            self._next_seq = max(self._next_seq, int(record["seq"]))
        else:
            raise ValueError(f"unknown record type {record['type']!r}")

    def append(self, checkpoint: Checkpoint) -> None:
        self._append_records([checkpoint.to_json()])
        self.checkpoints.append(checkpoint)
        self._next_seq = checkpoint.seq + 1

    def start_session(self) -> int:
        # Above every number in use: the current one may be an earlier one taken up again.
        session = max([self.session, *(c.session for c in self.checkpoints)]) + 1
        self._append_records([{"type": "session", "session": session}])
        self.session = session
        return session

    def resume_session(self, session_id: str, plan_id: str) -> int:
        """Take up again the item numbering of the workspace's session `session_id` (protocol
        version 4) with its plan `plan_id`: that of the last checkpoint it took with that plan,
        so that its steps' changes and undo cover what was done before it was left. A new
        numbering when it took none (or has no plan yet)."""
        for checkpoint in reversed(self.checkpoints):
            extra = checkpoint.extra
            plan = extra.get("plan")
            if (
                plan_id
                and extra.get("sessionId") == session_id
                and isinstance(plan, Mapping)
                and plan.get("planId") == plan_id
            ):
                if checkpoint.session != self.session:
                    self._append_records([{"type": "session", "session": checkpoint.session}])
                    self.session = checkpoint.session
                return checkpoint.session
        return self.start_session()

    def _append_records(self, records: list[dict[str, Any]]) -> None:
        # A changed file's name may not be UTF-8: json_text writes it so that it reads back.
        data = "".join(atomic.json_text(r) + "\n" for r in records).encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic.append_whole(self.path, data)

    def keep(self, kept: list[Checkpoint]) -> None:
        """Replace the list (pruning): the file is rewritten atomically."""
        self.checkpoints = list(kept)
        self.rewrite()

    def rewrite(self) -> None:
        records: list[dict[str, Any]] = [{"type": "next", "seq": self._next_seq}]
        records += [c.to_json() for c in self.checkpoints]
        records.append({"type": "session", "session": self.session})
        # A changed file's name may not be UTF-8: json_text writes it so that it reads back.
        data = "".join(atomic.json_text(r) + "\n" for r in records).encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_atomic(self.path, data)
