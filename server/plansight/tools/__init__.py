"""The model's tools. `default_tools()` lists them all; each module keeps schema by handler.

files: read_file, write_file, edit_file. search: list_files, grep (ripgrep). shell: bash.
planning: todo. notes: the scratchpad. user: submit_plan, ask_user. The tools that exist for
the plan (`Tool.for_planning`: todo, submit_plan) are left out of a session without planning.
"""

from __future__ import annotations

from plansight.tools.registry import Tool, ToolOutcome, ToolRegistry


def default_tools(*, planning: bool = True) -> ToolRegistry:
    """Every tool; with `planning=False`, none of those that exist for the plan."""
    from plansight.tools import files, notes, search, shell, user
    from plansight.tools import planning as plan_tools

    tools = [
        *files.TOOLS,
        *search.TOOLS,
        *shell.TOOLS,
        *plan_tools.TOOLS,
        *notes.TOOLS,
        *user.TOOLS,
    ]
    return ToolRegistry([tool for tool in tools if planning or not tool.for_planning])


__all__ = ["Tool", "ToolOutcome", "ToolRegistry", "default_tools"]
