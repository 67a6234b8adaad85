"""The tools that turn to the user (tools/user.py), called through the registry with a real
ToolContext as the agent calls them: what the user is shown, what the model reads back, and
what the plan and the run become. (Whole runs in plan mode: test_planmode.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import PlanChanged
from plansight.engine.hooks import PlanDecision, PlanProposal, Question, UserAnswer
from plansight.engine.planmode import (
    CANCELLED_PLAN_RESULT,
    CANCELLED_PLAN_TEXT,
    DISMISSED_TEXT,
    EMPTY_PLAN_TEXT,
    NOT_IN_PLAN_MODE_TEXT,
    RunState,
)
from plansight.tools.context import ToolContext
from plansight.tools.user import MAX_PLAN_REVIEWS

from tool_harness import call, make_ctx

PLAN = [
    {"id": "1", "text": "Read the code", "status": "in_progress"},
    {"id": "2", "text": "Add type hints", "status": "pending"},
]


class PlanReviewer:
    """A user at the plan review: gives `decisions` in turn, remembers what was shown."""

    def __init__(self, *decisions: PlanDecision) -> None:
        self.decisions = list(decisions)
        self.shown: list[PlanProposal] = []

    async def __call__(self, proposal: PlanProposal) -> PlanDecision:
        self.shown.append(proposal)
        return self.decisions.pop(0)


class User:
    """A user asked questions: gives `answer`, remembers what was asked."""

    def __init__(self, answer: UserAnswer) -> None:
        self.answer = answer
        self.asked: list[Question] = []

    async def __call__(self, question: Question) -> UserAnswer:
        self.asked.append(question)
        return self.answer


async def planning_ctx(tmp_path: Path, reviewer: PlanReviewer) -> ToolContext:
    """A run in plan mode whose model has written PLAN (and a note) already."""
    ctx = make_ctx(tmp_path)
    ctx.review_plan = reviewer
    ctx.run = RunState(mode="plan")
    ctx.scratchpad.write("notes on the approach")
    written = await call(ctx, "todo", items=PLAN)
    assert not written.is_error, written.content
    return ctx


def plan_events(ctx: ToolContext) -> list[PlanChanged]:
    changes: list[PlanChanged] = []
    ctx.events.subscribe(lambda e: changes.append(e) if isinstance(e, PlanChanged) else None)
    return changes


# ----- submit_plan -------------------------------------------------------------------------------


async def test_submit_plan_outside_plan_mode_is_refused_and_asks_nobody(tmp_path: Path) -> None:
    reviewer = PlanReviewer()
    ctx = await planning_ctx(tmp_path, reviewer)
    ctx.run = RunState(mode="act")
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert (outcome.is_error, outcome.content) == (True, NOT_IN_PLAN_MODE_TEXT)
    assert reviewer.shown == []


async def test_submit_plan_needs_a_summary_and_a_plan(tmp_path: Path) -> None:
    reviewer = PlanReviewer()
    ctx = await planning_ctx(tmp_path, reviewer)
    blank = await call(ctx, "submit_plan", summary="  ")
    assert blank.is_error and "'summary' must not be empty" in blank.content
    missing = await call(ctx, "submit_plan")
    assert missing.is_error and "'summary' is required" in missing.content
    empty = make_ctx(tmp_path)
    empty.review_plan = reviewer
    empty.run = RunState(mode="plan")
    outcome = await call(empty, "submit_plan", summary="Go.")
    assert (outcome.is_error, outcome.content) == (True, EMPTY_PLAN_TEXT)
    assert reviewer.shown == []


async def test_the_user_sees_the_plan_the_summary_and_the_notes(tmp_path: Path) -> None:
    reviewer = PlanReviewer(PlanDecision("approve"))
    ctx = await planning_ctx(tmp_path, reviewer)
    await call(ctx, "submit_plan", summary="  Type the module.\n")
    [shown] = reviewer.shown
    assert shown.todos == ctx.plan.state
    assert shown.summary == "Type the module."
    assert shown.scratchpad == "notes on the approach"
    assert shown.problem is None


async def test_an_approved_plan_switches_the_run_to_act_mode(tmp_path: Path) -> None:
    ctx = await planning_ctx(tmp_path, PlanReviewer(PlanDecision("approve")))
    before = ctx.plan.state
    changes = plan_events(ctx)
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert not outcome.is_error
    assert outcome.content.startswith("The user approved your plan:\n" + before.rendered)
    assert not ctx.run.planning and ctx.run.ended is None
    assert ctx.plan.state == before and changes == []


async def test_a_plan_the_user_edited_replaces_the_models_and_the_model_is_told(
    tmp_path: Path,
) -> None:
    edited = [{**PLAN[0], "text": "Read hello.py"}, PLAN[1]]
    ctx = await planning_ctx(tmp_path, PlanReviewer(PlanDecision("approve", items=edited)))
    changes = plan_events(ctx)
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert outcome.content.startswith("The user edited your plan and approved it as it is now:")
    assert [item.text for item in ctx.plan.state.items] == ["Read hello.py", "Add type hints"]
    assert ctx.plan.state.source == "user"
    assert [c.state for c in changes] == [ctx.plan.state]  # the editor hears of it
    assert ctx.plan.state.rendered in outcome.content


async def test_items_sent_back_unchanged_count_as_no_edit(tmp_path: Path) -> None:
    ctx = await planning_ctx(tmp_path, PlanReviewer(PlanDecision("approve", items=PLAN)))
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert outcome.content.startswith("The user approved your plan:")


async def test_a_revision_keeps_plan_mode_and_passes_the_feedback_on(tmp_path: Path) -> None:
    reviewer = PlanReviewer(
        PlanDecision("revise", feedback="  Test first. "), PlanDecision("revise")
    )
    ctx = await planning_ctx(tmp_path, reviewer)
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert not outcome.is_error
    assert outcome.content.startswith(
        "The user wants changes to your plan before approving it. Their feedback: Test first.\n"
    )
    assert "call submit_plan again" in outcome.content
    assert ctx.run.planning and ctx.run.ended is None
    again = await call(ctx, "submit_plan", summary="Go.")
    assert "They gave no reason." in again.content


async def test_a_revision_with_an_edited_plan_shows_it_and_asks_to_keep_it(tmp_path: Path) -> None:
    edited = [PLAN[0], {**PLAN[1], "text": "Add tests"}]
    reviewer = PlanReviewer(PlanDecision("revise", feedback="Tests.", items=edited))
    ctx = await planning_ctx(tmp_path, reviewer)
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert f"The user also edited the plan; it is now:\n{ctx.plan.state.rendered}" in (
        outcome.content
    )
    assert "keep the user's changes" in outcome.content
    assert ctx.run.planning


async def test_a_cancelled_plan_ends_the_run_and_keeps_the_plan(tmp_path: Path) -> None:
    ctx = await planning_ctx(tmp_path, PlanReviewer(PlanDecision("cancel", items=[])))
    before = ctx.plan.state
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert (outcome.is_error, outcome.content) == (False, CANCELLED_PLAN_TEXT)
    assert ctx.run.ended == CANCELLED_PLAN_RESULT
    assert ctx.run.planning
    assert ctx.plan.state == before  # the items of a cancel are not applied


async def test_an_invalid_edited_plan_is_asked_again_then_a_valid_one_is_taken(
    tmp_path: Path,
) -> None:
    two_in_progress = [PLAN[0], {**PLAN[1], "status": "in_progress"}]
    fine = [{**PLAN[0], "status": "completed"}, {**PLAN[1], "status": "in_progress"}]
    reviewer = PlanReviewer(
        PlanDecision("approve", items=two_in_progress), PlanDecision("approve", items=fine)
    )
    ctx = await planning_ctx(tmp_path, reviewer)
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert [shown.problem is None for shown in reviewer.shown] == [True, False]
    problem = reviewer.shown[1].problem
    assert problem is not None and problem.startswith("Your edited plan was not accepted: ")
    assert reviewer.shown[1].todos == reviewer.shown[0].todos  # nothing invalid applied
    assert outcome.content.startswith("The user edited your plan and approved it")
    assert [item.status for item in ctx.plan.state.items] == ["completed", "in_progress"]


async def test_invalid_edited_plans_each_time_end_the_run_with_the_plan_kept(
    tmp_path: Path,
) -> None:
    bad = PlanDecision("approve", items="not a list")
    reviewer = PlanReviewer(*[bad] * MAX_PLAN_REVIEWS)
    ctx = await planning_ctx(tmp_path, reviewer)
    before = ctx.plan.state
    outcome = await call(ctx, "submit_plan", summary="Go.")
    assert len(reviewer.shown) == MAX_PLAN_REVIEWS
    assert outcome.content.startswith("The plan review ended without a decision: ")
    assert ctx.run.ended == outcome.content
    assert ctx.plan.state == before and ctx.run.planning


# ----- ask_user ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        (UserAnswer(answer=" Google style \n"), "The user answered: Google style"),
        (UserAnswer(answers=("a", "b")), "The user chose: a; b"),
        (
            UserAnswer(answers=("a",), answer="and c"),
            "The user chose: a\nThey also wrote: and c",
        ),
    ],
)
async def test_the_model_reads_the_answer(tmp_path: Path, answer: UserAnswer, read: str) -> None:
    ctx = make_ctx(tmp_path)
    ctx.ask = User(answer)
    outcome = await call(ctx, "ask_user", question="Which?", options=["a", "b", "c"])
    assert (outcome.is_error, outcome.content) == (False, read)


@pytest.mark.parametrize("answer", [UserAnswer(dismissed=True), UserAnswer(answer=" ")])
async def test_no_answer_is_an_error_that_tells_the_model_to_decide(
    tmp_path: Path, answer: UserAnswer
) -> None:
    ctx = make_ctx(tmp_path)
    ctx.ask = User(answer)
    outcome = await call(ctx, "ask_user", question="Which?")
    assert (outcome.is_error, outcome.content) == (True, DISMISSED_TEXT)


async def test_the_user_is_asked_the_question_as_tidied(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    user = User(UserAnswer(answer="x"))
    ctx.ask = user
    await call(ctx, "ask_user", question="  Which files?\n", options=[" a.py ", "b.py"])
    await call(ctx, "ask_user", question="Which?", options=["a", "b"], multiSelect=True)
    await call(ctx, "ask_user", question="Anything else?", multiSelect=True)
    assert user.asked == [
        Question("Which files?", ("a.py", "b.py"), False),
        Question("Which?", ("a", "b"), True),
        Question("Anything else?", (), False),  # several choices need choices
    ]


@pytest.mark.parametrize(
    ("tool_input", "error"),
    [
        ({}, "'question' is required"),
        ({"question": " "}, "'question' must not be empty"),
        ({"question": "Q", "options": "a, b"}, "'options' must be a list of non-empty strings"),
        ({"question": "Q", "options": ["a", " "]}, "'options' must be a list of non-empty"),
        ({"question": "Q", "options": ["a", 1]}, "'options' must be a list of non-empty"),
        ({"question": "Q", "options": ["a", " a"]}, "'options' must all differ"),
        ({"question": "Q", "multiSelect": "yes"}, "'multiSelect' must be true or false"),
    ],
)
async def test_a_malformed_question_is_refused_before_the_user_sees_it(
    tmp_path: Path, tool_input: dict[str, Any], error: str
) -> None:
    ctx = make_ctx(tmp_path)
    user = User(UserAnswer(answer="x"))
    ctx.ask = user
    outcome = await call(ctx, "ask_user", **tool_input)
    assert outcome.is_error and error in outcome.content, outcome.content
    assert user.asked == []
