"""Plan items run in parallel (protocol version 4), through `plansight lsp` and the fake
Messages API serving one conversation per worker (each picked by its item's text).

What is checked is what the user and an attacker would get: the workspace untouched until a
change set is taken in, each file put to the user in a `reviewEdit` naming the worker, a
conflict shown and never merged silently, a worker's command unable to write the real
workspace, change sets surviving a kill, one worker's cancel or API error leaving the others.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI, Hang, HttpError, ScriptStep
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.workspace.sandbox import detect

from conftest import wait_until
from lsp_harness import EditorHandle, start_editor, tree_of

pytestmark = pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")

ONE = "Add a greeting to a.py"
TWO = "Add a farewell to b.py"
A_PY = "def main():\n    return 1\n"
B_PY = "def other():\n    return 2\n"


@pytest.fixture
def workspace() -> Iterator[Path]:
    """Outside /tmp, as the storage beside it (`state`): the sandbox's /tmp is private, so a
    workspace under /tmp would be out of a command's sight whatever the worker's confinement."""
    top = Path(tempfile.mkdtemp(prefix="plansight-parallel-", dir="/var/tmp"))
    root = top / "ws"
    root.mkdir()
    (root / "a.py").write_text(A_PY)
    (root / "b.py").write_text(B_PY)
    (root / ".env").write_text("API_TOKEN=canary-parallel-secret-0123456789\n")
    yield root
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    fake = FakeMessagesAPI()
    fake.start()
    yield fake
    fake.stop()


PLAN = [
    {"id": "1", "text": ONE, "status": "pending"},
    {"id": "2", "text": TWO, "status": "pending"},
]


def done_plan(todo_id: str) -> dict[str, Any]:
    items = [{**i, "status": "completed" if i["id"] == todo_id else i["status"]} for i in PLAN]
    return {"items": items}


def edit_steps(todo_id: str, path: str, old: str, new: str) -> list[ScriptStep]:
    """A worker that reads a file, replaces one text, marks its item done and says so."""
    return [
        tool("read_file", {"path": path}),
        tool("edit_file", {"path": path, "old_text": old, "new_text": new}),
        tool("todo", done_plan(todo_id)),
        text(f"Changed {path}."),
    ]


async def start(
    workspace: Path, api: FakeMessagesAPI, storage: Path, **kwargs: Any
) -> EditorHandle:
    editor = await start_editor(workspace, api, storage=storage, **kwargs)
    await editor.request("plansight/editPlan", {"items": PLAN})
    return editor


def finished(editor: EditorHandle) -> dict[str, dict[str, Any]]:
    return {e["todoId"]: e for e in editor.recorder.events if e["type"] == "workerFinished"}


async def wait_finished(editor: EditorHandle, *ids: str) -> dict[str, dict[str, Any]]:
    await wait_until(lambda: set(ids) <= set(finished(editor)), f"workers {ids} finished")
    return finished(editor)


def item_status(editor: EditorHandle, todo_id: str) -> str:
    last = editor.recorder.todos[-1]
    return next(i["status"] for i in last["items"] if i["id"] == todo_id)


async def test_two_workers_on_two_files_change_nothing_until_taken_in_then_both_apply(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'hello'"))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'bye'"))
    before = tree_of(workspace)
    editor = await start(workspace, api, tmp_path / "state")
    try:
        answer = await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        assert answer["started"] == ["1", "2"]
        done = await wait_finished(editor, "1", "2")
        assert done["1"]["status"] == "completed" and done["2"]["status"] == "completed"
        assert done["1"]["files"] == [{"path": "a.py", "added": 1, "removed": 1}]
        assert done["2"]["files"] == [{"path": "b.py", "added": 1, "removed": 1}]
        assert tree_of(workspace) == before  # nothing reached the workspace yet
        # Both conversations ran at once: the second began before the first ended.
        assert any(e["type"] == "workerProgress" for e in editor.recorder.events)
        assert item_status(editor, "1") == "completed"
        assert item_status(editor, "2") == "completed"
        listed = (await editor.request("plansight/workers", {}))["workers"]
        assert {w["todoId"] for w in listed} == {"1", "2"}

        taken = await editor.request("plansight/takeIn", {"todoId": "1"})
        assert taken["applied"] == ["a.py"] and taken["conflicts"] == [], taken
        taken = await editor.request("plansight/takeIn", {"todoId": "2"})
        assert taken["applied"] == ["b.py"]
        reviews = editor.recorder.reviews
        assert [(r["worker"], r["uri"].rsplit("/", 1)[1]) for r in reviews] == [
            ("1", "a.py"),
            ("2", "b.py"),
        ]
        assert reviews[0]["oldText"] == A_PY
        assert reviews[0]["newText"] == "def main():\n    return 'hello'\n"
        assert "conflict" not in reviews[0]
        assert (workspace / "a.py").read_text() == "def main():\n    return 'hello'\n"
        assert (workspace / "b.py").read_text() == "def other():\n    return 'bye'\n"
        assert (await editor.request("plansight/workers", {}))["workers"] == []
        # The protected file was never in a copy: no request to the model carried its value.
        assert all("canary-parallel-secret" not in str(body) for body in api.bodies)
    finally:
        await editor.stop()


async def test_an_item_whose_work_never_reached_the_workspace_is_pending_again(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """Drop Changes, or a take-in whose every file the user rejected: the worker's item,
    marked completed when it ended, is pending again (the plan says nothing is done that
    the workspace does not hold); a take-in that applied a file leaves it completed."""
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'hello'"))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'bye'"))
    before = tree_of(workspace)
    editor = await start(
        workspace,
        api,
        tmp_path / "state",
        review=lambda r: {"accepted": False},  # the user rejects every file
    )
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        await wait_finished(editor, "1", "2")
        await wait_until(lambda: item_status(editor, "2") == "completed", "#2 completed")
        assert item_status(editor, "1") == "completed"

        await editor.request("plansight/dropChanges", {"todoId": "1"})
        await wait_until(lambda: item_status(editor, "1") == "pending", "#1 pending again")
        assert item_status(editor, "2") == "completed"

        taken = await editor.request("plansight/takeIn", {"todoId": "2"})
        assert taken["applied"] == [] and taken["rejected"] == ["b.py"], taken
        await wait_until(lambda: item_status(editor, "2") == "pending", "#2 pending again")
        assert tree_of(workspace) == before
        assert (await editor.request("plansight/workers", {}))["workers"] == []
        # Pending, it can get a worker again.
        api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'again'"))
        answer = await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        assert answer["started"] == ["1"], answer
    finally:
        await editor.stop()


async def test_two_workers_on_the_same_lines_show_a_conflict_and_merge_nothing_silently(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'one'"))
    api.push_conversation(TWO, *edit_steps("2", "a.py", "return 1", "return 'two'"))
    editor = await start(
        workspace,
        api,
        tmp_path / "state",
        # The user rejects a conflicted proposal (they would settle it by hand).
        review=lambda r: {"accepted": not r.get("conflict")},
        init_options={"autoApprove": {"edits": True}},  # a conflict is asked all the same
    )
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        await wait_finished(editor, "1", "2")
        first = await editor.request("plansight/takeIn", {"todoId": "1"})
        assert first["applied"] == ["a.py"]
        assert editor.recorder.reviews == []  # autoApprove.edits: a clean merge is not asked
        second = await editor.request("plansight/takeIn", {"todoId": "2"})
        assert second == {
            "applied": [],
            "rejected": ["a.py"],
            "conflicts": ["a.py"],
            "skipped": [],
        }
        [review] = editor.recorder.reviews
        assert review["worker"] == "2" and review["conflict"] is True
        assert review["oldText"] == "def main():\n    return 'one'\n"
        assert "<<<<<<< workspace" in review["newText"]
        assert "return 'one'" in review["newText"] and "return 'two'" in review["newText"]
        assert ">>>>>>> worker #2" in review["newText"]
        assert "conflict" in review["description"]
        assert (workspace / "a.py").read_text() == "def main():\n    return 'one'\n"
    finally:
        await editor.stop()


async def test_a_workers_command_cannot_write_the_real_workspace_nor_read_the_storage(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = workspace.parent / "state"  # outside /tmp too
    target = workspace / "a.py"
    attack = (
        f"echo pwned > {target}; echo pwned > {workspace}/new.txt; "
        f"ls -A {storage}; cat {storage}/sessions/*/plan.json; echo copy > a.py"
    )
    api.push_conversation(
        ONE, tool("bash", {"command": attack}), tool("todo", done_plan("1")), text("Tried.")
    )
    editor = await start(workspace, api, storage)
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        done = await wait_finished(editor, "1")
        assert target.read_text() == A_PY
        assert not (workspace / "new.txt").exists()
        results = [
            b
            for body in api.bodies
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        result = results[0]  # the bash call's, the worker's first tool
        output = str(result["content"])
        assert output.count("Read-only file system") == 2
        # The storage was hidden: its sessions (the plan names ONE) out of sight.
        assert "sessions" not in output.replace("/sessions/*/plan.json", "") and ONE not in output
        # Its own copy it could write: that is its change set.
        assert done["1"]["files"] == [{"path": "a.py", "added": 1, "removed": 2}]
    finally:
        await editor.stop()


async def test_a_reused_copy_keeps_nothing_the_last_worker_left_behind(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """A worker's copy is the last finished worker's folder, made over: what that worker left
    outside its change set (an ignored file, a protected one) must not reach the next."""
    (workspace / ".gitignore").write_text("build/\n")
    canary = "canary-left-behind-by-worker-one"
    leave = f"mkdir -p build && echo {canary} > build/leak.txt && echo {canary} > .env"
    api.push_conversation(
        ONE, tool("bash", {"command": leave}), tool("todo", done_plan("1")), text("Left.")
    )
    api.push_conversation(
        TWO,
        tool("bash", {"command": "cat build/leak.txt .env; ls -A"}),
        tool("todo", done_plan("2")),
        text("Looked."),
    )
    storage = tmp_path / "state"
    editor = await start(workspace, api, storage)
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        await wait_finished(editor, "1")
        # Its folder is kept for the next worker (else this test would check a fresh copy).
        assert [p for p in storage.rglob(".spare") if p.is_dir()]
        await editor.request("plansight/runParallel", {"todoIds": ["2"]})
        await wait_finished(editor, "2")
        results = [
            str(b["content"])
            for m in api.bodies[-1]["messages"]  # worker #2's last request: its own results
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        assert results and "No such file" in results[0]
        assert "a.py" in results[0]  # the listing ran: the copy holds the workspace's files
        assert not any(canary in r for r in results)
    finally:
        await editor.stop()


async def test_change_sets_survive_a_kill_between_worker_finished_and_the_review(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'kept'"))
    editor = await start(workspace, api, storage)
    killed = False

    def kill(method: str, payload: dict[str, Any]) -> None:
        nonlocal killed
        if payload.get("type") == "workerFinished" and not killed:
            killed = True
            server = editor.client._server
            assert server is not None
            with suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGKILL)

    editor.recorder.listeners.append(kill)
    await editor.request("plansight/runParallel", {"todoIds": ["1"]})
    await wait_until(lambda: killed, "the kill")
    server = editor.client._server
    assert server is not None
    await server.wait()
    await editor.client.stop()
    assert (workspace / "a.py").read_text() == A_PY

    again = await start_editor(workspace, api, storage=storage)
    try:
        [listed] = (await again.request("plansight/workers", {}))["workers"]
        assert listed["todoId"] == "1" and listed["status"] == "completed"
        assert listed["files"] == [{"path": "a.py", "added": 1, "removed": 1}]
        taken = await again.request("plansight/takeIn", {"todoId": "1"})
        assert taken["applied"] == ["a.py"]
        assert (workspace / "a.py").read_text() == "def main():\n    return 'kept'\n"
    finally:
        await again.stop()


async def test_cancelling_one_worker_lets_the_other_finish(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, Hang(seconds=60))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'bye'"))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        await wait_until(
            lambda: any(ONE in str(b) for b in api.bodies), "worker #1 waits for the model"
        )
        await editor.request("plansight/cancel", {"todoId": "1"})
        done = await wait_finished(editor, "1", "2")
        assert done["1"]["status"] == "cancelled"
        assert done["2"]["status"] == "completed"
        assert item_status(editor, "1") == "pending"
        assert item_status(editor, "2") == "completed"
        listed = (await editor.request("plansight/workers", {}))["workers"]
        assert [w["todoId"] for w in listed] == ["2"]  # #1 changed nothing: nothing stored
    finally:
        await editor.stop()


async def test_a_workers_api_error_fails_its_item_and_the_others_go_on(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, HttpError(400, message="worker one is broken"))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'bye'"))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        done = await wait_finished(editor, "1", "2")
        assert done["1"]["status"] == "failed"
        assert "worker one is broken" in done["1"]["summary"]
        assert done["2"]["status"] == "completed"
        await wait_until(lambda: item_status(editor, "1") == "failed", "#1 failed")
        assert item_status(editor, "2") == "completed"
    finally:
        await editor.stop()


async def test_without_a_sandbox_run_parallel_is_refused_saying_why(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    editor = await start(
        workspace, api, tmp_path / "state", init_options={"sandbox": {"enabled": False}}
    )
    try:
        with pytest.raises(Exception, match=r"only in a sandbox.*sandbox\.enabled is false"):
            await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        assert finished(editor) == {}
    finally:
        await editor.stop()
    bare = tmp_path / "bin"
    bare.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bare / "git").symlink_to(git)
    no_bwrap = await start(
        workspace,
        api,
        tmp_path / "state2",
        env={"PATH": f"{bare}:{Path(sys.executable).parent}"},
    )
    try:
        with pytest.raises(Exception, match="none can be made here: bubblewrap"):
            await no_bwrap.request("plansight/runParallel", {"todoIds": ["1"]})
    finally:
        await no_bwrap.stop()


async def test_dependencies_wait_and_unknown_items_are_refused(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'one'"))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'two'"))
    editor = await start_editor(workspace, api, storage=tmp_path / "state")
    try:
        plan = [PLAN[0], {**PLAN[1], "after": ["1"]}]
        await editor.request("plansight/editPlan", {"items": plan})
        with pytest.raises(Exception, match="no item #9"):
            await editor.request("plansight/runParallel", {"todoIds": ["9"]})
        answer = await editor.request("plansight/runParallel", {"todoIds": ["1", "2"]})
        assert answer["started"] == ["1"]
        assert answer["waiting"] == [{"todoId": "2", "after": ["1"]}]
        done = await wait_finished(editor, "1", "2")
        assert done["2"]["status"] == "completed"
        # #2 started from #1's result (not taken in yet), and its change set is its own.
        assert done["2"]["files"] == [{"path": "b.py", "added": 1, "removed": 1}]
        started = [e["todoId"] for e in editor.recorder.events if e["type"] == "workerStarted"]
        assert started == ["1", "2"]
        await asyncio.sleep(0)
    finally:
        await editor.stop()


async def test_a_worker_killed_mid_run_is_listed_failed_with_what_its_copy_held(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    api.push_conversation(
        ONE, tool("write_file", {"path": "half.txt", "content": "half done\n"}), Hang(seconds=60)
    )
    editor = await start(workspace, api, storage)
    await editor.request("plansight/runParallel", {"todoIds": ["1"]})
    await wait_until(lambda: len(api.bodies) >= 2, "the worker wrote and waits for the model")
    server = editor.client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    await editor.client.stop()
    assert not (workspace / "half.txt").exists()

    again = await start_editor(workspace, api, storage=storage)
    try:
        [listed] = (await again.request("plansight/workers", {}))["workers"]
        assert listed["status"] == "failed" and "Interrupted" in listed["summary"]
        assert listed["files"] == [{"path": "half.txt", "added": 1, "removed": 0}]
        assert (await again.request("plansight/takeIn", {"todoId": "1"}))["applied"] == ["half.txt"]
        assert (workspace / "half.txt").read_text() == "half done\n"
    finally:
        await again.stop()


async def two_sessions(editor: EditorHandle) -> tuple[str, str]:
    """Session A holds PLAN; a new session B, current now, holds one item "1" of its own
    (TWO's text: its worker's conversation). Their ids."""
    listed = (await editor.request("plansight/sessions", {}))["sessions"]
    first = next(s["id"] for s in listed if s["current"])
    second = (await editor.request("plansight/newSession", {}))["id"]
    await editor.request("plansight/editPlan", {"items": [{**PLAN[1], "id": "1"}]})
    return first, second


def finished_of(editor: EditorHandle, parent: str) -> list[dict[str, Any]]:
    return [
        e
        for e in editor.recorder.events
        if e["type"] == "workerFinished" and e.get("parentSessionId") == parent
    ]


async def test_two_sessions_items_of_one_id_keep_their_change_sets_apart(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """Session A's item "1" and session B's item "1": each has its worker and change set,
    both listed, and an item id alone takes in the change set of the session asking."""
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'A'"))
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 'A'", "return 'AA'"))
    api.push_conversation(TWO, *edit_steps("1", "b.py", "return 2", "return 'B'"))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        await wait_finished(editor, "1")  # A's change set is stored
        first, second = await two_sessions(editor)
        answer = await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        assert answer == {"started": ["1"], "waiting": [], "skipped": []}
        await wait_until(lambda: finished_of(editor, second), "B's worker finished")
        assert [e["files"] for e in finished_of(editor, first)] == [
            [{"path": "a.py", "added": 1, "removed": 1}]
        ]
        assert [e["files"] for e in finished_of(editor, second)] == [
            [{"path": "b.py", "added": 1, "removed": 1}]
        ]
        listed = (await editor.request("plansight/workers", {}))["workers"]
        assert sorted(
            (w["todoId"], w["parentSessionId"], w["files"][0]["path"]) for w in listed
        ) == sorted([("1", first, "a.py"), ("1", second, "b.py")])
        assert listed[0]["sessionId"] != listed[1]["sessionId"]

        # Named, A's is taken in, B's left alone.
        taken = await editor.request("plansight/takeIn", {"todoId": "1", "sessionId": first})
        assert taken["applied"] == ["a.py"], taken
        assert (workspace / "a.py").read_text() == "def main():\n    return 'A'\n"
        assert (workspace / "b.py").read_text() == B_PY
        [left] = (await editor.request("plansight/workers", {}))["workers"]
        assert left["parentSessionId"] == second
        # A's item done, made pending again, and done again by a second worker.
        await editor.request("plansight/editPlan", {"items": PLAN, "sessionId": first})
        answer = await editor.request(
            "plansight/runParallel", {"todoIds": ["1"], "sessionId": first}
        )
        assert answer["started"] == ["1"], answer
        await wait_until(lambda: len(finished_of(editor, first)) == 2, "A's second worker")
        # Unnamed, B's: the current session's, though A has one again.
        taken = await editor.request("plansight/takeIn", {"todoId": "1"})
        assert taken["applied"] == ["b.py"], taken
        assert (workspace / "b.py").read_text() == "def other():\n    return 'B'\n"
        with pytest.raises(Exception, match=f"stored in this session \\(session {first} has"):
            await editor.request("plansight/dropChanges", {"todoId": "1", "sessionId": second})
        [left] = (await editor.request("plansight/workers", {}))["workers"]
        assert left["parentSessionId"] == first
        await editor.request("plansight/dropChanges", {"todoId": "1", "sessionId": first})
        assert (await editor.request("plansight/workers", {}))["workers"] == []
    finally:
        await editor.stop()


async def test_two_sessions_workers_on_items_of_one_id_run_at_once_and_cancel_apart(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, Hang(seconds=60))
    api.push_conversation(TWO, Hang(seconds=60))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        first, second = await two_sessions(editor)
        answer = await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        assert answer["started"] == ["1"], answer
        await wait_until(
            lambda: (
                any(ONE in str(b) for b in api.bodies) and any(TWO in str(b) for b in api.bodies)
            ),
            "both workers wait for the model",
        )
        running = (await editor.request("plansight/workers", {}))["workers"]
        assert sorted(w["parentSessionId"] for w in running) == sorted([first, second])
        assert {w["status"] for w in running} == {"running"}
        await editor.request("plansight/cancel", {"todoId": "1"})  # B's: the current session
        await wait_until(lambda: finished_of(editor, second), "B's worker ended")
        assert finished_of(editor, second)[0]["status"] == "cancelled"
        [still] = (await editor.request("plansight/workers", {}))["workers"]
        assert still["parentSessionId"] == first and still["status"] == "running"
        assert finished_of(editor, first) == []
        # Unnamed again: the current session has none now, A alone has one (as VS Code shows
        # another session's worker, by its item id alone).
        await editor.request("plansight/cancel", {"todoId": "1"})
        await wait_until(lambda: finished_of(editor, first), "A's worker ended")
        assert finished_of(editor, first)[0]["status"] == "cancelled"
    finally:
        await editor.stop()


def worker_refs(git_dir: Path) -> list[list[str]]:
    """The refs that keep change sets in the checkpoint repository: [name, sha]."""
    refs = subprocess.run(
        ["git", "--git-dir", str(git_dir), "for-each-ref", "--format=%(refname) %(objectname)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    return [line.split(" ") for line in refs if line.startswith("refs/plansight/workers/")]


def as_stored_before_sessions_keyed(storage: Path) -> None:
    """Move the one stored change set to the layout of before change sets were the
    session's too: its folder and refs named by its item alone, no key in its record."""
    [record_file] = storage.rglob("workers/*/record.json")
    record = json.loads(record_file.read_text())
    assert record.pop("key") == record_file.parent.name
    legacy = record_file.parent.parent / "1"
    record_file.parent.rename(legacy)
    (legacy / "record.json").write_text(json.dumps(record))
    git_dir = record_file.parent.parent.parent / "checkpoints" / "git"
    moves = worker_refs(git_dir)
    assert len(moves) == 2, moves
    commands = "".join(
        f"create refs/plansight/workers/1/{name.rsplit('/', 1)[1]} {sha}\ndelete {name}\n"
        for name, sha in moves
    )
    subprocess.run(
        ["git", "--git-dir", str(git_dir), "update-ref", "--stdin"],
        input=commands,
        check=True,
        text=True,
    )


async def test_a_change_set_stored_before_the_upgrade_is_still_listed_and_taken_in(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'old'"))
    editor = await start(workspace, api, storage)
    try:
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        await wait_finished(editor, "1")
    finally:
        await editor.stop()
    as_stored_before_sessions_keyed(storage)

    again = await start_editor(workspace, api, storage=storage)
    try:
        [listed] = (await again.request("plansight/workers", {}))["workers"]
        assert listed["todoId"] == "1" and listed["status"] == "completed"
        assert listed["files"] == [{"path": "a.py", "added": 1, "removed": 1}]
        # Its item is stored, so another worker on it is refused until it is taken in.
        answer = await again.request("plansight/runParallel", {"todoIds": ["1"]})
        assert answer["skipped"][0]["reason"].startswith("its last worker's changes are stored")
        assert (await again.request("plansight/takeIn", {"todoId": "1"}))["applied"] == ["a.py"]
        assert (workspace / "a.py").read_text() == "def main():\n    return 'old'\n"
        assert (await again.request("plansight/workers", {}))["workers"] == []
        assert not list(storage.rglob("workers/1"))
        [git_dir] = storage.rglob("checkpoints/git")
        assert worker_refs(git_dir) == []
    finally:
        await again.stop()


async def test_run_parallel_with_take_in_answers_once_each_change_set_was_reviewed(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """`takeIn: true` (the whole of a /parallel in one request, as ACP's): every worker
    waited for, then each change set put to the user in the order asked."""
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'hello'"))
    api.push_conversation(TWO, *edit_steps("2", "b.py", "return 2", "return 'bye'"))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        answer = await editor.request(
            "plansight/runParallel", {"todoIds": ["2", "1"], "takeIn": True}
        )
        assert answer["started"] == ["2", "1"] and answer["skipped"] == []
        assert [(w["todoId"], w["status"]) for w in answer["finished"]] == [
            ("2", "completed"),
            ("1", "completed"),
        ]
        assert answer["takenIn"] == [
            {"todoId": "2", "applied": ["b.py"], "rejected": [], "conflicts": [], "skipped": []},
            {"todoId": "1", "applied": ["a.py"], "rejected": [], "conflicts": [], "skipped": []},
        ]
        assert [r["worker"] for r in editor.recorder.reviews] == ["2", "1"]
        assert (workspace / "a.py").read_text() == "def main():\n    return 'hello'\n"
        assert (workspace / "b.py").read_text() == "def other():\n    return 'bye'\n"
        assert (await editor.request("plansight/workers", {}))["workers"] == []
    finally:
        await editor.stop()


async def test_cancelling_a_run_parallel_with_take_in_cancels_its_workers(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.push_conversation(ONE, Hang(seconds=60))
    editor = await start(workspace, api, tmp_path / "state")
    try:
        msg_id, answer = editor.start_request(
            "plansight/runParallel", {"todoIds": ["1"], "takeIn": True}
        )
        await wait_until(
            lambda: any(ONE in str(b) for b in api.bodies), "worker #1 waits for the model"
        )
        editor.cancel(msg_id)
        with pytest.raises(Exception):  # noqa: B017 - the request was cancelled: an error
            await answer
        # Answered only once its worker has stopped: a client shown the answer has none left.
        ended = [e for e in editor.recorder.events if e["type"] == "workerFinished"]
        assert [(e["todoId"], e["status"]) for e in ended] == [("1", "cancelled")]
        assert (await editor.request("plansight/workers", {}))["workers"] == []  # none left
        assert editor.recorder.reviews == []
    finally:
        await editor.stop()


async def test_a_change_set_taken_in_is_plansight_s_own_write_not_someone_else_s(
    workspace: Path, api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """Seen in VS Code: after Take In, "Changed outside Plansight: a.py". The watcher's report
    of the take-in's write is Plansight's own, never told to the editor (nor to the model) as
    someone else's."""
    api.push_conversation(ONE, *edit_steps("1", "a.py", "return 1", "return 'hello'"))
    editor = await start(workspace, api, tmp_path / "state")

    def reported() -> list[str]:
        events = editor.recorder.events
        return [p for e in events if e["type"] == "filesChanged" for p in e["paths"]]

    try:
        await editor.wait_watching()
        await editor.request("plansight/runParallel", {"todoIds": ["1"]})
        await wait_finished(editor, "1")
        taken = await editor.request("plansight/takeIn", {"todoId": "1"})
        assert taken["applied"] == ["a.py"], taken
        assert (workspace / "a.py").read_text() == "def main():\n    return 'hello'\n"
        (workspace / "marker.txt").write_text("outside\n")  # the user's change, after it
        await editor.recorder.wait_for(lambda: "marker.txt" in reported())
        assert reported() == ["marker.txt"]  # not a.py
    finally:
        await editor.stop()
