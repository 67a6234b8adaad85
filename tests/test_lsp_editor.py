"""The editor bridge over stdio with a real LSP client (pytest-lsp): a cancelled run withdraws
the requests it was waiting on (an edit review, a command approval, the showMessageRequest
fallback) with `$/cancelRequest` carrying their id; nothing is written or run, and an answer
that still arrives changes nothing and logs nothing. An error answer is a refusal, never a
crash of the tool."""

from __future__ import annotations

import asyncio
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import PATIENCE, wait_until
from lsp_harness import plain, server_env

NOISE = ("Traceback", "ERROR", "WARNING", "InvalidStateError", "never retrieved", "unknown")
CANCELLED_TOOL = "Cancelled by the user before this tool call finished."


@dataclass
class Asked:
    """A server→client request the test's editor holds unanswered until `release` is set."""

    method: str
    answer: Any
    ids: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Editor:
    client: LanguageClient
    asked: Asked
    cancels: list[str]  # ids of the `$/cancelRequest`s the server sent
    events: list[dict[str, Any]]
    stderr: Path

    def noise(self) -> list[str]:
        logged = self.stderr.read_text(errors="replace")
        lines = [line for line in logged.splitlines() if any(word in line for word in NOISE)]
        messages = [
            m.message
            for m in self.client.log_messages
            if m.type in (types.MessageType.Error, types.MessageType.Warning)
        ]
        return lines + messages


async def start_editor(
    root: Path,
    api: FakeMessagesAPI,
    tmp_path: Path,
    asked: Asked,
    *,
    experimental: dict[str, bool],
    honour_cancel: bool,
) -> Editor:
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, DEFAULT_CLIENT_FEATURES)
    cancels: list[str] = []
    events: list[dict[str, Any]] = []
    honour = client.protocol._handle_cancel_notification

    def on_cancel(msg_id: str) -> None:
        cancels.append(msg_id)
        if honour_cancel:  # pygls's own: cancel the handler, answer RequestCancelled
            honour(msg_id)

    client.protocol._handle_cancel_notification = on_cancel  # type: ignore[method-assign]

    async def on_request(params: Any) -> Any:
        asked.ids.append(str(client.protocol.msg_id))
        asked.params.append(plain(params))
        await asked.release.wait()
        if isinstance(asked.answer, Exception):
            raise asked.answer  # the editor answers with a JSON-RPC error
        return asked.answer

    client.feature(asked.method)(on_request)

    @client.feature("plansight/event")
    def on_event(params: Any) -> None:
        events.append(plain(params))

    stderr = tmp_path / "server.stderr"
    await client.start_io(
        "/bin/sh",
        "-c",
        'exec "$0" -m plansight lsp 2>"$1"',
        sys.executable,
        str(stderr),
        env=server_env(api, {"PLANSIGHT_LOG_LEVEL": "INFO"}),
        cwd=str(root),
    )
    capabilities = client_capabilities("visual-studio-code")
    capabilities.experimental = {"plansight": experimental}
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"storageDir": str(tmp_path / "state")},
        )
    )
    return Editor(client, asked, cancels, events, stderr)


NEW_FILE = {"path": "new.py", "content": "print('written')\n"}
CASES = {
    "reviewEdit": (
        "plansight/reviewEdit",
        {"accepted": True},
        {"reviewEdit": True, "approveCommand": True},
        tool("write_file", NEW_FILE),
    ),
    "approveCommand": (
        "plansight/approveCommand",
        {"approved": True},
        {"reviewEdit": True, "approveCommand": True},
        tool("bash", {"command": "touch ran.txt"}),
    ),
    "showMessageRequest": (
        types.WINDOW_SHOW_MESSAGE_REQUEST,
        types.MessageActionItem(title="Accept"),
        {},  # no reviewEdit: an edit is asked as a message with Accept / Reject
        tool("write_file", NEW_FILE),
    ),
}


@pytest.mark.parametrize("honour_cancel", [True, False], ids=["client-cancels", "late-accept"])
@pytest.mark.parametrize("case", list(CASES))
async def test_a_cancelled_run_withdraws_its_pending_request(
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    case: str,
    honour_cancel: bool,
) -> None:
    method, answer, experimental, step = CASES[case]
    fake_api.push(step)
    editor = await start_editor(
        hello_workspace,
        fake_api,
        tmp_path,
        Asked(method, answer),
        experimental=experimental,
        honour_cancel=honour_cancel,
    )
    client, asked = editor.client, editor.asked
    try:
        run_id = uuid.uuid4().hex
        run = asyncio.wrap_future(
            client.protocol.send_request("plansight/run", {"prompt": "Go"}, msg_id=run_id)
        )
        await wait_until(lambda: len(asked.ids) == 1, "the request reaches the editor")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=run_id))
        try:
            result = plain(await run)
            assert result["status"] == "cancelled"
        except Exception as err:  # answered RequestCancelled instead: just as good
            assert getattr(err, "code", None) == -32800, err

        # The editor is told, with the id of the request it was asked.
        await wait_until(lambda: editor.cancels == asked.ids, "$/cancelRequest for it")
        if not honour_cancel:
            asked.release.set()  # the user clicks Accept on a review that is already gone
        await wait_until(
            lambda: asked.ids[0] not in client.protocol._request_futures, "the editor's answer sent"
        )

        # Whatever came back, nothing was written or run, and the session is idle.
        state = plain(await client.protocol.send_request_async("plansight/state", {}))
        assert state["running"] is False
        assert not (hello_workspace / "new.py").exists()
        assert not (hello_workspace / "ran.txt").exists()
        assert [e for e in editor.events if e["type"] == "toolResult"] == []
        finished = [e for e in editor.events if e["type"] == "runFinished"]
        assert [e["result"]["status"] for e in finished] == ["cancelled"]

        # The model hears that the call was cancelled, not that it was accepted.
        fake_api.push(text("Understood."))
        done = plain(await client.protocol.send_request_async("plansight/run", {"prompt": "Go on"}))
        assert done["status"] == "done"
        sent = fake_api.message_requests[-1].body["messages"]
        results = [
            block
            for message in sent
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_result"
        ]
        assert [(r["content"], r.get("is_error")) for r in results] == [(CANCELLED_TOOL, True)]
        assert asked.params and len(asked.ids) == 1  # asked once, never again
    finally:
        asked.release.set()
        await asyncio.wait_for(client.shutdown_session(), PATIENCE)
        await client.stop()
    assert editor.noise() == []


@pytest.mark.parametrize("case", list(CASES))
async def test_an_error_answer_is_a_rejection_the_model_reads(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path, case: str
) -> None:
    method, _, experimental, step = CASES[case]
    fake_api.push(step, text("Understood."))
    asked = Asked(method, RuntimeError("the review panel failed"))
    asked.release.set()
    editor = await start_editor(
        hello_workspace, fake_api, tmp_path, asked, experimental=experimental, honour_cancel=True
    )
    client = editor.client
    try:
        result = plain(await client.protocol.send_request_async("plansight/run", {"prompt": "Go"}))
        assert result["status"] == "done"
        assert not (hello_workspace / "new.py").exists()
        assert not (hello_workspace / "ran.txt").exists()
        [answered] = fake_api.message_requests[1].body["messages"][-1]["content"]
        assert answered["is_error"] is True
        # A refusal that says why, not an internal error of the tool.
        assert "internal error" not in answered["content"]
        told = "did not answer" if case == "showMessageRequest" else "answered the"
        assert told in answered["content"]
        reviewed = [e for e in editor.events if e["type"] == "editReviewed"]
        if case != "approveCommand":
            assert [e["outcome"] for e in reviewed] == ["rejected"]
    finally:
        await asyncio.wait_for(client.shutdown_session(), PATIENCE)
        await client.stop()
    assert not any("Traceback" in line for line in editor.noise())
