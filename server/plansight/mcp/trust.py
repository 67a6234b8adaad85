"""What the user decided about MCP servers, remembered per workspace: the workspace servers they
trusted and the tools they always allow. Kept as `mcp-trust.json` in the session's storage
folder (replaced atomically), or in memory only for a session without storage.

Both decisions are tied to the server entry's fingerprint (`ServerEntry.fingerprint`): when the
entry changes (another command, other arguments), the server is asked about again and its
tools are no longer always allowed. Only a yes is remembered: a server the user denied is asked
about at the next session's start.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from plansight.mcp.config import ServerEntry
from plansight.workspace.atomic import write_atomic

log = logging.getLogger(__name__)

TRUST_FILE = "mcp-trust.json"


class TrustMemory:
    def __init__(self, directory: Path | None) -> None:
        self._path = directory / TRUST_FILE if directory is not None else None
        self._servers: dict[str, str] = {}  # name → fingerprint trusted
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
            self._servers = {k: v for k, v in servers.items() if isinstance(v, str)}
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

    def trusted(self, entry: ServerEntry) -> bool:
        return self._servers.get(entry.name) == entry.fingerprint

    def trust(self, entry: ServerEntry) -> None:
        self._servers[entry.name] = entry.fingerprint
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
