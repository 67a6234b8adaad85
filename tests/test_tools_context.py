"""tools/context.py: what a tool handler may touch, and how its failures reach the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from plansight.engine.events import EventBus, Location
from plansight.engine.hooks import accept_all_edits, refuse_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools.context import NoRecorder, ToolContext, workspace_errors
from plansight.tools.errors import ToolError
from plansight.workspace.access import OutsideWorkspaceError, Workspace


def context(root: Path) -> ToolContext:
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=Workspace(root),
        review=accept_all_edits,
        approve=refuse_all_commands,
        events=EventBus(),
    )


def test_touch_records_where_the_agent_last_worked(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert ctx.last_location is None
    ctx.touch("src/app.py", 4, 9)
    ctx.touch("README.md", -1, -3)  # lines before the first are the first
    assert ctx.last_location == Location("README.md", 0, 0)


def test_a_workspace_error_reaches_the_model_as_a_tool_error_with_its_message() -> None:
    with pytest.raises(ToolError) as raised:
        with workspace_errors():
            raise OutsideWorkspaceError("outside the workspace: ../x")
    assert str(raised.value) == "outside the workspace: ../x"
    assert isinstance(raised.value.__cause__, OutsideWorkspaceError)


def test_other_errors_are_not_made_tool_errors() -> None:
    with pytest.raises(KeyError):
        with workspace_errors():
            raise KeyError("a bug stays a bug")


async def test_without_checkpoints_nothing_records_and_nothing_waits(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert isinstance(ctx.changes, NoRecorder)
    await ctx.changes.before_edit("a.py")
    ctx.changes.edited("a.py")
    await ctx.changes.before_command()
    ctx.changes.command_ran("make")
    await ctx.changes.settled()
