"""The server and the editor's documents and files: sync, unsaved text, outside changes, storage.

Most tests here change files, rely on a fresh server's read/stale tracking or watcher, or
restart or kill the server: each starts its own. The escape attempts and the unsaved text
change nothing and need none of that: they share one server (`SharedEditor`: reset before each
test, the workspace checked byte for byte unchanged after), whose workspace has the escape
routes (a symlink to the folder above, one to a file outside) from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import FIXTURES, Held
from lsp_harness import EditorHandle, SharedEditor, start_editor

# The tests on the shared server run in the module's event loop, as it does.
on_shared = pytest.mark.asyncio(loop_scope="module")


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


@pytest.fixture
async def editor(hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path) -> Any:
    handle = await start_editor(hello_workspace, fake_api, storage=tmp_path / "state")
    yield handle
    await handle.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """hello/ with a link to the folder above it (which holds outside.txt) and one to that file."""
    folder = tmp_path_factory.mktemp("shared")
    root = folder / "hello"
    shutil.copytree(FIXTURES / "hello", root)
    outside = folder / "outside.txt"
    outside.write_text("secret\n")
    (root / "link").symlink_to(folder, target_is_directory=True)
    (root / "filelink").symlink_to(outside)
    # The storage is not under the folder the link leads to: the watcher follows that link, and
    # would report the server's own storage writes as outside changes (link/state/...).
    server = await SharedEditor.start(root, storage=tmp_path_factory.mktemp("shared-state"))
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def shared_editor(shared: SharedEditor) -> Any:
    yield await shared.begin()
    await shared.end()


@pytest.fixture
def shared_api(shared: SharedEditor) -> FakeMessagesAPI:
    return shared.api  # blank: shared_editor's begin() reset it


def open_document(editor: EditorHandle, relative: str, text_: str) -> None:
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=editor.uri(relative), language_id="python", version=1, text=text_
            )
        )
    )


@on_shared
async def test_the_agent_reads_unsaved_text_and_never_overwrites_it(
    shared_editor: EditorHandle, shared_api: FakeMessagesAPI
) -> None:
    editor, fake_api = shared_editor, shared_api
    on_disk = (editor.root / "hello.py").read_text()
    unsaved = on_disk + "# typed by the user, not saved\n"
    open_document(editor, "hello.py", unsaved)
    try:
        fake_api.push(
            tool("read_file", {"path": "hello.py"}),
            tool(
                "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
            ),
            text("ok"),
        )
        await editor.request("plansight/run", {"prompt": "edit"})
    finally:
        # The shared server's next test sees no open document.
        editor.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=editor.uri("hello.py"))
            )
        )
    read = tool_results(fake_api.bodies[1])[0]
    assert "typed by the user, not saved" in read["content"]
    refused = tool_results(fake_api.bodies[2])[0]
    assert refused.get("is_error") is True and "unsaved" in refused["content"]
    assert (editor.root / "hello.py").read_text() == on_disk
    assert editor.recorder.reviews == []  # refused before the user was asked


async def test_an_open_document_matching_disk_is_edited_and_edited_again(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    open_document(editor, "hello.py", (hello_workspace / "hello.py").read_text())
    fake_api.push(
        tool("read_file", {"path": "hello.py"}),
        tool("edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}),
        # The editor has not reloaded yet: its text is the pre-edit text. Still not "unsaved".
        tool("edit_file", {"path": "hello.py", "old_text": "import os", "new_text": "import re"}),
        text("ok"),
    )
    await editor.request("plansight/run", {"prompt": "edit twice"})
    assert (hello_workspace / "hello.py").read_text().startswith("import re\n")


async def test_outside_changes_are_reported_and_make_edits_stale(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    target = hello_workspace / "hello.py"

    def change_then_edit(body: dict[str, Any]) -> Any:
        return tool(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        )

    # The model "thinks" until the editor has heard of the outside change.
    thinking = Held(tool("read_scratchpad", {}))
    fake_api.push(tool("read_file", {"path": "hello.py"}), thinking)
    fake_api.push(change_then_edit, text("ok"))
    await editor.wait_watching()
    run = asyncio.ensure_future(editor.request("plansight/run", {"prompt": "edit"}))
    try:
        await editor.recorder.wait_for(thinking.asked.is_set)
        target.write_text(target.read_text() + "# changed by another program\n")
        await editor.recorder.wait_for(
            lambda: any(e["type"] == "filesChanged" for e in editor.recorder.events)
        )
    finally:
        thinking.release()
    await run
    changed = next(e for e in editor.recorder.events if e["type"] == "filesChanged")
    assert changed["paths"] == ["hello.py"]
    # The model heard of it at its next turn...
    notice = [
        b["text"] for b in fake_api.bodies[2]["messages"][-1]["content"] if b["type"] == "text"
    ]
    assert any("hello.py" in t and "Changed outside" in t for t in notice)
    # ...and its edit based on the old read was refused, the outside change kept.
    refused = tool_results(fake_api.bodies[3])[0]
    assert refused.get("is_error") is True and "modified" in refused["content"]
    assert target.read_text().endswith("# changed by another program\n")


async def test_the_agents_own_writes_are_not_reported_as_outside_changes(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    fake_api.push(tool("write_file", {"path": "NEW.md", "content": "new\n"}), text("ok"))
    await editor.wait_watching()
    await editor.request("plansight/run", {"prompt": "write"})
    assert (hello_workspace / "NEW.md").read_text() == "new\n"

    def reported() -> list[str]:
        events = editor.recorder.events
        return [p for e in events if e["type"] == "filesChanged" for p in e["paths"]]

    # Another program writes after the agent: once that is reported, the agent's write would
    # have been too.
    (hello_workspace / "marker.txt").write_text("outside\n")
    await editor.recorder.wait_for(lambda: "marker.txt" in reported())
    assert reported() == ["marker.txt"]


# What the agent's command below changes: a file modified, one made, one deleted, a folder made.
COMMAND = (
    "echo '# by the command' >> hello.py && echo made > made.txt && rm test_hello.py"
    " && mkdir -p out/logs && echo log > out/logs/run.log"
)


def files_reported(editor: EditorHandle) -> list[str]:
    events = editor.recorder.events
    return [p for e in events if e["type"] == "filesChanged" for p in e["paths"]]


def user_texts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for b in body["messages"][-1]["content"] if b["type"] == "text"]


@pytest.mark.parametrize(
    "init_options", [{}, {"checkpoints": False}], ids=["checkpoints", "no-checkpoints"]
)
async def test_the_agents_own_commands_are_not_reported_as_outside_changes(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path, init_options: dict[str, Any]
) -> None:
    handle = await start_editor(
        hello_workspace, fake_api, storage=tmp_path / "state", init_options=init_options
    )
    try:
        edit = {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        fake_api.push(
            tool("read_file", {"path": "hello.py"}),
            tool("bash", {"command": COMMAND}),
            tool("edit_file", edit),  # the command changed it since the read: refused
            tool("read_file", {"path": "hello.py"}),
            tool("edit_file", edit),
            text("ok"),
        )
        await handle.wait_watching()
        first = len(fake_api.bodies)
        result = await handle.request("plansight/run", {"prompt": "run it"})
        assert result["status"] == "done", result
        assert (hello_workspace / "out/logs/run.log").exists()
        bodies = fake_api.bodies[first:]
        refused = tool_results(bodies[3])[0]
        assert refused.get("is_error") is True and "modified" in refused["content"]
        assert not tool_results(bodies[5])[0].get("is_error")
        assert (hello_workspace / "hello.py").read_text().startswith("import os\n")
        assert (hello_workspace / "hello.py").read_text().endswith("# by the command\n")

        # Someone else changes a file the command made: that is reported. The watcher reports
        # in order, so once it is, any report of the command's own changes was judged too.
        (hello_workspace / "made.txt").write_text("changed by someone else\n")
        await handle.recorder.wait_for(lambda: "made.txt" in files_reported(handle))
        assert files_reported(handle) == ["made.txt"]
        # The model hears of that change alone, at its next turn.
        fake_api.push(text("noted"))
        await handle.request("plansight/run", {"prompt": "anything new?"})
        told = [t for t in user_texts(fake_api.bodies[-1]) if "Changed outside" in t]
        assert told == [
            "<files-changed>Changed outside the agent since your last turn: made.txt. "
            "Read them again before editing them.</files-changed>"
        ]
    finally:
        await handle.stop()


async def test_the_folders_the_agent_makes_are_its_own(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    """A write into folders that did not exist makes them, and so does a command: neither the
    editor nor the model is told they were changed by someone else (issue 21)."""
    fake_api.push(
        tool("write_file", {"path": "newdir/sub/x.py", "content": "X = 1\n"}),
        tool("bash", {"command": "mkdir -p made/deep && echo 'Y = 2' > made/deep/y.py"}),
        tool("write_file", {"path": "made/deep/more/z.py", "content": "Z = 3\n"}),
        text("ok"),
    )
    await editor.wait_watching()
    result = await editor.request("plansight/run", {"prompt": "make them"})
    assert result["status"] == "done", result
    assert (hello_workspace / "newdir/sub/x.py").read_text() == "X = 1\n"
    assert (hello_workspace / "made/deep/more/z.py").read_text() == "Z = 3\n"
    # Another program writes after the agent: once that is reported, the agent's changes
    # would have been too (the watcher reports in order).
    (hello_workspace / "marker.txt").write_text("outside\n")
    await editor.recorder.wait_for(lambda: "marker.txt" in files_reported(editor))
    assert files_reported(editor) == ["marker.txt"]
    fake_api.push(text("noted"))
    await editor.request("plansight/run", {"prompt": "anything new?"})
    told = [t for body in fake_api.bodies for t in user_texts(body) if "Changed outside" in t]
    assert told == [
        "<files-changed>Changed outside the agent since your last turn: marker.txt. "
        "Read them again before editing them.</files-changed>"
    ]


async def test_a_stopped_commands_changes_are_its_own(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    started = hello_workspace / "started.txt"
    fake_api.push(
        tool("bash", {"command": "echo x > started.txt && rm test_hello.py && sleep 60"}),
        text("unreachable"),
    )
    await editor.wait_watching()
    msg_id, run = editor.start_request("plansight/run", {"prompt": "run it"})
    await editor.recorder.wait_for(
        lambda: started.exists() and not (hello_workspace / "test_hello.py").exists()
    )
    editor.cancel(msg_id)
    with contextlib.suppress(JsonRpcException):
        await run
    (hello_workspace / "marker.txt").write_text("outside\n")
    await editor.recorder.wait_for(lambda: "marker.txt" in files_reported(editor))
    assert files_reported(editor) == ["marker.txt"]


@pytest.mark.parametrize(
    "tool_input",
    [
        ("read_file", {"path": "../outside.txt"}),
        ("write_file", {"path": "../outside.txt", "content": "pwned"}),
        ("write_file", {"path": "link/outside.txt", "content": "pwned"}),
        ("read_file", {"path": "link/outside.txt"}),
        ("edit_file", {"path": "filelink", "old_text": "secret", "new_text": "pwned"}),
        ("grep", {"pattern": "secret", "path": "link"}),
        ("list_files", {"path": "/"}),
    ],
)
@on_shared
async def test_escape_attempts_are_refused_over_the_protocol(
    shared_editor: EditorHandle,
    shared_api: FakeMessagesAPI,
    tool_input: tuple[str, dict[str, Any]],
) -> None:
    editor, fake_api = shared_editor, shared_api
    # (the shared workspace's link, filelink and outside.txt: see `shared`)
    outside = editor.root.parent / "outside.txt"
    assert (editor.root / "link").readlink() == editor.root.parent
    assert (editor.root / "filelink").readlink() == outside
    fake_api.push(tool(*tool_input), text("ok"))
    await editor.request("plansight/run", {"prompt": "escape"})
    result = tool_results(fake_api.bodies[1])[0]
    assert result.get("is_error") is True
    assert "secret" not in result["content"]
    assert outside.read_text() == "secret\n"
    assert editor.recorder.reviews == []


async def test_state_is_restored_after_a_restart(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    first = await start_editor(hello_workspace, fake_api, storage=storage)
    fake_api.push(
        tool("todo", plan(("1", "Hints", "completed"), ("2", "Docs", "in_progress"))),
        tool("write_scratchpad", {"content": "halfway"}),
        text("pausing"),
        text("stopping"),
    )
    await first.request("plansight/run", {"prompt": "start"})
    await first.stop()
    assert not any(p.is_relative_to(hello_workspace) for p in storage.rglob("*"))

    second = await start_editor(hello_workspace, fake_api, storage=storage)
    try:
        # The plan and the scratchpad are two notifications: wait for both.
        rec = second.recorder
        await rec.wait_for(lambda: bool(rec.todos) and bool(rec.scratchpad))
        restored = rec.todos[0]
        assert restored["source"] == "restore"
        assert restored["rendered"] == "[x] #1: Hints\n[>] #2: Docs\n(1/2 completed)"
        assert rec.scratchpad == ["halfway"]
        fake_api.push(text("continuing"))
        await second.request("plansight/run", {"prompt": "go on"})
        messages = fake_api.bodies[-1]["messages"]
        assert messages[0]["content"][0]["text"] == "start"  # the conversation continues
        assert len(messages) > 3
    finally:
        await second.stop()


async def test_kill_9_mid_run_loses_at_most_the_round_in_flight(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    first = await start_editor(hello_workspace, fake_api, storage=storage)
    fake_api.push(
        tool("todo", plan(("1", "Hints", "in_progress"))),
        tool("read_file", {"path": "hello.py"}),
        Hang(30),
    )
    run = asyncio.ensure_future(first.request("plansight/run", {"prompt": "work"}))
    await first.recorder.wait_for(lambda: len(fake_api.message_requests) >= 3)
    server = first.client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    await first.client.stop()
    assert run.done()  # the request died with the server
    for stored in storage.glob("*.json"):
        json.loads(stored.read_text())  # never torn
    assert not list(storage.glob("*.tmp"))

    second = await start_editor(hello_workspace, fake_api, storage=storage)
    try:
        await second.recorder.wait_for(lambda: bool(second.recorder.todos))
        assert second.recorder.todos[0]["rendered"] == "[>] #1: Hints\n(0/1 completed)"
        fake_api.push(text("resumed"), text("item 1 stays open: explained"))
        result = await second.request("plansight/run", {"prompt": "resume"})
        assert result["status"] == "done"
        # The restored conversation kept both finished rounds; the prompt joined the last turn.
        resumed = fake_api.bodies[3]["messages"]
        assert [m["role"] for m in resumed] == ["user", "assistant", "user", "assistant", "user"]
        assert [b["type"] for b in resumed[-1]["content"]] == ["tool_result", "text"]
    finally:
        await second.stop()


def shadow_files(state_home: Path) -> set[str]:
    """Every path that any checkpoint of any workspace under `state_home` holds."""
    held: set[str] = set()
    for git_dir in state_home.glob("plansight/workspaces/*/checkpoints/git"):
        refs = subprocess.run(
            ["git", "--git-dir", str(git_dir), "for-each-ref", "--format=%(objectname)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for ref in refs:
            listed = subprocess.run(
                ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", ref],
                capture_output=True,
                text=True,
                check=True,
            )
            held.update(listed.stdout.splitlines())
    return held


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")
async def test_plansights_own_state_inside_the_workspace_is_none_of_the_agents(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    # `cd ~ && plansight`: the user's state folder, where Plansight keeps the session, lies in
    # the workspace. Its saves once came back as outside changes, saved again, without end.
    root = hello_workspace
    state_home = root / ".local" / "state"
    editor = await start_editor(
        root,
        fake_api,
        storage=root / "unused",
        init_options={"storageDir": ""},  # the default storage folder, as a user has it
        env={"XDG_STATE_HOME": str(state_home)},
    )
    try:
        await editor.wait_watching()
        fake_api.push(
            tool("list_files", {}),
            tool("grep", {"pattern": "zebra-canary"}),
            tool("grep", {"pattern": "zebra-canary", "glob": "**/*.jsonl"}),
            tool("write_file", {"path": "notes.txt", "content": "zebra-canary\n"}),
            text("done"),
        )
        await editor.request("plansight/run", {"prompt": "find zebra-canary"})
        assert any(state_home.rglob("history.jsonl")), "the session is stored under the workspace"
        # Another program's change is reported: the watcher works and has caught up.
        for n in range(2):
            (root / "hello.py").write_text(f"# changed outside, {n}\n")
            await editor.recorder.wait_for(
                lambda n=n: (
                    sum(
                        e["type"] == "filesChanged" and "hello.py" in e["paths"]
                        for e in editor.recorder.events
                    )
                    > n
                ),
                what="the outside change is reported",
            )
            history = next(state_home.rglob("history.jsonl"))
            lines = len(history.read_bytes().splitlines())
            if n == 0:
                first = lines
        # One more line (the filesChanged event) at most: no loop of its own saves.
        assert lines <= first + 1, (first, lines)
        reported = [e for e in editor.recorder.events if e["type"] == "filesChanged"]
        assert all(not p.startswith(".local") for e in reported for p in e["paths"]), reported
        listed, *searched = (tool_results(b)[0]["content"] for b in fake_api.bodies[1:4])
        assert "hello.py" in listed and ".local" not in listed, listed
        assert searched == ["No matches.", "No matches."], searched
        assert ".local" not in json.dumps(fake_api.bodies)
        held = shadow_files(state_home)
        assert "notes.txt" in held and "hello.py" in held
        assert not [p for p in held if p.startswith(".local")], held
    finally:
        await editor.stop()


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")
async def test_a_file_name_that_is_not_utf8_breaks_neither_the_watcher_nor_checkpoints(
    editor: EditorHandle, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    bad = os.path.join(os.fsencode(hello_workspace), b"bad\xff.txt")
    with open(bad, "wb") as f:
        f.write(b"first\n")
    await editor.wait_watching()
    fake_api.push(tool("write_file", {"path": "notes.txt", "content": "one\n"}), text("ok"))
    assert (await editor.request("plansight/run", {"prompt": "write"}))["status"] == "done"

    def reported() -> list[str]:
        return [
            p for e in editor.recorder.events if e["type"] == "filesChanged" for p in e["paths"]
        ]

    for n in range(2):  # the badly named file changes, then another: that one is reported
        with open(bad, "ab") as f:
            f.write(b"changed\n")
        (hello_workspace / "marker.txt").write_text(f"outside {n}\n")
        await editor.recorder.wait_for(lambda n=n: reported().count("marker.txt") > n)
    logged = [m.message for m in editor.client.log_messages]
    # watchfiles cannot hand such a name over and gives up: restarted at once, said once.
    assert not [m for m in logged if "watcher failed" in m], logged
    assert len([m for m in logged if "not UTF-8" in m]) == 1, logged
    listed = (await editor.request("plansight/checkpoints", {}))["checkpoints"]
    started = next(c for c in listed if c["kind"] == "runStart")
    result = await editor.request("plansight/restore", {"checkpoint": started["id"], "force": True})
    assert "notes.txt" in result["deleted"], result
    assert not (hello_workspace / "notes.txt").exists()
    with open(bad, "rb") as f:
        assert f.read() == b"first\n"  # as the checkpoint holds it
    assert not [m.message for m in editor.client.log_messages if "Traceback" in m.message]
