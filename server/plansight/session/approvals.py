"""The approval policy: which edits, commands and MCP tool calls go ahead unasked, applied once,
inside the session, for every front door (the language server, `plansight acp`, the terminal
through the language server).

The rules, in order:
- A control file's edit (workspace/control.py, `proposal.control`) is always put to the user:
  neither `autoApprove.edits` nor an earlier "always allow" covers it. An earlier "always
  reject" of edits does (refusing is always safe).
- `autoApprove.edits` / `autoApprove.commands` / `autoApprove.mcp`: allowed unasked.
  `autoApprove.sandboxedCommands`: a command allowed unasked when it runs in the sandbox (it
  can write the workspace only); one that would run without a sandbox is still asked.
- An "always" answer (allow or reject) holds for its kind for the rest of the session: every
  edit, every command, or one MCP server's tool (an "always allow" of an MCP tool is also kept
  for the workspace by mcp/trust.py).
- Otherwise the front door asks the user (`reviewEdit`, `approveCommand`, `approveTool`;
  ACP `session/request_permission`) and reports the answer, "always" included.

The "always" memory is per stored session (`session_id`, set as the workspace's sessions are
switched, sessions.py): each ACP chat, each VS Code session, its own.

A front door that wants to show what the policy decided without asking (ACP: an edit's diff on
its tool call, the call `in_progress` once allowed) gives `unasked`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from plansight.engine import hooks
from plansight.engine.hooks import (
    ApproveHook,
    ApproveToolHook,
    CommandDecision,
    CommandRequest,
    EditDecision,
    EditProposal,
    ReviewHook,
    ToolApproval,
    ToolDecision,
)
from plansight.protocol.options import InitOptions

Verdict = Literal["allow", "reject"]
# What the policy decided unasked: the request and whether it was allowed.
UnaskedHook = Callable[[EditProposal | CommandRequest | ToolApproval, bool], Awaitable[None]]

EDITS, COMMANDS = "edit", "command"


def mcp_kind(request: ToolApproval) -> str:
    return f"mcp:{request.server}:{request.tool}"


@dataclass(frozen=True)
class AutoApprove:
    """The user's `autoApprove` options (user-level only: protocol/options.py)."""

    edits: bool = False
    commands: bool = False
    sandboxed_commands: bool = False
    mcp: bool = False

    @classmethod
    def from_options(cls, options: InitOptions) -> AutoApprove:
        return cls(
            edits=options.auto_approve_edits,
            commands=options.auto_approve_commands,
            sandboxed_commands=options.auto_approve_sandboxed,
            mcp=options.auto_approve_mcp,
        )


async def _nothing_shown(request: object, allowed: bool) -> None:
    return None


class ApprovalPolicy:
    """The hooks the tools get: the front door's, with the policy in front of them."""

    def __init__(
        self,
        auto: AutoApprove,
        *,
        review: ReviewHook = hooks.accept_all_edits,
        approve: ApproveHook = hooks.refuse_all_commands,
        approve_tool: ApproveToolHook = hooks.refuse_all_tools,
        unasked: UnaskedHook | None = None,
    ) -> None:
        self.auto = auto
        self._ask_edit = review
        self._ask_command = approve
        self._ask_tool = approve_tool
        self._unasked = unasked or _nothing_shown
        self.session_id: str | None = None  # whose "always" answers apply
        self._always: dict[str | None, dict[str, Verdict]] = {}
        # Per session: the exact commands (with their folder) answered "always allow" alone.
        self._commands: dict[str | None, set[tuple[str, str]]] = {}

    @property
    def always(self) -> Mapping[str, Verdict]:
        """The current session's "always" answers, by kind."""
        return self._always.get(self.session_id, {})

    def _remember(self, kind: str, allowed: bool) -> None:
        self._always.setdefault(self.session_id, {})[kind] = "allow" if allowed else "reject"

    # ReviewHook --------------------------------------------------------------------------------

    async def review(self, proposal: EditProposal) -> EditDecision:
        remembered = self.always.get(EDITS)
        if proposal.control or proposal.conflict:
            # The user's own decision every time (a control file; a worker's change that
            # conflicts with the workspace's); only a refusal may be remembered.
            if remembered == "reject":
                await self._unasked(proposal, False)
                return EditDecision(accepted=False)
            return await self._ask_edit(proposal)
        if self.auto.edits or remembered is not None:
            allowed = self.auto.edits or remembered == "allow"
            await self._unasked(proposal, allowed)
            return EditDecision(accepted=allowed)
        decision = await self._ask_edit(proposal)
        if decision.always:
            self._remember(EDITS, decision.accepted)
        return decision

    # ApproveHook -------------------------------------------------------------------------------

    async def approve(self, request: CommandRequest) -> CommandDecision:
        remembered = self.always.get(COMMANDS)
        auto = self.auto.commands or (self.auto.sandboxed_commands and request.sandbox is not None)
        this = (request.command, request.cwd)
        if remembered is None and this in self._commands.get(self.session_id, set()):
            remembered = "allow"
        if auto or remembered is not None:
            allowed = auto or remembered == "allow"
            await self._unasked(request, allowed)
            return CommandDecision(approved=allowed)
        decision = await self._ask_command(request)
        if decision.always and decision.this_command:
            if decision.approved:
                self._commands.setdefault(self.session_id, set()).add(this)
        elif decision.always:
            self._remember(COMMANDS, decision.approved)
        return decision

    # ApproveToolHook ---------------------------------------------------------------------------

    async def approve_tool(self, request: ToolApproval) -> ToolDecision:
        remembered = self.always.get(mcp_kind(request))
        if self.auto.mcp or remembered is not None:
            allowed = self.auto.mcp or remembered == "allow"
            await self._unasked(request, allowed)
            return ToolDecision(approved=allowed)
        decision = await self._ask_tool(request)
        if decision.always:
            self._remember(mcp_kind(request), decision.approved)
        return decision
