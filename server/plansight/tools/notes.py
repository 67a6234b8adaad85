"""The scratchpad tools: the model's working notes, visible to the user."""

from __future__ import annotations

from typing import Any

from plansight.engine.events import ScratchpadChanged
from plansight.tools.context import ToolContext
from plansight.tools.registry import Tool, line_of, require_str

# How much of the new notes a write_scratchpad call's summary shows.
NOTES_SUMMARY_CHARS = 80


async def read_scratchpad(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    return ctx.scratchpad.content or "(the scratchpad is empty)"


async def write_scratchpad(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    content = require_str(tool_input, "content")
    ctx.scratchpad.write(content)
    ctx.events.emit(ScratchpadChanged(content))
    return f"Scratchpad saved ({len(content)} characters)."


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="read_scratchpad",
        description="Read your scratchpad: the working notes you wrote with write_scratchpad.",
        input_schema={"type": "object", "properties": {}},
        handler=read_scratchpad,
        summarize_input=lambda tool_input: "",
        keeps_results=True,
        kind="think",
        title=lambda tool_input, summary: "Read the scratchpad",
    ),
    Tool(
        name="write_scratchpad",
        description=(
            "Replace your scratchpad with new content: a place to think, keep findings and "
            "decisions between steps. The user can see it."
        ),
        input_schema={
            "type": "object",
            "properties": {"content": {"type": "string", "description": "The whole new text."}},
            "required": ["content"],
        },
        handler=write_scratchpad,
        summarize_input=lambda tool_input: line_of(tool_input, "content", NOTES_SUMMARY_CHARS),
        keeps_results=True,
        kind="think",
        title=lambda tool_input, summary: "Write the scratchpad",
    ),
)
