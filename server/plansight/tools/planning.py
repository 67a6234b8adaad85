"""The `todo` tool: the model replaces its whole plan; its items show while the call streams."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plansight.engine.events import PlanChanged, PlanDraft
from plansight.plan.plan import MAX_ITEMS, MAX_RETRIES, STATUSES, PlanError
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.registry import Tool


async def todo(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    try:
        update = ctx.plan.update_from_model(tool_input.get("items"))
    except PlanError as err:
        raise ToolError(f"Plan rejected, nothing changed: {err}") from err
    ctx.events.emit(PlanChanged(update.state))
    result = update.state.rendered
    both = ctx.plan.merged_with_user
    if both is not None:
        # The user edited the plan (its file) while this call was written: merged per item.
        result += "\n\nThe user edited the plan meanwhile; their changes are kept above."
        if both:
            result += " You both changed " + ", ".join(f"#{i}" for i in both) + ": theirs kept."
    for item in update.retry_exhausted:
        result += (
            f"\n\nItem #{item.id} has been retried {item.retries} times. Stop retrying it: "
            "mark it failed or cancelled and explain the problem to the user."
        )
    return result


def todo_input_summary(tool_input: dict[str, Any]) -> str:
    """`3 items`: the size of the plan sent (the plan itself comes as `plansight/todos`)."""
    items = tool_input.get("items")
    count = len(items) if isinstance(items, list) else 0
    return f"{count} item" if count == 1 else f"{count} items"


class TodoPreview:
    """One streaming todo call: its items shown as each one finishes, before the call is done."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._shown = 0  # items of this call already shown

    def update(self, partial_json: str) -> None:
        items = complete_items(partial_json)
        if items and len(items) != self._shown:
            self._shown = len(items)
            self._ctx.events.emit(PlanDraft(tuple(items)))


def complete_items(partial_json: str) -> list[dict[str, Any]]:
    """The item objects already complete in a streaming `{"items": [...` JSON text."""
    start = partial_json.find("[")
    if start == -1:
        return []
    found: list[dict[str, Any]] = []
    depth = 0
    in_string = escaped = False
    item_start = -1
    for index in range(start + 1, len(partial_json)):
        char = partial_json[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            if depth == 0:
                item_start = index
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and item_start != -1:
                try:
                    value = json.loads(partial_json[item_start : index + 1])
                except ValueError:
                    return found
                if isinstance(value, dict):
                    found.append(value)
        elif char == "]" and depth == 0:
            break
    return found


TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "description": "The whole plan; it replaces the previous one.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Stable, unique id, e.g. '1'."},
                    "text": {"type": "string", "description": "What this step achieves."},
                    "status": {"type": "string", "enum": list(STATUSES)},
                    "notes": {
                        "type": "string",
                        "description": (
                            "The item's notes (acceptance criteria, hints, links); leave it "
                            "out to keep the notes the item has."
                        ),
                    },
                    "after": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Optional: ids of the items this one needs done first.",
                    },
                },
                "required": ["id", "text", "status"],
            },
        }
    },
    "required": ["items"],
}


def plan_title(tool_input: dict[str, Any]) -> str:
    """The todo call's title: the plan's progress and current item, for clients that show a
    tool call by its title alone (CodeCompanion.nvim)."""
    items = tool_input.get("items")
    if not isinstance(items, list) or not items:
        return "Update the plan"
    listed = [i for i in items if isinstance(i, Mapping)]
    done = sum(1 for i in listed if i.get("status") in ("completed", "cancelled"))
    now = next((i for i in listed if i.get("status") == "in_progress"), None)
    title = f"Update the plan ({done}/{len(items)} done"
    if now is not None:
        title += f"; now #{now.get('id', '?')}: {str(now.get('text', '')).splitlines()[0][:60]}"
    return title + ")"


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="todo",
        description=(
            "Write your plan: the whole list of steps, replacing the previous one. Use it before "
            "multi-step work and whenever progress changes. Statuses: pending, in_progress "
            f"(at most one), completed, cancelled, failed. At most {MAX_ITEMS} items. Moving a "
            f"failed item back to in_progress counts as a retry; after {MAX_RETRIES} retries, "
            "stop and explain. Returns the rendered plan."
        ),
        input_schema=TODO_SCHEMA,
        handler=todo,
        preview=TodoPreview,
        summarize_input=todo_input_summary,
        keeps_results=True,
        for_planning=True,
        kind="think",
        title=lambda tool_input, summary: plan_title(tool_input),
    ),
)
