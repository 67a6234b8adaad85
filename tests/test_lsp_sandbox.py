"""What an editor is told of the sandbox, through `plansight lsp`: the approval's `sandbox`,
`autoApprove.sandboxedCommands`, and the warning when no sandbox can be made."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.workspace.sandbox import detect

from lsp_harness import plain, start_editor

pytestmark = pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")


def path_without_bwrap(tmp_path: Path) -> str:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("git", "rg", "touch"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return f"{folder}:{Path(sys.executable).parent}"


async def run(editor: Any, api: FakeMessagesAPI, command: str) -> dict[str, Any]:
    api.push(tool("bash", {"command": command}), text("Done."))
    result = plain(
        await editor.client.protocol.send_request_async("plansight/run", {"prompt": "Go"})
    )
    assert result["status"] == "done"
    [outcome] = [
        b
        for b in api.message_requests[-1].body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    ]
    return dict(outcome)


async def test_an_approval_says_what_a_sandboxed_command_may_do(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    editor = await start_editor(hello_workspace, fake_api, storage=tmp_path / "state")
    try:
        await run(editor, fake_api, "touch ran.txt")
        [asked] = editor.recorder.approvals
        root = str(hello_workspace.resolve())
        assert asked == {
            "command": "touch ran.txt",
            "cwd": root,
            "sandbox": {"network": False, "writable": [root]},
        }
        assert (hello_workspace / "ran.txt").exists()
    finally:
        await editor.stop()


async def test_sandboxed_commands_run_unasked_with_the_option_and_others_are_still_asked(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    options = {"autoApprove": {"sandboxedCommands": True}}
    editor = await start_editor(
        hello_workspace, fake_api, storage=tmp_path / "state", init_options=options
    )
    try:
        await run(editor, fake_api, "touch sandboxed.txt")
        assert editor.recorder.approvals == []
        assert (hello_workspace / "sandboxed.txt").exists()
    finally:
        await editor.stop()
    fake_api.reset()
    unsandboxed = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state2",
        init_options=options,
        env={"PATH": path_without_bwrap(tmp_path)},
    )
    try:
        await run(unsandboxed, fake_api, "touch plain.txt")
        [asked] = unsandboxed.recorder.approvals
        assert asked["sandbox"] is None
        warnings = [
            m.message
            for m in unsandboxed.client.log_messages
            if m.type == types.MessageType.Warning and "without a sandbox" in m.message
        ]
        assert len(warnings) == 1 and "bubblewrap" in warnings[0]
    finally:
        await unsandboxed.stop()


async def test_enabled_true_without_bwrap_refuses_and_asks_nothing(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    editor = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        init_options={"sandbox": {"enabled": True}},
        env={"PATH": path_without_bwrap(tmp_path)},
    )
    try:
        outcome = await run(editor, fake_api, "touch ran.txt")
        assert outcome["is_error"] is True and "install bubblewrap" in outcome["content"]
        assert editor.recorder.approvals == []
        assert not (hello_workspace / "ran.txt").exists()
    finally:
        await editor.stop()
