"""`plansight lsp` end to end over stdio, driven by a real LSP client, against the fake API.

The tests that take `editor` share one server (`SharedEditor`: reset before each test, the
workspace checked unchanged after it); those that need other options or change files start
their own.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.workspace.sandbox import detect

from conftest import PATIENCE, Held
from lsp_harness import (
    EditorHandle,
    SharedEditor,
    plain,
    server_env,
    start_editor,
    start_shared_hello,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

REMINDER = "<reminder>Update your todos.</reminder>"


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = await start_shared_hello(tmp_path_factory)
    yield server
    await server.stop()


@pytest.fixture
def fake_api(shared: SharedEditor) -> FakeMessagesAPI:
    """The shared server's fake API, blank (also for the tests that start their own server)."""
    shared.api.reset()
    return shared.api


@pytest_asyncio.fixture(loop_scope="module")
async def editor(shared: SharedEditor) -> Any:
    yield await shared.begin()
    await shared.end()


async def test_initialize_announces_protocol_v2_and_document_sync(editor: EditorHandle) -> None:
    assert editor.init_result is not None
    caps = editor.init_result.capabilities
    assert caps.experimental == {"plansight": {"version": 4}}
    sync = caps.text_document_sync
    kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
    assert kind in (types.TextDocumentSyncKind.Full, types.TextDocumentSyncKind.Incremental)
    state = await editor.request("plansight/state", {})
    assert state["running"] is False and state["scratchpad"] == ""
    assert state["todos"]["items"] == [] and state["todos"]["rendered"] == "No todos."


async def test_a_run_notifies_plan_scratchpad_events_and_answers_run_result(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool(
            "todo",
            plan(("1", "Add type hints", "in_progress"), ("2", "Add docs", "pending")),
            text="Planning first.",
        ),
        tool("write_scratchpad", {"content": "hello.py lacks hints"}),
        tool("todo", plan(("1", "Add type hints", "completed"), ("2", "Add docs", "completed"))),
        text("All done."),
    )
    result = await editor.request("plansight/run", {"prompt": "Refactor hello.py"})
    assert result["status"] == "done" and result["text"] == "All done." and result["rounds"] == 4
    assert set(result["usage"]) == {
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "cacheCreationInputTokens",
        "totalInputTokens",
    }
    usage = result["usage"]
    assert usage["totalInputTokens"] == sum(
        usage[k] for k in ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
    )
    rec = editor.recorder
    await rec.wait_for(lambda: "runFinished" in rec.event_types())
    assert rec.todos[0]["rendered"] == "[>] #1: Add type hints\n[ ] #2: Add docs\n(0/2 completed)"
    assert rec.todos[0]["source"] == "model" and rec.todos[0]["total"] == 2
    assert rec.todos[-1]["completed"] == 2 and rec.todos[-1]["version"] > rec.todos[0]["version"]
    # What clients show of the plan comes with it: the count done, the item in progress.
    assert rec.todos[0]["counts"]["done"] == 0 and rec.todos[-1]["counts"]["done"] == 2
    assert rec.todos[0]["current"] == {"id": "1", "text": "Add type hints"}
    assert rec.todos[-1]["current"] is None and rec.todos[-1]["nextId"] == "3"
    assert rec.scratchpad == ["hello.py lacks hints"]
    types_seen = rec.event_types()
    assert types_seen[0] == "runStarted" and types_seen[-1] == "runFinished"
    assert "textDelta" in types_seen
    call = next(e for e in rec.events if e["type"] == "toolCall")
    assert call["name"] == "todo" and call["input"]["items"][0]["id"] == "1"
    assert call["summary"] == "2 items"  # made by the todo tool, shown as it is
    res = next(e for e in rec.events if e["type"] == "toolResult")
    assert res["isError"] is False and res["summary"].startswith("[>] #1")
    assert rec.events[-1]["result"]["status"] == "done"
    # The model saw the rendered plan as the todo tool's result.
    tool_result = fake_api.bodies[1]["messages"][-1]["content"][0]
    assert tool_result["content"] == rec.todos[0]["rendered"]


async def test_progress_follows_the_plan(editor: EditorHandle, fake_api: FakeMessagesAPI) -> None:
    # The model answers once the editor shows the progress: a plan changed before that is
    # only the progress's first message, not a report.
    first = Held(
        tool(
            "todo",
            plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "in_progress")),
        )
    )
    fake_api.push(
        first,
        tool(
            "todo", plan(("1", "Add type hints", "completed"), ("2", "Add docstrings", "completed"))
        ),
        text("done"),
    )
    run = asyncio.ensure_future(editor.request("plansight/run", {"prompt": "go"}))
    try:
        await editor.recorder.wait_for(
            lambda: any(editor.client.progress_reports.values()), what="the progress begun"
        )
    finally:
        first.release()
    await run
    reports = [p for ps in editor.client.progress_reports.values() for p in ps]
    messages = [getattr(v, "message", None) for v in reports]
    assert "1/2 · Add docstrings" in messages
    assert any(isinstance(v, types.WorkDoneProgressEnd) for v in reports)


async def test_reminder_diagnostic_is_published_on_the_last_read_file_and_cleared(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "Read", "in_progress"))),
        tool("read_file", {"path": "test_hello.py"}),
        tool("read_scratchpad", {}),
        tool("read_file", {"path": "hello.py", "offset": 8, "limit": 2}),
        tool("todo", plan(("1", "Read", "completed"))),
        text("done"),
    )
    uri = editor.uri("hello.py")

    def seen() -> list[list[types.Diagnostic]]:
        return [d for u, d in editor.recorder.diagnostics if u == uri]

    await editor.request("plansight/run", {"prompt": "read"})
    await editor.recorder.wait_for(lambda: len(seen()) >= 2)
    first = seen()[0][0]
    assert first.source == "plansight" and first.code == "plan-reminder"
    assert first.severity == types.DiagnosticSeverity.Information
    assert "3 rounds" in first.message and "the agent's plan, not about this code" in first.message
    # On the line last touched (the read of lines 8-9), one position: nothing to select.
    assert first.range.start == first.range.end == types.Position(7, 0)
    assert seen()[-1] == []  # cleared when the plan was updated
    reminder = next(e for e in editor.recorder.events if e["type"] == "reminder")
    assert reminder["text"] == REMINDER and reminder["level"] == 1
    # And the model got it after the tool result in the same request.
    last_user = fake_api.bodies[4]["messages"][-1]["content"]
    assert [b["type"] for b in last_user] == ["tool_result", "text"]
    assert last_user[-1]["text"] == REMINDER


async def test_edit_plan_validates_versions_and_reaches_the_model(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(tool("todo", plan(("1", "a", "in_progress"))), text("ok"))
    await editor.request("plansight/run", {"prompt": "plan"})
    version = editor.recorder.todos[-1]["version"]
    with pytest.raises(JsonRpcException) as bad:
        await editor.request(
            "plansight/editPlan",
            {
                "items": [
                    {"id": "1", "text": "a", "status": "in_progress"},
                    {"id": "2", "text": "b", "status": "in_progress"},
                ]
            },
        )
    assert bad.value.code == -32602 and "Only one item" in bad.value.message
    with pytest.raises(JsonRpcException) as stale:
        await editor.request(
            "plansight/editPlan",
            {"items": [{"id": "1", "text": "a", "status": "completed"}], "version": version - 1},
        )
    assert stale.value.code == -32803
    state = await editor.request(
        "plansight/editPlan",
        {
            "items": [
                {"id": "1", "text": "a", "status": "completed"},
                {"id": "2", "text": "Write a changelog", "status": "pending"},
            ],
            "version": version,
        },
    )
    assert state["source"] == "user" and state["version"] == version + 1
    # The notification names the session (version 4); the answer is version 1's TodoState.
    # The notification's own fields: the session it is about, and its plan file (v4).
    notified = editor.recorder.todos[-1]
    assert {k: v for k, v in notified.items() if k not in ("sessionId", "planFile")} == state
    fake_api.push(text("noted"))
    await editor.request("plansight/run", {"prompt": "continue"})
    first_message_texts = [
        b["text"] for b in fake_api.bodies[-1]["messages"][-1]["content"] if b["type"] == "text"
    ]
    assert any("#2: Write a changelog" in t for t in first_message_texts)


async def test_review_edit_accept_reject_and_users_own_text(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [
        {"accepted": False, "feedback": "Keep the + concatenation"},
        {"accepted": True, "newText": None},
    ]

    def review(params: dict[str, Any]) -> dict[str, Any]:
        answer = answers.pop(0)
        if answer.get("newText", "") is None:
            answer["newText"] = params["newText"].replace("Hi", "Howdy")
        return answer

    handle = await start_editor(hello_workspace, fake_api, storage=tmp_path / "s", review=review)
    try:
        edit = {"path": "hello.py", "old_text": '"Hello, "', "new_text": '"Hi, "'}
        fake_api.push(
            tool("todo", plan(("1", "Say hi", "in_progress"))),
            tool("read_file", {"path": "hello.py"}),
            tool("edit_file", edit),
            tool("edit_file", edit),
            tool("todo", plan(("1", "Say hi", "completed"))),
            text("done"),
        )
        original = (hello_workspace / "hello.py").read_text()
        await handle.request("plansight/run", {"prompt": "say hi"})
        first, _second = handle.recorder.reviews
        assert first["uri"] == handle.uri("hello.py")
        assert first["oldText"] == original
        assert first["newText"] == original.replace('"Hello, "', '"Hi, "')
        assert first["todoId"] == "1" and first["description"]
        rejected = fake_api.bodies[3]["messages"][-1]["content"][0]
        assert rejected["is_error"] is True and "Keep the + concatenation" in rejected["content"]
        assert (hello_workspace / "hello.py").read_text() == original.replace(
            '"Hello, "', '"Howdy, "'
        )
        told = fake_api.bodies[4]["messages"][-1]["content"][0]["content"]
        assert "Howdy" in told  # the model hears how the user's text differs
    finally:
        await handle.stop()


async def test_review_falls_back_to_show_message_request(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "s",
        advertise=False,
        show_message_answer="Accept",
    )
    try:
        fake_api.push(
            tool("write_file", {"path": "NOTES.md", "content": "notes\n"}),
            tool("bash", {"command": "touch ran.txt"}),
            text("done"),
        )
        await handle.request("plansight/run", {"prompt": "write"})
        assert handle.recorder.messages[0]["actions"] == ["Accept", "Reject"]
        assert "NOTES.md" in handle.recorder.messages[0]["message"]
        assert (hello_workspace / "NOTES.md").read_text() == "notes\n"
        # Commands without approveCommand and without autoApprove are refused.
        assert not (hello_workspace / "ran.txt").exists()
        refused = fake_api.bodies[2]["messages"][-1]["content"][0]
        assert refused["is_error"] is True and "autoApprove" in refused["content"]
    finally:
        await handle.stop()


async def test_no_answer_to_the_fallback_counts_as_rejection(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "s",
        advertise=False,
        show_message_answer=None,
    )
    try:
        fake_api.push(tool("write_file", {"path": "NOTES.md", "content": "x"}), text("ok"))
        await handle.request("plansight/run", {"prompt": "write"})
        assert not (hello_workspace / "NOTES.md").exists()
    finally:
        await handle.stop()


async def test_command_approval_and_rejection_with_feedback(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    answers = [{"approved": False, "feedback": "not on my machine"}, {"approved": True}]
    handle = await start_editor(
        hello_workspace, fake_api, storage=tmp_path / "s", approve=lambda p: answers.pop(0)
    )
    try:
        fake_api.push(
            tool("bash", {"command": "rm -rf build"}),
            tool("bash", {"command": "echo hi > out.txt"}),
            text("ok"),
        )
        await handle.request("plansight/run", {"prompt": "cmd"})
        root = str(hello_workspace.resolve())
        assert handle.recorder.approvals[0] == {
            "command": "rm -rf build",
            "cwd": root,
            # What it may do: in the sandbox (bwrap is here), the workspace only.
            "sandbox": {"network": False, "writable": [root]} if detect().available else None,
        }
        refused = fake_api.bodies[1]["messages"][-1]["content"][0]
        assert refused["is_error"] is True and "not on my machine" in refused["content"]
        assert (hello_workspace / "out.txt").read_text() == "hi\n"
    finally:
        await handle.stop()


async def test_second_run_is_refused_while_one_runs_and_cancel_stops_it(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(Hang(10 * PATIENCE))  # only the cancel can end this run
    run_id, run = editor.start_request("plansight/run", {"prompt": "slow"})
    await editor.recorder.wait_for(lambda: bool(fake_api.message_requests))
    with pytest.raises(JsonRpcException) as busy:
        await editor.request("plansight/run", {"prompt": "second"})
    assert busy.value.code == -32803 and "in progress" in busy.value.message
    state = await editor.request("plansight/state", {})
    assert state["running"] is True
    started = asyncio.get_running_loop().time()
    editor.cancel(run_id)
    with pytest.raises(JsonRpcException) as cancelled:
        await run
    assert cancelled.value.code == -32800
    await editor.recorder.wait_for(lambda: "runFinished" in editor.recorder.event_types())
    assert asyncio.get_running_loop().time() - started < PATIENCE  # not the hang's length
    finished = editor.recorder.events[-1]
    assert finished["result"]["status"] == "cancelled"
    fake_api.push(text("fine"))
    again = await editor.request("plansight/run", {"prompt": "again"})
    assert again["status"] == "done"


async def test_reset_clears_plan_scratchpad_and_conversation(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "a", "completed"))),
        tool("write_scratchpad", {"content": "notes"}),
        text("ok"),
    )
    await editor.request("plansight/run", {"prompt": "one"})
    assert await editor.request("plansight/reset", {}) is None
    assert (
        editor.recorder.todos[-1]["items"] == [] and editor.recorder.todos[-1]["source"] == "user"
    )
    assert editor.recorder.scratchpad[-1] == ""
    fake_api.push(text("fresh"))
    await editor.request("plansight/run", {"prompt": "two"})
    assert len(fake_api.bodies[-1]["messages"]) == 1


async def test_unknown_method_and_bad_params_get_errors_and_the_server_goes_on(
    editor: EditorHandle,
) -> None:
    with pytest.raises(JsonRpcException) as unknown:
        await editor.request("plansight/nope", {})
    assert unknown.value.code == -32601
    with pytest.raises(JsonRpcException) as bad:
        await editor.request("plansight/run", {"prompt": 42})
    assert bad.value.code == -32602
    with pytest.raises(JsonRpcException):
        await editor.request("plansight/editPlan", {"items": "nope"})
    assert (await editor.request("plansight/state", {}))["running"] is False


async def test_the_progress_cancel_button_cancels_the_run(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(Hang(30))
    _, run = editor.start_request("plansight/run", {"prompt": "slow"})
    await editor.recorder.wait_for(lambda: bool(fake_api.message_requests))
    await editor.recorder.wait_for(lambda: bool(editor.client.progress_reports))
    token = next(iter(editor.client.progress_reports))
    editor.client.protocol.notify(
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
    )
    with pytest.raises(JsonRpcException) as cancelled:
        await run
    assert cancelled.value.code == -32800
    await editor.recorder.wait_for(lambda: "runFinished" in editor.recorder.event_types())
    assert editor.recorder.events[-1]["result"]["status"] == "cancelled"


async def test_a_run_without_an_api_key_ends_with_a_clear_error(
    hello_workspace: Path, tmp_path: Path
) -> None:
    handle = await start_editor(hello_workspace, None, storage=tmp_path / "s")
    try:
        result = await handle.request("plansight/run", {"prompt": "hi"})
        assert result["status"] == "error" and "ANTHROPIC_API_KEY" in result["error"]
        assert result["rounds"] == 0  # no request was made
        await handle.recorder.wait_for(lambda: "runFinished" in handle.recorder.event_types())
        assert handle.recorder.events[-1]["result"]["status"] == "error"
    finally:
        await handle.stop()


async def test_text_deltas_say_their_model_turn_so_two_turns_text_stays_apart(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(
        tool("todo", plan(("1", "Add type hints", "in_progress")), text="Planning first."),
        tool("read_file", {"path": "hello.py"}),  # a turn that says nothing
        text("All done."),  # the done gate asks about the open item: one more turn
        text("One item is still open."),
    )
    result = await editor.request("plansight/run", {"prompt": "Refactor hello.py"})
    assert result["status"] == "done" and result["rounds"] == 4
    rec = editor.recorder
    await rec.wait_for(lambda: "runFinished" in rec.event_types())
    deltas = [e for e in rec.events if e["type"] == "textDelta"]
    # Every delta names its turn (the run's model requests, from 1); a turn's text may come in
    # several deltas, never two turns' in one, and a turn without text sends none.
    assert all(isinstance(e.get("turn"), int) for e in deltas), deltas
    texts: dict[int, str] = {}
    for delta in deltas:
        texts[delta["turn"]] = texts.get(delta["turn"], "") + delta["text"]
    assert texts == {1: "Planning first.", 3: "All done.", 4: "One item is still open."}
    # The history keeps them apart too: one textDelta per turn, with its turn.
    history = await editor.request("plansight/history", {"limit": 1})
    [run] = history["runs"]
    kept = [(e["turn"], e["text"]) for e in run["events"] if e["type"] == "textDelta"]
    assert kept == [(1, "Planning first."), (3, "All done."), (4, "One item is still open.")]


@pytest.mark.asyncio(loop_scope="function")
async def test_without_a_folder_nothing_runs_in_the_servers_cwd(
    tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """An editor with no folder open (VS Code in an empty window) starts the server in some
    cwd, often $HOME: the server refuses runs saying to open a folder, and lists, watches and
    checkpoints nothing there (no storage made for it)."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "notes.txt").write_text("private notes\n")
    before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    state = tmp_path / "state"
    fake_api.push(text("I listed your home folder."))

    client = LanguageClient()
    await client.start_io(
        sys.executable,
        "-m",
        "plansight",
        "lsp",
        env=server_env(fake_api, {"XDG_STATE_HOME": str(state), "HOME": str(home)}),
        cwd=str(home),
    )
    try:
        await client.initialize_session(
            types.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
        )
        for method, params in [
            ("plansight/run", {"prompt": "What is in this folder?"}),
            ("plansight/checkpoints", {}),
            ("plansight/state", {}),
        ]:
            with pytest.raises(JsonRpcException) as refused:
                plain(await client.protocol.send_request_async(method, params))
            assert "Open a folder to use Plansight" in str(refused.value), method
            assert refused.value.code == -32803
    finally:
        await asyncio.wait_for(client.shutdown_session(), PATIENCE)
        await client.stop()
    assert fake_api.requests == []  # the model saw nothing of the folder
    assert not state.exists() or not any(state.rglob("*"))  # no session, no checkpoints
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == before
