"""The MCP servers a session may use, from four sources read in this order (a later name wins):

1. the user's file, `$XDG_CONFIG_HOME/plansight/mcp.json` (default `~/.config/...`):
   `{ "mcpServers": { name: server } }` (`servers` is read too);
2. the workspace's `.mcp.json`: `{ "mcpServers": { name: server } }`, as Claude Code writes it;
3. the workspace's `.vscode/mcp.json`: `{ "servers": { name: server } }`, as VS Code writes it;
4. the client's servers (the option `mcpServers`, or an ACP editor's), in `.mcp.json`'s shape.

A server is `{ command, args?, env?, cwd? }` (stdio) or `{ url, headers? }` (streamable HTTP),
with optional `disabled`, `autoApprove` (tool names), `startupTimeout` (s, 30) and `toolTimeout`
(s, 60). `${env:NAME}` in `env`, `headers` and `args` is replaced from this process's
environment, except, in an entry of a workspace file, a secret-named variable's
(`workspace.sandbox.is_secret_name`): that stays empty (`ServerEntry.withheld` names it) until
the user's approval names it (`with_host_values`), so that a cloned repository cannot send the
user's API key to a program or an address of its choosing by being trusted for its command.
Anything else (VS Code's `inputs`, `${input:...}`, unknown keys) is a warning, and
so is a malformed file (naming the file and the line): the session works without it.

Servers from the workspace's files are untrusted (`ServerEntry.trusted` False): a cloned
repository must not run a program by being opened. Nothing here starts anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansight.workspace.sandbox import is_secret_name

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_TOOL_TIMEOUT = 60.0
CLIENT_SOURCE = "client"  # the option `mcpServers`, or the servers an ACP editor gave

_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_OTHER_REF = re.compile(r"\$\{(?!env:)[^}]*\}")
_KNOWN_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "disabled",
        "autoApprove",
        "startupTimeout",
        "toolTimeout",
        "type",  # VS Code's and Claude Code's transport tag: stdio, http
    }
)


@dataclass(frozen=True)
class ServerEntry:
    """One server as configured, its `${env:...}` references replaced."""

    name: str
    source: str  # the file that names it, or CLIENT_SOURCE
    trusted: bool  # False: from a workspace file, started only once the user trusts it
    fingerprint: str  # of the entry as written: a trust decision holds until it changes
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None  # where a stdio server runs: the workspace root, or `cwd` relative to it
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    auto_approve: frozenset[str] = frozenset()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    # The host variables the entry pulls in with `${env:NAME}` (in env, headers or args), in
    # the order written: what the user is shown before trusting a workspace entry.
    from_host: tuple[str, ...] = ()
    # Those of them whose value was left empty: secret-named, in a workspace entry, not (yet)
    # named by the user's approval. A server with any is not started.
    withheld: tuple[str, ...] = ()
    # The entry's `args`, `env` and `headers` as written, for `with_host_values`.
    written: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def env_names(self) -> tuple[str, ...]:
        """The names of the variables the entry sets for its process."""
        return tuple(self.env)


@dataclass(frozen=True)
class McpConfig:
    servers: tuple[ServerEntry, ...]
    warnings: tuple[str, ...]


def user_config_file(env: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/plansight/mcp.json`, `~/.config/plansight/mcp.json` without it."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "plansight" / "mcp.json"


def load_config(
    root: Path,
    client_servers: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> McpConfig:
    """The servers of all four sources for the workspace at `root`; a later name wins."""
    environ = os.environ if env is None else env
    warnings: list[str] = []
    found: dict[str, ServerEntry] = {}
    files = (
        (user_config_file(environ), ("mcpServers", "servers"), True),
        (root / ".mcp.json", ("mcpServers",), False),
        (root / ".vscode" / "mcp.json", ("servers",), False),
    )
    for path, keys, trusted in files:
        servers = _read_file(path, keys, warnings)
        for name, raw in servers.items():
            entry = _entry(name, raw, str(path), trusted, root, environ, warnings)
            if entry is not None:
                found[name] = entry
    if client_servers:
        for name, raw in client_servers.items():
            entry = _entry(str(name), raw, CLIENT_SOURCE, True, root, environ, warnings)
            if entry is not None:
                found[entry.name] = entry
    return McpConfig(tuple(found.values()), tuple(warnings))


def _read_file(path: Path, keys: tuple[str, ...], warnings: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as err:
        warnings.append(f"{path}: cannot be read ({err}); its MCP servers are left out")
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        warnings.append(
            f"{path}:{err.lineno}: not valid JSON ({err.msg}, line {err.lineno} column "
            f"{err.colno}); its MCP servers are left out"
        )
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: must hold a JSON object; its MCP servers are left out")
        return {}
    for key in data:
        if key not in keys:
            what = "VS Code's input variables are not supported" if key == "inputs" else "unknown"
            warnings.append(f"{path}: {key!r} is ignored ({what})")
    servers: dict[str, Any] = {}
    for key in keys:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            warnings.append(f"{path}: {key!r} must be an object of servers by name")
            continue
        servers.update(value)
    return servers


def _entry(
    name: str,
    raw: Any,
    source: str,
    trusted: bool,
    root: Path,
    env: Mapping[str, str],
    warnings: list[str],
) -> ServerEntry | None:
    where = f"{source}: server {name!r}"
    if not isinstance(raw, dict):
        warnings.append(f"{where} must be an object; left out")
        return None
    for key in raw:
        if key not in _KNOWN_KEYS:
            warnings.append(f"{where}: {key!r} is ignored (unknown)")
    kind = raw.get("type")
    if kind is not None and kind not in ("stdio", "http", "streamable-http"):
        warnings.append(f"{where}: transport {kind!r} is not supported (stdio or http); left out")
        return None
    command = raw.get("command")
    url = raw.get("url")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        warnings.append(f"{where}: 'command' must be a non-empty string; left out")
        return None
    if url is not None and (not isinstance(url, str) or not url.strip()):
        warnings.append(f"{where}: 'url' must be a non-empty string; left out")
        return None
    if (command is None) == (url is None):
        warnings.append(f"{where}: needs either 'command' (stdio) or 'url' (HTTP); left out")
        return None
    # A workspace entry gets no secret host variable until the user's approval names it.
    subst = _Substitution(env, where, warnings, gate_secrets=not trusted)
    args = _strings(raw.get("args"), f"{where}: 'args'", warnings)
    auto = _strings(raw.get("autoApprove"), f"{where}: 'autoApprove'", warnings)
    env_written = _mapping(raw.get("env"), where, "env", warnings)
    headers_written = _mapping(raw.get("headers"), where, "headers", warnings)
    entry = ServerEntry(
        name=name,
        source=source,
        trusted=trusted,
        fingerprint=_fingerprint(source, raw),
        command=command,
        args=tuple(subst.text(arg) for arg in args),
        env={k: subst.text(v) for k, v in env_written.items()},
        cwd=str(root / raw["cwd"]) if isinstance(raw.get("cwd"), str) else str(root),
        url=url,
        headers={k: subst.text(v) for k, v in headers_written.items()},
        disabled=_flag(raw.get("disabled"), f"{where}: 'disabled'", warnings),
        auto_approve=frozenset(auto),
        startup_timeout=_seconds(
            raw.get("startupTimeout"),
            DEFAULT_STARTUP_TIMEOUT,
            f"{where}: 'startupTimeout'",
            warnings,
        ),
        tool_timeout=_seconds(
            raw.get("toolTimeout"), DEFAULT_TOOL_TIMEOUT, f"{where}: 'toolTimeout'", warnings
        ),
        from_host=tuple(dict.fromkeys(subst.referenced)),
        withheld=tuple(dict.fromkeys(subst.withheld)),
        written={"args": tuple(args), "env": env_written, "headers": headers_written},
    )
    return entry


def secret_references(entry: ServerEntry) -> tuple[str, ...]:
    """The host variables of `entry.from_host` that are secret by name: those a workspace
    entry gets only when the user's approval names them."""
    return tuple(name for name in entry.from_host if is_secret_name(name))


def with_host_values(
    entry: ServerEntry, named: Iterable[str], env: Mapping[str, str] | None = None
) -> ServerEntry:
    """`entry` with the secret host variables that the user's approval `named` replaced too
    (the others stay empty, still `withheld`); the entry itself when nothing was withheld."""
    if not entry.withheld:
        return entry
    environ = os.environ if env is None else env
    allowed = frozenset(named)
    subst = _Substitution(environ, entry.name, [], gate_secrets=True, allowed=allowed)
    written = entry.written
    return dataclasses.replace(
        entry,
        args=tuple(subst.text(arg) for arg in written.get("args", ())),
        env={k: subst.text(v) for k, v in written.get("env", {}).items()},
        headers={k: subst.text(v) for k, v in written.get("headers", {}).items()},
        withheld=tuple(dict.fromkeys(subst.withheld)),
    )


def _fingerprint(source: str, raw: Mapping[str, Any]) -> str:
    """The entry as written, hashed: a trust decision holds until this changes."""
    text = json.dumps({"source": source, "entry": raw}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class _Substitution:
    def __init__(
        self,
        env: Mapping[str, str],
        where: str,
        warnings: list[str],
        *,
        gate_secrets: bool = False,
        allowed: frozenset[str] = frozenset(),
    ) -> None:
        """`gate_secrets`: a secret-named variable is replaced only when in `allowed`."""
        self.env = env
        self.where = where
        self.warnings = warnings
        self.gate_secrets = gate_secrets
        self.allowed = allowed
        self.referenced: list[str] = []
        self.withheld: list[str] = []

    def text(self, value: str) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            self.referenced.append(name)
            if self.gate_secrets and is_secret_name(name) and name not in self.allowed:
                self.withheld.append(name)
                return ""
            if name not in self.env:
                self.warnings.append(f"{self.where}: ${{env:{name}}} is not set; it is empty")
            return self.env.get(name, "")

        for other in _OTHER_REF.findall(value):
            self.warnings.append(
                f"{self.where}: {other} is left as it is (only ${{env:NAME}} is replaced)"
            )
        return _ENV_REF.sub(replace, value)


def _strings(value: Any, where: str, warnings: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    warnings.append(f"{where} must be a list of strings; ignored")
    return []


def _mapping(value: Any, where: str, key: str, warnings: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return {str(k): v for k, v in value.items()}
    warnings.append(f"{where}: {key!r} must be an object of strings; ignored")
    return {}


def _flag(value: Any, where: str, warnings: list[str]) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    warnings.append(f"{where} must be true or false; taken as false")
    return False


def _seconds(value: Any, default: float, where: str, warnings: list[str]) -> float:
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    warnings.append(f"{where} must be a positive number of seconds; {default:g} applies")
    return default
