"""The read-only view of a workspace's session, as a user meets it: real `plansight run`,
`plansight plan | history | checkpoints | undo` and `plansight lsp` processes, the fake
Messages API.

While one server keeps a workspace's session (a run waiting in a command, an editor), the
commands that only look show what is stored, say that a run is going on elsewhere, and write
nothing in the state folder; a read-only server refuses whatever would change the session,
naming the server that keeps it; an undo from another terminal is still refused (it writes).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.protocol.names import to_plain
from test_session_claim import WAIT_FOR_GO, client_env, plansight_run

from conftest import PATIENCE, wait_until_sync
from lsp_harness import server_env, start_editor

PLAN_ITEM = "Write the release notes"


def plansight(api: FakeMessagesAPI, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", *args],
        env=client_env(api, state),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )


def command_running() -> bool:
    """Whether the run's command (WAIT_FOR_GO) is running, as /proc shows its processes."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"[ -e go ]" in cmdline.read_bytes():
                return True
        except OSError:
            continue  # ended meanwhile
    return False


def state_tree(state: Path) -> dict[str, tuple[int, int]]:
    """Every file under the state folder with its size and mtime (ns): what a write changes."""
    tree: dict[str, tuple[int, int]] = {}
    for path in sorted(state.rglob("*")):
        if path.is_file() or path.is_symlink():
            stat = path.lstat()
            tree[str(path.relative_to(state))] = (stat.st_size, stat.st_mtime_ns)
    return tree


def test_plan_history_and_checkpoints_show_what_is_stored_beside_a_run_and_write_nothing(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    item = {"id": "1", "text": PLAN_ITEM, "status": "in_progress"}
    fake_api.push(
        tool_reply("todo", {"items": [item]}),
        tool_reply("write_file", {"path": "NOTES.md", "content": "notes\n"}),
        tool_reply("todo", {"items": [{**item, "status": "completed"}]}),
        text_reply("First run done."),
    )
    first = plansight_run(fake_api, hello_workspace, state, "the first run's prompt")
    out, err = first.communicate(timeout=PATIENCE)
    assert first.returncode == 0, out + err

    fake_api.push(tool_reply("bash", {"command": WAIT_FOR_GO}), text_reply("Second run done."))
    second = plansight_run(fake_api, hello_workspace, state, "the second run's prompt")
    try:
        # Once its command runs, the run's server writes nothing until the command ends.
        wait_until_sync(command_running, "the second run waiting in its command")
        before = state_tree(state)
        workspace = ["--workspace", str(hello_workspace)]

        plan = plansight(fake_api, state, "plan", *workspace)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert PLAN_ITEM in plan.stdout and "1/1" in plan.stdout, plan.stdout
        assert "going on in another Plansight server" in plan.stdout, plan.stdout

        history = plansight(fake_api, state, "history", *workspace)
        assert history.returncode == 0, history.stdout + history.stderr
        assert "the first run's prompt" in history.stdout, history.stdout
        assert "the second run's prompt" in history.stdout, history.stdout  # in progress
        assert "going on in another Plansight server" in history.stdout, history.stdout

        listed = plansight(fake_api, state, "checkpoints", *workspace)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "NOTES.md" in listed.stdout and "Edited NOTES.md" in listed.stdout, listed.stdout
        assert "going on in another Plansight server" in listed.stdout, listed.stdout
        assert "checkpoints are off" not in listed.stdout + listed.stderr

        # An undo writes: it is still refused, saying why.
        undo = plansight(fake_api, state, "undo", "--step", "1", *workspace)
        assert undo.returncode == 1, undo.stdout + undo.stderr
        said = undo.stdout + undo.stderr
        assert "Another Plansight server is using this workspace's session" in said, said
        assert (hello_workspace / "NOTES.md").read_text() == "notes\n"

        assert state_tree(state) == before  # nothing in the state folder changed
        for shown in (plan, history, listed):
            assert "Traceback" not in shown.stdout + shown.stderr

        (hello_workspace / "go").touch()
        out, err = second.communicate(timeout=PATIENCE)
        assert second.returncode == 0, out + err
        assert "Second run done." in out
    finally:
        second.kill()
        second.wait()

    # With no run going on, the commands say nothing of another server.
    plan = plansight(fake_api, state, "plan", "--workspace", str(hello_workspace))
    assert plan.returncode == 0 and PLAN_ITEM in plan.stdout, plan.stdout + plan.stderr
    assert "another Plansight server" not in plan.stdout


async def ask(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return to_plain(
        await asyncio.wait_for(client.protocol.send_request_async(method, params), PATIENCE)
    )


async def _read_only_client(
    root: Path, api: FakeMessagesAPI, storage: Path
) -> tuple[LanguageClient, types.InitializeResult]:
    client = LanguageClient(converter_factory=default_converter)
    await client.start_io(
        sys.executable, "-m", "plansight", "lsp", env=server_env(api), cwd=str(root)
    )
    uri = root.as_uri()
    started = await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=uri,
                workspace_folders=[types.WorkspaceFolder(uri=uri, name=root.name)],
                initialization_options={"storageDir": str(storage), "readOnly": True},
                client_info=types.ClientInfo(name="a viewer"),
                process_id=os.getpid(),
            )
        ),
        PATIENCE,
    )
    return client, started


async def test_a_read_only_server_answers_from_the_store_and_refuses_changes(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "storage"
    first = await start_editor(hello_workspace, fake_api, storage=storage)
    viewer: LanguageClient | None = None
    try:
        item = {"id": "1", "text": PLAN_ITEM, "status": "completed"}
        await first.request("plansight/editPlan", {"items": [item]})
        await first.request("plansight/checkpoints", {})  # its start-up snapshot taken
        before = state_tree(storage)
        viewer, started = await _read_only_client(hello_workspace, fake_api, storage)
        experimental: Any = started.capabilities.experimental
        held_by = experimental["plansight"]["readOnly"]["heldBy"]
        assert held_by["pid"] and held_by["holder"], held_by

        shown = await ask(viewer, "plansight/state", {})
        assert [i["text"] for i in shown["todos"]["items"]] == [PLAN_ITEM]
        listed = await ask(viewer, "plansight/checkpoints", {})
        assert isinstance(listed["checkpoints"], list)
        await ask(viewer, "plansight/history", {})
        await ask(viewer, "plansight/changes", {})

        refusal = f"read-only: another Plansight server (pid {held_by['pid']}) is using"
        for method, params in (
            ("plansight/run", {"prompt": "change something"}),
            ("plansight/editPlan", {"items": []}),
            ("plansight/reset", {}),
            ("plansight/compact", {}),
            ("plansight/restore", {"todoId": "1"}),
        ):
            with pytest.raises(JsonRpcException) as refused:
                await ask(viewer, method, params)
            assert str(refused.value.message).startswith(refusal), (method, refused.value)
        assert not fake_api.message_requests  # nothing reached the model
        assert state_tree(storage) == before

        # The first server works on, its plan as it was.
        fake_api.push(text_reply("Still here."))
        result = await first.request("plansight/run", {"prompt": "are you there?"})
        assert result["status"] == "done", result
        after = await first.request("plansight/state", {})
        assert [i["text"] for i in after["todos"]["items"]] == [PLAN_ITEM]
    finally:
        if viewer is not None:
            await asyncio.wait_for(viewer.shutdown_session(), PATIENCE)
            await viewer.stop()
        await first.stop()

    # Alone, a read-only server still changes nothing, and says it was opened read-only.
    viewer, started = await _read_only_client(hello_workspace, fake_api, storage)
    try:
        experimental = started.capabilities.experimental
        assert experimental["plansight"]["readOnly"]["heldBy"] is None
        with pytest.raises(JsonRpcException) as refused:
            await ask(viewer, "plansight/run", {"prompt": "go"})
        assert "opened read-only" in str(refused.value.message)
    finally:
        await asyncio.wait_for(viewer.shutdown_session(), PATIENCE)
        await viewer.stop()
