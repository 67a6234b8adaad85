"""What follows each step of the agent loop (engine/turns.py), as a table, without a model.

One row per case: the loop's state, the model's turn (none: before a request) and, when the
turn's tools ran, what they did; the decisions expected, in order (after the turn, then after
its tools). The same cases end to end, through the fake API: test_loop.py,
test_loop_stop_reasons.py, test_planmode.py, test_planning_off.py, test_reminders.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from plansight.engine.model import ModelTurn
from plansight.engine.planmode import CANCELLED_PLAN_RESULT, SUBMIT_REQUEST_TEXT, done_gate_text
from plansight.engine.reminders import reminder_for
from plansight.engine.turns import (
    CONTINUE_TEXT,
    REFUSED_TEXT,
    Continue,
    Decision,
    Finish,
    LoopState,
    RunTools,
    ToolsFacts,
    TurnFacts,
    after_tools,
    cut_tool_text,
    decide,
    round_limit,
)
from plansight.plan.plan import TodoItem

S = LoopState(max_rounds=10, rounds=1)  # a run in its first round
GATE = done_gate_text([TodoItem("2", "Write the tests", "pending")])
WRITE_CUT = cut_tool_text(["write_file"])
NAG = reminder_for(3)
assert NAG is not None


@dataclass(frozen=True)
class Row:
    name: str
    state: LoopState
    turn: TurnFacts | None  # None: before the round's request
    expected: tuple[Decision | None, ...]
    tools: ToolsFacts | None = None  # what the turn's tools did, when they ran


def steps(row: Row) -> tuple[Decision | None, ...]:
    """The loop's decisions for the row: before a request, or after the turn (and its tools)."""
    if row.turn is None:
        return (round_limit(row.state),)
    decision = decide(row.turn, row.state)
    if row.tools is None or not isinstance(decision, RunTools):
        return (decision,)
    return (decision, after_tools(row.turn, row.tools, decision.state))


def check(row: Row) -> None:
    assert steps(row) == row.expected, row.name


def end_turn(text: str = "", nudge: str | None = None) -> TurnFacts:
    return TurnFacts("end_turn", text=text, nudge=nudge)


def calls(*names: str, cut: tuple[str, ...] = ()) -> TurnFacts:
    return TurnFacts("max_tokens" if cut else "tool_use", tool_uses=names, cut_tools=cut)


ROWS = [
    Row(
        "end_turn with text: done, with the text",
        S,
        end_turn("All done."),
        (Finish("done", "All done."),),
    ),
    Row(
        "the text of the paused and cut turns before it is part of the answer",
        replace(S, answer="Part one, ", cuts=2),
        end_turn("part two."),
        (Finish("done", "Part one, part two."),),
    ),
    Row(
        "the done gate due: continue with it",
        S,
        end_turn("Done.", GATE),
        (Continue(S, texts=(GATE,)),),
    ),
    Row(
        "the done gate: the answer starts again after it",
        replace(S, answer="Earlier text. "),
        end_turn("Done.", GATE),
        (Continue(S, texts=(GATE,)),),
    ),
    Row(
        "plan mode: the request to submit",
        S,
        end_turn("Here is my plan.", SUBMIT_REQUEST_TEXT),
        (Continue(S, texts=(SUBMIT_REQUEST_TEXT,)),),
    ),
    Row(
        "planning off: no gate",
        replace(S, plan_features=False),
        end_turn("Done.", GATE),
        (Finish("done", "Done."),),
    ),
    Row(
        "refusal: its text",
        S,
        TurnFacts("refusal", text="I won't.", explanation="Policy."),
        (Finish("refused", "I won't."),),
    ),
    Row(
        "refusal without text: the explanation",
        S,
        TurnFacts("refusal", explanation="Policy."),
        (Finish("refused", "Policy."),),
    ),
    Row(
        "refusal with nothing: the fallback text",
        S,
        TurnFacts("refusal"),
        (Finish("refused", REFUSED_TEXT),),
    ),
    Row(
        "pause_turn: continue with nothing added, the cuts kept",
        replace(S, cuts=1, answer="Looking. "),
        TurnFacts("pause_turn", text="Still looking. "),
        (Continue(replace(S, cuts=1, answer="Looking. Still looking. "), notices=False),),
    ),
    Row(
        "max_tokens in text: continue",
        S,
        TurnFacts("max_tokens", text="The first half"),
        (Continue(replace(S, cuts=1, answer="The first half"), texts=(CONTINUE_TEXT,)),),
    ),
    Row(
        "the context window full in text: continue",
        S,
        TurnFacts("model_context_window_exceeded", text="Half"),
        (Continue(replace(S, cuts=1, answer="Half"), texts=(CONTINUE_TEXT,)),),
    ),
    Row(
        "the 3rd cut in a row: still continued",
        replace(S, cuts=2, answer="One two "),
        TurnFacts("max_tokens", text="three "),
        (Continue(replace(S, cuts=3, answer="One two three "), texts=(CONTINUE_TEXT,)),),
    ),
    Row(
        "the 4th cut in a row: limit, with the cut note",
        replace(S, cuts=3, answer="One two three "),
        TurnFacts("max_tokens", text="four "),
        (
            Finish(
                "limit",
                "One two three four\n\n"
                "[The answer was cut off at the output token limit 4 times in a row.]",
            ),
        ),
    ),
    Row(
        "max_tokens in a tool call, no complete call: continue with the cut-tool notice",
        replace(S, cuts=2, answer="Let me write it. "),
        calls(cut=("write_file",)),
        (Continue(S, texts=(WRITE_CUT,)),),
    ),
    Row("tool uses: run the tools", S, calls("read_file", "grep"), (RunTools(S),)),
    Row(
        "tool uses: the answer and the cuts start again",
        replace(S, cuts=2, answer="Half an answer"),
        calls("read_file"),
        (RunTools(S),),
    ),
    Row(
        "tool uses: the round is counted for the reminder",
        S,
        calls("read_file"),
        (
            RunTools(S),
            Continue(replace(S, quiet_rounds=1)),
        ),
        ToolsFacts(),
    ),
    Row(
        "tool uses plus a cut tool: run the tools, then the cut notice after the results",
        S,
        calls("read_file", cut=("write_file",)),
        (RunTools(S), Continue(replace(S, quiet_rounds=1), texts=(WRITE_CUT,))),
        ToolsFacts(),
    ),
    Row(
        "the 3rd round without a plan update: the reminder, after the cut notice",
        replace(S, quiet_rounds=2),
        calls("read_file", cut=("write_file",)),
        (
            RunTools(replace(S, quiet_rounds=2)),
            Continue(replace(S, quiet_rounds=3), texts=(WRITE_CUT, NAG.text), reminder=NAG),
        ),
        ToolsFacts(),
    ),
    Row(
        "the plan updated: the reminders count from 0",
        replace(S, quiet_rounds=5),
        calls("todo"),
        (RunTools(replace(S, quiet_rounds=5)), Continue(S)),
        ToolsFacts(plan_updated=True),
    ),
    Row(
        "planning off: no reminder",
        replace(S, plan_features=False, quiet_rounds=8),
        calls("read_file"),
        (
            RunTools(replace(S, plan_features=False, quiet_rounds=8)),
            Continue(replace(S, plan_features=False, quiet_rounds=8)),
        ),
        ToolsFacts(),
    ),
    Row(
        "a tool ended the run: done, with its text (and no notice)",
        S,
        calls("ask_user", cut=("write_file",)),
        (RunTools(S), Finish("done", CANCELLED_PLAN_RESULT)),
        ToolsFacts(ended=CANCELLED_PLAN_RESULT),
    ),
    Row(
        "a nudge only answers a turn that ended",
        S,
        replace(calls("todo"), nudge=GATE),
        (RunTools(S),),
    ),
    Row(
        "round limit: limit",
        replace(S, rounds=10),
        None,
        (Finish("limit", "Stopped after 10 rounds (the round limit)."),),
    ),
    Row("a round left: ask the model", replace(S, rounds=9), None, (None,)),
]

# Plausible mistakes: each must fail the check.
WRONG = [
    Row("end_turn with text continues", S, end_turn("All done."), (Continue(S),)),
    Row("the done gate ignored", S, end_turn("Done.", GATE), (Finish("done", "Done."),)),
    Row(
        "planning off still gates",
        replace(S, plan_features=False),
        end_turn("Done.", GATE),
        (Continue(replace(S, plan_features=False), texts=(GATE,)),),
    ),
    Row(
        "refusal with its explanation first",
        S,
        TurnFacts("refusal", "I won't.", explanation="P."),
        (Finish("refused", "P."),),
    ),
    Row(
        "pause_turn drains the notices",
        S,
        TurnFacts("pause_turn", text="a"),
        (Continue(replace(S, answer="a")),),
    ),
    Row(
        "the 3rd cut ends the run",
        replace(S, cuts=2),
        TurnFacts("max_tokens", text="c"),
        (
            Finish(
                "limit", "c\n\n[The answer was cut off at the output token limit 3 times in a row.]"
            ),
        ),
    ),
    Row(
        "a cut tool call continues the text",
        S,
        calls(cut=("write_file",)),
        (Continue(replace(S, cuts=1), texts=(CONTINUE_TEXT,)),),
    ),
    Row(
        "the reminder before the cut notice",
        replace(S, quiet_rounds=2),
        calls("read_file", cut=("write_file",)),
        (
            RunTools(replace(S, quiet_rounds=2)),
            Continue(replace(S, quiet_rounds=3), texts=(NAG.text, WRITE_CUT), reminder=NAG),
        ),
        ToolsFacts(),
    ),
    Row(
        "a tool ended the run and the model hears the cut notice",
        S,
        calls("ask_user", cut=("write_file",)),
        (RunTools(S), Continue(replace(S, quiet_rounds=1), texts=(WRITE_CUT,))),
        ToolsFacts(ended=CANCELLED_PLAN_RESULT),
    ),
    Row(
        "the round limit one round early",
        replace(S, rounds=9),
        None,
        (Finish("limit", "Stopped after 9 rounds (the round limit)."),),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_what_follows(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", WRONG, ids=lambda row: row.name)
def test_a_wrong_row_fails(row: Row) -> None:
    with pytest.raises(AssertionError):
        check(row)


def test_the_table_covers_every_kind_of_decision() -> None:
    kinds = {type(decision) for row in ROWS for decision in row.expected}
    assert kinds == {Continue, RunTools, Finish, type(None)}


def test_the_facts_of_a_model_turn() -> None:
    turn = ModelTurn(
        content=[
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "text", "text": "Reading "},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
            {"type": "text", "text": "both."},
            {"type": "tool_use", "id": "t2", "name": "grep", "input": {"pattern": "x"}},
        ],
        stop_reason="max_tokens",
        stop_details={"explanation": "ignored unless refused"},
        cut_tools=["write_file"],
    )
    assert TurnFacts.of(turn) == TurnFacts(
        "max_tokens",
        text="Reading both.",
        tool_uses=("read_file", "grep"),
        cut_tools=("write_file",),
        explanation="ignored unless refused",
    )
    refused = ModelTurn(content=[], stop_reason="refusal", stop_details={"explanation": 3})
    assert TurnFacts.of(refused) == TurnFacts("refusal")  # an explanation must be text
