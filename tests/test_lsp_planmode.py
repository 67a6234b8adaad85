"""Plan mode, questions and focused runs over stdio, with a real LSP client (pytest-lsp).

`plansight/run` with `mode` and `todoId`, the server→client requests `plansight/reviewPlan`
and `plansight/askUser`, their `window/showMessageRequest` fallbacks, the tool list (and so
the cached prefix) that never changes, and the requests withdrawn when a run is cancelled.

The tests that change no file share servers (`SharedEditor`: reset before each test, the
workspace checked unchanged after): `planning` advertises reviewPlan and askUser, `fallback`
neither; the cancelled-run cases share one holding editor per advertised capability set
(`Holders`, as in test_lsp_editor). A test that edits a file starts its own.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import wait_until
from lsp_harness import (
    AsyncAnswer,
    EditorHandle,
    MessageAnswer,
    SharedEditor,
    plain,
    start_editor,
    start_shared_hello,
)
from test_lsp_editor import Asked, Holders

pytestmark = pytest.mark.asyncio(loop_scope="module")

EDIT = {"path": "hello.py", "old_text": '"Hello, "', "new_text": '"Hi, "'}
NOT_APPROVED = "edit_file was not run: this run is in plan mode"


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


TWO = plan(("1", "Add type hints", "pending"), ("2", "Add docstrings", "pending"))
TWO_DONE = plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "completed"))


async def open_editor(
    root: Path,
    api: FakeMessagesAPI,
    tmp_path: Path,
    *,
    review_plan: AsyncAnswer | None = None,
    ask_user: AsyncAnswer | None = None,
    show_message: MessageAnswer | None = None,
) -> EditorHandle:
    return await start_editor(
        root,
        api,
        storage=tmp_path / f"state-{uuid.uuid4().hex[:6]}",
        review_plan=review_plan,
        ask_user=ask_user,
        show_message=show_message,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_api() -> AsyncIterator[FakeMessagesAPI]:
    api = FakeMessagesAPI().start()
    yield api
    api.stop()


@pytest.fixture
def fake_api(module_api: FakeMessagesAPI) -> FakeMessagesAPI:
    """The module's fake API, blank: the shared servers ask it, and so do the tests' own."""
    module_api.reset()
    return module_api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def planning_server(
    tmp_path_factory: pytest.TempPathFactory, module_api: FakeMessagesAPI
) -> AsyncIterator[SharedEditor]:
    server = await start_shared_hello(
        tmp_path_factory, api=module_api, offer_review_plan=True, offer_ask_user=True
    )
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def planning(planning_server: SharedEditor) -> AsyncIterator[SharedEditor]:
    """The shared editor that renders reviewPlan and askUser (the test sets their answers)."""
    await planning_server.begin()
    yield planning_server
    await planning_server.end()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fallback_server(
    tmp_path_factory: pytest.TempPathFactory, module_api: FakeMessagesAPI
) -> AsyncIterator[SharedEditor]:
    server = await start_shared_hello(tmp_path_factory, api=module_api)
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def fallback(fallback_server: SharedEditor) -> AsyncIterator[SharedEditor]:
    """The shared editor without reviewPlan / askUser: it is asked by showMessageRequest."""
    await fallback_server.begin()
    yield fallback_server
    await fallback_server.end()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def holding_servers(
    tmp_path_factory: pytest.TempPathFactory, module_api: FakeMessagesAPI
) -> AsyncIterator[Holders]:
    servers = Holders(tmp_path_factory.mktemp("holders"), module_api)
    yield servers
    await servers.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def holders(holding_servers: Holders) -> AsyncIterator[Holders]:
    yield holding_servers
    await holding_servers.end()


def results_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]["content"]
    return [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]


def assert_one_prefix(api: FakeMessagesAPI) -> None:
    """Every request carried the same tools and system prompt, and read the cache."""
    bodies = api.bodies
    for body in bodies[1:]:
        assert body["tools"] == bodies[0]["tools"]
        assert body["system"] == bodies[0]["system"]
    names = [t["name"] for t in bodies[0]["tools"]]
    assert "submit_plan" in names and "ask_user" in names
    reads = [(r.usage or {}).get("cache_read_input_tokens", 0) for r in api.message_requests[1:]]
    assert reads and all(n > 0 for n in reads), reads


async def test_plan_mode_revise_edit_approve_then_the_same_run_edits(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [
        {
            "decision": "revise",
            "feedback": "Also add a main guard",
            "items": [*TWO["items"], {"id": "3", "text": "Add a main guard", "status": "pending"}],
        },
        {
            "decision": "approve",
            "items": [
                {"id": "1", "text": "Add type hints to greet", "status": "pending"},
                {"id": "3", "text": "Add a main guard", "status": "pending"},
            ],
        },
    ]
    editor = await open_editor(
        hello_workspace, fake_api, tmp_path, review_plan=lambda params: answers.pop(0)
    )
    fake_api.push(
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", EDIT),
        tool("todo", TWO),
        tool("write_scratchpad", {"content": "greet lacks hints"}),
        tool("submit_plan", {"summary": "Hints, then docstrings."}),
        tool("submit_plan", {"summary": "Hints, docstrings and a guard."}),
        tool("edit_file", EDIT),
        tool(
            "todo", plan(("1", "Add type hints to greet", "completed"), ("3", "Guard", "cancelled"))
        ),
        text("Done."),
    )
    try:
        result = await editor.request(
            "plansight/run", {"prompt": "Refactor hello.py", "mode": "plan"}
        )
        rec = editor.recorder
        assert result["status"] == "done" and result["text"] == "Done."
        assert rec.events[0] == {
            "type": "runStarted",
            "prompt": "Refactor hello.py",
            "mode": "plan",
            "sessionId": rec.events[0]["sessionId"],  # version 4: every event names it
        }
        # Refused in plan mode, as an error result; nothing reviewed, nothing written.
        [refused] = results_in(fake_api.bodies[2])
        assert refused["is_error"] is True and refused["content"].startswith(NOT_APPROVED)
        # The review: the plan, the summary and the scratchpad.
        first, second = rec.plan_reviews
        assert first["summary"] == "Hints, then docstrings."
        assert first["scratchpad"] == "greet lacks hints"
        assert (
            first["todos"]["rendered"]
            == "[ ] #1: Add type hints\n[ ] #2: Add docstrings\n(0/2 completed)"
        )
        assert "problem" not in first
        # Revise: the feedback is the tool's result, the user's items are the plan.
        [revised] = results_in(fake_api.bodies[5])
        assert "Their feedback: Also add a main guard" in revised["content"]
        assert "[ ] #3: Add a main guard" in revised["content"]
        assert second["todos"]["total"] == 3 and second["todos"]["source"] == "user"
        # Approve with an edited plan: that plan is the one that runs.
        approved_state = next(t for t in rec.todos if t["items"][0]["text"].endswith("greet"))
        assert [i["text"] for i in approved_state["items"]] == [
            "Add type hints to greet",
            "Add a main guard",
        ]
        assert approved_state["source"] == "user"
        [approved] = results_in(fake_api.bodies[6])
        assert approved["content"].startswith("The user edited your plan and approved it")
        # Act mode now: the edit was reviewed and written.
        assert len(rec.reviews) == 1
        assert '"Hi, "' in (hello_workspace / "hello.py").read_text()
        assert_one_prefix(fake_api)
    finally:
        await editor.stop()


async def test_cancel_ends_the_run_done_with_the_proposal_dropped(
    planning: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    # Version 4: the plan goes back to what it was before the run (none), and a todos
    # notification says so.
    planning.review_plan = lambda params: {"decision": "cancel", "items": []}
    editor = planning.handle
    fake_api.push(tool("todo", TWO), tool("submit_plan", {"summary": "s"}))
    result = await editor.request("plansight/run", {"prompt": "Plan", "mode": "plan"})
    assert result["status"] == "done" and "cancelled the plan" in result["text"]
    state = await editor.request("plansight/state", {})
    assert state["todos"]["total"] == 0 and state["running"] is False
    await editor.recorder.wait_for(
        lambda: any(t["source"] == "restore" for t in editor.recorder.todos), what="restore"
    )
    assert editor.recorder.todos[-1]["items"] == []
    assert len(fake_api.bodies) == 2


async def test_no_done_gate_in_plan_mode_one_request_to_submit_and_the_gate_after_approval(
    planning: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    planning.review_plan = lambda params: {"decision": "approve"}
    editor = planning.handle
    fake_api.push(
        tool("todo", TWO),
        text("Here is my plan."),  # open items, plan mode: asked to submit, not gated
        tool("submit_plan", {"summary": "Two steps."}),
        tool("submit_plan", {"summary": "Again?"}),  # approved already: an error
        text("Stopping here."),  # act mode now: the done gate lists the open items
        text("They stay open."),
    )
    result = await editor.request("plansight/run", {"prompt": "Plan", "mode": "plan"})
    assert result["status"] == "done" and result["text"] == "They stay open."
    asked = [b["text"] for b in fake_api.bodies[2]["messages"][-1]["content"]]
    assert len(asked) == 1 and asked[0].startswith("<plan-mode>You ended your turn")
    [again] = results_in(fake_api.bodies[4])
    assert again["is_error"] is True and again["content"].startswith("submit_plan is only")
    gate = [b["text"] for b in fake_api.bodies[5]["messages"][-1]["content"]]
    assert gate[0].startswith("Your plan still has open items:\n#1: Add type hints")
    assert len(editor.recorder.plan_reviews) == 1
    # A model that never submits: asked once, and its next end of turn ends the run.
    fake_api.push(text("Planning in my head."), text("Still not submitting."))
    result = await editor.request("plansight/run", {"prompt": "Plan again", "mode": "plan"})
    assert result["status"] == "done" and result["text"] == "Still not submitting."
    assert len(fake_api.bodies) == 8


async def test_an_invalid_edited_plan_is_asked_again_with_the_rule_it_broke(
    planning: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    answers = [
        {"decision": "approve", "items": [{"id": "1", "text": "", "status": "pending"}]},
        {"decision": "nonsense"},
    ]
    planning.review_plan = lambda params: answers.pop(0)
    editor = planning.handle
    fake_api.push(tool("todo", TWO), tool("submit_plan", {"summary": "s"}))
    result = await editor.request("plansight/run", {"prompt": "Plan", "mode": "plan"})
    first, second = editor.recorder.plan_reviews
    assert "problem" not in first
    assert second["problem"].startswith("Your edited plan was not accepted: Item #1")
    assert second["todos"] == first["todos"]  # nothing of the bad answer was applied
    # An answer the protocol does not know is a cancel, never an approval.
    assert result["status"] == "done" and "cancelled the plan" in result["text"]


async def test_ask_user_with_options_multi_select_free_text_and_dismissal(
    planning: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    answers = [
        {"answers": ["hello.py", "test_hello.py"]},
        {"answer": "Use Google style"},
        {"dismissed": True},
        {},
    ]
    planning.ask_user = lambda params: answers.pop(0)
    editor = planning.handle
    fake_api.push(
        tool(
            "ask_user",
            {
                "question": "Which files?",
                "options": ["hello.py", "test_hello.py"],
                "multiSelect": True,
            },
        ),
        tool("ask_user", {"question": "Which style?", "options": ["Google", "NumPy"]}),
        tool("ask_user", {"question": "Tabs or spaces?"}),
        tool("ask_user", {"question": "Anything else?"}),
        text("Decided: spaces."),
    )
    result = await editor.request("plansight/run", {"prompt": "Document it"})
    assert result["status"] == "done"
    assert editor.recorder.questions == [
        {
            "question": "Which files?",
            "options": ["hello.py", "test_hello.py"],
            "multiSelect": True,
        },
        {"question": "Which style?", "options": ["Google", "NumPy"]},
        {"question": "Tabs or spaces?"},
        {"question": "Anything else?"},
    ]
    contents = [results_in(body)[0] for body in fake_api.bodies[1:]]
    assert contents[0]["content"] == "The user chose: hello.py; test_hello.py"
    assert contents[1]["content"] == "The user answered: Use Google style"
    for dismissed in contents[2:]:
        assert dismissed["is_error"] is True
        assert dismissed["content"].startswith("The user dismissed the question")
        assert "Decide yourself, and say in your answer" in dismissed["content"]


# ----- fallbacks for clients without reviewPlan / askUser --------------------------------------


def answer_plans_with(answer: str | None) -> MessageAnswer:
    return lambda shown: answer if "proposes a plan" in shown["message"] else "Accept"


async def run_a_plan_shown_as_a_message(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> dict[str, Any]:
    """The plan is a message with Approve and Cancel; the run's result."""
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "Hints, then docstrings."}),
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", EDIT),
        tool("todo", TWO_DONE),
        text("Done."),
    )
    result = await editor.request("plansight/run", {"prompt": "Plan", "mode": "plan"})
    plan_message = editor.recorder.messages[0]
    assert plan_message["actions"] == ["Approve", "Cancel"]
    assert plan_message["message"].startswith("Plansight proposes a plan: Hints, then docstrings.")
    assert "[ ] #2: Add docstrings" in plan_message["message"]
    assert result["status"] == "done"
    return result


async def test_without_review_plan_the_plan_is_a_message_and_approve_runs_it(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    # Its own server: the approved plan's run edits hello.py.
    editor = await open_editor(
        hello_workspace, fake_api, tmp_path, show_message=answer_plans_with("Approve")
    )
    try:
        result = await run_a_plan_shown_as_a_message(editor, fake_api)
        assert result["text"] == "Done."
        assert '"Hi, "' in (hello_workspace / "hello.py").read_text()
    finally:
        await editor.stop()


@pytest.mark.parametrize("answer", ["Cancel", None])
async def test_without_review_plan_the_plan_is_a_message_and_cancel_or_no_answer_ends_it(
    fallback: SharedEditor, fake_api: FakeMessagesAPI, answer: str | None
) -> None:
    fallback.show_message = answer_plans_with(answer)
    editor = fallback.handle
    result = await run_a_plan_shown_as_a_message(editor, fake_api)
    assert "cancelled the plan" in result["text"] and len(fake_api.bodies) == 2
    assert '"Hi, "' not in (editor.root / "hello.py").read_text()


async def test_without_ask_user_a_question_with_options_is_a_message(
    fallback: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    titles = ["NumPy", "b", None]
    fallback.show_message = lambda shown: titles.pop(0)
    editor = fallback.handle
    fake_api.push(
        tool("ask_user", {"question": "Which style?", "options": ["Google", "NumPy"]}),
        tool("ask_user", {"question": "Which?", "options": ["a", "b"], "multiSelect": True}),
        tool("ask_user", {"question": "Tabs or spaces?"}),  # no options: never shown
        tool("ask_user", {"question": "Unanswered?", "options": ["yes", "no"]}),
        text("Decided."),
    )
    await editor.request("plansight/run", {"prompt": "Document it"})
    assert editor.recorder.messages == [
        {"message": "Which style?", "actions": ["Google", "NumPy"]},
        {"message": "Which?", "actions": ["a", "b"]},  # a single choice
        {"message": "Unanswered?", "actions": ["yes", "no"]},
    ]
    contents = [results_in(body)[0] for body in fake_api.bodies[1:]]
    assert contents[0]["content"] == "The user answered: NumPy"
    assert contents[1]["content"] == "The user answered: b"
    for dismissed in (contents[2], contents[3]):
        assert dismissed["is_error"] is True
        assert dismissed["content"].startswith("The user dismissed the question")


# ----- focused runs and bad parameters -----------------------------------------------------------


async def test_todo_id_focuses_the_run_and_an_unknown_one_is_invalid_params(
    fallback: SharedEditor, fake_api: FakeMessagesAPI
) -> None:
    editor = fallback.handle
    three = plan(
        ("1", "Hints", "pending"), ("2", "Docstrings", "pending"), ("3", "Guard", "pending")
    )
    fake_api.push(tool("todo", three), text("planned"), text("planned"))
    await editor.request("plansight/run", {"prompt": "Plan it"})
    for bad in ({"todoId": "9"}, {"todoId": "1", "newSession": True}):
        with pytest.raises(JsonRpcException) as refused:
            await editor.request("plansight/run", {"prompt": "Go", **bad})
        assert refused.value.code == -32602 and "no item" in refused.value.message
    for params in ({"mode": "think"}, {"todoId": ["1"]}, {"todoId": True}):
        with pytest.raises(JsonRpcException) as invalid:
            await editor.request("plansight/run", {"prompt": "Go", **params})
        assert invalid.value.code == -32602
    state = await editor.request("plansight/state", {})
    assert state["todos"]["total"] == 3  # nothing a refused run touched
    fake_api.push(text("Guard looked at."), text("Left open: I only looked."))
    result = await editor.request("plansight/run", {"prompt": "Step 3 please", "todoId": "3"})
    assert result["text"] == "Left open: I only looked."
    first = fake_api.bodies[3]["messages"][-1]["content"]
    texts = [b["text"] for b in first if b["type"] == "text"]
    assert texts[0] == "Step 3 please" and texts[1].startswith("<focus>Work on plan item #3: Guard")
    gate = [b["text"] for b in fake_api.bodies[4]["messages"][-1]["content"]]
    assert gate == [
        "Your plan still has open items:\n#3: Guard (pending)\n"
        "Finish them, mark them cancelled, or explain to the user why they stay open."
    ]
    started = [e for e in editor.recorder.events if e["type"] == "runStarted"][-1]
    assert started == {
        "type": "runStarted",
        "prompt": "Step 3 please",
        "mode": "act",
        "todoId": "3",
        "sessionId": started["sessionId"],  # version 4: every event names it
    }
    assert len(fake_api.bodies) == 5  # the refused runs never reached the model


# ----- a cancelled run withdraws the pending review or question ----------------------------------

PENDING = {
    # The two cases with reviewPlan / askUser share a server: their editor offers both.
    "reviewPlan": (
        "plansight/reviewPlan",
        {"decision": "approve"},
        {"reviewPlan": True, "askUser": True},
        [tool("todo", TWO), tool("submit_plan", {"summary": "s"})],
    ),
    "askUser": (
        "plansight/askUser",
        {"answer": "yes"},
        {"reviewPlan": True, "askUser": True},
        [tool("ask_user", {"question": "Really?"})],
    ),
    "plan fallback": (
        types.WINDOW_SHOW_MESSAGE_REQUEST,
        types.MessageActionItem(title="Approve"),
        {},
        [tool("todo", TWO), tool("submit_plan", {"summary": "s"})],
    ),
    "question fallback": (
        types.WINDOW_SHOW_MESSAGE_REQUEST,
        types.MessageActionItem(title="yes"),
        {},
        [tool("ask_user", {"question": "Really?", "options": ["yes", "no"]})],
    ),
}


@pytest.mark.parametrize("case", list(PENDING))
async def test_a_cancelled_run_withdraws_its_plan_review_or_question(
    holders: Holders, fake_api: FakeMessagesAPI, case: str
) -> None:
    method, answer, experimental, steps = PENDING[case]
    fake_api.push(*steps)
    editor = await holders.begin(
        Asked(method, answer), experimental=experimental, honour_cancel=False
    )
    client, asked = editor.client, editor.asked
    try:
        run_id = uuid.uuid4().hex
        run = asyncio.wrap_future(
            client.protocol.send_request(
                "plansight/run", {"prompt": "Go", "mode": "plan"}, msg_id=run_id
            )
        )
        await wait_until(lambda: len(asked.ids) == 1, "the request")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=run_id))
        try:
            assert plain(await run)["status"] == "cancelled"
        except JsonRpcException as err:
            assert err.code == -32800
        await wait_until(lambda: editor.cancels == asked.ids, "the $/cancelRequest")
        asked.release.set()  # the user answers a request that is already withdrawn
        await wait_until(
            lambda: asked.ids[0] not in client.protocol._request_futures, "the late answer"
        )
        finished = [e["result"]["status"] for e in editor.events if e["type"] == "runFinished"]
        assert finished == ["cancelled"]
        # The late answer approved nothing: the next run's model hears of a cancelled call.
        fake_api.push(text("Understood."), text("They stay open."))
        await client.protocol.send_request_async("plansight/run", {"prompt": "Go on"})
        last = fake_api.message_requests[-1].body["messages"]
        cancelled = [
            b["content"]
            for m in last
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result" and b.get("is_error")
        ]
        assert cancelled == ["Cancelled by the user before this tool call finished."]
        assert '"Hi, "' not in (editor.root / "hello.py").read_text()
    finally:
        asked.release.set()
    assert editor.noise() == []  # and the server's shutdown, when Holders stops
