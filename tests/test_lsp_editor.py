"""The editor bridge over stdio with a real LSP client (pytest-lsp): a cancelled run withdraws
the requests it was waiting on (an edit review, a command approval, the showMessageRequest
fallback) with `$/cancelRequest` carrying their id; nothing is written or run, and an answer
that still arrives changes nothing and logs nothing. An error answer is a refusal, never a
crash of the tool.

The cases share one server per set of capabilities the editor advertises (`Holders`): none
changes a file, and each begins after `plansight/reset` with its own held request, its own
record and its own part of the server's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
import sys
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.lsp.editor import EditorBridge

from conftest import FIXTURES, PATIENCE, wait_until
from lsp_harness import plain, server_env, tree_of, until_idle

pytestmark = pytest.mark.asyncio(loop_scope="module")

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
    root: Path
    honour_cancel: bool
    # Requests of the editor's methods other than the asked one (a shared server's).
    unexpected: list[str] = field(default_factory=list)
    # Where this test's part of the log begins: bytes of stderr, log messages.
    since: tuple[int, int] = (0, 0)

    def noise(self) -> list[str]:
        logged = self.stderr.read_bytes()[self.since[0] :].decode(errors="replace")
        lines = [line for line in logged.splitlines() if any(word in line for word in NOISE)]
        messages = [
            m.message
            for m in self.client.log_messages[self.since[1] :]
            if m.type in (types.MessageType.Error, types.MessageType.Warning)
        ]
        return lines + messages

    def mark(self) -> None:
        """What the server logged so far is no longer this editor's noise."""
        self.since = (self.stderr.stat().st_size, len(self.client.log_messages))

    def hold(self, asked: Asked, *, honour_cancel: bool) -> Editor:
        """The next request to answer (a shared server's next test), and nothing heard yet."""
        self.asked, self.honour_cancel = asked, honour_cancel
        self.cancels.clear()
        self.events.clear()
        self.unexpected.clear()
        self.mark()
        return self


async def start_editor(
    root: Path,
    api: FakeMessagesAPI,
    tmp_path: Path,
    asked: Asked,
    *,
    experimental: dict[str, bool],
    honour_cancel: bool,
    methods: Iterable[str] = (),
) -> Editor:
    """`methods`: the requests the editor answers (`asked.method` only, if none are given);
    those of another method than the one asked are answered with an error, as unknown."""
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, DEFAULT_CLIENT_FEATURES)
    stderr = tmp_path / "server.stderr"
    editor = Editor(client, asked, [], [], stderr, root, honour_cancel)
    honour = client.protocol._handle_cancel_notification

    def on_cancel(msg_id: str) -> None:
        editor.cancels.append(msg_id)
        if editor.honour_cancel:  # pygls's own: cancel the handler, answer RequestCancelled
            honour(msg_id)

    client.protocol._handle_cancel_notification = on_cancel  # type: ignore[method-assign]

    def answering(method: str) -> Callable[[Any], Awaitable[Any]]:
        async def on_request(params: Any) -> Any:
            asked = editor.asked
            if method != asked.method:
                editor.unexpected.append(method)
                raise RuntimeError(f"{method} was not expected")
            asked.ids.append(str(client.protocol.msg_id))
            asked.params.append(plain(params))
            await asked.release.wait()
            if isinstance(asked.answer, Exception):
                raise asked.answer  # the editor answers with a JSON-RPC error
            return asked.answer

        return on_request

    for method in dict.fromkeys(methods or [asked.method]):
        client.feature(method)(answering(method))

    @client.feature("plansight/event")
    def on_event(params: Any) -> None:
        editor.events.append(plain(params))

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
    return editor


# The server→client requests an editor answers when it advertises a capability; it always
# answers showMessageRequest (the fallback of all of them).
REQUESTS = {
    "reviewEdit": "plansight/reviewEdit",
    "approveCommand": "plansight/approveCommand",
    "reviewPlan": "plansight/reviewPlan",
    "askUser": "plansight/askUser",
}


class Holders:
    """One server per set of advertised capabilities, started when a case first needs it.

    Before each case: no run in progress, `plansight/reset` (plan, scratchpad and
    conversation cleared), the case's own held request, a blank record and log. After it:
    nothing runs, no request of another method came, and the workspace is byte for byte the
    copy it started as. At the end, the shutdowns themselves log no noise.
    """

    def __init__(self, folder: Path, api: FakeMessagesAPI) -> None:
        self.folder = folder
        self.api = api
        self.started: dict[tuple[tuple[str, bool], ...], tuple[Editor, dict[str, bytes]]] = {}
        self.current: tuple[Editor, dict[str, bytes]] | None = None

    async def begin(
        self, asked: Asked, *, experimental: dict[str, bool], honour_cancel: bool
    ) -> Editor:
        key = tuple(sorted(experimental.items()))
        if key not in self.started:
            place = self.folder / f"server-{len(self.started)}"
            root = place / "hello"
            shutil.copytree(FIXTURES / "hello", root)
            methods = [types.WINDOW_SHOW_MESSAGE_REQUEST]
            methods += [REQUESTS[name] for name, offered in experimental.items() if offered]
            editor = await start_editor(
                root,
                self.api,
                place,
                asked,
                experimental=experimental,
                honour_cancel=honour_cancel,
                methods=methods,
            )
            self.started[key] = editor, tree_of(root)
        else:
            editor = self.started[key][0]
            await until_idle(editor.client)
            await editor.client.protocol.send_request_async("plansight/reset", {})
        # Every checkpoint asked for is announced before this answer (the start-up one of the
        # workspace as found, above all), so none lands among the case's events.
        with contextlib.suppress(JsonRpcException):
            await editor.client.protocol.send_request_async("plansight/checkpoints", {})
        self.current = self.started[key]
        return editor.hold(asked, honour_cancel=honour_cancel)

    async def end(self) -> None:
        if self.current is None:
            return
        (editor, tree), self.current = self.current, None
        editor.asked.release.set()
        await until_idle(editor.client)
        assert tree_of(editor.root) == tree, "a case on a shared server changed the workspace"
        assert editor.unexpected == [], "requests of a method the case did not ask"
        editor.mark()

    async def stop(self) -> None:
        for editor, _ in self.started.values():
            await asyncio.wait_for(editor.client.shutdown_session(), PATIENCE)
            await editor.client.stop()
        for editor, _ in self.started.values():
            assert editor.noise() == [], "noise as the server shut down"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_api() -> AsyncIterator[FakeMessagesAPI]:
    api = FakeMessagesAPI().start()
    yield api
    api.stop()


@pytest.fixture
def fake_api(module_api: FakeMessagesAPI) -> FakeMessagesAPI:
    """The module's fake API (its shared servers ask it), blank."""
    module_api.reset()
    return module_api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def servers(
    tmp_path_factory: pytest.TempPathFactory, module_api: FakeMessagesAPI
) -> AsyncIterator[Holders]:
    holders = Holders(tmp_path_factory.mktemp("holders"), module_api)
    yield holders
    await holders.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def holders(servers: Holders) -> AsyncIterator[Holders]:
    """The shared servers; the case's own is checked when it ends."""
    yield servers
    await servers.end()


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
    holders: Holders, fake_api: FakeMessagesAPI, case: str, honour_cancel: bool
) -> None:
    method, answer, experimental, step = CASES[case]
    fake_api.push(step)
    editor = await holders.begin(
        Asked(method, answer), experimental=experimental, honour_cancel=honour_cancel
    )
    client, asked, root = editor.client, editor.asked, editor.root
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
        assert not (root / "new.py").exists()
        assert not (root / "ran.txt").exists()
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
    assert editor.noise() == []  # and the server's shutdown, when Holders stops


@pytest.mark.parametrize("case", list(CASES))
async def test_an_error_answer_is_a_rejection_the_model_reads(
    holders: Holders, fake_api: FakeMessagesAPI, case: str
) -> None:
    method, _, experimental, step = CASES[case]
    fake_api.push(step, text("Understood."))
    asked = Asked(method, RuntimeError("the review panel failed"))
    asked.release.set()
    editor = await holders.begin(asked, experimental=experimental, honour_cancel=True)
    client = editor.client
    result = plain(await client.protocol.send_request_async("plansight/run", {"prompt": "Go"}))
    assert result["status"] == "done"
    assert not (editor.root / "new.py").exists()
    assert not (editor.root / "ran.txt").exists()
    [answered] = fake_api.message_requests[1].body["messages"][-1]["content"]
    assert answered["is_error"] is True
    # A refusal that says why, not an internal error of the tool.
    assert "internal error" not in answered["content"]
    told = "did not answer" if case == "showMessageRequest" else "answered the"
    assert told in answered["content"]
    reviewed = [e for e in editor.events if e["type"] == "editReviewed"]
    if case != "approveCommand":
        assert [e["outcome"] for e in reviewed] == ["rejected"]
    assert not any("Traceback" in line for line in editor.noise())


async def test_a_late_error_answer_to_a_withdrawn_request_is_never_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client that honours `$/cancelRequest` answers RequestCancelled: that answer belongs
    to nobody, and is not logged as "Future exception was never retrieved" once collected."""
    sent: list[Future[Any]] = []
    notified: list[str] = []
    # The asyncio futures that wrap what was sent: asyncio reports an unretrieved exception
    # when such a future is collected, so the test waits until it has been.
    wrappers: list[weakref.ref[asyncio.Future[Any]]] = []
    wrap_future = asyncio.wrap_future

    def recording_wrap_future(future: Any, **kwargs: Any) -> asyncio.Future[Any]:
        wrapper = wrap_future(future, **kwargs)
        if any(future is request for request in sent):
            wrappers.append(weakref.ref(wrapper))
        return wrapper

    monkeypatch.setattr(asyncio, "wrap_future", recording_wrap_future)

    class Protocol:
        def send_request(self, method: str, params: Any, msg_id: str) -> Future[Any]:
            sent.append(Future())
            return sent[-1]

        def notify(self, method: str, params: Any) -> None:
            notified.append(method)

    server = SimpleNamespace(protocol=Protocol())
    bridge = EditorBridge(server)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    handler = loop.get_exception_handler()

    def report(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        # What concerns the late answer (it carries the client's RequestCancelled). Collecting
        # garbage also finalizes what earlier tests in this process left (an SDK client closing
        # on a loop long closed): reported as usual, not counted against this test.
        if isinstance(context.get("exception"), JsonRpcRequestCancelled):
            reported.append(context)
        elif handler is not None:
            handler(_loop, context)
        else:
            _loop.default_exception_handler(context)

    loop.set_exception_handler(report)
    try:
        asking = asyncio.ensure_future(bridge.request("plansight/reviewEdit", {}))
        await wait_until(lambda: len(sent) == 1 and len(wrappers) == 1, "the request sent")
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        assert notified == [types.CANCEL_REQUEST]
        sent[0].set_exception(JsonRpcRequestCancelled("the client cancelled it"))
        del asking
        sent.clear()

        def collected() -> bool:
            # The wrapper lives until the answer has reached it (the loop holds it till then);
            # one reported as never retrieved lives on in the report.
            gc.collect()
            return wrappers[0]() is None or bool(reported)

        await wait_until(collected, "the answer's asyncio future collected")
        assert reported == []
    finally:
        loop.set_exception_handler(handler)
