"""A session's settings: from the environment and the initialization options (options win).

`SessionSettings.from_options` is the one place the two meet; a bad environment value is
logged and ignored (the default applies), as a bad option is (protocol/options.py). A front
door that gets no initialization options (`plansight acp`) reads the same keys from the user's
`$XDG_CONFIG_HOME/plansight/config.json` (`user_config`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansight.engine.compaction.compactor import (
    DEFAULT_COMPACT_AT,
    CompactionSettings,
)
from plansight.engine.model import DEFAULT_THINKING_BUDGET, ModelSettings, ThinkingOption
from plansight.engine.turns import Nudges
from plansight.protocol.options import DEFAULT_PLANS_DIRECTORY, InitOptions
from plansight.session.approvals import AutoApprove
from plansight.session.storage import SessionStore, storage_dir_for
from plansight.workspace.sandbox import SandboxMode, SandboxOptions
from plansight.workspace.secrets import ProtectOptions

log = logging.getLogger(__name__)

DEFAULT_MAX_ROUNDS = 50


@dataclass(frozen=True)
class SessionSettings:
    model: ModelSettings = field(default_factory=ModelSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    max_rounds: int = DEFAULT_MAX_ROUNDS
    storage_dir: Path | None = None  # None: the workspace's folder in the user's state dir
    checkpoints: bool = True  # carried for the checkpoints feature
    planning: bool = True  # False: no plan tools, no reminders, no done gate (`plansight eval`)
    nudges: Nudges = field(default_factory=Nudges)  # reminders and done gate, with planning on
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    protect: ProtectOptions = field(default_factory=ProtectOptions)
    read_only: bool = False  # the readOnly option: look at the stored session, change nothing
    auto_approve: AutoApprove = field(default_factory=AutoApprove)  # session/approvals.py
    # plansDirectory (version 4, user-level): relative to the root; None: no plan files.
    plans_directory: str | None = DEFAULT_PLANS_DIRECTORY

    @classmethod
    def from_options(cls, options: InitOptions, env: Mapping[str, str]) -> SessionSettings:
        """Settings from the environment and the initialization options; options win."""
        thinking = options.thinking
        model = ModelSettings(
            model=options.model or env.get("PLANSIGHT_MODEL") or None,
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            base_url=env.get("ANTHROPIC_BASE_URL") or None,
            thinking=(
                ThinkingOption(
                    DEFAULT_THINKING_BUDGET
                    if thinking.budget_tokens is None
                    else thinking.budget_tokens
                )
                if thinking is not None
                else None
            ),
        )
        if (timeout := seconds(env, "PLANSIGHT_API_TIMEOUT")) is not None:
            model = dataclasses.replace(model, timeout=timeout)
        return cls(
            model=model,
            compaction=CompactionSettings(
                options.context_window,
                options.compact_at if options.compact_at is not None else DEFAULT_COMPACT_AT,
            ),
            max_rounds=options.max_rounds or DEFAULT_MAX_ROUNDS,
            storage_dir=Path(options.storage_dir) if options.storage_dir else None,
            checkpoints=options.checkpoints,
            planning=options.planning,
            nudges=Nudges(
                options.reminders,
                options.reminder_after or Nudges().reminder_after,
                options.done_gate,
            ),
            sandbox=SandboxOptions(
                _mode(options.sandbox.enabled),
                options.sandbox.network,
                options.sandbox.writable,
            ),
            protect=ProtectOptions(
                options.protect.defaults,
                options.protect.extra,
                # Plan files are control files (read-only to commands) wherever they live;
                # the default folder is inside `.plansight/`, one already.
                (*options.protect.control, *_plans_control(options.plans_directory)),
            ),
            read_only=options.read_only,
            auto_approve=AutoApprove.from_options(options),
            plans_directory=options.plans_directory,
        )

    def store_for(self, root: Path) -> SessionStore:
        return SessionStore(storage_dir_for(root, self.storage_dir), read_only=self.read_only)


def _plans_control(directory: str | None) -> tuple[str, ...]:
    if directory is None:
        return ()
    relative = directory.strip().strip("/")
    if relative == ".plansight" or relative.startswith(".plansight/"):
        return ()
    return (f"/{relative}/",)


def _mode(enabled: bool | str) -> SandboxMode:
    return enabled if isinstance(enabled, bool) else "auto"


def seconds(env: Mapping[str, str], name: str) -> float | None:
    """A positive number of seconds from the environment; None (logged) for anything else."""
    raw = env.get(name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if math.isfinite(value) and value > 0:
        return value
    log.warning("ignoring %s=%r: not a positive number of seconds", name, raw)
    return None


def user_config_path(env: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/plansight/config.json` (default `~/.config/plansight/config.json`)."""
    config_home = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "plansight" / "config.json"


def user_config(env: Mapping[str, str]) -> Any:
    """The user's options file, as raw JSON for `InitOptions.parse` (same keys as the LSP
    initializationOptions); None when there is none. A file that is not JSON is logged and
    ignored, as a bad option is: the defaults apply."""
    path = user_config_path(env)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        log.warning("ignoring %s: %s; the defaults apply", path, err)
        return None
