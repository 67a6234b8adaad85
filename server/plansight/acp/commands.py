"""The slash commands an ACP client offers (`available_commands_update`), typed as a prompt
beginning with `/`: each does what its LSP twin does.

| command | LSP twin |
|---|---|
| `/plan <request>` | `plansight/run` with `mode: "plan"` |
| `/step <id>` | `plansight/run` with `todoId` (the rest of the line, if any, is the prompt) |
| `/undo <id>` | `plansight/restore` with `todoId` (undo that plan step) |
| `/compact` | `plansight/compact` |
| `/checkpoints` | `plansight/checkpoints` |
| `/parallel <id> <id>...` | `plansight/runParallel` with `takeIn: true` (then each review) |

A prompt that begins with any other `/word` is an ordinary prompt (a path, say).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate
from acp.schema import UnstructuredCommandInput as Hint

CommandName = Literal["plan", "step", "undo", "compact", "checkpoints", "parallel"]
NAMES: tuple[CommandName, ...] = ("plan", "step", "undo", "compact", "checkpoints", "parallel")


@dataclass(frozen=True)
class SlashCommand:
    name: CommandName
    argument: str  # the rest of the line after the name, stripped ("" when none)


def available_commands() -> AvailableCommandsUpdate:
    def hinted(name: str, description: str, hint: str | None = None) -> AvailableCommand:
        given = AvailableCommandInput(root=Hint(hint=hint)) if hint else None
        return AvailableCommand(name=name, description=description, input=given)

    return update_available_commands(
        [
            # Clients show the hint after the name or the description (CodeCompanion.nvim runs
            # them together): each reads on its own, as what to type.
            hinted("plan", "Plan first; nothing changes until you approve the plan.", "what to do"),
            hinted("step", "Work on one plan item only.", "item number, e.g. 2"),
            hinted(
                "undo",
                "Undo one plan step: put back what its edits and commands changed.",
                "item number, e.g. 2",
            ),
            hinted("compact", "Compact the conversation now."),
            hinted("checkpoints", "List the workspace's checkpoints."),
            hinted(
                "parallel",
                "Run plan items at once, each by a worker in a sandboxed copy of the "
                "workspace; then review each worker's changes file by file.",
                "item numbers, e.g. 2 3",
            ),
        ]
    )


def parse_command(prompt: str) -> SlashCommand | None:
    """The command a prompt types, or None for an ordinary prompt."""
    text = prompt.lstrip()
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    head, _, more = head.partition("\n")
    name = head.strip()
    argument = " ".join(part for part in (more, rest) if part).strip()
    for known in NAMES:
        if name == known:
            return SlashCommand(known, argument)
    return None


def item_id(argument: str) -> tuple[str, str]:
    """`/step 2 and more` → ("2", "and more"); a leading `#` is allowed, as in `#2`."""
    first, _, rest = argument.partition(" ")
    return first.lstrip("#"), rest.strip()
