"""What the engine asks of whoever embeds it: edit review, command approval, open documents.

The language server implements these with editor requests; tests and the terminal
client implement them directly. The engine never knows which.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class EditProposal:
    """A change the model wants to make to one file, shown to the user before it is written."""

    id: str
    path: Path  # absolute, already resolved inside the workspace
    relative_path: str
    old_text: str  # the whole document before ("" for a new file)
    new_text: str  # the whole document after
    description: str
    todo_id: str | None  # the plan item in progress when the edit was proposed


@dataclass(frozen=True)
class EditDecision:
    accepted: bool
    feedback: str | None = None
    # The whole document as the user settled it, when it differs from the proposal.
    new_text: str | None = None


@dataclass(frozen=True)
class CommandRequest:
    command: str
    cwd: str


@dataclass(frozen=True)
class CommandDecision:
    approved: bool
    feedback: str | None = None


ReviewHook = Callable[[EditProposal], Awaitable[EditDecision]]
ApproveHook = Callable[[CommandRequest], Awaitable[CommandDecision]]


class DocumentSource(Protocol):
    """Text of documents open in an editor, unsaved changes included."""

    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` if it is open there, else None."""
        ...


async def accept_all_edits(proposal: EditProposal) -> EditDecision:
    return EditDecision(accepted=True)


async def approve_all_commands(request: CommandRequest) -> CommandDecision:
    return CommandDecision(approved=True)


async def refuse_all_commands(request: CommandRequest) -> CommandDecision:
    return CommandDecision(
        approved=False, feedback="Commands are not allowed without approval in this client."
    )
