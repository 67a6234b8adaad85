"""One registry of the model's tools: each tool's schema sits next to its handler."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plansight.tools.context import ToolContext

log = logging.getLogger(__name__)

# The most any tool result shows of an output (a listing, matches, a command's output, a diff).
OUTPUT_MAX_BYTES = 30_000

Handler = Callable[["ToolContext", dict[str, Any]], Awaitable[str]]
# Called with the tool's input JSON as streamed so far, before the call is complete.
Previewer = Callable[["ToolContext", str], None]


class ToolError(Exception):
    """An expected failure: its message goes back to the model as an is_error result."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    preview: Previewer | None = None

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool {tool.name!r}")
            self._tools[tool.name] = tool

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition() for tool in self._tools.values()]

    def has_preview(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is not None and tool.preview is not None

    def preview(self, ctx: ToolContext, name: str, partial_json: str) -> None:
        """Let a tool show its call while the input still streams (the plan, for one)."""
        tool = self._tools.get(name)
        if tool is None or tool.preview is None:
            return
        try:
            tool.preview(ctx, partial_json)
        except Exception:
            log.exception("preview of %s failed", name)

    async def call(self, ctx: ToolContext, name: str, tool_input: Any) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolOutcome(f"Unknown tool {name!r}. Available tools: {known}.", True)
        if not isinstance(tool_input, dict):
            return ToolOutcome(f"{name}: the input must be a JSON object.", True)
        try:
            return ToolOutcome(await tool.handler(ctx, tool_input), False)
        except ToolError as err:
            return ToolOutcome(str(err), True)
        except Exception:
            # A bug, not the model's fault: log it loudly, but keep the conversation valid.
            log.exception("tool %s failed unexpectedly", name)
            return ToolOutcome(
                f"{name} failed with an internal error (logged for the developers).", True
            )


def require_str(tool_input: dict[str, Any], key: str, *, allow_empty: bool = True) -> str:
    value = tool_input.get(key)
    if not isinstance(value, str):
        raise ToolError(f"'{key}' is required and must be a string.")
    if not allow_empty and not value.strip():
        raise ToolError(f"'{key}' must not be empty.")
    return value


def optional_str(tool_input: dict[str, Any], key: str) -> str | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string.")
    return value


def optional_int(tool_input: dict[str, Any], key: str, *, minimum: int) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolError(f"'{key}' must be a whole number.")
    if value < minimum:
        raise ToolError(f"'{key}' must be at least {minimum}.")
    return int(value)
