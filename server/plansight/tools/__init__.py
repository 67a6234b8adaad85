"""The model's tools. `default_tools()` lists them all; each module keeps schema by handler.

files: read_file, write_file, edit_file. search: list_files, grep (ripgrep). shell: bash.
planning: todo. notes: the scratchpad. user: submit_plan, ask_user.
"""

from __future__ import annotations

from plansight.tools.registry import Tool, ToolError, ToolOutcome, ToolRegistry


def default_tools() -> ToolRegistry:
    from plansight.tools import files, notes, planning, search, shell, user

    return ToolRegistry(
        [
            *files.TOOLS,
            *search.TOOLS,
            *shell.TOOLS,
            *planning.TOOLS,
            *notes.TOOLS,
            *user.TOOLS,
        ]
    )


__all__ = ["Tool", "ToolError", "ToolOutcome", "ToolRegistry", "default_tools"]
