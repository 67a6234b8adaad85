"""What the user reads and writes in a prompt: the prompt's text (its files included), the
slash commands' answers, the workspace a session names, and the JSON-RPC errors a client's
request gets when it cannot be done."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from plansight.acp.errors import invalid_params
from plansight.plan.plan import TodoState

TITLE_CHARS = 60


def prompt_text(blocks: Sequence[Any]) -> str:
    """The prompt's text: its text blocks, the files it embeds (as context the model reads),
    and links to those it only names."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<context uri="{resource.uri}">\n{resource.text}\n</context>')
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        else:
            raise invalid_params(
                f"Plansight reads text only: a {getattr(block, 'type', 'non-text')} block "
                "cannot be part of the prompt."
            )
    text = "\n".join(part for part in parts if part)
    if not text.strip():
        raise invalid_params("The prompt is empty.")
    return text


def checkpoints_text(found: list[dict[str, Any]]) -> str:
    if not found:
        return "No checkpoints yet."
    lines = ["Checkpoints, oldest first:"]
    for c in found:
        step = f" (step #{c['todoId']})" if c.get("todoId") else ""
        paths = f": {', '.join(c['paths'])}" if c.get("paths") else ""
        lines.append(f"- {c['id']} {c['label']}{step}, {c['createdAt']}{paths}")
    return "\n".join(lines)


def restore_text(todo_id: str, wire: dict[str, Any]) -> str:
    restored = wire.get("restored") or []
    deleted = wire.get("deleted") or []
    skipped = wire.get("skipped") or []
    lines = [f"Undid step #{todo_id}."]
    if restored:
        lines.append("Restored: " + ", ".join(restored))
    if deleted:
        lines.append("Deleted: " + ", ".join(deleted))
    lines.extend(f"Left alone: {s['path']} ({s['reason']})" for s in skipped)
    if not (restored or deleted or skipped):
        lines.append("Nothing to put back: the step changed no files.")
    return "\n".join(lines)


def workspace(cwd: str) -> Path:
    """The workspace `cwd` names: an absolute path to an existing folder. Anything else is
    refused saying to open a folder: the agent never falls back to the process's own cwd."""
    open_one = "Open a folder in the editor to use Plansight"
    if not isinstance(cwd, str) or not cwd:
        raise invalid_params(
            f"{open_one}: session/new needs cwd, the workspace folder as an absolute path."
        )
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"{open_one}: cwd must be an absolute path, not {cwd!r}.")
    if not path.is_dir():
        raise invalid_params(f"{open_one}: cwd {cwd!r} is not an existing folder.")
    return path


def session_title(prompt: str) -> str:
    """A session's title: its first prompt's first line, at most 60 characters."""
    line = next((part.strip() for part in prompt.splitlines() if part.strip()), "")
    if len(line) > TITLE_CHARS:
        line = line[: TITLE_CHARS - 1].rstrip() + "…"
    return line or "New session"


def no_such_item(todo_id: str, plan: TodoState, command: str) -> str | None:
    """Why `/step` or `/undo` cannot take `todo_id`, or None when the plan has that item."""
    ids = [item.id for item in plan.items]
    if todo_id in ids:
        return None
    if not ids:
        return (
            f"There is no item #{todo_id} in the plan: the plan has no items yet. Ask for one "
            f"first (/plan <what to do>), then /{command} one of its items."
        )
    listed = ", ".join(f"#{i}" for i in ids)
    return (
        f"There is no item #{todo_id} in the plan; its items are {listed}. "
        f"Type /{command} with one of them, e.g. /{command} {ids[0]}."
    )
