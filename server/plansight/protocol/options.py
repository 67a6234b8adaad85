"""`initializationOptions`, read and checked: a value that breaks its rule is ignored (the
default applies) and described in `problems`, which the server logs for the user."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plansight.protocol.names import to_plain

DEFAULT_PLANS_DIRECTORY = ".plansight/plans"


@dataclass(frozen=True)
class Thinking:
    """`thinking: {}` turns extended thinking on; None leaves the budget to the server."""

    budget_tokens: int | None = None


@dataclass(frozen=True)
class SandboxOption:
    """`sandbox` (version 3): `enabled` "auto" | true | false, `network`, `writable` paths."""

    enabled: bool | str = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProtectOption:
    """`protect` (version 3): the default secret-file patterns on or off, and more of them;
    `control` (version 4): more control-file patterns (workspace/control.py), read-only to
    commands and always put to the user by the file tools."""

    defaults: bool = True
    extra: tuple[str, ...] = ()
    control: tuple[str, ...] = ()


@dataclass(frozen=True)
class InitOptions:
    """`initializationOptions`, read and checked. A value that breaks its rule is ignored (the
    default applies) and described in `problems`, which the server logs for the user."""

    model: str | None = None
    max_rounds: int | None = None
    storage_dir: str | None = None
    auto_approve_edits: bool = False
    auto_approve_commands: bool = False
    context_window: int | None = None  # tokens; None: what the Models API says, else 200000
    compact_at: float | None = None  # share of the window; None: 0.8
    thinking: Thinking | None = None  # None: no extended thinking
    checkpoints: bool = True
    planning: bool = True  # an extension: False for no plan tools, reminders or done gate
    # Extensions, the parts of planning `plansight eval` separates (with planning on): the
    # reminders, after how many rounds without a plan update (None: 3), and the done gate.
    reminders: bool = True
    reminder_after: int | None = None
    done_gate: bool = True
    # MCP servers in `.mcp.json`'s per-server shape (checked by plansight.mcp.config), trusted.
    mcp_servers: dict[str, Any] | None = None
    auto_approve_mcp: bool = False  # every MCP tool call runs without asking
    auto_approve_sandboxed: bool = False  # autoApprove.sandboxedCommands (v3)
    sandbox: SandboxOption = field(default_factory=SandboxOption)
    protect: ProtectOption = field(default_factory=ProtectOption)
    # An extension: a read-only view of the stored session (no claim, nothing written; the
    # requests that would change anything refused), for clients that only look.
    read_only: bool = False
    # `plansDirectory` (version 4, user-level): where each session's plan file lives, relative
    # to the workspace root; None: no plan files (`false`). Checked against the workspace at
    # start (session/planfiles.py): one that resolves outside it is refused there.
    plans_directory: str | None = DEFAULT_PLANS_DIRECTORY
    # Version 4: how many workers run plan items at once (`plansight/runParallel`); user-level.
    parallel_max: int = 3
    problems: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def parse(cls, raw: Any) -> InitOptions:
        raw = to_plain(raw)
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            return cls(problems=(f"initializationOptions must be an object, not {_shown(raw)}",))
        problems: list[str] = []
        top = _OptionReader(raw, "", problems)
        auto = _OptionReader(top.object("autoApprove") or {}, "autoApprove.", problems)
        thinking = top.object("thinking", nullable=True)
        # Any budget below the API's minimum (0 included) is raised to it (PROTOCOL.md).
        budget = _OptionReader(thinking or {}, "thinking.", problems).whole(
            "budgetTokens", minimum=0
        )
        return cls(
            model=top.text("model"),
            max_rounds=top.whole("maxRounds"),
            storage_dir=top.text("storageDir"),
            auto_approve_edits=auto.flag("edits", False),
            auto_approve_commands=auto.flag("commands", False),
            context_window=top.whole("contextWindow"),
            compact_at=top.share("compactAt"),
            thinking=Thinking(budget) if thinking is not None else None,
            checkpoints=top.flag("checkpoints", True),
            planning=top.flag("planning", True),
            reminders=top.flag("reminders", True),
            reminder_after=top.whole("reminderAfter"),
            done_gate=top.flag("doneGate", True),
            mcp_servers=top.object("mcpServers"),
            auto_approve_mcp=auto.flag("mcp", False),
            auto_approve_sandboxed=auto.flag("sandboxedCommands", False),
            sandbox=_sandbox(top.object("sandbox"), problems),
            protect=_protect(top.object("protect"), problems),
            read_only=top.flag("readOnly", False),
            plans_directory=_plans_directory(raw, problems),
            parallel_max=_OptionReader(top.object("parallel") or {}, "parallel.", problems).whole(
                "max"
            )
            or 3,
            problems=tuple(problems),
        )


def _sandbox(raw: dict[str, Any] | None, problems: list[str]) -> SandboxOption:
    if raw is None:
        return SandboxOption()
    reader = _OptionReader(raw, "sandbox.", problems)
    enabled: bool | str = "auto"
    value = raw.get("enabled")
    if isinstance(value, bool) or value == "auto":
        enabled = value
    elif value is not None:
        reader._ignore("enabled", 'must be "auto", true or false')
    writable = tuple(
        path
        for path in reader.texts("writable")
        if os.path.isabs(path) or reader.problem("writable", f"{path!r} is not an absolute path")
    )
    return SandboxOption(enabled, reader.flag("network", False), writable)


def _plans_directory(raw: Mapping[str, Any], problems: list[str]) -> str | None:
    """`plansDirectory`: a relative path, or false for no plan files (absent: the default)."""
    value = raw.get("plansDirectory")
    if value is None:
        return DEFAULT_PLANS_DIRECTORY
    if value is False:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    problems.append(
        "initializationOptions.plansDirectory must be a path inside the workspace or false, "
        f"not {_shown(value)}; the default applies"
    )
    return DEFAULT_PLANS_DIRECTORY


def _protect(raw: dict[str, Any] | None, problems: list[str]) -> ProtectOption:
    if raw is None:
        return ProtectOption()
    reader = _OptionReader(raw, "protect.", problems)
    return ProtectOption(
        reader.flag("defaults", True), reader.texts("extra"), reader.texts("control")
    )


class _OptionReader:
    """Reads typed values from one options object, noting each value it has to ignore."""

    def __init__(self, raw: Mapping[str, Any], prefix: str, problems: list[str]) -> None:
        self.raw = raw
        self.prefix = prefix
        self.problems = problems

    def _ignore(self, key: str, rule: str) -> None:
        self.problems.append(
            f"initializationOptions.{self.prefix}{key} {rule}, not {_shown(self.raw[key])}; "
            "the default applies"
        )

    def problem(self, key: str, what: str) -> bool:
        """Note a problem with one item of a value (it is left out); False, for filters."""
        self.problems.append(f"initializationOptions.{self.prefix}{key}: {what}; it is ignored")
        return False

    def texts(self, key: str) -> tuple[str, ...]:
        """A list of non-empty strings; an item that is none is left out (and noted)."""
        value = self.raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self._ignore(key, "must be a list of strings")
            return ()
        kept = []
        for item in value:
            if isinstance(item, str) and item.strip():
                kept.append(item)
            else:
                self.problem(key, f"{_shown(item)} is not a non-empty string")
        return tuple(kept)

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value
        self._ignore(key, "must be a non-empty string")
        return None

    def whole(self, key: str, *, minimum: int = 1) -> int | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        self._ignore(key, f"must be a whole number of at least {minimum}")
        return None

    def share(self, key: str) -> float | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            if math.isfinite(value) and 0 < value <= 1:
                return float(value)
        self._ignore(key, "must be a number above 0 and at most 1")
        return None

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        self._ignore(key, "must be true or false")
        return default

    def object(self, key: str, *, nullable: bool = False) -> dict[str, Any] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, dict):
            return value
        self._ignore(key, "must be an object or null" if nullable else "must be an object")
        return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."
