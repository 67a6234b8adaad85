"""Plan review with comments over stdio, with a real LSP client (pytest-lsp): approve with
notes (the model's next request holds them on their items, the `todos` notification shows them
as notes), revise with comments then `submit_plan` with `addressed` (the second `reviewPlan`
carries `previous`, `addressed`, `openComments` and `changes` exactly), and bad comments (a
clear problem, the user asked again with their comments given back, nothing applied).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from lsp_harness import EditorHandle, start_editor

pytestmark = pytest.mark.asyncio(loop_scope="module")


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


TWO = plan(("1", "Add type hints", "pending"), ("2", "Add docstrings", "pending"))
TWO_DONE = plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "completed"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_api() -> AsyncIterator[FakeMessagesAPI]:
    api = FakeMessagesAPI().start()
    yield api
    api.stop()


@pytest.fixture
def fake_api(module_api: FakeMessagesAPI) -> FakeMessagesAPI:
    module_api.reset()
    return module_api


async def open_editor(
    root: Path, api: FakeMessagesAPI, tmp_path: Path, answers: list[dict[str, Any]]
) -> EditorHandle:
    return await start_editor(
        root,
        api,
        storage=tmp_path / f"state-{uuid.uuid4().hex[:6]}",
        review_plan=lambda params: answers.pop(0),
    )


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]["content"]
    return [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]


async def test_approve_with_comments_keeps_them_on_their_items_for_the_model_and_clients(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [
        {
            "decision": "approve",
            "comments": [
                {"id": "c1", "todoId": "2", "text": "Google style, with Args:"},
                {"id": "c2", "quote": "type hints", "text": "Use PEP 604 unions"},
                {"id": "c3", "text": "Keep the diff small"},
            ],
        }
    ]
    editor = await open_editor(hello_workspace, fake_api, tmp_path, answers)
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "Hints, then docstrings."}),
        tool("todo", TWO_DONE),  # the model's todo has no notes: the user's stay
        text("Noted."),
    )
    try:
        result = await editor.request("plansight/run", {"prompt": "Plan it", "mode": "plan"})
        assert result["status"] != "error", result
        # The model's next request: the comments, each on its item, and the general one.
        [approved] = tool_results(fake_api.bodies[2])
        content = approved["content"]
        assert content.startswith("The user approved your plan:")
        assert "[comment c1] on #2 (Add docstrings): Google style, with Args:" in content
        assert (
            '[comment c2] on #1 (Add type hints), quoting "type hints": Use PEP 604 unions'
        ) in content
        assert "[comment c3] on the plan as a whole: Keep the diff small" in content
        # The plan keeps them as notes: the clients' todos notification and the state.
        rec = editor.recorder
        await rec.wait_for(
            lambda: any(any(i.get("notes") for i in t["items"]) for t in rec.todos),
            what="a todos notification with notes",
        )
        state = await editor.request("plansight/state", {})
        assert state["todos"]["completed"] == 2
        notes = {i["id"]: i.get("notes") for i in state["todos"]["items"]}
        assert notes == {"1": "Use PEP 604 unions", "2": "Google style, with Args:"}
        assert rec.todos[-1]["items"] == state["todos"]["items"]
    finally:
        await editor.stop()


async def test_revise_then_addressed_second_review_carries_previous_addressed_open(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [
        {
            "decision": "revise",
            "feedback": "Two things",
            "comments": [
                {"id": "c1", "todoId": "2", "text": "Docstrings only on public functions"},
                {"id": "c2", "text": "Add a test item"},
            ],
        },
        {"decision": "approve"},
    ]
    editor = await open_editor(hello_workspace, fake_api, tmp_path, answers)
    revised_plan = plan(
        ("1", "Add type hints", "pending"),
        ("2", "Add docstrings to public functions", "pending"),
    )
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "first"}),
        tool("todo", revised_plan),
        tool(
            "submit_plan",
            {"summary": "second", "addressed": [{"commentId": "c1", "how": "Public only now"}]},
        ),
        tool("todo", TWO_DONE),
        text("Ok."),
    )
    try:
        await editor.request("plansight/run", {"prompt": "Plan it", "mode": "plan"})
        # The revise feedback: each comment anchored, and how to say what was addressed.
        [revise] = tool_results(fake_api.bodies[2])
        assert "Their feedback: Two things" in revise["content"]
        assert (
            "[comment c1] on #2 (Add docstrings): Docstrings only on public functions"
            in revise["content"]
        )
        assert "[comment c2] on the plan as a whole: Add a test item" in revise["content"]
        assert "submit_plan's `addressed`" in revise["content"]
        first, second = editor.recorder.plan_reviews
        for absent in ("previous", "addressed", "openComments", "changes"):
            assert absent not in first
        assert second["previous"] == {
            "items": [
                {"id": "1", "text": "Add type hints", "status": "pending"},
                {"id": "2", "text": "Add docstrings", "status": "pending"},
            ]
        }
        assert second["addressed"] == [{"commentId": "c1", "how": "Public only now"}]
        assert second["openComments"] == [{"id": "c2", "text": "Add a test item"}]
        assert second["changes"] == [
            {
                "kind": "reworded",
                "todoId": "2",
                "text": "Add docstrings to public functions",
                "before": "Add docstrings",
                "commentIds": ["c1"],
            }
        ]
        assert second["addressedComments"] == [
            {"id": "c1", "todoId": "2", "text": "Docstrings only on public functions"}
        ]
    finally:
        await editor.stop()


async def test_bad_addressed_is_an_error_result_and_nothing_is_asked(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [
        {"decision": "revise", "comments": [{"id": "c1", "todoId": "1", "text": "Why?"}]},
        {"decision": "approve"},
    ]
    editor = await open_editor(hello_workspace, fake_api, tmp_path, answers)
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "first"}),
        tool("submit_plan", {"summary": "s", "addressed": [{"commentId": "c9", "how": "x"}]}),
        tool("submit_plan", {"summary": "s", "addressed": [{"commentId": "c1", "how": " "}]}),
        tool("submit_plan", {"summary": "s", "addressed": [{"commentId": "c1", "how": "Said"}]}),
        tool("todo", TWO_DONE),
        text("Ok."),
    )
    try:
        await editor.request("plansight/run", {"prompt": "Plan it", "mode": "plan"})
        [unknown] = tool_results(fake_api.bodies[3])
        assert unknown["is_error"] is True
        assert "no open comment has the id 'c9' (open: c1)" in unknown["content"]
        [blank] = tool_results(fake_api.bodies[4])
        assert blank["is_error"] is True and "'how' is required" in blank["content"]
        assert len(editor.recorder.plan_reviews) == 2  # the bad calls asked nobody
        assert editor.recorder.plan_reviews[1]["openComments"] == []
    finally:
        await editor.stop()


@pytest.mark.parametrize(
    ("comments", "problem"),
    [
        (
            [{"id": "c1", "todoId": "9", "text": "On nothing"}],
            "Your comments were not accepted: Comment c1: the plan has no item #9.",
        ),
        (
            [{"id": "c1", "todoId": "1", "text": "  "}],
            "Your comments were not accepted: Comment c1: 'text' is required and must not be "
            "blank.",
        ),
    ],
)
async def test_a_bad_comment_is_refused_clearly_and_given_back(
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    comments: list[dict[str, Any]],
    problem: str,
) -> None:
    edited = [{"id": "1", "text": "Edited by the user", "status": "pending"}]
    answers = [
        {"decision": "approve", "comments": comments, "items": edited},
        {"decision": "approve"},
    ]
    editor = await open_editor(hello_workspace, fake_api, tmp_path, answers)
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "s"}),
        tool("todo", TWO_DONE),
        text("Ok."),
    )
    try:
        result = await editor.request("plansight/run", {"prompt": "Plan it", "mode": "plan"})
        assert result["status"] == "done", result
        _first, second = editor.recorder.plan_reviews
        assert second["problem"] == problem
        assert second["comments"] == comments  # given back: the user's words are not lost
        # Nothing of the refused answer was applied: the model's plan was asked again.
        assert [i["text"] for i in second["todos"]["items"]] == ["Add type hints", "Add docstrings"]
        assert all(not t.get("source") == "user" for t in editor.recorder.todos)
    finally:
        await editor.stop()


async def test_without_review_plan_the_message_shows_what_changed_after_a_cancel(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    # An editor without reviewPlan is asked by showMessageRequest; a cancelled proposal is the
    # one the user saw, so the next one's message says what changed since.
    answers = ["Cancel", "Approve"]
    editor = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state-fallback",
        show_message=lambda shown: answers.pop(0),
    )
    three = {"items": [*TWO["items"], {"id": "3", "text": "Run the tests", "status": "pending"}]}
    fake_api.push(
        tool("todo", TWO),
        tool("submit_plan", {"summary": "first"}),
        tool("todo", three),
        tool("submit_plan", {"summary": "second"}),
        tool("todo", {"items": [{**i, "status": "completed"} for i in three["items"]]}),
        text("Ok."),
    )
    try:
        await editor.request("plansight/run", {"prompt": "Plan it", "mode": "plan"})
        await editor.request("plansight/run", {"prompt": "Plan it again", "mode": "plan"})
        first, second = (m["message"] for m in editor.recorder.messages)
        assert "What changed" not in first
        assert second.endswith(
            "What changed since the proposal you saw:\n- added #3: Run the tests"
        )
    finally:
        await editor.stop()
