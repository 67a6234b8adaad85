"""The model's tools. `default_tools()` lists them all; each module keeps schema by handler."""

from __future__ import annotations

from plansight.tools.registry import Tool, ToolError, ToolOutcome, ToolRegistry


def default_tools() -> ToolRegistry:
    from plansight.tools import files, notes, planning

    return ToolRegistry([*files.TOOLS, *planning.TOOLS, *notes.TOOLS])


__all__ = ["Tool", "ToolError", "ToolOutcome", "ToolRegistry", "default_tools"]
