"""Saving a session (plan, scratchpad, conversation, usage) so a restarted server picks it up.

Each part is its own JSON file, replaced atomically (temp file + rename in the same folder),
so a kill -9 at any moment leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PARTS = ("plan", "scratchpad", "conversation", "usage")


def default_storage_dir(workspace_root: Path) -> Path:
    """A per-workspace folder in the user's state directory, never inside the workspace."""
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    root = str(workspace_root.resolve())
    digest = hashlib.sha256(root.encode()).hexdigest()[:16]
    return Path(state_home) / "plansight" / "workspaces" / f"{workspace_root.name}-{digest}"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SessionStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, part: str) -> Path:
        return self.directory / f"{part}.json"

    def save(self, part: str, value: Any) -> None:
        write_atomic(self._path(part), json.dumps(value, ensure_ascii=False).encode())

    def remove_leftovers(self) -> None:
        """Temporary files of saves a killed server never finished."""
        for leftover in self.directory.glob(".*.json.*.tmp"):
            leftover.unlink(missing_ok=True)

    def load(self, part: str) -> Any | None:
        path = self._path(part)
        try:
            return json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            # Keep the unreadable file for inspection rather than overwriting it silently.
            log.error("could not load %s (%s); starting that part empty", path, err)
            path.replace(path.with_suffix(".corrupt"))
            return None

    def clear(self) -> None:
        for part in PARTS:
            self._path(part).unlink(missing_ok=True)
