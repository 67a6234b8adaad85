"""Saving a session (plan, scratchpad, conversation, usage) so a restarted server picks it up.

A workspace's storage folder (`directory`) holds what the workspace's sessions share (the
claim, the checkpoints, the trust given to MCP servers) and, under `sessions/<id>/`, each
session's own parts (protocol version 4: many sessions in a workspace, session/registry.py).
`use(id)` points the store at one session's folder; until then (and for a store of version 3,
not yet moved) the parts are the folder's own files, as version 3 kept them.

Plan, scratchpad and usage are small JSON files, replaced atomically (`workspace.atomic`: temp
file + rename in the same folder, no fsync), so a kill -9 at any moment leaves either the old or
the new file. The
conversation grows every round, so rewriting it whole would cost more each round: it is a JSON
Lines log, one message per line, each appended with a single write() (which kill -9 cannot cut
in half), and rewritten atomically only when an earlier message changed.

A `read_only` store (the read-only view, session/lock.py) reads the same files and writes
none: saves are dropped, and a damaged file is read as far as it goes, not repaired (another
server may be writing it at that moment).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from plansight.session.history import RunHistory
from plansight.session.lock import StorageClaim
from plansight.workspace.atomic import append_whole, remove_leftovers, write_atomic

log = logging.getLogger(__name__)

PARTS = ("plan", "scratchpad", "usage")
CONVERSATION = "conversation.jsonl"
SESSIONS = "sessions"  # the folder of the sessions' own folders


def default_storage_dir(workspace_root: Path) -> Path:
    """A per-workspace folder in the user's state directory, never inside the workspace."""
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    root = str(workspace_root.resolve())
    digest = hashlib.sha256(root.encode()).hexdigest()[:16]
    # The name of the absolute path: `Path(".").name` is empty, which made `plansight
    # checkpoints` run in the project folder look in another folder than the server's.
    # Not resolved, so that a workspace opened through a link keeps the folder it had.
    name = Path(os.path.abspath(workspace_root)).name
    return Path(state_home) / "plansight" / "workspaces" / f"{name}-{digest}"


def storage_dir_for(workspace_root: Path, configured: str | Path | None) -> Path:
    """The session's folder: the one configured (the storageDir option), else the default."""
    return Path(configured) if configured else default_storage_dir(workspace_root)


def plansight_storage(store: SessionStore | None, root: Path) -> list[Path]:
    """What Plansight keeps, hidden from the agent's sandboxed commands: this session's
    folder and the state folder of every workspace's."""
    return [
        *([store.directory] if store is not None else []),
        default_storage_dir(root).parent.parent,
    ]


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


class SessionStore:
    def __init__(self, directory: Path, *, read_only: bool = False) -> None:
        self.directory = directory
        self.read_only = read_only
        self.claim = StorageClaim(directory)  # one live server keeps it (session/lock.py)
        self._conversation: ConversationLog | None = None
        self._history: RunHistory | None = None
        self.session_id: str | None = None  # whose parts are saved (None: version 3's place)

    @property
    def parts_directory(self) -> Path:
        """Where the parts of the session in use are kept."""
        if self.session_id is None:
            return self.directory
        return self.directory / SESSIONS / self.session_id

    def use(self, session_id: str | None) -> None:
        """Save and load the parts of session `session_id` from now on (its history's pending
        text written first, to the folder it belongs to)."""
        if self._history is not None:
            self._history.flush()
        self.session_id = session_id
        self._conversation = None
        self._history = None

    def _path(self, part: str) -> Path:
        # A session's own parts live in its folder; anything else a front door keeps (ACP's
        # last session id) is the workspace's.
        folder = self.parts_directory if part in PARTS else self.directory
        return folder / f"{part}.json"

    def save(self, part: str, value: Any) -> None:
        if self.read_only:
            return
        _replace(self._path(part), json.dumps(value, ensure_ascii=False).encode())

    def remove_leftovers(self) -> None:
        """Temporary files of saves a killed server never finished."""
        if self.read_only:
            return  # they may be the saves of the server keeping the session, under way
        remove_leftovers(self.directory)

    def load(self, part: str) -> Any | None:
        path = self._path(part)
        try:
            return json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            # Keep the unreadable file for inspection rather than overwriting it silently.
            log.error("could not load %s (%s); starting that part empty", path, err)
            if not self.read_only:
                path.replace(path.with_suffix(".corrupt"))
            return None

    def clear(self) -> None:
        if self.read_only:
            return
        for part in PARTS:
            self._path(part).unlink(missing_ok=True)
        self.conversation.clear()

    @property
    def history(self) -> RunHistory:
        """The runs' events (`clear` leaves them: a reset starts a new session, not a new past)."""
        if self._history is None:
            self._history = RunHistory(self.parts_directory, read_only=self.read_only)
        return self._history

    @property
    def conversation(self) -> ConversationLog:
        if self._conversation is None:
            self._conversation = ConversationLog(
                self.parts_directory / CONVERSATION, read_only=self.read_only
            )
        return self._conversation


class ConversationLog:
    """The conversation as JSON Lines: appended as it grows, rewritten only when it changed."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._saved: list[str] = []  # the lines on disk, one serialized message each

    def save(self, messages: list[Any]) -> None:
        saved = self._saved
        rewritten = len(messages) < len(saved) or (
            saved and json.dumps(messages[len(saved) - 1], ensure_ascii=False) != saved[-1]
        )
        if rewritten:
            self.rewrite(messages)
            return
        new = [json.dumps(m, ensure_ascii=False) for m in messages[len(saved) :]]
        if not new:
            return
        data = "".join(f"{line}\n" for line in new).encode()
        if not saved:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        append_whole(self.path, data)  # one write(): kill -9 cannot cut it in half
        saved.extend(new)

    def load(self) -> list[Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        messages: list[Any] = []
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            try:
                messages.append(json.loads(line))
            except ValueError:
                # Only a last line can be cut short (by a full disk); anything else is damage.
                log.error(
                    "%s: line %d is not JSON; keeping the %d messages before it",
                    self.path,
                    number,
                    len(messages),
                )
                break
        if len(messages) != len(lines) and not self.read_only:
            self.rewrite(messages)  # drop the damaged tail for good
        else:
            # The lines are what `save` wrote (json.dumps of each message): kept as they are,
            # not serialized again (half the cost of opening a long session).
            self._saved = lines
        return messages

    def rewrite(self, messages: list[Any]) -> None:
        if self.read_only:
            return
        self._saved = [json.dumps(m, ensure_ascii=False) for m in messages]
        _replace(self.path, "".join(f"{line}\n" for line in self._saved).encode())

    def clear(self) -> None:
        self._saved = []
        self.path.unlink(missing_ok=True)
