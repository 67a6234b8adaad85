"""The `todo` tool: the model replaces its whole plan."""

from __future__ import annotations

from typing import Any

from plansight.events import PlanChanged
from plansight.plan import MAX_ITEMS, MAX_RETRIES, STATUSES, PlanError
from plansight.tools.context import ToolContext
from plansight.tools.registry import Tool, ToolError


async def todo(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    try:
        update = ctx.plan.update_from_model(tool_input.get("items"))
    except PlanError as err:
        raise ToolError(f"Plan rejected, nothing changed: {err}") from err
    ctx.events.emit(PlanChanged(update.state))
    result = update.state.rendered
    for item in update.retry_exhausted:
        result += (
            f"\n\nItem #{item.id} has been retried {item.retries} times. Stop retrying it: "
            "mark it failed or cancelled and explain the problem to the user."
        )
    return result


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
                },
                "required": ["id", "text", "status"],
            },
        }
    },
    "required": ["items"],
}

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
    ),
)
