"""The `todo` tool: the model replaces its whole plan."""

from __future__ import annotations

from typing import Any

from plansight.events import PlanChanged, PlanDraft
from plansight.plan import MAX_ITEMS, MAX_RETRIES, STATUSES, PlanError, complete_items
from plansight.tools.context import ToolContext
from plansight.tools.registry import Tool, ToolError


async def todo(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    ctx.plan.draft_size = 0
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


def preview_todo(ctx: ToolContext, partial_json: str) -> None:
    """Show the plan's items as each one finishes streaming, before the call completes."""
    items = complete_items(partial_json)
    if items and len(items) != ctx.plan.draft_size:
        ctx.plan.draft_size = len(items)
        ctx.events.emit(PlanDraft(tuple(items)))


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
        preview=preview_todo,
    ),
)
