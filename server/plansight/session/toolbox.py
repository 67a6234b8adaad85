"""The tool side of a session, built in one place.

`build_tools` makes, once per session: the workspace the tools read and write (the protected
files kept from the model, workspace/secrets.py; the editor's unsaved buffers read through
the front door's `documents`), the registry of the built-in tools (those that exist for the
plan only with planning on), the sandbox the agent's commands run in (Plansight's own
storage, `hidden`, out of their sight), the context every handler gets (sharing the session's
plan and notes, asking the user through the front door's hooks, each review's outcome
reported on the event bus, each edit, command and MCP call through the approval policy,
session/approvals.py) and the MCP feature (plansight.mcp: its servers, those named in a
workspace file run confined by the same sandbox; their tools join the registry for each run;
each change of their status is an `McpChanged` event) and the secret values withheld from
every tool result (workspace/secretvalues.py, applied by the registry).

What a front door gives the tool side is one `FrontDoor` (its hooks, documents and MCP
servers); what it leaves out gets the answers of a session nobody attends (engine/hooks.py).
The session wires the rest to these parts: its change judging becomes the context's recorder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypedDict

from plansight.engine import hooks
from plansight.engine.events import EventBus, McpChanged
from plansight.engine.hooks import (
    ApproveHook,
    ApproveToolHook,
    AskHook,
    DocumentSource,
    PlanReviewHook,
    ReviewHook,
    TrustHook,
)
from plansight.mcp.feature import McpFeature
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.session.approvals import ApprovalPolicy, AutoApprove, UnaskedHook
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.tools.registry import ToolRegistry
from plansight.workspace.access import Workspace
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions
from plansight.workspace.scan import folders_inside
from plansight.workspace.secrets import ProtectedPaths, ProtectOptions
from plansight.workspace.secretvalues import SecretValues


class ToolSettings(Protocol):
    """What the tool side reads of a session's settings (session/settings.py has them)."""

    @property
    def planning(self) -> bool: ...

    @property
    def sandbox(self) -> SandboxOptions: ...

    @property
    def protect(self) -> ProtectOptions: ...

    @property
    def auto_approve(self) -> AutoApprove: ...


class FrontDoor(TypedDict, total=False):
    """What a front door gives the tool side; each key is optional."""

    review: ReviewHook  # each edit before it is written
    approve: ApproveHook  # each command before it runs
    review_plan: PlanReviewHook  # a plan submitted in plan mode
    ask: AskHook  # the model's questions to the user
    documents: DocumentSource | None  # the editor's buffers, unsaved changes included
    # MCP servers the front door gives (`.mcp.json`'s per-server shape), trusted.
    mcp_servers: Mapping[str, Any] | None
    approve_tool: ApproveToolHook  # before each MCP tool call
    trust_server: TrustHook  # before a server named in a workspace file starts
    # Told of what the approval policy decided without asking (session/approvals.py).
    unasked: UnaskedHook


@dataclass(frozen=True)
class Toolbox:
    """The built parts; `ctx` refers to the workspace and the sandbox too."""

    workspace: Workspace
    tools: ToolRegistry
    sandbox: CommandSandbox
    ctx: ToolContext
    mcp: McpFeature
    secrets: SecretValues
    approvals: ApprovalPolicy


def build_tools(
    root: Path,
    settings: ToolSettings,
    events: EventBus,
    *,
    plan: Plan,
    scratchpad: Scratchpad,
    storage: Path | None = None,
    hidden: Sequence[Path] = (),
    review: ReviewHook = hooks.accept_all_edits,
    approve: ApproveHook = hooks.refuse_all_commands,
    review_plan: PlanReviewHook = hooks.approve_all_plans,
    ask: AskHook = hooks.dismiss_all_questions,
    documents: DocumentSource | None = None,
    mcp_servers: Mapping[str, Any] | None = None,
    approve_tool: ApproveToolHook = hooks.refuse_all_tools,
    trust_server: TrustHook = hooks.distrust_all_servers,
    unasked: UnaskedHook | None = None,
) -> Toolbox:
    """The tool side over `root` (see the module's docstring). `storage`: the session's
    folder (where the trust given to workspace MCP servers is kept; None: nowhere);
    `hidden`: folders no command may see."""
    # Plansight's storage inside the workspace (`cd ~ && plansight`) is none of the agent's.
    workspace = Workspace(
        root,
        documents,
        ProtectedPaths(root, settings.protect),
        state_folders=folders_inside(root, hidden),
    )
    sandbox = CommandSandbox(root, settings.sandbox, protected=workspace.protected, hidden=hidden)
    # The values the protected files and our environment hold: withheld from every result.
    secrets = SecretValues(workspace.protected)
    # The front door's hooks only ask the user; what goes ahead unasked is decided here, once.
    approvals = ApprovalPolicy(
        settings.auto_approve,
        review=review,
        approve=approve,
        approve_tool=approve_tool,
        unasked=unasked,
    )
    ctx = ToolContext(
        plan=plan,
        scratchpad=scratchpad,
        workspace=workspace,
        review=hooks.reporting_reviews(approvals.review, events),
        approve=approvals.approve,
        events=events,
        review_plan=review_plan,
        ask=ask,
        sandbox=sandbox,
        secrets=secrets,
    )
    mcp = McpFeature(
        root,
        storage,
        client_servers=mcp_servers,
        approve_tool=approvals.approve_tool,
        trust_server=trust_server,
        # A server named in a workspace file runs confined as the agent's commands do.
        wrap=sandbox.server_argv,
    )
    mcp.subscribe(lambda servers: events.emit(McpChanged(tuple(servers))))
    tools = default_tools(planning=settings.planning)
    return Toolbox(workspace, tools, sandbox, ctx, mcp, secrets, approvals)
