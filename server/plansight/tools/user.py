"""The tools that turn to the user: submit_plan (approve the plan) and ask_user (a question).

Both are offered in every run and in both modes, so the tool list never changes. submit_plan
works in plan mode only: the user approves the plan (the run goes on in act mode, on the plan
as the user left it), asks for a revision (their feedback is the result) or cancels (the run
ends and the proposal is dropped: the plan goes back to what it was before the run). An edited
plan from the user obeys the todo rules; one that breaks them is refused and the user asked
again, with the rule it broke, at most `MAX_PLAN_REVIEWS` times.
"""

from __future__ import annotations

import re
from typing import Any

from plansight.engine.events import PlanChanged
from plansight.engine.hooks import PlanDecision, PlanProposal, Question, UserAnswer
from plansight.engine.planmode import (
    CANCELLED_PLAN_RESULT,
    CANCELLED_PLAN_TEXT,
    DISMISSED_TEXT,
    EMPTY_PLAN_TEXT,
    NOT_IN_PLAN_MODE_TEXT,
    approved_text,
    invalid_plan_result,
    revise_text,
)
from plansight.plan.plan import PlanError, TodoState, parse_items
from plansight.plan.review import (
    PlanComment,
    lenient_comments,
    parse_addressed,
    parse_comments,
    with_comment_notes,
)
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.registry import Tool, line_of, require_str, text_of

MAX_PLAN_REVIEWS = 3  # answers with an invalid edited plan before the review gives up


# ----- submit_plan -------------------------------------------------------------------------------


async def submit_plan(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    if not ctx.run.planning:
        raise ToolError(NOT_IN_PLAN_MODE_TEXT)
    summary = require_str(tool_input, "summary", allow_empty=False).strip()
    memory = ctx.plan_review
    try:
        addressed = parse_addressed(tool_input.get("addressed"), memory.open_comments)
    except PlanError as err:
        raise ToolError(str(err)) from err
    if not ctx.plan.state.items:
        raise ToolError(EMPTY_PLAN_TEXT)
    memory.take_addressed(addressed)
    problem: str | None = None
    given_back: tuple[PlanComment, ...] = ()
    for _ in range(MAX_PLAN_REVIEWS):
        state = ctx.plan.state
        decision = await ctx.review_plan(
            PlanProposal(
                state,
                summary,
                ctx.scratchpad.content,
                problem,
                memory.context(state),
                given_back,
                call_id=ctx.call_id,
            )
        )
        if decision.decision == "cancel":
            # The user saw this proposal: a later one is shown beside it (an ACP editor's
            # review ends this way, its feedback being the next prompt); comments stay open.
            memory.after_review()
            memory.revised(ctx.plan.state, ())
            drop_proposal(ctx)
            ctx.run.end(CANCELLED_PLAN_RESULT)
            return CANCELLED_PLAN_TEXT
        try:
            comments = _checked_comments(ctx, decision)
        except PlanError as err:
            problem = str(err)
            given_back = lenient_comments(decision.comments)
            continue
        try:
            edited = _apply_items(ctx, decision)
        except PlanError as err:
            problem = f"Your edited plan was not accepted: {err}"
            given_back = lenient_comments(decision.comments)
            continue
        if decision.decision == "approve":
            _keep_on_items(ctx, comments)
            memory.forget()
            ctx.run.approve()
            return approved_text(ctx.plan.state, edited, comments)
        seen = ctx.plan.state
        memory.after_review()
        memory.revised(seen, comments)
        return revise_text(decision.feedback, seen, edited, comments, seen.items)
    assert problem is not None
    ended = invalid_plan_result(problem)
    ctx.run.end(ended)
    return ended


def _checked_comments(ctx: ToolContext, decision: PlanDecision) -> list[PlanComment]:
    """The answer's comments, checked against the plan as the answer leaves it (its edited
    items when it has them), before anything of the answer is applied. PlanError: the edited
    plan's own problem, or the comments' (prefixed so that the user reads which)."""
    items = ctx.plan.state.items
    if decision.items is not None:
        try:
            items = tuple(parse_items(decision.items))
        except PlanError as err:
            raise PlanError(f"Your edited plan was not accepted: {err}") from err
    try:
        return parse_comments(decision.comments, items)
    except PlanError as err:
        raise PlanError(f"Your comments were not accepted: {err}") from err


def _keep_on_items(ctx: ToolContext, comments: list[PlanComment]) -> None:
    """Approve with notes: each comment on an item is appended to that item's notes, so that it
    stays with the item (every client shows it, the model reads it with the item)."""
    state = ctx.plan.state
    noted = with_comment_notes(state.items, comments)
    if list(state.items) == noted:
        return
    ctx.events.emit(PlanChanged(ctx.plan.update_from_user([i.to_wire() for i in noted])))


def drop_proposal(ctx: ToolContext) -> None:
    """A proposal the user refused (or a planning run they cancelled) is not the plan: the plan
    goes back to what it was when the run started, and the clients hear of it. Nothing when the
    run is not planning or the plan is as it was."""
    before = ctx.run.proposal_dropped()
    if before is None or before.items == ctx.plan.state.items:
        return
    ctx.events.emit(PlanChanged(ctx.plan.go_back_to(before)))


def _apply_items(ctx: ToolContext, decision: PlanDecision) -> bool:
    """The user's edited plan replaces the model's (the todo rules apply): True if it changed."""
    if decision.items is None:
        return False
    before = ctx.plan.state
    state = ctx.plan.update_from_user(decision.items)
    ctx.events.emit(PlanChanged(state))
    return _items_differ(before, state)


def _items_differ(before: TodoState, after: TodoState) -> bool:
    def key(state: TodoState) -> list[tuple[str, str, str]]:
        return [(item.id, item.text, item.status) for item in state.items]

    return key(before) != key(after)


# The marks of a Markdown text that a one-line summary leaves out: line marks (headings, lists,
# quotes), link targets, emphasis and code marks.
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|>\s*|\d+[.)]\s+)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~|`+)(\S(?:[\s\S]*?\S)?)\1")


def plain_words(markdown: str) -> str:
    """The words of a Markdown text on one line, its marks left out."""
    lines = "\n".join(_LINE_MARK.sub("", line, count=1) for line in markdown.split("\n"))
    return " ".join(_EMPHASIS.sub(r"\2", _LINK.sub(r"\1", lines)).split())


def submit_plan_input_summary(tool_input: dict[str, Any]) -> str:
    """The summary's first words, as plain text (the user reads the whole of it in the review)."""
    return plain_words(text_of(tool_input, "summary"))


SUBMIT_PLAN = Tool(
    name="submit_plan",
    description=(
        "Plan mode only: ask the user to approve your current plan (what you wrote with todo; "
        "your scratchpad is shown with it). The user approves it (the run goes on in act mode "
        "on the plan as they left it, possibly edited), asks for changes (their feedback is the "
        "result: revise and submit again), or cancels (the run ends). summary: what you will "
        "do and why, in a few sentences, for the user. addressed: after a revision, which of "
        "the user's comments you addressed and how."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "summary": {
                "type": "string",
                "description": "The plan's summary for the user: approach, risks, what changes.",
            },
            "addressed": {
                "type": "array",
                "description": (
                    "After a revision: the user's comments this proposal addresses (each "
                    "comment's id, as the feedback gave it) and how, in a sentence."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "commentId": {"type": "string"},
                        "how": {"type": "string"},
                    },
                    "required": ["commentId", "how"],
                },
            },
        },
        "required": ["summary"],
    },
    handler=submit_plan,
    summarize_input=submit_plan_input_summary,
    for_planning=True,
    kind="switch_mode",
    title=lambda tool_input, summary: "Submit the plan for approval",
    asks=True,
)


# ----- ask_user ----------------------------------------------------------------------------------


def _options(tool_input: dict[str, Any]) -> tuple[str, ...]:
    raw = tool_input.get("options")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(o, str) and o.strip() for o in raw):
        raise ToolError("'options' must be a list of non-empty strings.")
    options = tuple(o.strip() for o in raw)
    if len(set(options)) != len(options):
        raise ToolError("'options' must all differ from each other.")
    return options


async def ask_user(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    question = require_str(tool_input, "question", allow_empty=False).strip()
    options = _options(tool_input)
    multi = tool_input.get("multiSelect", False)
    if not isinstance(multi, bool):
        raise ToolError("'multiSelect' must be true or false.")
    answer = await ctx.ask(
        Question(question, options, multi and bool(options), call_id=ctx.call_id)
    )
    if not answer.given:
        raise ToolError(DISMISSED_TEXT)
    return answer_text(answer)


def answer_text(answer: UserAnswer) -> str:
    parts: list[str] = []
    if answer.answers:
        parts.append("The user chose: " + "; ".join(answer.answers))
    if answer.answer and answer.answer.strip():
        lead = "They also wrote: " if parts else "The user answered: "
        parts.append(lead + answer.answer.strip())
    return "\n".join(parts)


ASK_USER = Tool(
    name="ask_user",
    description=(
        "Ask the user a question only they can answer (a choice between approaches, a missing "
        "requirement, a preference), never what the workspace can tell you. options: the "
        "answers to choose from, when there are a few clear ones (the user may still write "
        "their own); multiSelect: true lets the user choose several. The result is the answer; "
        "a dismissed question is an error result: then decide yourself and say so."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, in a sentence or two."},
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Answers to choose from (optional).",
            },
            "multiSelect": {
                "type": "boolean",
                "description": "Whether several options may be chosen (default false).",
            },
        },
        "required": ["question"],
    },
    handler=ask_user,
    summarize_input=lambda tool_input: line_of(tool_input, "question"),
    kind="think",
    title=lambda tool_input, summary: f"Ask: {text_of(tool_input, 'question')}",
)


TOOLS: tuple[Tool, ...] = (SUBMIT_PLAN, ASK_USER)
