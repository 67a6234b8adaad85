"""Checkpoints and undo through the real server over stdio, as an editor uses them.

A scripted run of two plan items: step 1 edits a file and runs a command that creates one
file, modifies one and deletes one; step 2 writes another file. Then the editor lists the
checkpoints, undoes step 1 (or restores a checkpoint), and the files on disk, the plan, and
what the model hears at its next turn are checked.

Nearly every test changes files and reads the checkpoint list, which `plansight/reset` keeps,
so it starts its own server; only the two refusal tests, which change no file, share one
(`SharedEditor`, their tests marked `on_the_shared_server`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from plansight.fakeapi import FakeMessagesAPI, Hang, ScriptStep
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from lsp_harness import EditorHandle, SharedEditor, start_editor

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

ORIGINAL = {
    "app.py": "def main():\n    print('hello')\n",
    "src/util.py": "VALUE = 1\n",
    "README.md": "# demo\n",
    "notes.txt": "notes\n",
}
COMMAND = "echo made > made.txt && echo 'VALUE = 2' >> src/util.py && rm README.md"


def plan(*statuses: str) -> dict[str, Any]:
    texts = ("Change the greeting", "Write the notes")
    return {
        "items": [
            {"id": str(n), "text": texts[n - 1], "status": status}
            for n, status in enumerate(statuses, 1)
        ]
    }


def two_steps() -> list[ScriptStep]:
    """The model's side of a run: step 1 edits and runs a command, step 2 writes a file."""
    return [
        tool("todo", plan("in_progress", "pending")),
        tool("read_file", {"path": "app.py"}),
        tool("edit_file", {"path": "app.py", "old_text": "'hello'", "new_text": "'bonjour'"}),
        tool("bash", {"command": COMMAND}),
        tool("todo", plan("completed", "in_progress")),
        tool("write_file", {"path": "step2.txt", "content": "from step 2\n"}),
        tool("todo", plan("completed", "completed")),
        text("Both steps are done."),
    ]


def files(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            relative = path.relative_to(root).as_posix()
            if not relative.startswith(".plansight/plans/"):  # Plansight's state, the plan's
                found[relative] = path.read_text()
    return found


def make_workspace(root: Path) -> Path:
    for rel, content in ORIGINAL.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    return root


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text blocks of the last user message of a request."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b["type"] == "text"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return make_workspace(root)


@pytest.fixture
async def editor(
    workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> AsyncIterator[EditorHandle]:
    handle = await start_editor(workspace, fake_api, storage=tmp_path / "state")
    yield handle
    await handle.stop()


# The shared server's tests run on the module's event loop, as its client does.
on_the_shared_server = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedEditor]:
    folder = tmp_path_factory.mktemp("shared")
    root = folder / "ws"
    root.mkdir()
    server = await SharedEditor.start(make_workspace(root), storage=folder / "state")
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def untouched(shared: SharedEditor) -> AsyncIterator[SharedEditor]:
    """The shared server, reset; the test must leave the workspace as it found it."""
    await shared.begin()
    yield shared
    await shared.end()


async def run_two_steps(editor: EditorHandle, fake_api: FakeMessagesAPI) -> dict[str, Any]:
    fake_api.push(*two_steps())
    result = await editor.request("plansight/run", {"prompt": "Do both steps"})
    assert result["status"] == "done", result
    return result


async def expect_error(editor: EditorHandle, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as raised:
        await editor.request(method, params)
    return raised.value


def code_of(error: JsonRpcException) -> int:
    return int(error.code)


# ----- what is taken, and announced --------------------------------------------------------


async def test_a_run_takes_a_checkpoint_at_each_step_edit_and_command(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    await run_two_steps(editor, fake_api)

    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]

    shown = [(c["kind"], c.get("todoId"), c["paths"]) for c in listed]
    assert shown == [
        ("outside", None, []),  # the workspace as the server found it
        ("runStart", None, []),
        ("itemStart", "1", []),
        ("edit", "1", ["app.py"]),
        ("command", "1", ["README.md", "made.txt", "src/util.py"]),
        ("itemStart", "2", []),
        ("edit", "2", ["step2.txt"]),
    ]
    assert [int(c["id"]) for c in listed] == sorted(int(c["id"]) for c in listed)
    assert all(c["label"] and c["createdAt"].endswith("Z") for c in listed)
    announced = [e["checkpoint"] for e in editor.recorder.events if e["type"] == "checkpoint"]
    assert announced == listed
    # The run's checkpoints are announced before its runFinished, the run's last event.
    types = editor.recorder.event_types()
    assert "checkpoint" not in types[types.index("runFinished") + 1 :]


# ----- undo by step ------------------------------------------------------------------------


async def test_undoing_a_step_puts_back_what_its_edits_and_commands_changed(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    heard = len(editor.recorder.events)

    result = await editor.request("plansight/restore", {"todoId": "1"})

    assert result == {
        "restored": ["README.md", "app.py", "src/util.py"],
        "deleted": ["made.txt"],  # version 3: deleted files are not "restored"
        "skipped": [],
    }
    assert files(workspace) == {**ORIGINAL, "step2.txt": "from step 2\n"}  # step 2 kept
    plan_now = editor.recorder.todos[-1]
    assert [(i["id"], i["status"]) for i in plan_now["items"]] == [
        ("1", "pending"),
        ("2", "completed"),
    ]
    assert plan_now["source"] == "restore"
    # The model hears of it at its next turn, and must read the files again to edit them.
    fake_api.push(
        tool("edit_file", {"path": "app.py", "old_text": "'hello'", "new_text": "'hi'"}),
        text("Stopping here."),
        text("Item 1 stays open: it was undone."),  # after the done gate's question
    )
    first = len(fake_api.bodies)
    await editor.request("plansight/run", {"prompt": "Go on"})
    told = " ".join(user_texts(fake_api.bodies[first]))
    assert "undid plan item #1" in told
    assert "app.py" in told and "made.txt" in told and "src/util.py" in told
    refused = fake_api.bodies[first + 1]["messages"][-1]["content"][0]
    assert refused.get("is_error") is True
    assert files(workspace)["app.py"] == ORIGINAL["app.py"]
    since = editor.recorder.events[heard:]
    assert not [e for e in since if e["type"] == "filesChanged"]  # the restore's own writes


async def test_the_folders_a_restore_brings_back_are_not_someone_elses_change(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    fake_api.push(tool("write_file", {"path": "newdir/sub/x.py", "content": "X = 1\n"}))
    fake_api.push(text("Written."))
    await editor.wait_watching()
    assert (await editor.request("plansight/run", {"prompt": "write it"}))["status"] == "done"
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    edit = next(c for c in reversed(listed) if c["kind"] == "edit")

    def reported() -> list[str]:
        events = editor.recorder.events
        return [p for e in events if e["type"] == "filesChanged" for p in e["paths"]]

    shutil.rmtree(workspace / "newdir")  # the user's change: reported as such
    await editor.recorder.wait_for(lambda: "newdir/sub/x.py" in reported())
    heard = len(reported())
    result = await editor.request("plansight/restore", {"checkpoint": edit["id"], "force": True})
    assert result["restored"] == ["newdir/sub/x.py"], result
    assert (workspace / "newdir/sub/x.py").read_text() == "X = 1\n"
    (workspace / "marker.txt").write_text("outside\n")
    await editor.recorder.wait_for(lambda: "marker.txt" in reported())
    assert reported()[heard:] == ["marker.txt"]  # not newdir, nor newdir/sub


async def test_a_restore_can_be_undone_with_the_checkpoint_it_took_first(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    after_run = files(workspace)
    before = len((await editor.request("plansight/checkpoints", {}))["checkpoints"])

    await editor.request("plansight/restore", {"todoId": "1"})
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    assert [c["kind"] for c in listed[before:]] == ["beforeRestore", "restore"]

    again = await editor.request("plansight/restore", {"checkpoint": listed[before]["id"]})

    assert again["skipped"] == []
    assert files(workspace) == after_run


async def test_restoring_a_checkpoint_limited_to_paths(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    run_start = next(c for c in listed if c["kind"] == "runStart")

    result = await editor.request(
        "plansight/restore", {"checkpoint": run_start["id"], "paths": ["src", "step2.txt"]}
    )

    assert result["restored"] == ["src/util.py"]
    assert result["deleted"] == ["step2.txt"]
    now = files(workspace)
    assert now["src/util.py"] == ORIGINAL["src/util.py"] and "step2.txt" not in now
    assert now["app.py"] != ORIGINAL["app.py"] and "made.txt" in now  # not asked for


# ----- what a client shows before undoing ---------------------------------------------------


async def test_each_steps_files_come_with_the_checkpoint_from_before_it(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    await run_two_steps(editor, fake_api)
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    started = {c["todoId"]: c["id"] for c in listed if c["kind"] == "itemStart"}
    edit = next(c["id"] for c in listed if c["kind"] == "edit" and c["todoId"] == "1")

    changes = await editor.request("plansight/changes", {})

    assert changes == {
        "steps": [
            {
                "todoId": "1",
                "files": [
                    {"path": "app.py", "change": "modified", "before": started["1"]},
                    {"path": "README.md", "change": "deleted", "before": edit},
                    {"path": "made.txt", "change": "added", "before": edit},
                    {"path": "src/util.py", "change": "modified", "before": edit},
                ],
            },
            {
                "todoId": "2",
                "files": [{"path": "step2.txt", "change": "added", "before": started["2"]}],
            },
        ]
    }
    before_app = await editor.request(
        "plansight/checkpointFile", {"checkpoint": started["1"], "path": "app.py"}
    )
    assert before_app == {"exists": True, "text": ORIGINAL["app.py"]}
    before_made = await editor.request(
        "plansight/checkpointFile", {"checkpoint": edit, "path": "made.txt"}
    )
    assert before_made == {"exists": False}
    error = await expect_error(
        editor, "plansight/checkpointFile", {"checkpoint": "999", "path": "app.py"}
    )
    assert code_of(error) == -32602
    # Undone, a step's files are as they were before it: it lists none.
    await editor.request("plansight/restore", {"todoId": "1"})
    after = await editor.request("plansight/changes", {})
    assert [s["todoId"] for s in after["steps"]] == ["1", "2"]
    assert after["steps"][0]["files"] == [] and after["steps"][1] == changes["steps"][1]


async def test_a_new_plan_that_reuses_an_id_lists_only_its_own_changes_and_edits(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    """The demo's plan, then (same conversation) a new plan whose #1 is other work: #1 of the
    new plan lists its own edit only, in the changes, the reviews and their events, and undoing
    it leaves the earlier plan's work alone."""
    await run_two_steps(editor, fake_api)
    first_plan = editor.recorder.todos[-1]["planId"]
    license_plan = {"items": [{"id": "1", "text": "Add a license", "status": "in_progress"}]}
    fake_api.push(
        tool("todo", license_plan),
        tool("write_file", {"path": "LICENSE", "content": "MIT\n"}),
        tool("todo", {"items": [{**license_plan["items"][0], "status": "completed"}]}),
        text("Licensed."),
    )
    result = await editor.request("plansight/run", {"prompt": "Now add a license"})
    assert result["status"] == "done", result
    second_plan = editor.recorder.todos[-1]["planId"]
    assert first_plan and second_plan and first_plan != second_plan

    changes = await editor.request("plansight/changes", {})

    assert [(s["todoId"], [f["path"] for f in s["files"]]) for s in changes["steps"]] == [
        ("1", ["LICENSE"])
    ]
    reviewed = [
        (e["path"], e["todoId"], e["planId"])
        for e in editor.recorder.events
        if e["type"] == "editReviewed"
    ]
    assert reviewed == [
        ("app.py", "1", first_plan),
        ("step2.txt", "2", first_plan),
        ("LICENSE", "1", second_plan),
    ]
    assert [r.get("planId") for r in editor.recorder.reviews] == [
        first_plan,
        first_plan,
        second_plan,
    ]
    undone = await editor.request("plansight/restore", {"todoId": "1"})
    assert undone["deleted"] == ["LICENSE"] and undone["restored"] == []
    assert files(editor.root)["app.py"] == "def main():\n    print('bonjour')\n"


async def test_a_dry_run_says_what_would_change_and_changes_nothing(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    (workspace / "src" / "util.py").write_text("VALUE = 'mine'\n")
    after_run = files(workspace)
    plan_before = editor.recorder.todos[-1]

    preview = await editor.request("plansight/restore", {"todoId": "1", "dryRun": True})

    assert preview["restored"] == ["README.md", "app.py"]
    assert preview["deleted"] == ["made.txt"]
    assert [s["path"] for s in preview["skipped"]] == ["src/util.py"]
    assert files(workspace) == after_run
    assert editor.recorder.todos[-1] == plan_before
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    assert "beforeRestore" not in [c["kind"] for c in listed]
    assert listed[-1]["kind"] == "outside" and listed[-1]["paths"] == ["src/util.py"]
    # The restore itself then does what the preview said.
    done = await editor.request("plansight/restore", {"todoId": "1"})
    assert done == preview


# ----- what is skipped -------------------------------------------------------------------


async def test_unsaved_and_outside_changes_are_skipped_and_force_overrides_only_outside(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    # The user types in app.py without saving, and another program rewrites src/util.py.
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=editor.uri("app.py"),
                language_id="python",
                version=1,
                text=(workspace / "app.py").read_text() + "# typed, not saved\n",
            )
        )
    )
    (workspace / "src" / "util.py").write_text("VALUE = 'the user's own'\n")

    result = await editor.request("plansight/restore", {"todoId": "1"})

    assert result["restored"] == ["README.md"]
    assert result["deleted"] == ["made.txt"]
    reasons = {s["path"]: s["reason"] for s in result["skipped"]}
    assert reasons["app.py"] == "it has unsaved changes in the editor"
    assert reasons["src/util.py"].startswith("it was changed outside Plansight")
    assert "force" in reasons["src/util.py"]
    assert (workspace / "src" / "util.py").read_text() == "VALUE = 'the user's own'\n"
    assert "bonjour" in (workspace / "app.py").read_text()

    forced = await editor.request("plansight/restore", {"todoId": "1", "force": True})

    assert forced["restored"] == ["src/util.py"]
    assert [s["path"] for s in forced["skipped"]] == ["app.py"]  # unsaved: even when forced
    assert (workspace / "src" / "util.py").read_text() == ORIGINAL["src/util.py"]


# ----- the conversation --------------------------------------------------------------------


async def test_undoing_a_step_with_the_conversation_takes_the_model_back_to_it(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)

    await editor.request("plansight/restore", {"todoId": "2", "conversation": True})

    fake_api.push(text("Starting step 2 again."), text("Step 2 stays open for now."))
    first = len(fake_api.bodies)
    await editor.request("plansight/run", {"prompt": "Redo step 2 differently"})
    sent = fake_api.bodies[first]["messages"]
    # Back to the round before the model started step 2: it had just run the command.
    last_tool_uses = [
        b["name"]
        for m in sent
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    assert last_tool_uses == ["todo", "read_file", "edit_file", "bash"]
    told = " ".join(user_texts(fake_api.bodies[first]))
    assert "Redo step 2 differently" in told and "undid plan item #2" in told
    assert "conversation was taken back" in told
    assert "<plan-update>" in told  # and it sees the plan as it is now
    assert "step2.txt" not in files(workspace)
    plan_now = editor.recorder.todos[-1]
    assert [(i["id"], i["status"]) for i in plan_now["items"]] == [
        ("1", "completed"),
        ("2", "pending"),
    ]


# ----- refusals ----------------------------------------------------------------------------


@on_the_shared_server
async def test_a_restore_during_a_run_is_refused(untouched: SharedEditor) -> None:
    editor, fake_api = untouched.handle, untouched.api
    fake_api.push(Hang(30.0, then=text("late")))
    msg_id, run = editor.start_request("plansight/run", {"prompt": "Think for a long time"})
    await editor.recorder.wait_for(lambda: len(fake_api.message_requests) >= 1)

    error = await expect_error(editor, "plansight/restore", {"checkpoint": "1"})

    assert code_of(error) == -32803 and "in progress" in str(error)
    listed = await editor.request("plansight/checkpoints", {})
    assert listed["checkpoints"]  # listing is fine during a run
    editor.cancel(msg_id)
    with contextlib.suppress(JsonRpcException):
        await run


@on_the_shared_server
async def test_bad_restore_requests_are_invalid_params(untouched: SharedEditor) -> None:
    editor, fake_api = untouched.handle, untouched.api
    # A run that only plans (items #1 and #2, and checkpoints), so no file changes.
    fake_api.push(
        tool("todo", plan("pending", "pending")),
        text("Planned."),
        text("Both stay open: I only planned."),  # after the done gate's question
    )
    result = await editor.request("plansight/run", {"prompt": "Plan both steps"})
    assert result["status"] == "done", result
    for params, says in (
        ({}, "either 'checkpoint'"),
        ({"checkpoint": "1", "todoId": "1"}, "either 'checkpoint'"),
        ({"checkpoint": "999"}, "no checkpoint '999'"),
        ({"todoId": "7"}, "no item #7"),
        ({"checkpoint": "1", "paths": "app.py"}, "'paths' must be a list"),
        ({"checkpoint": "1", "force": "yes"}, "'force' must be true or false"),
    ):
        error = await expect_error(editor, "plansight/restore", params)
        assert code_of(error) == -32602, params
        assert says in str(error), (params, str(error))


async def test_with_the_option_off_there_are_no_checkpoints_and_requests_say_so(
    workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    handle = await start_editor(
        workspace, fake_api, storage=tmp_path / "state", init_options={"checkpoints": False}
    )
    try:
        await run_two_steps(handle, fake_api)
        for method, params in (
            ("plansight/checkpoints", {}),
            ("plansight/restore", {"todoId": "1"}),
        ):
            error = await expect_error(handle, method, params)
            assert code_of(error) == -32803 and "checkpoints option is false" in str(error)
        assert not [e for e in handle.recorder.events if e["type"] == "checkpoint"]
        assert not (tmp_path / "state" / "checkpoints").exists()
    finally:
        await handle.stop()


async def test_without_git_checkpoints_are_off_and_the_run_still_works(
    workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for program in ("bash", "sh", "rm", "echo"):  # what the scripted command needs, no git
        found = shutil.which(program)
        if found:
            (bare / program).symlink_to(found)
    handle = await start_editor(
        workspace, fake_api, storage=tmp_path / "state", env={"PATH": str(bare)}
    )
    try:
        await run_two_steps(handle, fake_api)
        error = await expect_error(handle, "plansight/checkpoints", {})
        assert code_of(error) == -32803 and "git program was not found" in str(error)
        assert files(workspace)["made.txt"] == "made\n"
    finally:
        await handle.stop()


# ----- sessions and restarts ---------------------------------------------------------------


async def test_a_new_session_keeps_the_checkpoints(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    await run_two_steps(editor, fake_api)
    before = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    fake_api.push(text("Fresh start."))
    await editor.request("plansight/run", {"prompt": "Something else", "newSession": True})
    await editor.request("plansight/reset", {})

    after = (await editor.request("plansight/checkpoints", {}))["checkpoints"]

    assert after[: len(before)] == before
    # The old plan's items are gone with it; its checkpoints still restore by id.
    error = await expect_error(editor, "plansight/restore", {"todoId": "1"})
    assert code_of(error) == -32602
    first_run = next(c for c in before if c["kind"] == "runStart")
    result = await editor.request("plansight/restore", {"checkpoint": first_run["id"]})
    assert files(workspace) == ORIGINAL and result["skipped"] == []


async def test_checkpoints_survive_a_kill_of_the_server_mid_run(
    workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    pid_file = tmp_path / "command.pid"
    # Unsandboxed: the command writes its host pid outside the workspace, and outlives the
    # killed server (a sandboxed one would die with it).
    handle = await start_editor(
        workspace, fake_api, storage=storage, init_options={"sandbox": {"enabled": False}}
    )
    fake_api.push(
        tool("todo", plan("in_progress", "pending")),
        tool("write_file", {"path": "new.py", "content": "NEW = 1\n"}),
        tool(
            "bash", {"command": f"echo partial > partial.txt && echo $$ > {pid_file} && sleep 60"}
        ),
    )
    handle.start_request("plansight/run", {"prompt": "Do step 1"})
    try:
        await handle.recorder.wait_for(pid_file.exists, what="the command to start")
        server = handle.client._server
        assert server is not None
        os.kill(server.pid, signal.SIGKILL)  # mid-command: its checkpoint is never taken
        await server.wait()
        await handle.client.stop()
    finally:
        await wait_for_text(pid_file)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)  # the command lives on

    again = await start_editor(workspace, fake_api, storage=storage)
    try:
        listed = (await again.request("plansight/checkpoints", {}))["checkpoints"]
        assert [c["kind"] for c in listed[:4]] == ["outside", "runStart", "itemStart", "edit"]
        # What the killed command wrote is found at start-up, a change of unknown origin.
        assert listed[-1]["kind"] == "outside" and "partial.txt" in listed[-1]["paths"]
        result = await again.request(
            "plansight/restore", {"checkpoint": listed[1]["id"], "force": True}
        )
        assert result["restored"] == []
        assert result["deleted"] == ["new.py", "partial.txt"]
        assert files(workspace) == ORIGINAL
    finally:
        await again.stop()


async def wait_for_text(path: Path) -> None:
    """Until the file holds a line (a pid written by a shell)."""
    from conftest import wait_until

    await wait_until(lambda: path.exists() and path.read_text().endswith("\n"), "a pid")


# ----- the user's own repository -----------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_AUTHOR_NAME": "User",
        "GIT_AUTHOR_EMAIL": "user@example.com",
        "GIT_COMMITTER_NAME": "User",
        "GIT_COMMITTER_EMAIL": "user@example.com",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout


def digest(folder: Path) -> dict[str, tuple[int, int, str]]:
    found: dict[str, tuple[int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() else b""
            found[str(path.relative_to(folder))] = (
                st.st_mode,
                st.st_mtime_ns,
                hashlib.sha256(data).hexdigest(),
            )
    return found


async def test_the_users_git_repository_is_left_exactly_as_it_was(
    workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "first")
    (workspace / "notes.txt").write_text("stashed work\n")
    git(workspace, "stash", "-q")
    (workspace / "README.md").write_text("# demo, staged\n")
    git(workspace, "add", "README.md")
    (workspace / "notes.txt").write_text("notes, not staged\n")
    marker = tmp_path / "hook-ran"
    for hook in (
        "pre-commit",
        "post-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
    ):
        script = workspace / ".git" / "hooks" / hook
        script.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        script.chmod(0o755)
    status = git(workspace, "status", "--porcelain=v2", "--branch")
    stash = git(workspace, "stash", "list")
    repo = digest(workspace / ".git")

    handle = await start_editor(workspace, fake_api, storage=tmp_path / "state")
    try:
        await run_two_steps(handle, fake_api)
        await handle.request("plansight/restore", {"todoId": "1", "force": True})
        listed = (await handle.request("plansight/checkpoints", {}))["checkpoints"]
        await handle.request("plansight/restore", {"checkpoint": listed[1]["id"], "force": True})
    finally:
        await handle.stop()

    assert digest(workspace / ".git") == repo
    # The session's plan file is new in the workspace (untracked, `.plansight/plans/`): the
    # plan, not the checkpoints' doing.
    now = git(workspace, "status", "--porcelain=v2", "--branch")
    assert now.replace("? .plansight/\n", "") == status
    assert git(workspace, "stash", "list") == stash
    assert not marker.exists()
    # Plansight's repository is its own, in the storage folder.
    assert (tmp_path / "state" / "checkpoints" / "git" / "HEAD").is_file()


# ----- undo by step keeps the later steps' work (version 3) -------------------------------------


def plan3(*statuses: str) -> dict[str, Any]:
    texts = ("Write hello.py", "Write the notes", "Document hello.py")
    return {
        "items": [
            {"id": str(n), "text": texts[n - 1], "status": status}
            for n, status in enumerate(statuses, 1)
        ]
    }


async def test_undoing_a_step_whose_file_a_later_step_changed_names_it_and_force_deletes_it(
    editor: EditorHandle, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    """The scenario a user hit: #1 writes hello.py, #3 adds a docstring to it; undo #1."""
    documented = '"""Says hello."""\nprint(\'hello\')\n'
    fake_api.push(
        tool("todo", plan3("in_progress", "pending", "pending")),
        tool("write_file", {"path": "hello.py", "content": "print('hello')\n"}),
        tool("todo", plan3("completed", "in_progress", "pending")),
        tool("write_file", {"path": "step2.txt", "content": "from step 2\n"}),
        tool("todo", plan3("completed", "completed", "in_progress")),
        tool("read_file", {"path": "hello.py"}),
        tool(
            "edit_file",
            {"path": "hello.py", "old_text": "print", "new_text": '"""Says hello."""\nprint'},
        ),
        tool("todo", plan3("completed", "completed", "completed")),
        text("All three are done."),
    )
    result = await editor.request("plansight/run", {"prompt": "Do the three steps"})
    assert result["status"] == "done", result
    assert (workspace / "hello.py").read_text() == documented

    kept = await editor.request("plansight/restore", {"todoId": "1"})

    assert kept["restored"] == [] and kept["deleted"] == [] and "alsoUndone" not in kept
    assert [s["path"] for s in kept["skipped"]] == ["hello.py"]
    assert kept["skipped"][0]["reason"].startswith("overlaps the changes of #3")
    assert (workspace / "hello.py").read_text() == documented
    assert editor.recorder.todos[-1]["items"][0]["status"] == "pending"

    on_disk = files(workspace)
    preview = await editor.request(
        "plansight/restore", {"todoId": "1", "force": True, "dryRun": True}
    )
    assert files(workspace) == on_disk
    forced = await editor.request("plansight/restore", {"todoId": "1", "force": True})

    assert (
        forced
        == preview
        == {
            "restored": [],
            "deleted": ["hello.py"],
            "skipped": [],
            "alsoUndone": [{"path": "hello.py", "todoIds": ["3"]}],
        }
    )
    assert not (workspace / "hello.py").exists()
    assert (workspace / "step2.txt").read_text() == "from step 2\n"  # #2's own file stays
    # #3's change to hello.py went with it: #3 no longer lists the file (nothing to undo).
    after = await editor.request("plansight/changes", {})
    assert [(s["todoId"], [f["path"] for f in s["files"]]) for s in after["steps"]] == [
        ("1", []),
        ("2", ["step2.txt"]),
        ("3", []),
    ]
    # The model hears what happened, in the same words: deleted, and #3's work lost with it.
    fake_api.push(text("Understood."))
    first = len(fake_api.bodies)
    await editor.request("plansight/run", {"prompt": "Go on"})
    told = " ".join(user_texts(fake_api.bodies[first]))
    assert "undid plan item #1" in told
    assert "Deleted: hello.py" in told and "Written back" not in told
    assert "hello.py (the changes of #3)" in told


async def test_an_undo_is_in_the_history_after_its_run(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    await run_two_steps(editor, fake_api)

    done = await editor.request("plansight/restore", {"todoId": "1"})
    await editor.request("plansight/restore", {"todoId": "2", "dryRun": True})  # not kept

    runs = (await editor.request("plansight/history", {}))["runs"]
    after = runs[-1]["after"]
    assert after == [{"type": "restored", "todoId": "1", **done}]
