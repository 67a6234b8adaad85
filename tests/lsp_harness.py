"""Starting `plansight lsp` over stdio with a real LSP client (pytest-lsp) for the tests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from plansight.fakeapi import FakeMessagesAPI
from plansight.protocol.names import to_plain
from plansight.workspace.watcher import WATCHING

from conftest import FIXTURES, PATIENCE, wait_until

Listener = Callable[[str, dict[str, Any]], None]


@dataclass
class Recorder:
    """Custom notifications (and server requests) the editor received, in order."""

    todos: list[dict[str, Any]] = field(default_factory=list)
    scratchpad: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    plan_reviews: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    tool_approvals: list[dict[str, Any]] = field(default_factory=list)  # plansight/approveTool
    server_trusts: list[dict[str, Any]] = field(default_factory=list)  # approveMcpServer
    messages: list[dict[str, Any]] = field(default_factory=list)
    # Every publishDiagnostics, as (uri, diagnostics), so a test sees a publish and its clear.
    diagnostics: list[tuple[str, list[types.Diagnostic]]] = field(default_factory=list)
    # Called with (method, payload) as each custom message is recorded, before anything else
    # runs: a test can act at that exact moment (kill the server as a plan is saved, say).
    listeners: list[Listener] = field(default_factory=list)

    def heard(self, method: str, payload: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(method, payload)

    def event_types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def clear(self) -> None:
        """Forget what was received (listeners stay): a shared server's next test starts blank."""
        for name in (
            "todos",
            "scratchpad",
            "events",
            "reviews",
            "approvals",
            "plan_reviews",
            "questions",
            "tool_approvals",
            "server_trusts",
            "messages",
            "diagnostics",
        ):
            getattr(self, name).clear()

    async def wait_for(
        self, predicate: Callable[[], bool], timeout: float = PATIENCE, what: str = "condition"
    ) -> None:
        """Until `predicate` holds (conftest.PATIENCE: a hang, not a deadline to meet)."""
        await wait_until(predicate, what, timeout)


def plain(value: Any) -> Any:
    """Custom params and results as dicts; lsprotocol objects unstructured as on the wire."""
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol import converters

        return converters.get_converter().unstructure(value)
    return to_plain(value)


ReviewAnswer = Callable[[dict[str, Any]], dict[str, Any]]
# An answer the test may make wait (a plan review held open while the run is cancelled).
AsyncAnswer = Callable[[dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any]]]
# The title of the action a showMessageRequest is answered with (None: no answer).
MessageAnswer = Callable[[dict[str, Any]], str | None]


@dataclass
class EditorHandle:
    client: LanguageClient
    recorder: Recorder
    root: Path
    init_result: types.InitializeResult | None = None

    async def request(self, method: str, params: Any) -> Any:
        return plain(await self.client.protocol.send_request_async(method, params))

    def start_request(self, method: str, params: Any) -> tuple[str, asyncio.Future[Any]]:
        """Send a request and return its id, so a test can `$/cancelRequest` it."""
        msg_id = uuid.uuid4().hex
        future = self.client.protocol.send_request(method, params, msg_id=msg_id)
        return msg_id, asyncio.wrap_future(future)

    def cancel(self, msg_id: str) -> None:
        self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def wait_watching(self, times: int = 1) -> None:
        """Until the server's workspace watcher has (re)started `times` times: from then on
        every outside change is reported (the server logs it to the editor)."""

        def starts() -> int:
            return sum(WATCHING in m.message for m in self.client.log_messages)

        await wait_until(lambda: starts() >= times, "the workspace watcher is watching")

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_session(), PATIENCE)
        finally:
            await self.client.stop()


def server_env(api: FakeMessagesAPI | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if api is not None:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        env["ANTHROPIC_API_KEY"] = "test-key"
    env["PLANSIGHT_LOG_LEVEL"] = "INFO"
    env.update(extra or {})
    return env


async def start_editor(
    root: Path,
    api: FakeMessagesAPI | None,
    *,
    storage: Path,
    review: AsyncAnswer | None = None,
    approve: ReviewAnswer | None = None,
    advertise: bool = True,
    init_options: dict[str, Any] | None = None,
    show_message_answer: str | None = None,
    show_message: MessageAnswer | None = None,
    review_plan: AsyncAnswer | None = None,
    ask_user: AsyncAnswer | None = None,
    approve_tool: AsyncAnswer | None = None,
    approve_mcp_server: AsyncAnswer | None = None,
    env: dict[str, str] | None = None,
) -> EditorHandle:
    """Start the server the way an editor does and record what it sends.

    `review_plan` / `ask_user`: the editor renders `plansight/reviewPlan` / `askUser` (it says
    so in its capabilities) and answers with them; without them the server falls back to
    `window/showMessageRequest`, answered with `show_message` (or `show_message_answer`).
    `approve_tool` / `approve_mcp_server`: likewise for `plansight/approveTool` and
    `plansight/approveMcpServer` (MCP).
    """
    client = LanguageClient(converter_factory=default_converter)
    recorder = Recorder()
    default_publish = DEFAULT_CLIENT_FEATURES[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def on_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        recorder.diagnostics.append((params.uri, list(params.diagnostics)))
        default_publish(client, params)

    register_lsp_features(
        client,
        {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: on_diagnostics},
    )

    @client.feature("plansight/todos")
    def on_todos(params: Any) -> None:
        recorder.todos.append(plain(params))
        recorder.heard("plansight/todos", recorder.todos[-1])

    @client.feature("plansight/scratchpad")
    def on_scratchpad(params: Any) -> None:
        payload = plain(params)
        recorder.scratchpad.append(payload["content"])
        recorder.heard("plansight/scratchpad", payload)

    @client.feature("plansight/event")
    def on_event(params: Any) -> None:
        recorder.events.append(plain(params))
        recorder.heard("plansight/event", recorder.events[-1])

    if advertise:

        @client.feature("plansight/reviewEdit")
        async def on_review(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.reviews.append(payload)
            recorder.heard("plansight/reviewEdit", payload)
            # An awaitable answer: the user takes their time (a test may cancel the run meanwhile).
            return await answered(review, payload) if review else {"accepted": True}

        @client.feature("plansight/approveCommand")
        def on_approve(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.approvals.append(payload)
            recorder.heard("plansight/approveCommand", payload)
            return approve(payload) if approve else {"approved": True}

    async def answered(answer: AsyncAnswer, payload: dict[str, Any]) -> dict[str, Any]:
        result = answer(payload)
        return await result if isinstance(result, Awaitable) else result

    if review_plan is not None:

        @client.feature("plansight/reviewPlan")
        async def on_review_plan(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.plan_reviews.append(payload)
            recorder.heard("plansight/reviewPlan", payload)
            return await answered(review_plan, payload)

    if ask_user is not None:

        @client.feature("plansight/askUser")
        async def on_ask_user(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.questions.append(payload)
            recorder.heard("plansight/askUser", payload)
            return await answered(ask_user, payload)

    if approve_tool is not None:

        @client.feature("plansight/approveTool")
        async def on_approve_tool(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.tool_approvals.append(payload)
            recorder.heard("plansight/approveTool", payload)
            return await answered(approve_tool, payload)

    if approve_mcp_server is not None:

        @client.feature("plansight/approveMcpServer")
        async def on_approve_mcp_server(params: Any) -> dict[str, Any]:
            payload = plain(params)
            recorder.server_trusts.append(payload)
            recorder.heard("plansight/approveMcpServer", payload)
            return await answered(approve_mcp_server, payload)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_show_message_request(
        params: types.ShowMessageRequestParams,
    ) -> types.MessageActionItem | None:
        shown = {"message": params.message, "actions": [a.title for a in params.actions or []]}
        recorder.messages.append(shown)
        title = show_message(shown) if show_message is not None else show_message_answer
        return types.MessageActionItem(title) if title else None

    await client.start_io(
        sys.executable, "-m", "plansight", "lsp", env=server_env(api, env), cwd=str(root)
    )
    capabilities = client_capabilities("visual-studio-code")
    offered = {"reviewEdit": True, "approveCommand": True} if advertise else {}
    if review_plan is not None:
        offered["reviewPlan"] = True
    if ask_user is not None:
        offered["askUser"] = True
    if approve_tool is not None:
        offered["approveTool"] = True
    if approve_mcp_server is not None:
        offered["approveMcpServer"] = True
    if offered:
        capabilities.experimental = {"plansight": offered}
    options = {"storageDir": str(storage), **(init_options or {})}
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )
    return EditorHandle(client, recorder, root, result)


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative path, with its bytes; not the plan files (the
    sessions' plans, Plansight's state in the default `.plansight/plans`)."""
    return {
        relative: path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not (relative := path.relative_to(root).as_posix()).startswith(".plansight/plans/")
    }


async def until_idle(client: LanguageClient) -> None:
    """Until the server says no run is in progress (a cancelled run's end included)."""

    async def idle() -> bool:
        state = await client.protocol.send_request_async("plansight/state", {})
        return not plain(state)["running"]

    await wait_until(idle, "no run in progress")


class SharedEditor:
    """One server (its own workspace and a fake API) for the tests of a module that need no
    fresh one: a server start costs about a second of CPU, most of the suite's.

    Before each test: the run has ended, `plansight/reset` has cleared plan, scratchpad and
    conversation, and the fake API and the record are blank, so the test sees what a new
    session's editor sees. After each test: the server still answers, nothing runs, and the
    workspace is byte for byte as it was: a test that changes files needs its own server, and
    one that does so anyway fails here instead of misleading the next test.
    """

    def __init__(
        self, handle: EditorHandle, api: FakeMessagesAPI, *, owns_api: bool = True
    ) -> None:
        self.handle = handle
        self.api = api
        self._owns_api = owns_api
        self._tree = tree_of(handle.root)
        # How this test's editor answers plansight/reviewEdit and approveCommand (None: accept,
        # as start_editor's default), showMessageRequest (None: start_editor's), and, on a
        # server started with offer_review_plan / offer_ask_user, reviewPlan and askUser
        # (None: a test that did not expect the request; end() fails it). begin() puts all
        # back to None.
        self.review: AsyncAnswer | None = None
        self.approve: ReviewAnswer | None = None
        self.show_message: MessageAnswer | None = None
        self.review_plan: AsyncAnswer | None = None
        self.ask_user: AsyncAnswer | None = None
        self.unanswered: list[str] = []

    @classmethod
    async def start(
        cls,
        root: Path,
        storage: Path,
        *,
        api: FakeMessagesAPI | None = None,
        offer_review_plan: bool = False,
        offer_ask_user: bool = False,
        **options: Any,
    ) -> SharedEditor:
        """`options`: start_editor's, other than the answers (set those per test).

        `api`: a fake API several shared servers of a module use (their tests run one at a
        time); the caller stops it. Without it the server has its own, stopped with it.
        `offer_review_plan` / `offer_ask_user`: the editor advertises reviewPlan / askUser.
        """
        own_api = api is None
        fake = FakeMessagesAPI().start() if api is None else api
        started: list[SharedEditor] = []

        def review(payload: dict[str, Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
            answer = started[0].review
            return answer(payload) if answer is not None else {"accepted": True}

        def approve(payload: dict[str, Any]) -> dict[str, Any]:
            answer = started[0].approve
            return answer(payload) if answer is not None else {"approved": True}

        default_title = options.pop("show_message_answer", None)

        def show_message(shown: dict[str, Any]) -> str | None:
            answer = started[0].show_message
            return answer(shown) if answer is not None else default_title

        def expected(name: str) -> AsyncAnswer:
            def answer(payload: dict[str, Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
                chosen: AsyncAnswer | None = getattr(started[0], name)
                if chosen is None:
                    started[0].unanswered.append(name)
                    raise RuntimeError(f"this test set no {name} answer")
                return chosen(payload)

            return answer

        try:
            handle = await start_editor(
                root,
                fake,
                storage=storage,
                review=review,
                approve=approve,
                show_message=show_message,
                review_plan=expected("review_plan") if offer_review_plan else None,
                ask_user=expected("ask_user") if offer_ask_user else None,
                **options,
            )
        except BaseException:
            if own_api:
                fake.stop()
            raise
        started.append(cls(handle, fake, owns_api=own_api))
        return started[0]

    async def stop(self) -> None:
        try:
            await self.handle.stop()
        finally:
            if self._owns_api:
                self.api.stop()

    async def idle(self) -> None:
        await until_idle(self.handle.client)

    async def begin(self) -> EditorHandle:
        await self.idle()
        recorder = self.handle.recorder
        heard = len(recorder.todos), len(recorder.scratchpad)
        await self.handle.request("plansight/reset", {})
        # The reset's own notifications (an empty plan, an empty scratchpad) are the last
        # thing of the previous test.
        await recorder.wait_for(
            lambda: len(recorder.todos) > heard[0] and len(recorder.scratchpad) > heard[1],
            what="the reset's plan and scratchpad notifications",
        )
        # And every checkpoint asked for is taken and announced (its `checkpoint` event sent
        # before this answer): the start-up one of the workspace as found, above all, which a
        # loaded machine may finish only once the first test's run has begun.
        with contextlib.suppress(JsonRpcException):  # (checkpoints off)
            await self.handle.request("plansight/checkpoints", {})
        self.api.reset()
        self.review = self.approve = self.review_plan = self.ask_user = None
        self.show_message = None
        self.unanswered.clear()
        recorder.clear()
        self.handle.client.progress_reports.clear()
        return self.handle

    async def end(self) -> None:
        await self.idle()
        now = tree_of(self.handle.root)
        was = self._tree
        changed = sorted(name for name in now.keys() | was.keys() if now.get(name) != was.get(name))
        assert not changed, f"a test on the shared server changed the workspace: {changed}"
        assert not self.unanswered, f"asked without an answer set by the test: {self.unanswered}"


async def start_shared_hello(factory: pytest.TempPathFactory, **options: Any) -> SharedEditor:
    """A SharedEditor on a copy of fixtures/hello, its storage beside it (`options`: start's)."""
    folder = factory.mktemp("shared")
    root = folder / "hello"
    shutil.copytree(FIXTURES / "hello", root)
    return await SharedEditor.start(root, storage=folder / "state", **options)
