"""session/toolbox.py: the tool side a session gets, built from its settings and its front door."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plansight.engine.events import EditReviewed, Event, EventBus, McpChanged
from plansight.engine.hooks import EditDecision, EditProposal
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.session.settings import SessionSettings
from plansight.session.toolbox import Toolbox, build_tools
from plansight.workspace.sandbox import SandboxOptions

from conftest import wait_until


def toolbox(root: Path, settings: SessionSettings, events: EventBus, **kw: Any) -> Toolbox:
    return build_tools(root, settings, events, plan=Plan(), scratchpad=Scratchpad(), **kw)


def names(box: Toolbox) -> set[str]:
    return {definition["name"] for definition in box.tools.definitions()}


def test_the_plan_tools_are_offered_only_with_planning_on(tmp_path: Path) -> None:
    planned = toolbox(tmp_path, SessionSettings(), EventBus())
    unplanned = toolbox(tmp_path, SessionSettings(planning=False), EventBus())
    assert {"todo", "submit_plan"} <= names(planned)
    assert names(planned) - names(unplanned) == {"todo", "submit_plan"}
    assert {"read_file", "bash", "ask_user"} <= names(unplanned)


async def test_the_model_cannot_read_a_protected_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_KEY=sk-hidden-value\n")
    (tmp_path / "app.py").write_text("print('hi')\n")
    box = toolbox(tmp_path, SessionSettings(), EventBus())
    refused = await box.tools.call(box.ctx, "read_file", {"path": ".env"})
    assert refused.is_error and "sk-hidden-value" not in refused.text
    assert "protected" in refused.text
    read = await box.tools.call(box.ctx, "read_file", {"path": "app.py"})
    assert not read.is_error and "print('hi')" in read.text


async def test_each_review_is_the_front_doors_and_its_outcome_is_told(tmp_path: Path) -> None:
    heard: list[Event] = []
    events = EventBus()
    events.subscribe(heard.append)
    asked: list[EditProposal] = []

    async def reject(proposal: EditProposal) -> EditDecision:
        asked.append(proposal)
        return EditDecision(accepted=False, feedback="not now")

    box = toolbox(tmp_path, SessionSettings(), events, review=reject)
    outcome = await box.tools.call(box.ctx, "write_file", {"path": "new.py", "content": "x = 1\n"})
    assert [proposal.relative_path for proposal in asked] == ["new.py"]
    assert not (tmp_path / "new.py").exists() and "not now" in outcome.text
    reviewed = [event for event in heard if isinstance(event, EditReviewed)]
    assert [(r.path, r.outcome, r.feedback) for r in reviewed] == [
        ("new.py", "rejected", "not now")
    ]


async def test_without_a_front_door_commands_are_refused(tmp_path: Path) -> None:
    box = toolbox(tmp_path, SessionSettings(), EventBus())
    outcome = await box.tools.call(box.ctx, "bash", {"command": "touch ran"})
    assert outcome.is_error and not (tmp_path / "ran").exists()


def test_the_sandbox_hides_plansights_storage_and_is_the_contexts(tmp_path: Path) -> None:
    storage = tmp_path / "state"
    storage.mkdir()
    settings = SessionSettings(sandbox=SandboxOptions(enabled=True, network=True))
    box = toolbox(tmp_path / "work", settings, EventBus(), hidden=[storage])
    assert box.ctx.sandbox is box.sandbox and box.ctx.workspace is box.workspace
    assert box.sandbox.options.network is True
    assert box.sandbox.hidden == (Path(os.path.realpath(storage)),)
    assert box.sandbox.protected is box.workspace.protected


async def test_the_front_doors_mcp_servers_are_listed_and_their_changes_are_events(
    tmp_path: Path,
) -> None:
    heard: list[McpChanged] = []
    events = EventBus()
    events.subscribe(lambda event: heard.append(event) if isinstance(event, McpChanged) else None)
    missing = {"gone": {"command": str(tmp_path / "no-such-server")}}
    box = toolbox(tmp_path, SessionSettings(), events, mcp_servers=missing)
    assert [status.name for status in box.mcp.status()] == ["gone"]
    box.mcp.start()
    try:
        await wait_until(
            lambda: any(s.status == "error" for e in heard for s in e.servers),
            "the failed start heard as an mcp event",
        )
    finally:
        await box.mcp.close()
