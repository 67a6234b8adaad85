"""Plan mode and focused runs: what one run is asked to do, and what the model reads about it.

A run is in `act` mode (the version 1 behaviour) or in `plan` mode, where the model researches
and plans and every tool that changes the workspace is refused until the user approves the
plan (`submit_plan`); approval switches the same run to `act`. A run may also be focused on
one plan item (`todoId`). `RunState` holds this for the run in progress; the loop asks it what
the first message says and what to answer when the model ends its turn, the tool registry asks
it whether a tool may run. The model's tools and the system prompt never depend on it (the
cached prompt prefix stays valid), only the messages do.

The wording the model reads lives here, next to the rules it explains, and is kept under test
(fixtures/prompt/run_texts.txt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from plansight.plan.plan import PlanError, TodoItem, TodoState
from plansight.plan.review import PlanComment

RunMode = Literal["act", "plan"]  # plansight.protocol.names.RUN_MODES on the wire


class UnknownTodo(PlanError):
    """A run focused on an item the plan does not have."""


# What the model reads -----------------------------------------------------------------------

PLAN_MODE_TEXT = (
    "<plan-mode>This run is in plan mode: research and plan, and change nothing yet. Read and "
    "search the workspace, ask the user with ask_user what only they can answer, write your "
    "plan with todo and your approach with write_scratchpad. write_file, edit_file and bash are "
    "refused until the user approves the plan. When the plan is ready, call submit_plan with a "
    "short summary of it.</plan-mode>"
)

SUBMIT_REQUEST_TEXT = (
    "<plan-mode>You ended your turn without submitting a plan, and this run is still in plan "
    "mode. Write your plan with todo if you have not yet, then call submit_plan with a short "
    "summary so that the user can approve it. If you need the user's answer first, call "
    "ask_user.</plan-mode>"
)


def not_approved_text(tool: str) -> str:
    return (
        f"{tool} was not run: this run is in plan mode and the plan is not approved yet, so "
        "nothing may change. Finish your plan with todo, then call submit_plan; once the user "
        "approves it, the same run goes on and you can change files and run commands."
    )


NOT_IN_PLAN_MODE_TEXT = (
    "submit_plan is only for plan mode, and this run is not in plan mode (or its plan is "
    "already approved): carry on with the work, keeping the plan up to date with todo."
)

EMPTY_PLAN_TEXT = "Your plan is empty: write it with todo first, then call submit_plan."


def focus_text(item: TodoItem, plan: TodoState) -> str:
    return (
        f"<focus>Work on plan item #{item.id}: {item.text}\n"
        + (f"Its notes:\n{item.notes}\n" if item.notes else "")
        + "Work on this item only, and leave the other items as they are (do not start, complete "
        "or cancel them). The whole plan, for context:\n"
        f"{plan.rendered}</focus>"
    )


def done_gate_text(open_items: list[TodoItem]) -> str:
    listed = "\n".join(f"#{item.id}: {item.text} ({item.status})" for item in open_items)
    return (
        "Your plan still has open items:\n"
        f"{listed}\n"
        "Finish them, mark them cancelled, or explain to the user why they stay open."
    )


def comments_text(comments: Sequence[PlanComment], items: Sequence[TodoItem]) -> str:
    """The user's review comments, one a line, each with where it is ("" when there are none)."""
    return "".join(f"\n- [comment {c.id}] {c.label(items)}: {c.text}" for c in comments)


def approved_text(plan: TodoState, edited: bool, comments: Sequence[PlanComment] = ()) -> str:
    intro = (
        "The user edited your plan and approved it as it is now:"
        if edited
        else "The user approved your plan:"
    )
    notes = ""
    if comments:
        notes = (
            "\nThey approved it with these notes (each on its item now, as the item's notes: "
            "follow them as you carry out the item):" + comments_text(comments, plan.items)
        )
    return (
        f"{intro}\n{plan.rendered}{notes}\n"
        "This run is in act mode now: carry the plan out step by step as it stands, keeping it "
        "up to date with todo. Changing files and running commands is allowed again (each "
        "edit and command is still reviewed)."
    )


def revise_text(
    feedback: str | None,
    plan: TodoState,
    edited: bool,
    comments: Sequence[PlanComment] = (),
    seen: Sequence[TodoItem] = (),
) -> str:
    said = (
        f"Their feedback: {feedback.strip()}"
        if feedback and feedback.strip()
        else ("" if comments else "They gave no reason.")
    )
    text = f"The user wants changes to your plan before approving it. {said}".rstrip()
    if comments:
        text += (
            "\nTheir comments on the plan they saw:"
            + comments_text(comments, seen or plan.items)
            + "\nWhen you submit again, list in submit_plan's `addressed` each comment you "
            "addressed (its id) and how."
        )
    keep = ""
    if edited:
        text += f"\nThe user also edited the plan; it is now:\n{plan.rendered}"
        keep = " (keep the user's changes)"
    return (
        f"{text}\nRevise the plan with todo{keep}, then call submit_plan again. The run is "
        "still in plan mode."
    )


CANCELLED_PLAN_TEXT = (
    "The user cancelled the plan review: your proposal is dropped (the plan is back to what it "
    "was before this run) and this run ends here. Do nothing more until the user asks."
)
CANCELLED_PLAN_RESULT = (
    "The user cancelled the plan: the proposal is dropped, the plan is back to what it was, "
    "and nothing changed."
)


def invalid_plan_result(problem: str) -> str:
    return (
        f"The plan review ended without a decision: {problem} (asked three times). The run "
        "ends here in plan mode, and the plan is kept as it was."
    )


DISMISSED_TEXT = (
    "The user dismissed the question without answering. Decide yourself, and say in your "
    "answer what you decided and why."
)
ENDED_TEXT = "Not run: the plan review ended the run before this tool call."


# The run's state ----------------------------------------------------------------------------


@dataclass
class RunState:
    """One run's mode and focus, and what happened to them; the session makes one per run."""

    mode: RunMode = "act"
    focus: TodoItem | None = None  # the item the run works on, if it is focused
    asked_to_submit: bool = False  # plan mode: the model was asked once to call submit_plan
    gate_used: bool = False  # act mode: the done gate was used (once per run)
    ended: str | None = None  # set by a tool that ends the run (the plan cancelled): the text
    # Plan mode: the plan as the run found it, which a cancelled proposal goes back to (version
    # 4: a refused proposal must not stay live, where the next run's done gate would carry it out).
    plan_before: TodoState | None = None

    @classmethod
    def start(cls, mode: RunMode, todo_id: str | None, plan: TodoState) -> RunState:
        """The state of a new run; UnknownTodo when `todo_id` names no item of `plan`."""
        focus = None
        if todo_id is not None:
            focus = next((item for item in plan.items if item.id == todo_id), None)
            if focus is None:
                ids = ", ".join(f"#{item.id}" for item in plan.items) or "none"
                raise UnknownTodo(f"The plan has no item #{todo_id} (its items: {ids}).")
        return cls(mode=mode, focus=focus, plan_before=plan if mode == "plan" else None)

    @property
    def planning(self) -> bool:
        return self.mode == "plan"

    def refusal(self, tool: str, changes_workspace: bool) -> str | None:
        """Why a tool may not run now, or None: plan mode refuses what changes the workspace."""
        if changes_workspace and self.planning:
            return not_approved_text(tool)
        return None

    def opening(self, plan: TodoState) -> list[str]:
        """The texts that follow the prompt in the run's first message."""
        texts: list[str] = []
        if self.planning:
            texts.append(PLAN_MODE_TEXT)
        if self.focus is not None:
            current = next((i for i in plan.items if i.id == self.focus.id), self.focus)
            texts.append(focus_text(current, plan))
        return texts

    def end_of_turn(self, plan: TodoState) -> str | None:
        """What to answer a model that ended its turn, or None to end the run.

        Plan mode: ask once to submit (open items are the point of a plan, so no done gate).
        Act mode: the done gate, once per run, on the open items (in a focused run, on the
        focused item only).
        """
        if self.planning:
            if self.asked_to_submit:
                return None
            self.asked_to_submit = True
            return SUBMIT_REQUEST_TEXT
        if self.gate_used:
            return None
        open_items = plan.open_items
        if self.focus is not None:
            open_items = [item for item in open_items if item.id == self.focus.id]
        if not open_items:
            return None
        self.gate_used = True
        return done_gate_text(open_items)

    def approve(self) -> None:
        self.mode = "act"

    def end(self, text: str) -> None:
        self.ended = text

    def proposal_dropped(self) -> TodoState | None:
        """The plan to go back to when this run's proposal is dropped (its review cancelled, or
        the run cancelled before approval), or None when there is nothing to drop: an act-mode
        run, or a plan-mode run already approved."""
        return self.plan_before if self.planning else None
