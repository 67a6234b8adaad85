"""The session's one approval policy (session/approvals.py): what goes ahead unasked, what is
put to the user, and which "always" answers hold, whichever front door asks. The front door here
is the user as the hooks meet them: it records each question and answers as told.
(End to end through each door: test_lsp_*, test_acp_approvals.py, test_hostile_control.py.)"""

from __future__ import annotations

from pathlib import Path

from plansight.engine.hooks import (
    CommandDecision,
    CommandRequest,
    EditDecision,
    EditProposal,
    SandboxDescription,
    ToolApproval,
    ToolDecision,
)
from plansight.session.approvals import ApprovalPolicy, AutoApprove


class User:
    def __init__(self, *answers: tuple[bool, bool]) -> None:
        self.answers = list(answers)  # (allowed, always), in order
        self.asked: list[object] = []
        self.unasked: list[tuple[object, bool]] = []

    def _next(self, request: object) -> tuple[bool, bool]:
        self.asked.append(request)
        return self.answers.pop(0)

    async def review(self, proposal: EditProposal) -> EditDecision:
        allowed, always = self._next(proposal)
        return EditDecision(accepted=allowed, always=always)

    async def approve(self, request: CommandRequest) -> CommandDecision:
        allowed, always = self._next(request)
        return CommandDecision(approved=allowed, always=always)

    async def approve_tool(self, request: ToolApproval) -> ToolDecision:
        allowed, always = self._next(request)
        return ToolDecision(approved=allowed, always=always)

    async def told(self, request: object, allowed: bool) -> None:
        self.unasked.append((request, allowed))


def policy(user: User, auto: AutoApprove | None = None) -> ApprovalPolicy:
    return ApprovalPolicy(
        auto or AutoApprove(),
        review=user.review,
        approve=user.approve,
        approve_tool=user.approve_tool,
        unasked=user.told,
    )


def edit(path: str = "a.py", *, control: bool = False) -> EditProposal:
    return EditProposal("e", Path("/w") / path, path, "", "x", "edit", None, control=control)


SANDBOX = SandboxDescription(network=False, writable=("/w",))


async def test_auto_edits_skip_the_user_but_never_for_a_control_file() -> None:
    user = User((False, False))
    rules = policy(user, AutoApprove(edits=True))
    assert (await rules.review(edit())).accepted
    assert not (await rules.review(edit(".envrc", control=True))).accepted
    assert [p.relative_path for p in user.asked] == [".envrc"]  # type: ignore[attr-defined]
    assert [(p.relative_path, ok) for p, ok in user.unasked] == [("a.py", True)]  # type: ignore[attr-defined]


async def test_always_allow_holds_for_edits_but_not_control_files_and_always_reject_does() -> None:
    user = User((True, True), (True, False), (False, True))
    rules = policy(user)
    rules.session_id = "s1"
    assert (await rules.review(edit())).accepted  # always allow
    assert (await rules.review(edit("b.py"))).accepted  # unasked
    assert (await rules.review(edit(".git/config", control=True))).accepted  # asked anyway
    assert len(user.asked) == 2
    # Another session has its own answers.
    rules.session_id = "s2"
    assert not (await rules.review(edit())).accepted  # asked: always reject
    assert not (await rules.review(edit(".envrc", control=True))).accepted  # refused unasked
    assert len(user.asked) == 3


async def test_sandboxed_commands_only_when_they_run_in_the_sandbox() -> None:
    user = User((False, False))
    rules = policy(user, AutoApprove(sandboxed_commands=True))
    assert (await rules.approve(CommandRequest("make", "/w", SANDBOX))).approved
    assert not (await rules.approve(CommandRequest("make", "/w", None))).approved
    assert [r.sandbox for r in user.asked] == [None]  # type: ignore[attr-defined]


async def test_commands_and_mcp_tools_remember_always_per_kind_and_per_tool() -> None:
    user = User((False, True), (True, True), (False, False))
    rules = policy(user)
    assert not (await rules.approve(CommandRequest("a", "/w"))).approved
    assert not (await rules.approve(CommandRequest("b", "/w"))).approved  # unasked
    assert (await rules.approve_tool(ToolApproval("gh", "issue", {}))).approved
    assert (await rules.approve_tool(ToolApproval("gh", "issue", {}))).approved  # unasked
    assert not (await rules.approve_tool(ToolApproval("gh", "close", {}))).approved  # asked
    assert len(user.asked) == 3


async def test_auto_mcp_allows_every_tool_call() -> None:
    user = User()
    rules = policy(user, AutoApprove(mcp=True))
    assert (await rules.approve_tool(ToolApproval("gh", "issue", {}, call_id="t1"))).approved
    assert user.asked == [] and user.unasked[0][1] is True


async def test_always_for_this_command_holds_for_that_command_in_that_folder_only() -> None:
    """The terminal's "don't ask again for this command": the session remembers the exact
    command and folder (the client keeps no memory), and asks for any other."""

    class OneCommandUser(User):
        async def approve(self, request: CommandRequest) -> CommandDecision:
            allowed, always = self._next(request)
            return CommandDecision(approved=allowed, always=always, this_command=always)

    user = OneCommandUser((True, True), (True, False), (True, False))
    rules = policy(user)
    same = CommandRequest("make test", "/w")
    assert (await rules.approve(same)).approved
    assert (await rules.approve(CommandRequest("make test", "/w"))).approved  # not asked
    await rules.approve(CommandRequest("make lint", "/w"))  # another command: asked
    await rules.approve(CommandRequest("make test", "/w/sub"))  # another folder: asked
    assert [r.command for r in user.asked] == ["make test", "make lint", "make test"]
    rules.session_id = "other"  # another session remembers nothing of it
    user.answers.append((False, False))
    assert not (await rules.approve(same)).approved
