"""Many sessions in a workspace (protocol version 4) as an editor sees them, through the real
language server and the fake Messages API: new, list, open, rename, delete; runs in two
sessions, each with its own conversation; the busy error naming the running session;
`sessionId` on notifications; and a version 1–3 client that never names a session.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from plansight.engine.events import Usage
from plansight.engine.pricing import list_prices
from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.protocol.names import INVALID_PARAMS, REQUEST_FAILED

from lsp_harness import EditorHandle, plain, start_editor

PLAN = {"items": [{"id": "1", "text": "Write the greeting", "status": "in_progress"}]}


def bodies_text(api: FakeMessagesAPI, since: int = 0) -> str:
    """Every request body the fake received from the `since`th on, as one string."""
    return "\n".join(json.dumps(body) for body in api.bodies[since:])


async def sessions_of(handle: EditorHandle) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = (await handle.request("plansight/sessions", {}))["sessions"]
    return listed


async def test_sessions_are_made_listed_opened_renamed_and_deleted(
    hello_workspace: Path, tmp_path: Path
) -> None:
    steps = [
        tool("todo", PLAN, text="Planning."),
        tool("write_scratchpad", {"content": "notes of the first session"}),
        text("First session done."),
        text("Second session done."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            assert handle.init_result is not None
            caps = handle.init_result.capabilities.experimental
            assert isinstance(caps, dict) and caps["plansight"]["version"] == 4
            [first] = await sessions_of(handle)
            assert first["current"] is True and first["status"] == "idle"
            assert first["title"] == ""  # untitled until its first prompt
            long_prompt = "Greet the user politely " + "and at length " * 6 + "\nsecond line"
            await handle.request("plansight/run", {"prompt": long_prompt})
            [first] = await sessions_of(handle)
            # The first line, cut to 60 characters.
            flat = long_prompt.splitlines()[0].strip()
            assert first["title"] == flat[:59].rstrip() + "…" and len(first["title"]) <= 60
            assert first["counts"]["total"] == 1

            recorder = handle.recorder
            heard = len(recorder.todos)
            made = await handle.request("plansight/newSession", {"title": "Second"})
            second_id = made["id"]
            # The new session is current and its (empty) state was sent, naming it.
            await recorder.wait_for(lambda: len(recorder.todos) > heard, what="the new todos")
            assert recorder.todos[-1]["items"] == []
            assert recorder.todos[-1]["sessionId"] == second_id
            assert recorder.scratchpad[-1] == ""
            state = await handle.request("plansight/state", {})
            assert state["todos"]["items"] == [] and "sessionId" not in state  # as in version 1
            assert (await handle.request("plansight/state", {"sessionId": second_id})) == state
            await handle.request("plansight/run", {"prompt": "Something else"})
            listed = await sessions_of(handle)
            assert [s["id"] for s in listed] == [second_id, first["id"]]  # newest first
            assert [s["current"] for s in listed] == [True, False]
            assert listed[0]["title"] == "Second"  # a given title stays

            # Opening the first: its state is the answer; todos, scratchpad and history follow.
            events_before = len(recorder.events)
            opened = await handle.request("plansight/openSession", {"id": first["id"]})
            assert opened["sessionId"] == first["id"]
            assert [i["text"] for i in opened["todos"]["items"]] == ["Write the greeting"]
            assert opened["scratchpad"] == "notes of the first session"
            await recorder.wait_for(
                lambda: any(e["type"] == "history" for e in recorder.events[events_before:]),
                what="the opened session's history",
            )
            history = next(e for e in recorder.events[events_before:] if e["type"] == "history")
            assert history["sessionId"] == first["id"]
            assert [r["prompt"] for r in history["runs"]] == [long_prompt]
            assert recorder.todos[-1]["sessionId"] == first["id"]
            assert recorder.todos[-1]["items"][0]["text"] == "Write the greeting"
            assert recorder.scratchpad[-1] == "notes of the first session"

            # Each session's history is its own.
            mine = await handle.request("plansight/history", {"sessionId": second_id})
            assert [r["prompt"] for r in mine["runs"]] == ["Something else"]

            renamed = await handle.request(
                "plansight/renameSession", {"id": second_id, "title": "Renamed"}
            )
            assert renamed["title"] == "Renamed"
            assert {s["id"]: s["title"] for s in await sessions_of(handle)}[second_id] == "Renamed"

            with pytest.raises(JsonRpcException) as unknown:
                await handle.request("plansight/openSession", {"id": "nope"})
            assert unknown.value.code == INVALID_PARAMS and "nope" in unknown.value.message

            assert await handle.request("plansight/deleteSession", {"id": second_id}) is None
            assert [s["id"] for s in await sessions_of(handle)] == [first["id"]]
        finally:
            await handle.stop()
        # Kept across a restart: the current session, its title, its state.
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            [kept] = await sessions_of(handle)
            assert kept["id"] == first["id"] and kept["current"] is True
            state = await handle.request("plansight/state", {})
            assert state["scratchpad"] == "notes of the first session"
        finally:
            await handle.stop()


async def test_runs_in_two_sessions_each_send_their_own_conversation(
    hello_workspace: Path, tmp_path: Path
) -> None:
    steps = [
        text("Answer in A."),
        text("Answer in B."),
        text("Again in A."),
        text("Again in B."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            [a] = await sessions_of(handle)
            await handle.request("plansight/run", {"prompt": "canary-of-session-A"})
            b = (await handle.request("plansight/newSession", {}))["id"]
            since = len(api.bodies)
            await handle.request("plansight/run", {"prompt": "canary-of-session-B"})
            sent_b = bodies_text(api, since)
            assert "canary-of-session-B" in sent_b and "canary-of-session-A" not in sent_b
            # A run named for A while B is current: A's conversation goes on, B's stays out.
            since = len(api.bodies)
            done = await handle.request(
                "plansight/run", {"prompt": "more for A", "sessionId": a["id"]}
            )
            assert done["status"] == "done"
            sent_a = bodies_text(api, since)
            assert "canary-of-session-A" in sent_a and "Answer in A." in sent_a
            assert "canary-of-session-B" not in sent_a and "Answer in B." not in sent_a
            # Its events named A.
            started = [e for e in handle.recorder.events if e["type"] == "runStarted"]
            assert [e["sessionId"] for e in started] == [a["id"], b, a["id"]]
            # And B, run again (by default: the current session, still B).
            since = len(api.bodies)
            await handle.request("plansight/run", {"prompt": "more for B"})
            sent = bodies_text(api, since)
            assert "canary-of-session-B" in sent and "canary-of-session-A" not in sent
            history_a = await handle.request("plansight/history", {"sessionId": a["id"]})
            assert [r["prompt"] for r in history_a["runs"]] == ["canary-of-session-A", "more for A"]
        finally:
            await handle.stop()


async def test_a_run_in_another_session_while_one_runs_is_refused_naming_it(
    hello_workspace: Path, tmp_path: Path
) -> None:
    with FakeMessagesAPI([Hang(30)]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            [a] = await sessions_of(handle)
            await handle.request("plansight/renameSession", {"id": a["id"], "title": "Long job"})
            msg_id, running = handle.start_request("plansight/run", {"prompt": "slow"})
            await handle.recorder.wait_for(
                lambda: len(api.message_requests) >= 1, what="the run reaching the model"
            )
            # Another session may be made and opened meanwhile (read from its files) ...
            b = (await handle.request("plansight/newSession", {"title": "Other"}))["id"]
            listed = {s["id"]: s for s in await sessions_of(handle)}
            assert listed[a["id"]]["status"] == "running" and listed[b]["status"] == "idle"
            assert listed[b]["current"] is True
            # ... but not run: one run at a time in a working tree, and the error says which.
            with pytest.raises(JsonRpcException) as busy:
                await handle.request("plansight/run", {"prompt": "quick"})
            assert busy.value.code == REQUEST_FAILED
            assert '"Long job"' in busy.value.message and a["id"] in busy.value.message
            with pytest.raises(JsonRpcException) as named:
                await handle.request("plansight/run", {"prompt": "quick", "sessionId": b})
            assert named.value.code == REQUEST_FAILED and "Long job" in named.value.message
            # Nor is the running one deleted.
            with pytest.raises(JsonRpcException) as deleting:
                await handle.request("plansight/deleteSession", {"id": a["id"]})
            assert deleting.value.code == REQUEST_FAILED
            assert len(api.message_requests) == 1  # nothing else reached the model
            handle.cancel(msg_id)
            await asyncio.wait({running})
            # Once it ended, the other session runs.
            api.push(text("Quick answer."))
            since = len(api.bodies)
            done = await handle.request("plansight/run", {"prompt": "quick", "sessionId": b})
            assert done["status"] == "done"
            sent = bodies_text(api, since)
            assert "quick" in sent and "slow" not in sent
        finally:
            await handle.stop()


async def test_a_version_3_client_sees_the_current_session_and_reset_keeps_the_old_one(
    hello_workspace: Path, tmp_path: Path
) -> None:
    steps = [tool("todo", PLAN), text("Done once."), text("Done afresh.")]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            await handle.request("plansight/run", {"prompt": "first task"})
            edited = await handle.request(
                "plansight/editPlan",
                {"items": [{"id": "1", "text": "Write the greeting", "status": "completed"}]},
            )
            assert edited["counts"]["completed"] == 1
            await handle.request("plansight/reset", {})
            state = await handle.request("plansight/state", {})
            assert state["todos"]["items"] == [] and state["scratchpad"] == ""
            since = len(api.bodies)
            await handle.request("plansight/run", {"prompt": "second task", "newSession": True})
            sent = bodies_text(api, since)
            assert "second task" in sent and "first task" not in sent
            history = await handle.request("plansight/history", {})
            [run] = history["runs"]  # the current session's only
            assert run["prompt"] == "second task" and run["newSession"] is True
            # Both older sessions are kept, listed.
            listed = await sessions_of(handle)
            assert len(listed) == 3 and listed[0]["current"] is True
            assert listed[-1]["title"] == "first task" and listed[-1]["counts"]["completed"] == 1
            # Deleting the current session (loaded in the engine) makes another current, and
            # nothing of the deleted one is written anywhere after.
            await handle.request("plansight/deleteSession", {"id": listed[0]["id"]})
            left = await sessions_of(handle)
            assert len(left) == 2 and [s["current"] for s in left].count(True) == 1
            current = next(s["id"] for s in left if s["current"])
            state = await handle.request("plansight/state", {})
            assert state == await handle.request("plansight/state", {"sessionId": current})
        finally:
            await handle.stop()
        storage = tmp_path / "state"
        assert not (storage / "plan.json").exists() and not (storage / "history.jsonl").exists()
        assert not (storage / "sessions" / listed[0]["id"]).exists()


async def test_a_session_id_cannot_reach_outside_the_sessions_folder(
    hello_workspace: Path, tmp_path: Path
) -> None:
    # What an attacker would get from a crafted id: a folder beside the storage deleted, or a
    # `session.json` written into it.
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    crafted = ["../../victim", "..", "../sessions/../../victim", "/tmp"]
    with FakeMessagesAPI([]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            for bad in crafted:
                for method, params in (
                    ("plansight/deleteSession", {"id": bad}),
                    ("plansight/renameSession", {"id": bad, "title": "owned"}),
                    ("plansight/openSession", {"id": bad}),
                    ("plansight/run", {"prompt": "x", "sessionId": bad}),
                ):
                    with pytest.raises(JsonRpcException) as refused:
                        await handle.request(method, params)
                    assert refused.value.code == INVALID_PARAMS, (method, bad)
            assert len(await sessions_of(handle)) == 1
        finally:
            await handle.stop()
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "precious"
    assert api.message_requests == []


async def test_a_run_waiting_for_the_users_review_is_listed_as_waiting(
    hello_workspace: Path, tmp_path: Path
) -> None:
    release = asyncio.Event()

    async def review(payload: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return {"accepted": False}

    edit = {"path": "hello.py", "old_text": "def greet(name):", "new_text": "def greet(n):"}
    steps = [tool("read_file", {"path": "hello.py"}), tool("edit_file", edit), text("Left.")]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state", review=review)
        try:
            _, running = handle.start_request("plansight/run", {"prompt": "Rename it"})
            await handle.recorder.wait_for(lambda: bool(handle.recorder.reviews), what="a review")
            [waiting] = await sessions_of(handle)
            assert waiting["status"] == "waiting"
            release.set()
            assert plain(await running)["status"] == "done"
            [idle] = await sessions_of(handle)
            assert idle["status"] == "idle"
        finally:
            await handle.stop()


async def test_a_session_taken_up_again_still_undoes_its_steps(
    hello_workspace: Path, tmp_path: Path
) -> None:
    edit = {
        "path": "hello.py",
        "old_text": "def greet(name):",
        "new_text": "def greet(name: str) -> str:",
    }
    steps = [
        tool("todo", PLAN),
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", edit),
        text("Step 1 edited hello.py."),
        text("Something else entirely."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            [a] = await sessions_of(handle)
            await handle.request("plansight/run", {"prompt": "Type greet"})
            await handle.request("plansight/run", {"prompt": "Other", "newSession": True})
            await handle.request("plansight/openSession", {"id": a["id"]})
            # Back in A: its step 1 still has its change, and can be undone.
            changes = await handle.request("plansight/changes", {})
            [step] = changes["steps"]
            assert step["todoId"] == "1" and [f["path"] for f in step["files"]] == ["hello.py"]
            undo = await handle.request("plansight/restore", {"todoId": "1", "dryRun": True})
            assert undo["restored"] == ["hello.py"]
            # The checkpoints name their sessions.
            named = {
                c.get("sessionId")
                for c in (await handle.request("plansight/checkpoints", {}))["checkpoints"]
            }
            assert a["id"] in named and len(named - {None}) == 2
        finally:
            await handle.stop()


async def test_the_usage_events_cost_is_each_sessions_own(
    hello_workspace: Path, tmp_path: Path
) -> None:
    """`costUsd` is the session's cost so far, as Claude Code's /cost: a new session (the
    terminal's /new, VS Code's New Session) starts at nothing; going back to the first one
    goes on from its own."""
    steps = [text("One."), text("Two."), text("Three."), text("Four.")]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")

        def turns() -> list[tuple[str, float, float]]:
            """Each usage event: its session, its costUsd, and its own turn's cost."""
            found = []
            for e in handle.recorder.events:
                if e["type"] == "usage":
                    prices = list_prices(e["model"])
                    assert prices is not None  # a priced model, or nothing is checked
                    told = {snake(k): v for k, v in e["usage"].items()}
                    usage = Usage(**{k: v for k, v in told.items() if k != "total_input_tokens"})
                    found.append((e["sessionId"], e["costUsd"], prices.cost(usage)))
            return found

        try:
            [first] = await sessions_of(handle)
            await handle.request("plansight/run", {"prompt": "First"})
            await handle.request("plansight/run", {"prompt": "Again"})
            [(_, one, own_one), (_, two, own_two)] = turns()
            assert one == pytest.approx(own_one, abs=1e-6) and two == pytest.approx(
                own_one + own_two, abs=1e-6
            )
            second = (await handle.request("plansight/newSession", {}))["id"]
            await handle.request("plansight/run", {"prompt": "Elsewhere"})
            session, cost, own = turns()[-1]
            assert session == second and cost == pytest.approx(own, abs=1e-6)  # its own turn alone
            await handle.request("plansight/openSession", {"id": first["id"]})
            await handle.request("plansight/run", {"prompt": "Back"})
            session, cost, own = turns()[-1]
            assert session == first["id"] and cost == pytest.approx(two + own, abs=1e-6)
        finally:
            await handle.stop()


def snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)
