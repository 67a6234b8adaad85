"""Plan mode, questions and focused runs in a Session, against the fake Messages API.

The wire (reviewPlan, askUser, their fallbacks, -32602) is tested over stdio in
test_lsp_planmode.py; here the engine's rules, and the wording the model reads.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import Event, PlanChanged, RunStarted, ToolResult
from plansight.engine.hooks import PlanDecision, PlanProposal, Question, UserAnswer
from plansight.engine.planmode import (
    CANCELLED_PLAN_RESULT,
    CANCELLED_PLAN_TEXT,
    DISMISSED_TEXT,
    ENDED_TEXT,
    NOT_IN_PLAN_MODE_TEXT,
    PLAN_MODE_TEXT,
    SUBMIT_REQUEST_TEXT,
    RunState,
    UnknownTodo,
    approved_text,
    done_gate_text,
    focus_text,
    invalid_plan_result,
    not_approved_text,
    revise_text,
)
from plansight.engine.prompt import folder_note, system_prompt
from plansight.fakeapi import FakeMessagesAPI, reply
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.plan.plan import TodoItem, TodoState
from plansight.workspace.instructions import Instructions

from conftest import FIXTURES, make_session, user_texts

GOLDEN = FIXTURES / "prompt"


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


TWO_STEPS = plan(("1", "Add type hints", "pending"), ("2", "Add docstrings", "pending"))
EDIT = {"path": "hello.py", "old_text": '"Hello, "', "new_text": '"Hi, "'}


class Reviewer:
    """Answers plan reviews from a list, and keeps what it was shown."""

    def __init__(self, *answers: PlanDecision) -> None:
        self.answers = list(answers)
        self.shown: list[PlanProposal] = []

    async def __call__(self, proposal: PlanProposal) -> PlanDecision:
        self.shown.append(proposal)
        return self.answers.pop(0)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def collect(session: Any) -> list[Event]:
    events: list[Event] = []
    session.events.subscribe(events.append)
    return events


def assert_same_tools_and_system(api: FakeMessagesAPI) -> None:
    """The cached prefix: every request the fake got had the same tools and system prompt."""
    first = api.bodies[0]
    for body in api.bodies[1:]:
        assert body["tools"] == first["tools"]
        assert body["system"] == first["system"]


# ----- plan mode ---------------------------------------------------------------------------------


async def test_plan_mode_refuses_changes_until_approved_then_the_same_run_acts(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    before = (hello_workspace / "hello.py").read_text()
    fake_api.push(
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", EDIT),
        tool("bash", {"command": "touch made-by-bash"}),
        tool("write_file", {"path": "new.py", "content": "x = 1\n"}),
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "Hints, then docstrings."}),
        tool("edit_file", EDIT),
        tool(
            "todo", plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "completed"))
        ),
        text("Done."),
    )
    reviewer = Reviewer(PlanDecision("approve"))
    session = make_session(hello_workspace, fake_api, review_plan=reviewer)
    events = collect(session)
    result = await session.run("Refactor hello.py", mode="plan")
    assert result.status == "done" and result.text == "Done."
    # The first message says the run is in plan mode, after the prompt.
    assert user_texts(fake_api.bodies[0]["messages"][0]) == ["Refactor hello.py", PLAN_MODE_TEXT]
    for index, name in ((2, "edit_file"), (3, "bash"), (4, "write_file")):
        [refused] = tool_results(fake_api.bodies[index])
        assert refused["is_error"] is True and refused["content"] == not_approved_text(name)
    assert not (hello_workspace / "made-by-bash").exists()
    assert not (hello_workspace / "new.py").exists()
    # The review showed the plan, the summary and the scratchpad.
    [shown] = reviewer.shown
    assert shown.summary == "Hints, then docstrings." and shown.todos.rendered.startswith("[ ] #1")
    [approved] = tool_results(fake_api.bodies[6])
    assert approved["content"].startswith(
        "The user approved your plan:\n[ ] #1: Add type hints\n[ ] #2: Add docstrings\n"
    )
    assert "is_error" not in approved
    # After the approval the edit went through, in the same run.
    [edited] = tool_results(fake_api.bodies[7])
    assert "is_error" not in edited
    assert (hello_workspace / "hello.py").read_text() == before.replace('"Hello, "', '"Hi, "')
    assert_same_tools_and_system(fake_api)
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.mode == "plan" and started.todo_id is None


async def test_every_request_of_both_modes_offers_the_same_tools_and_reads_the_cache(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "s"}),
        tool(
            "todo", plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "completed"))
        ),
        text("Done."),
        tool("ask_user", {"question": "Which style?", "options": ["Google", "NumPy"]}),
        tool("submit_plan", {"summary": "not in plan mode"}),
        text("Done again."),
    )
    session = make_session(hello_workspace, fake_api)
    await session.run("Plan it", mode="plan")
    await session.run("Now just act")
    assert len(fake_api.bodies) == 7
    names = [t["name"] for t in fake_api.bodies[0]["tools"]]
    assert "submit_plan" in names and "ask_user" in names
    assert_same_tools_and_system(fake_api)
    # The prefix (tools, system prompt, earlier messages) is read from the cache every time.
    reads = [
        (r.usage or {}).get("cache_read_input_tokens", 0) for r in fake_api.message_requests[1:]
    ]
    assert all(r > 0 for r in reads), reads
    [not_plan] = tool_results(fake_api.bodies[6])
    assert not_plan["is_error"] is True and not_plan["content"] == NOT_IN_PLAN_MODE_TEXT


async def test_revise_returns_the_feedback_and_the_users_items_replace_the_plan(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    edited = [
        {"id": "2", "text": "Add docstrings", "status": "pending"},
        {"id": "1", "text": "Add type hints everywhere", "status": "pending"},
    ]
    fake_api.push(
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "first try"}),
        tool("submit_plan", {"summary": "second try"}),
    )
    reviewer = Reviewer(
        PlanDecision("revise", "Docstrings first, please", edited),
        PlanDecision("cancel", items=[]),
    )
    session = make_session(hello_workspace, fake_api, review_plan=reviewer)
    events = collect(session)
    result = await session.run("Refactor", mode="plan")
    changes = [e.state for e in events if isinstance(e, PlanChanged)]
    users = changes[-2]  # then the cancel dropped the proposal
    [revised] = tool_results(fake_api.bodies[2])
    assert "is_error" not in revised
    assert revised["content"] == revise_text("Docstrings first, please", users, True)
    assert "Docstrings first, please" in revised["content"]
    assert "[ ] #2: Add docstrings\n[ ] #1: Add type hints everywhere" in revised["content"]
    assert users.source == "user" and [i.id for i in users.items] == ["2", "1"]
    # The second review showed the user's plan; cancel ignored its (empty) items.
    assert reviewer.shown[1].todos.items == users.items
    assert result.status == "done" and result.text == CANCELLED_PLAN_RESULT
    assert result.rounds == 3
    # Version 4: the cancelled proposal is dropped, back to the plan before the run (none).
    assert session.plan.state.items == ()
    assert [e.state for e in events if isinstance(e, PlanChanged)][-1].source == "restore"


async def test_cancel_ends_the_run_and_the_next_run_reads_why(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", TWO_STEPS),
        reply(tools=[("submit_plan", {"summary": "s"}), ("edit_file", EDIT)]),
        text("Hello again."),
        text("They stay open: you cancelled the plan."),
    )
    session = make_session(hello_workspace, fake_api, review_plan=Reviewer(PlanDecision("cancel")))
    events = collect(session)
    result = await session.run("Refactor", mode="plan")
    assert result.status == "done" and result.text == CANCELLED_PLAN_RESULT
    assert len(fake_api.bodies) == 2
    # The tool after submit_plan never ran.
    assert [e.name for e in events if isinstance(e, ToolResult)] == ["todo", "submit_plan"]
    assert session.plan.state.total == 0  # the refused proposal is not the plan
    await session.run("What now?")
    last = fake_api.bodies[2]["messages"][-1]
    assert [b["content"] for b in last["content"] if b["type"] == "tool_result"] == [
        CANCELLED_PLAN_TEXT,
        ENDED_TEXT,
    ]
    assert user_texts(last) == ["What now?"]
    # No done gate about the refused items: the next run ended at the model's first answer.
    assert len(fake_api.bodies) == 3
    assert "Add type hints" not in str(fake_api.bodies[2]["messages"][-1])


async def test_a_cancelled_proposal_gives_back_the_plan_the_run_started_with(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    earlier = [{"id": "1", "text": "Write the changelog", "status": "in_progress"}]
    fake_api.push(
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "Rewrite it all"}),
        text("Carrying on with the changelog."),
    )
    session = make_session(hello_workspace, fake_api, review_plan=Reviewer(PlanDecision("cancel")))
    session.edit_plan(earlier)
    before = session.plan.state
    events = collect(session)
    result = await session.run("Rewrite calc in Rust", mode="plan")
    assert result.text == CANCELLED_PLAN_RESULT
    after = session.plan.state
    assert after.items == before.items and after.version > before.version
    assert [e.state.source for e in events if isinstance(e, PlanChanged)] == ["model", "restore"]
    # The next, unrelated run's done gate names the earlier item, never the refused ones.
    fake_api.push(text("Fine."), text("The changelog is still open."))
    await session.run("How is it going?")
    gate = str(fake_api.bodies[-1]["messages"][-1])
    assert "Write the changelog" in gate and "Add type hints" not in gate


async def test_plan_mode_has_no_done_gate_and_asks_once_to_submit(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", TWO_STEPS), text("Here is my plan."), text("Still not submitting."))
    reviewer = Reviewer()
    session = make_session(hello_workspace, fake_api, review_plan=reviewer)
    result = await session.run("Plan it", mode="plan")
    assert result.status == "done" and result.text == "Still not submitting." and result.rounds == 3
    assert user_texts(fake_api.bodies[2]["messages"][-1]) == [SUBMIT_REQUEST_TEXT]
    everything = str(fake_api.bodies[-1]["messages"])
    assert "open items" not in everything  # no done gate
    assert reviewer.shown == []


async def test_after_approval_the_done_gate_applies(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "s"}),
        text("I will stop here."),
        text("Explained."),
    )
    session = make_session(hello_workspace, fake_api)
    result = await session.run("Plan it", mode="plan")
    assert result.text == "Explained." and result.rounds == 4
    open_items = list(session.plan.state.items)
    assert user_texts(fake_api.bodies[3]["messages"][-1]) == [done_gate_text(open_items)]


async def test_an_invalid_edited_plan_is_refused_and_asked_again_with_the_rule(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    two_in_progress = [
        {"id": "1", "text": "a", "status": "in_progress"},
        {"id": "2", "text": "b", "status": "in_progress"},
    ]
    fine = [{"id": "1", "text": "Add type hints", "status": "in_progress"}]
    fake_api.push(
        tool("todo", TWO_STEPS),
        tool("submit_plan", {"summary": "s"}),
        text("ok"),
        text("explained"),
    )
    reviewer = Reviewer(
        PlanDecision("approve", items=two_in_progress),
        PlanDecision("approve", items=[{"id": "1", "text": " ", "status": "pending"}]),
        PlanDecision("approve", items=fine),
    )
    session = make_session(hello_workspace, fake_api, review_plan=reviewer)
    await session.run("Plan it", mode="plan")
    problems = [shown.problem for shown in reviewer.shown]
    assert problems[0] is None
    assert problems[1] is not None and "Only one item may be in_progress" in problems[1]
    assert problems[2] is not None and "'text' is required" in problems[2]
    # Nothing the user sent was applied until it obeyed the rules.
    assert reviewer.shown[2].todos.rendered == reviewer.shown[0].todos.rendered
    assert [i.text for i in session.plan.state.items] == ["Add type hints"]
    assert session.plan.state.source == "user"

    # Three invalid answers in a row: the run ends with the model's plan kept.
    fake_api.push(tool("todo", TWO_STEPS), tool("submit_plan", {"summary": "s"}))
    bad = PlanDecision("approve", items="not a list")
    session = make_session(hello_workspace, fake_api, review_plan=Reviewer(bad, bad, bad))
    result = await session.run("Plan it", mode="plan")
    assert result.status == "done" and result.text.startswith("The plan review ended")
    assert session.plan.state.source == "model" and session.plan.state.total == 2


async def test_ask_user_answers_choices_and_a_dismissal(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = [
        UserAnswer(answer="Google style"),
        UserAnswer(answers=("hello.py", "test_hello.py"), answer="and the README"),
        UserAnswer(dismissed=True),
        UserAnswer(answer="   "),
    ]
    asked: list[Question] = []

    async def ask(question: Question) -> UserAnswer:
        asked.append(question)
        return answers.pop(0)

    fake_api.push(
        tool("ask_user", {"question": "Which style?", "options": ["Google style", "NumPy style"]}),
        tool(
            "ask_user",
            {
                "question": "Which files?",
                "options": ["hello.py", "test_hello.py"],
                "multiSelect": True,
            },
        ),
        tool("ask_user", {"question": "Tabs?"}),
        tool("ask_user", {"question": "Spaces?", "multiSelect": True}),
        tool("ask_user", {"question": "Bad", "options": ["a", "a"]}),
        text("Decided: spaces."),
    )
    session = make_session(hello_workspace, fake_api, ask=ask)
    await session.run("Document it")
    results = [tool_results(body)[0] for body in fake_api.bodies[1:]]
    assert results[0]["content"] == "The user answered: Google style"
    assert results[1]["content"] == (
        "The user chose: hello.py; test_hello.py\nThey also wrote: and the README"
    )
    assert results[2]["is_error"] is True and results[2]["content"] == DISMISSED_TEXT
    assert results[3]["is_error"] is True and results[3]["content"] == DISMISSED_TEXT
    assert results[4]["is_error"] is True and "must all differ" in results[4]["content"]
    # Each question names the tool call that asked it (the model's tool_use id).
    call_ids = [q.call_id for q in asked]
    assert all(call_ids) and len(set(call_ids)) == len(asked)
    bare = [dataclasses.replace(q, call_id=None) for q in asked]
    assert bare[0] == Question("Which style?", ("Google style", "NumPy style"), False)
    assert bare[1].multi_select is True
    assert bare[3] == Question("Spaces?", (), False)  # multi-select needs options
    assert len(asked) == 4


# ----- focused runs ------------------------------------------------------------------------------


async def test_a_focused_run_names_its_item_and_gates_on_it_only(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    three = plan(
        ("1", "Hints", "completed"), ("2", "Docstrings", "pending"), ("3", "Guard", "pending")
    )
    fake_api.push(tool("todo", three), text("planned"), text("planned"))
    session = make_session(hello_workspace, fake_api)
    await session.run("Plan it")
    events = collect(session)
    fake_api.push(text("I looked at it."), text("Explained."))
    result = await session.run("Do step 3", todo_id="3")
    first = fake_api.bodies[3]["messages"][-1]
    state = session.plan.state
    assert user_texts(first) == ["Do step 3", focus_text(state.items[2], state)]
    assert "#3: Guard" in user_texts(first)[1] and "[ ] #2: Docstrings" in user_texts(first)[1]
    # The gate lists item 3 only, though item 2 is open too.
    assert user_texts(fake_api.bodies[4]["messages"][-1]) == [done_gate_text([state.items[2]])]
    assert result.text == "Explained."
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.todo_id == "3" and started.mode == "act"


async def test_a_focused_run_on_a_closed_item_has_no_gate(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "Hints", "completed"), ("2", "Docs", "pending"))),
        text("planned"),
        text("planned"),
        text("Item 1 is done already."),
    )
    session = make_session(hello_workspace, fake_api)
    await session.run("Plan it")
    result = await session.run("Check step 1", todo_id="1")
    assert result.text == "Item 1 is done already." and result.rounds == 1


async def test_an_unknown_todo_id_is_refused_and_changes_nothing(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", TWO_STEPS), text("planned"), text("planned"))
    session = make_session(hello_workspace, fake_api)
    await session.run("Plan it")
    messages = copy.deepcopy(session.conversation.messages)
    with pytest.raises(UnknownTodo, match="no item #9"):
        await session.run("Do step 9", todo_id="9")
    # A new session would clear the plan, so no item can be focused: refused before clearing.
    with pytest.raises(UnknownTodo):
        await session.run("Do step 1 afresh", todo_id="1", new_session=True)
    assert session.conversation.messages == messages and session.plan.state.total == 2
    assert len(fake_api.bodies) == 3


def test_run_state_rules() -> None:
    state = TodoState(
        (TodoItem("1", "a", "pending"), TodoItem("2", "b", "failed")), version=3, source="model"
    )
    run = RunState.start("plan", "2", state)
    assert run.focus == state.items[1] and run.refusal("bash", True) is not None
    assert run.refusal("read_file", False) is None
    assert run.end_of_turn(state) == SUBMIT_REQUEST_TEXT and run.end_of_turn(state) is None
    run.approve()
    assert run.refusal("bash", True) is None
    assert run.end_of_turn(state) == done_gate_text([state.items[1]])
    assert run.end_of_turn(state) is None  # once per run


# ----- the wording the model reads ---------------------------------------------------------------


def run_texts() -> str:
    """Every text of plan mode and focused runs the model reads, for the golden file."""
    state = TodoState(
        (TodoItem("1", "Add type hints", "completed"), TodoItem("2", "Add docstrings", "pending")),
        version=2,
        source="model",
    )
    sections = {
        "plan mode, first message": PLAN_MODE_TEXT,
        "plan mode, ended without submitting": SUBMIT_REQUEST_TEXT,
        "plan mode, a refused tool": not_approved_text("edit_file"),
        "submit_plan outside plan mode": NOT_IN_PLAN_MODE_TEXT,
        "submit_plan approved": approved_text(state, edited=False),
        "submit_plan approved, edited": approved_text(state, edited=True),
        "submit_plan revise": revise_text("Docstrings first", state, edited=True),
        "submit_plan revise, no feedback": revise_text(None, state, edited=False),
        "submit_plan cancelled": CANCELLED_PLAN_TEXT,
        "run result, cancelled": CANCELLED_PLAN_RESULT,
        "run result, invalid edits": invalid_plan_result("Your edited plan was not accepted: X"),
        "a tool after the run ended": ENDED_TEXT,
        "ask_user dismissed": DISMISSED_TEXT,
        "focused run, first message": focus_text(state.items[1], state),
        "done gate": done_gate_text([state.items[1]]),
    }
    return "".join(f"## {name}\n{body}\n\n" for name, body in sections.items())


def instructions_prompt() -> str:
    """The system prompt with the repository's instructions (one cut at the limit), and a
    subfolder's as a tool result's note gives them."""
    root = Instructions("AGENTS.md", "# Rules\nRun `make test` before you finish.\n", 40000, 7232)
    nested = Instructions("src/AGENTS.md", "Keep src/ free of I/O.\n", 23)
    return (
        system_prompt("hello", project=root) + "\n## a tool result's note\n" + folder_note(nested)
    )


@pytest.mark.parametrize(
    ("golden", "produce"),
    [
        ("system_prompt.txt", lambda: system_prompt("hello")),
        ("run_texts.txt", run_texts),
        ("instructions_prompt.txt", lambda: instructions_prompt()),
    ],
)
def test_the_model_reads_the_reviewed_wording(golden: str, produce: Any) -> None:
    """A change of the prompt's wording must show in a review: rewrite the golden file with
    PLANSIGHT_UPDATE_GOLDEN=1 and commit it with the change."""
    path = GOLDEN / golden
    current = produce()
    if os.environ.get("PLANSIGHT_UPDATE_GOLDEN") == "1":
        path.write_text(current, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == current
