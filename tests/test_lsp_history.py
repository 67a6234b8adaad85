"""`plansight/history` as an editor sees it, through the real language server: past runs after
a restart (their events as sent, text merged, no toolInputDelta), how each edit was decided
(`editReviewed`), the run in progress, a new session, bad limits, and a kill -9 mid-run.

The bad limits and the cancelled review share one server (`SharedEditor`: reset before each
test, the workspace checked unchanged after): `plansight/reset` keeps the history, so the
cancelled review looks at the runs after those the history had when it began. The others need
a fresh server: a restart, a kill, or the first run of a server that has had no reset (a reset
marks the next run `newSession`).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.protocol.names import INVALID_PARAMS
from plansight.session.history import HISTORY

from conftest import session_folder
from lsp_harness import EditorHandle, SharedEditor, start_editor, start_shared_hello

# The tests on the shared server run in the module's event loop, as it does.
on_shared = pytest.mark.asyncio(loop_scope="module")

PLAN = {
    "items": [
        {"id": "1", "text": "Add type hints", "status": "in_progress"},
        {"id": "2", "text": "Add a docstring", "status": "pending"},
    ]
}
HINTS = {
    "path": "hello.py",
    "old_text": "def greet(name):",
    "new_text": "def greet(name: str) -> str:",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = await start_shared_hello(tmp_path_factory)
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def shared_editor(shared: SharedEditor) -> Any:
    yield await shared.begin()
    await shared.end()


def merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The live events as the history keeps them: deltas of one model turn merged,
    toolInputDelta left out (and nothing else: planDraft and checkpoint events are kept as
    they were sent)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "toolInputDelta":
            continue
        last = out[-1] if out else None
        if (
            last
            and event["type"] in ("textDelta", "thinkingDelta")
            and last["type"] == event["type"]
            and last.get("turn") == event.get("turn")
        ):
            out[-1] = {**last, "text": last["text"] + event["text"]}
        else:
            out.append(event)
    return out


def runs_of(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    runs: list[list[dict[str, Any]]] = []
    for event in events:
        if event["type"] == "runStarted":
            runs.append([])
        if event["type"] == "usage":  # the status line's figures, sent live, not history
            continue
        if runs:
            runs[-1].append(event)
    return runs


async def kill(handle: EditorHandle) -> None:
    server = handle.client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    await handle.client.stop()


async def test_past_runs_come_back_after_a_restart_as_they_were_sent(
    hello_workspace: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    reviews = iter([{"accepted": True}, {"accepted": False, "feedback": "No docstrings"}])
    docstring = {
        "path": "hello.py",
        "old_text": "def greet(name: str) -> str:\n",
        "new_text": 'def greet(name: str) -> str:\n    """Greet."""\n',
    }
    steps = [
        tool("todo", PLAN, text="I will plan first, then change it.", chunk_delay=0.002),
        tool("read_file", {"path": "hello.py"}, text="Reading it."),
        tool("edit_file", HINTS, text="Adding the hints."),
        text("The hints are in, and the tests still pass.", chunk_delay=0.002),
        text("The docstring is for the next run."),  # after the done gate
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", docstring, text="Now the docstring."),
        text("Understood: no docstring."),
        text("The plan stays as it is."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(
            hello_workspace, api, storage=storage, review=lambda _: next(reviews)
        )
        try:
            first = await handle.request("plansight/run", {"prompt": "Add type hints"})
            second = await handle.request("plansight/run", {"prompt": "And a docstring"})
            live = handle.recorder.events
        finally:
            await handle.stop()
        first_reviews = handle.recorder.reviews
        assert first["status"] == "done" and second["status"] == "done"

        handle = await start_editor(hello_workspace, api, storage=storage)
        try:
            history = await handle.request("plansight/history", {})
            limited = await handle.request("plansight/history", {"limit": 1})
        finally:
            await handle.stop()

    runs = history["runs"]
    assert [r["prompt"] for r in runs] == ["Add type hints", "And a docstring"]
    assert [r["result"] for r in runs] == [first, second]
    assert all(r["startedAt"].endswith("Z") for r in runs)
    # Exactly what the editor was sent, with each stretch of text as one event.
    assert [r["events"] for r in runs] == [merged(run) for run in runs_of(live)]
    # Checkpoint events are plansight/event payloads like the others: the history keeps them.
    kinds = [[e["type"] for e in r["events"]] for r in runs]
    assert all("checkpoint" in k and k.index("checkpoint") < k.index("runFinished") for k in kinds)
    reviewed = [e for r in runs for e in r["events"] if e["type"] == "editReviewed"]
    assert [(e["path"], e["outcome"], e.get("todoId"), e.get("feedback")) for e in reviewed] == [
        ("hello.py", "accepted", "1", None),
        ("hello.py", "rejected", "1", "No docstrings"),
    ]
    assert [e["id"] for e in reviewed] == [r["id"] for r in first_reviews]
    assert limited["runs"] == runs[-1:]
    # The text streamed in many notifications and is kept as one event per stretch.
    kept = sum(e["type"] == "textDelta" for r in runs for e in r["events"])
    assert sum(e["type"] == "textDelta" for e in live) > kept


async def test_the_run_in_progress_has_no_result_and_a_new_session_is_marked(
    hello_workspace: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    with FakeMessagesAPI([text("First."), text("Thinking slowly…"), Hang(30)]) as api:
        handle = await start_editor(hello_workspace, api, storage=storage)
        try:
            await handle.request("plansight/run", {"prompt": "one"})
            await handle.request("plansight/run", {"prompt": "two", "newSession": True})
            _, running = handle.start_request("plansight/run", {"prompt": "three"})
            await handle.recorder.wait_for(
                lambda: len(api.message_requests) >= 3, what="the third run reaching the model"
            )
            history = await handle.request("plansight/history", {})
            sessions = await handle.request("plansight/sessions", {})
            handle.cancel(_)
            await asyncio.wait({running})
        finally:
            await handle.stop()
    # The current session's runs only (version 4): `newSession` began another, and the
    # first run is its predecessor's, which stays listed.
    two, three = history["runs"]
    assert two["newSession"] is True and "newSession" not in three
    assert [(s["title"], s["current"]) for s in sessions["sessions"]] == [
        ("two", True),
        ("one", False),
    ]
    assert "result" not in three
    # Up to now: its start, and its first checkpoint once that snapshot is done.
    started, *announced = three["events"]
    assert (started["type"], started["prompt"]) == ("runStarted", "three")
    assert [e["type"] for e in announced] in ([], ["checkpoint"])


@on_shared
@pytest.mark.parametrize("limit", [-1, "3", 2.5, True])
async def test_a_bad_limit_is_refused(shared_editor: EditorHandle, limit: Any) -> None:
    handle = shared_editor
    with pytest.raises(JsonRpcException) as refused:
        await handle.request("plansight/history", {"limit": limit})
    assert refused.value.code == INVALID_PARAMS
    assert "limit" in str(refused.value.message)
    assert await handle.request("plansight/history", {"limit": 0}) == {"runs": []}


@on_shared
async def test_a_cancelled_review_is_told_as_cancelled(
    shared: SharedEditor, shared_editor: EditorHandle
) -> None:
    handle, api = shared_editor, shared.api
    # The runs of earlier tests on the shared server (the history outlives a reset).
    before = len((await handle.request("plansight/history", {}))["runs"])
    api.push(tool("read_file", {"path": "hello.py"}), tool("edit_file", HINTS), Hang(30))
    never: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    # The review stays open: the run is cancelled while it waits.
    shared.review = lambda _: never
    try:
        msg_id, running = handle.start_request("plansight/run", {"prompt": "hints"})
        await handle.recorder.wait_for(lambda: bool(handle.recorder.reviews), what="the review")
        handle.cancel(msg_id)
        await handle.recorder.wait_for(
            lambda: "runFinished" in handle.recorder.event_types(), what="the cancelled run"
        )
        await asyncio.wait({running})
        history = await handle.request("plansight/history", {})
    finally:
        never.cancel()
    live = [e for e in handle.recorder.events if e["type"] == "editReviewed"]
    assert [(e["id"], e["outcome"]) for e in live] == [
        (handle.recorder.reviews[0]["id"], "cancelled")
    ]
    [run] = history["runs"][before:]
    assert [e for e in run["events"] if e["type"] == "editReviewed"] == live
    assert run["result"]["status"] == "cancelled"
    assert (handle.root / "hello.py").read_text().startswith("import sys\n\n\ndef greet(name):")


async def test_a_run_killed_mid_stream_is_kept_whole_up_to_the_kill(
    hello_workspace: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    long_answer = " ".join(f"word{n}" for n in range(3000))
    with FakeMessagesAPI([text(long_answer, chunk_delay=0.002), text("After the restart.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=storage)
        _, running = handle.start_request("plansight/run", {"prompt": "a long answer"})
        streamed = lambda: sum(  # noqa: E731
            len(e.get("text", "")) for e in handle.recorder.events if e["type"] == "textDelta"
        )
        await handle.recorder.wait_for(lambda: streamed() > 9_000, what="much of the answer")
        await kill(handle)
        running.cancel()
        assert (session_folder(storage) / HISTORY).exists()

        handle = await start_editor(hello_workspace, api, storage=storage)
        try:
            await handle.request("plansight/run", {"prompt": "again"})
            history = await handle.request("plansight/history", {})
        finally:
            await handle.stop()
    killed, after = history["runs"]
    assert killed["prompt"] == "a long answer" and "result" not in killed
    # (the run's first checkpoint is announced while the answer streams: where, varies)
    [start, answer] = [e for e in killed["events"] if e["type"] != "checkpoint"]
    assert start["type"] == "runStarted"
    # What was written before the kill is whole and in order: a prefix of the answer.
    assert answer["type"] == "textDelta" and long_answer.startswith(answer["text"])
    assert len(answer["text"]) >= 4_000
    assert after["prompt"] == "again" and after["result"]["status"] == "done"
