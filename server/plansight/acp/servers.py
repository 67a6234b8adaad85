"""The MCP servers an ACP client gives in `session/new` / `session/load`, in the shape of
`.mcp.json`'s entries (PROTOCOL.md, "MCP tools"), which the session starts as trusted servers.

ACP lists them as `{name, command, args, env: [{name, value}]}` (stdio) and `{type: "http",
name, url, headers: [{name, value}]}`; `sse` servers (which the agent does not advertise) are
left out with a warning, as is a second server of the same name (the first one wins).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)


def _pairs(raw: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in raw or []:
        name, value = _field(pair, "name"), _field(pair, "value")
        if isinstance(name, str) and isinstance(value, str):
            found[name] = value
    return found


def _field(item: Any, key: str) -> Any:
    if isinstance(item, dict):
        return item.get(key)
    return getattr(item, key, None)


def mcp_servers(given: Iterable[Any] | None) -> dict[str, dict[str, Any]]:
    """`{name: {"command", "args", "env"} | {"url", "headers"}}` from ACP's `mcpServers`
    (dicts or the SDK's models)."""
    servers: dict[str, dict[str, Any]] = {}
    for server in given or []:
        name = _field(server, "name")
        if not isinstance(name, str) or not name:
            log.warning("ignoring an MCP server without a name: %r", server)
            continue
        if name in servers:
            log.warning("ignoring a second MCP server named %r", name)
            continue
        kind = _field(server, "type")
        if kind == "http" and isinstance(_field(server, "url"), str):
            servers[name] = {
                "url": _field(server, "url"),
                "headers": _pairs(_field(server, "headers")),
            }
        elif kind in (None, "stdio") and isinstance(_field(server, "command"), str):
            args = _field(server, "args") or []
            servers[name] = {
                "command": _field(server, "command"),
                "args": [arg for arg in args if isinstance(arg, str)],
                "env": _pairs(_field(server, "env")),
            }
        else:
            log.warning("ignoring MCP server %r: its transport (%s) is not offered", name, kind)
    return servers
