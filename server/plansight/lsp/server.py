"""Thin LSP handlers; the work happens in Session (engine) and the editor bridge."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Generator
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from plansight import __version__
from plansight.events import (
    Event,
    PlanChanged,
    Reminder,
    ReminderCleared,
    RunFinished,
    RunResult,
    ScratchpadChanged,
    TextDelta,
    ToolInputDelta,
)
from plansight.lsp.diagnostics import ReminderDiagnostics
from plansight.lsp.editor import EditorBridge, path_uri
from plansight.lsp.framing import read_messages
from plansight.lsp.logs import LogMessageHandler
from plansight.lsp.progress import RunProgress
from plansight.plan import PlanError, StalePlanError
from plansight.protocol import (
    COMPACT,
    EDIT_PLAN,
    EVENT,
    INVALID_PARAMS,
    REQUEST_FAILED,
    RESET,
    RUN,
    SCRATCHPAD,
    STATE,
    TODOS,
    InitOptions,
    event_payload,
    field_of,
    server_capability,
    to_plain,
)

if TYPE_CHECKING:
    from plansight.session import Session
    from plansight.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)


class PlansightProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        # pygls's capability builder drops `experimental`; announce the protocol here.
        experimental = result.capabilities.experimental
        merged = dict(experimental) if isinstance(experimental, dict) else {}
        merged["plansight"] = server_capability()
        result.capabilities.experimental = merged
        return result


class PlansightServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "plansight",
            __version__,
            protocol_cls=PlansightProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.session: Session | None = None
        self.bridge: EditorBridge | None = None
        self.diagnostics: ReminderDiagnostics | None = None
        self.run_progress: RunProgress | None = None
        self.watcher: WorkspaceWatcher | None = None
        self.options = InitOptions()
        self.init_params: types.InitializeParams | None = None
        self.wants_tool_input = False
        self._pending_text: list[str] = []

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio server, reading with a loop that survives malformed input."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(
                read_messages(
                    stdin or sys.stdin.buffer, self.protocol, self._stop_event, self.thread_pool
                )
            )
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    # Set-up ----------------------------------------------------------------------------
    def setup(self, params: types.InitializeParams) -> None:
        # The engine is imported here, after `initialize` was answered: the editor sees the
        # server ready sooner, and nothing it sends before `initialized` needs the engine.
        from plansight.session import Session, SessionSettings
        from plansight.storage import SessionStore, default_storage_dir

        self.options = InitOptions.parse(params.initialization_options)
        for problem in self.options.problems:
            log.warning("%s", problem)
        root = workspace_root(params)
        self.bridge = EditorBridge(self, self.options)
        settings = SessionSettings(
            api_key=os.environ.get("ANTHROPIC_API_KEY") or None,
            base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
        )
        if timeout := api_timeout_from_env():
            settings.timeout = timeout
        if (model := self.options.model or os.environ.get("PLANSIGHT_MODEL")) is not None:
            settings.model = model
        if self.options.max_rounds is not None:
            settings.max_rounds = self.options.max_rounds
        if self.options.context_window is not None:
            settings.context_window = self.options.context_window
        if self.options.compact_at is not None:
            settings.compact_at = self.options.compact_at
        if self.options.thinking is not None:
            from plansight.model import DEFAULT_THINKING_BUDGET, ThinkingOption

            budget = self.options.thinking.budget_tokens or DEFAULT_THINKING_BUDGET
            settings.thinking = ThinkingOption(budget)
        storage = (
            Path(self.options.storage_dir)
            if self.options.storage_dir
            else default_storage_dir(root)
        )
        self.session = Session(
            root,
            settings,
            review=self.bridge.review,
            approve=self.bridge.approve,
            documents=self.bridge,
            store=SessionStore(storage),
        )
        self.wants_tool_input = self.bridge.client_offers("toolInputDelta")
        self.diagnostics = ReminderDiagnostics(
            self.session.root, self.text_document_publish_diagnostics, path_uri
        )
        self.run_progress = RunProgress(self)
        self.session.events.subscribe(self.forward)
        log.info("workspace %s, storage %s, model %s", root, storage, settings.model or "default")

    def start_background(self) -> None:
        from plansight.watcher import WorkspaceWatcher

        session = self.require_session()
        if session.restore():
            self.protocol.notify(TODOS, session.plan.state.to_wire())
            self.protocol.notify(SCRATCHPAD, {"content": session.scratchpad.content})
        self.watcher = WorkspaceWatcher(session.root, session.files_changed)
        self.watcher.start()
        threading.Thread(
            target=remove_leftovers, args=(session.root,), name="plansight-cleanup", daemon=True
        ).start()

    def require_session(self) -> Session:
        if self.session is None:
            raise JsonRpcException(message="The server is not initialized.", code=-32002)
        return self.session

    # Engine events → editor ------------------------------------------------------------
    def forward(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            # Chunks that arrive together go out as one notification (sent on the next turn of
            # the event loop, or before any other event, so the order is kept).
            if not self._pending_text:
                asyncio.get_running_loop().call_soon(self._flush_text)
            self._pending_text.append(event.text)
            return
        self._flush_text()
        if isinstance(event, PlanChanged):
            self.protocol.notify(TODOS, event.state.to_wire())
            if self.run_progress is not None:
                self.run_progress.report(event.state)
        elif isinstance(event, ScratchpadChanged):
            self.protocol.notify(SCRATCHPAD, {"content": event.content})
        elif isinstance(event, Reminder) and self.diagnostics is not None:
            self.diagnostics.show(event, self.fallback_uri())
        elif isinstance(event, ReminderCleared) and self.diagnostics is not None:
            self.diagnostics.clear()
        if isinstance(event, ToolInputDelta) and not self.wants_tool_input:
            return  # a notification per streamed chunk: only for clients that render it
        payload = event_payload(event)
        if payload is not None:
            self.protocol.notify(EVENT, payload)

    def _flush_text(self) -> None:
        if self._pending_text:
            text = "".join(self._pending_text)
            self._pending_text.clear()
            self.protocol.notify(EVENT, {"type": "textDelta", "text": text})

    def fallback_uri(self) -> str | None:
        """Where a reminder goes when the agent has touched no file yet: an open document."""
        return next(iter(self.workspace.text_documents), None)

    # Requests --------------------------------------------------------------------------
    async def run(self, prompt: str, new_session: bool) -> dict[str, Any]:
        from plansight.session import SessionBusy

        session = self.require_session()
        if session.running:
            raise JsonRpcException(
                message="A Plansight run is already in progress.", code=REQUEST_FAILED
            )
        assert self.run_progress is not None
        unsubscribe = session.events.subscribe(self._progress_end)
        try:
            await self.run_progress.begin(session.plan.state)
            result: RunResult = await session.run(prompt, new_session=new_session)
            return result.to_wire()
        except SessionBusy as err:
            raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from err
        finally:
            unsubscribe()
            self.run_progress.end("")

    def _progress_end(self, event: Event) -> None:
        if isinstance(event, RunFinished) and self.run_progress is not None:
            self.run_progress.end(event.result.status)

    def edit_plan(self, items: Any, version: Any) -> dict[str, Any]:
        session = self.require_session()
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise JsonRpcException(
                message="'version' must be a whole number (the plan's version).",
                code=INVALID_PARAMS,
            )
        try:
            state = session.edit_plan(to_plain(items), version)
        except StalePlanError as err:
            raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from err
        except PlanError as err:
            raise JsonRpcException(message=str(err), code=INVALID_PARAMS) from err
        return state.to_wire()

    async def compact(self) -> dict[str, int]:
        from plansight.model import ModelError
        from plansight.session import SessionBusy

        session = self.require_session()
        try:
            result = await session.compact()
        except SessionBusy as err:
            raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from err
        except ModelError as err:
            raise JsonRpcException(
                message=f"Compaction failed: {err}", code=REQUEST_FAILED
            ) from err
        return {"beforeTokens": result.before_tokens, "afterTokens": result.after_tokens}

    def reset(self) -> None:
        session = self.require_session()
        if session.running:
            raise JsonRpcException(
                message="A Plansight run is in progress; cancel it before resetting.",
                code=REQUEST_FAILED,
            )
        session.reset()

    async def shutdown_background(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()


def remove_leftovers(root: Path) -> None:
    """The temporary files of writes a killed server never finished (off the event loop)."""
    from plansight.atomic import remove_leftovers as remove_temp_files
    from plansight.watcher import IGNORED_DIRS

    try:
        removed = remove_temp_files(root, IGNORED_DIRS)
    except Exception:
        log.exception("could not look for temporary files left by an interrupted write")
        return
    if removed:
        log.info("removed %d temporary files left by an interrupted write", len(removed))


def api_timeout_from_env() -> float | None:
    """PLANSIGHT_API_TIMEOUT: seconds before one model request counts as hung."""
    raw = os.environ.get("PLANSIGHT_API_TIMEOUT")
    try:
        value = float(raw) if raw else None
    except ValueError:
        log.warning("ignoring PLANSIGHT_API_TIMEOUT=%r: not a number", raw)
        return None
    return value if value and value > 0 else None


def workspace_root(params: types.InitializeParams) -> Path:
    for uri in [
        *(folder.uri for folder in params.workspace_folders or []),
        params.root_uri,
    ]:
        if uri and (path := to_fs_path(uri)):
            return Path(path)
    if params.root_path:
        return Path(params.root_path)
    return Path.cwd()


def create_server() -> PlansightServer:
    server = PlansightServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: PlansightServer, params: types.InitializeParams) -> None:
        ls.init_params = params

    @server.feature(types.INITIALIZED)
    def initialized(ls: PlansightServer, params: types.InitializedParams) -> None:
        if ls.init_params is not None:
            ls.setup(ls.init_params)
            ls.start_background()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: PlansightServer, params: Any) -> None:
        await ls.shutdown_background()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel_progress(ls: PlansightServer, params: types.WorkDoneProgressCancelParams) -> None:
        # The progress's cancel button means the same as $/cancelRequest on the run.
        if ls.run_progress is not None and params.token == ls.run_progress.token:
            ls.require_session().cancel()

    @server.feature(RUN)
    async def run(ls: PlansightServer, params: Any) -> dict[str, Any]:
        prompt = field_of(params, "prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise JsonRpcException(
                message="'prompt' must be a non-empty string.", code=INVALID_PARAMS
            )
        return await ls.run(prompt, field_of(params, "newSession") is True)

    @server.feature(STATE)
    def state(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return ls.require_session().state()

    @server.feature(EDIT_PLAN)
    def edit_plan(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return ls.edit_plan(field_of(params, "items"), field_of(params, "version"))

    @server.feature(RESET)
    def reset(ls: PlansightServer, params: Any) -> None:
        ls.reset()

    @server.feature(COMPACT)
    async def compact(ls: PlansightServer, params: Any) -> dict[str, int]:
        return await ls.compact()

    return server


def serve() -> None:
    logging.basicConfig(
        level=os.environ.get("PLANSIGHT_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("pygls", "httpx2", "httpcore2", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    asyncio.set_event_loop(asyncio.new_event_loop())
    server = create_server()
    logging.getLogger().addHandler(LogMessageHandler(server, logging.INFO))
    server.start_io()
    # Everything is saved as it happens; skip the slow teardown of the SDK's objects at exit.
    logging.shutdown()
    with suppress(ValueError, OSError):  # `exit` closes stdout
        sys.stdout.flush()
    os._exit(0)
