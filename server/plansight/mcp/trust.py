"""What the user decided about MCP servers, remembered per workspace: the workspace servers they
trusted and the tools they always allow. Kept as `mcp-trust.json` in the session's storage
folder (replaced atomically), or in memory only for a session without storage.

Both decisions are tied to the server entry's fingerprint (`ServerEntry.fingerprint`): when the
entry changes (another command, other arguments), the server is asked about again and its
tools are no longer always allowed. Only a yes is remembered: a server the user denied is asked
about at the next session's start.

A trusted server's record also holds the hash of each workspace file its command line names
(`named_files`: its script, say) and the host variables the approval named (`fromHost`): a
changed script is a server the user never saw, so it is asked about again, and so is one trusted
by an older record that has neither (its secret `${env:...}` were never shown to the user).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.mcp.config import ServerEntry
from plansight.workspace.atomic import write_atomic

log = logging.getLogger(__name__)

TRUST_FILE = "mcp-trust.json"


HASH_CHUNK = 1 << 20
# A folder the command line names (an npx package folder, say) is hashed file by file, without
# what is installed or generated in it, up to this many files.
FOLDER_MAX_FILES = 2000
FOLDER_SKIPPED = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache"}
)


def named_files(entry: ServerEntry, root: Path) -> dict[str, str]:
    """The workspace files the entry's command line names (the command, an argument, or the
    value of an `--option=value` argument; relative to its `cwd`), each with the SHA-256 of its
    content: what a trust decision covers besides the entry. A folder other than the workspace
    root counts as the files in it (`FOLDER_SKIPPED` left out). A file that cannot be read is
    hashed as such (it asks again once it can be)."""
    if entry.command is None:
        return {}
    real_root = Path(os.path.realpath(root))
    base = Path(entry.cwd or root)
    found: dict[str, str] = {}
    for word in (entry.command, *entry.args):
        for candidate in {word, word.partition("=")[2]}:
            if not candidate:
                continue
            path = Path(os.path.abspath(base / candidate))
            inside = path.is_relative_to(root) or path.is_relative_to(real_root)
            try:
                if not inside and not Path(os.path.realpath(path)).is_relative_to(real_root):
                    continue
                if path.is_dir() and path not in (root, real_root):
                    found[f"{path}{os.sep}"] = _hash_folder(path)
                    continue
                if not path.is_file():
                    continue
            except OSError:
                continue
            found[str(path)] = _hash(path)
    return found


def _hash_folder(folder: Path) -> str:
    digest = hashlib.sha256()
    count = 0
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f not in FOLDER_SKIPPED)
        for name in sorted(files):
            count += 1
            if count > FOLDER_MAX_FILES:
                return f"more than {FOLDER_MAX_FILES} files: {digest.hexdigest()}"
            path = Path(parent) / name
            digest.update(f"{path.relative_to(folder)}\0{_hash(path)}\n".encode())
    return digest.hexdigest()


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    return digest.hexdigest()


@dataclass(frozen=True)
class Trusted:
    """What the user approved of a workspace server: the host variables their approval named."""

    from_host: tuple[str, ...]


class TrustMemory:
    def __init__(self, directory: Path | None) -> None:
        self._path = directory / TRUST_FILE if directory is not None else None
        # name → {fingerprint, files: {path: sha256}, fromHost: [names]}; a bare fingerprint
        # (the older record) no longer counts.
        self._servers: dict[str, Any] = {}
        self._tools: dict[str, dict[str, Any]] = {}  # name → {fingerprint, tools}
        self._load()

    def _load(self) -> None:
        if self._path is None:
            return
        try:
            data = json.loads(self._path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as err:
            log.warning("could not read %s (%s); MCP trust starts afresh", self._path, err)
            return
        servers = data.get("servers") if isinstance(data, dict) else None
        tools = data.get("tools") if isinstance(data, dict) else None
        if isinstance(servers, dict):
            self._servers = dict(servers)
        if isinstance(tools, dict):
            self._tools = {k: v for k, v in tools.items() if isinstance(v, dict)}

    def _save(self) -> None:
        if self._path is None:
            return
        data = {"servers": self._servers, "tools": self._tools}
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self._path, json.dumps(data, indent=1).encode())
        except OSError as err:
            log.warning(
                "could not save %s (%s): the decision holds for this session", self._path, err
            )

    def trusted(self, entry: ServerEntry, files: Mapping[str, str]) -> Trusted | None:
        """What the user approved of this entry as it is now, with its named `files` as they
        are now (`named_files`); None when they must be asked (again)."""
        held = self._servers.get(entry.name)
        if not isinstance(held, dict) or held.get("fingerprint") != entry.fingerprint:
            return None
        from_host = held.get("fromHost")
        if held.get("files") != dict(files) or not isinstance(from_host, list):
            return None
        return Trusted(tuple(str(name) for name in from_host))

    def trust(self, entry: ServerEntry, files: Mapping[str, str], from_host: Iterable[str]) -> None:
        self._servers[entry.name] = {
            "fingerprint": entry.fingerprint,
            "files": dict(files),
            "fromHost": list(from_host),
        }
        self._save()

    def always_allowed(self, entry: ServerEntry, tool: str) -> bool:
        held = self._tools.get(entry.name)
        if held is None or held.get("fingerprint") != entry.fingerprint:
            return False
        allowed = held.get("tools")
        return isinstance(allowed, list) and tool in allowed

    def allow_always(self, entry: ServerEntry, tool: str) -> None:
        held = self._tools.get(entry.name)
        if held is None or held.get("fingerprint") != entry.fingerprint:
            held = {"fingerprint": entry.fingerprint, "tools": []}
            self._tools[entry.name] = held
        if tool not in held["tools"]:
            held["tools"].append(tool)
        self._save()
