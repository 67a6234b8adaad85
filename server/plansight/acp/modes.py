"""A session's mode as ACP offers it, twice: as `modes` (`session/set_mode`) and as a session
config option of category `mode` (`configOptions`, `session/set_config_option`), since some
clients read only the one (Zed the modes, CodeCompanion.nvim the config options). Both say the
same at every moment: a change by either request, or by the run itself (an approved plan goes
on in `act`, `/plan` switches to `plan`), is told as both `current_mode_update` and
`config_option_update`.
"""

from __future__ import annotations

from typing import Literal

from acp.helpers import update_current_mode
from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

Mode = Literal["act", "plan"]
MODE_OPTION = "mode"  # the config option's id
_MODES: tuple[tuple[Mode, str, str], ...] = (
    ("act", "Act", "Plan in the open and make the changes"),
    ("plan", "Plan", "Research and plan first; change nothing until you approve the plan"),
)


def as_mode(value: str) -> Mode | None:
    return "plan" if value == "plan" else "act" if value == "act" else None


def unknown_mode(value: str) -> str:
    return f"Unknown mode {value!r}: the modes are act and plan."


def mode_state(current: Mode) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=name, description=said) for mode, name, said in _MODES
        ],
    )


def config_options(current: Mode) -> list[SessionConfigOptionSelect]:
    """The session's config options: the mode, as a select of category `mode`."""
    return [
        SessionConfigOptionSelect(
            id=MODE_OPTION,
            name="Mode",
            description="Act, or plan first and change nothing until you approve the plan",
            category="mode",
            type="select",
            current_value=current,
            options=[
                SessionConfigSelectOption(value=mode, name=name, description=said)
                for mode, name, said in _MODES
            ],
        )
    ]


def mode_changed(current: Mode) -> tuple[CurrentModeUpdate, ConfigOptionUpdate]:
    """The updates that tell a client the mode is now `current`, both ways."""
    return update_current_mode(current), ConfigOptionUpdate(
        session_update="config_option_update", config_options=list(config_options(current))
    )
