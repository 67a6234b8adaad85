"""Thin LSP handlers; the work happens in Session (engine) and the features beside this module.

The workspace's many sessions (protocol version 4) are driven through `Sessions`
(session/sessions.py): the requests that name a `sessionId` (default: the current session)
and the session requests (`plansight/sessions`, `newSession`, `openSession`, `renameSession`,
`deleteSession`). Whenever another session is loaded, its plan and scratchpad go to the
client (a client of version 1–3 sees its current session's state, as before).

Each handler reads its params (`params`: typed, -32602 naming the field at fault), calls the
session, and answers the result's `to_wire()`; `engine_errors` turns the engine's refusals
into the protocol's errors. The features that own their state set themselves up on the
session once the client is initialized (`setup(server, session)` in each): `forwarding`
(notifications), `progress` (the run's work-done progress), `diagnostics` (the reminder).
`editor` answers the engine's hooks with requests to the client; `stdio` is how the server
meets its client and leaves it.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from plansight import __version__
from plansight.lsp.logs import LogMessageHandler
from plansight.lsp.params import (
    CheckpointFileParams,
    EditPlanParams,
    HistoryParams,
    NewSessionParams,
    ParamsReader,
    RenameSessionParams,
    RestoreParams,
    RunParallelParams,
    RunParams,
    SessionIdParams,
    SessionParams,
    WorkerParams,
)
from plansight.lsp.stdio import Leave, serve_stdio
from plansight.protocol.names import (
    CANCEL_WORKER,
    CHANGES,
    CHECKPOINT_FILE,
    CHECKPOINTS,
    COMPACT,
    DELETE_SESSION,
    DROP_CHANGES,
    EDIT_PLAN,
    EVENT,
    HISTORY,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MCP,
    MODELS,
    NEW_SESSION,
    OPEN_SESSION,
    RENAME_SESSION,
    REQUEST_FAILED,
    RESET,
    RESTORE,
    RUN,
    RUN_PARALLEL,
    SERVER_NOT_INITIALIZED,
    SESSIONS,
    STATE,
    TAKE_IN,
    WORKERS,
    event_payload,
    server_capability,
)
from plansight.protocol.options import InitOptions

if TYPE_CHECKING:
    from plansight.parallel.workers import Workers
    from plansight.session.session import Session
    from plansight.session.sessions import Sessions
    from plansight.session.storage import SessionStore

log = logging.getLogger(__name__)

NO_FOLDER = (
    "Open a folder to use Plansight: the editor opened none, and Plansight works only on a "
    "folder you open (never on the folder the server happens to start in)."
)


class PlansightProtocol(LanguageServerProtocol):
    _server: PlansightServer

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        # pygls's capability builder drops `experimental`; announce the protocol here.
        experimental = result.capabilities.experimental
        merged = dict(experimental) if isinstance(experimental, dict) else {}
        merged["plansight"] = server_capability()
        if self._server.read_only is not None:
            merged["plansight"] = {**merged["plansight"], "readOnly": self._server.read_only}
        result.capabilities.experimental = merged
        return result

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # Instead of pygls's sys.exit from inside a handler: the server winds down in order.
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        asked = self._shutdown or self._server.shut_down  # shutdown may still be winding down
        self._server.exit_requested(0 if asked else 1, client_gone=True)


class PlansightServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "plansight",
            __version__,
            protocol_cls=PlansightProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.session: Session | None = None
        self.sessions: Sessions | None = None
        self.workers: Workers | None = None  # version 4: plan items run in parallel
        self.store: SessionStore | None = None  # claimed at `initialize`
        self.init_params: types.InitializeParams | None = None
        # A read-only view's answer to `initialize` (`heldBy`: the server keeping the session).
        self.read_only: dict[str, Any] | None = None
        self.shut_down = False
        self.exit_requested: Leave = _not_serving
        # `initialize` named no folder (no rootUri, rootPath or workspaceFolders): no session.
        self.no_folder = False

    def start_io(self, stdin: Any = None, stdout: Any = None) -> int:
        """Serve the client on stdio until `exit`, the end of input or a signal: the exit code."""
        return serve_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    @cached_property
    def params(self) -> ParamsReader:
        """Reads the requests' params (its converter is made on the first request)."""
        return ParamsReader()

    def claim_storage(self, params: types.InitializeParams) -> None:
        """Claim the workspace's session before `initialize` is answered, so that an editor
        (or `plansight run`) is refused at once when another server keeps it, or when it
        cannot be saved (session/lock.py): the refusal is the answer's error, which the
        client shows. Light: the engine is not imported yet.

        With the readOnly option nothing is claimed: the session is opened read-only (lock.py),
        and the answer says who keeps it, if anyone (`readOnly` in the capability)."""
        from plansight.session.lock import StorageUnavailable
        from plansight.session.storage import SessionStore, storage_dir_for

        options = InitOptions.parse(params.initialization_options)
        root = workspace_root(params)
        if root is None:
            return  # no folder: nothing to claim, and no session is made (`setup`)
        directory = storage_dir_for(root, options.storage_dir)
        if options.read_only:
            self.store = SessionStore(directory, read_only=True)
            self.read_only = {"heldBy": self.store.claim.holder()}
            return
        store = SessionStore(directory)
        client = params.client_info.name if params.client_info else "an editor"
        holder = f"{client}, pid {params.process_id}" if params.process_id else client
        try:
            store.claim.take(holder)
        except StorageUnavailable as err:
            log.info("initialize refused: %s", err)  # said once, by the client (not forwarded)
            raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from None
        self.store = store

    def setup(self, params: types.InitializeParams) -> Session | None:
        """The session, its stored state loaded, the features set up on it, and started; None
        when the editor named no folder: every request then answers `NO_FOLDER`."""
        root = workspace_root(params)
        if root is None:
            # The server's cwd is no workspace (an editor with no folder open starts it in
            # $HOME, say): listing, watching and checkpointing it would be the agent working
            # where nobody asked. Nothing is set up.
            self.no_folder = True
            log.warning("%s", NO_FOLDER)
            return None
        # The engine is imported here, after `initialize` was answered: the editor sees the
        # server ready sooner, and nothing it sends before `initialized` needs the engine.
        from plansight.lsp import diagnostics, forwarding, planfile, progress
        from plansight.lsp.editor import EditorBridge
        from plansight.session.session import Session
        from plansight.session.sessions import Sessions
        from plansight.session.settings import SessionSettings

        options = InitOptions.parse(params.initialization_options)
        for problem in options.problems:
            log.warning("%s", problem)
        settings = SessionSettings.from_options(options, os.environ)
        bridge = EditorBridge(self)
        session = Session(
            root,
            settings,
            review=bridge.review,
            approve=bridge.approve,
            review_plan=bridge.review_plan,
            ask=bridge.ask,
            documents=bridge,
            store=self.store if self.store is not None else settings.store_for(root),
            approve_tool=bridge.approve_tool,
            trust_server=bridge.trust_server,
            mcp_servers=options.mcp_servers,
        )
        self.session = session
        sessions = self.sessions = Sessions(session, waiting=lambda: bridge.pending > 0)
        forwarding.setup(self, session, lambda: sessions.loaded, sessions.plan_files.relative)
        for feature in (progress, diagnostics):
            feature.setup(self, session)
        planfile.setup(self, sessions.plan_files)
        log.info(
            "workspace %s, storage %s, model %s",
            root,
            session.store.directory if session.store else None,
            settings.model.model or "default",
        )
        if sessions.load_stored():
            self.send_state(sessions.loaded)
        # From now on, each session loaded in its place is shown to the client at once.
        sessions.on_switch.append(self.send_state)
        from plansight.parallel.workers import Workers

        workers = self.workers = Workers(
            sessions,
            max_workers=options.parallel_max,
            front_door={
                "approve_tool": bridge.approve_tool,
                "ask": bridge.ask,
                "mcp_servers": options.mcp_servers,
            },
        )
        workers.on_event.append(lambda e: self.protocol.notify(EVENT, event_payload(e)))
        session.start()
        return session

    def send_state(self, session_id: str | None) -> None:
        """The plan and scratchpad of session `session_id` (the current one: None)."""
        from plansight.lsp import forwarding

        state = self.require_sessions().state(session_id)
        chosen = session_id or self.require_sessions().current
        forwarding.send_state(self.protocol.notify, state.todos, state.scratchpad, chosen)

    def send_history(self, session_id: str) -> None:
        """`plansight/event` `history`: the session's past runs, as `plansight/history`
        answers (the last 20), for a client that opened it."""
        from plansight.engine.events import SessionHistory

        runs = self.require_sessions().history(20, session_id).runs
        self.protocol.notify(EVENT, event_payload(SessionHistory(tuple(runs), session_id)))

    def require_sessions(self) -> Sessions:
        self.require_session()
        assert self.sessions is not None  # made with the session
        return self.sessions

    def require_workers(self) -> Workers:
        self.require_session()
        assert self.workers is not None  # made with the session
        return self.workers

    def require_session(self) -> Session:
        if self.shut_down:
            raise JsonRpcException(message="The server is shutting down.", code=INVALID_REQUEST)
        if self.session is None:
            if self.no_folder:
                raise JsonRpcException(message=NO_FOLDER, code=REQUEST_FAILED)
            raise JsonRpcException(
                message="The server is not initialized.", code=SERVER_NOT_INITIALIZED
            )
        return self.session

    async def stop(self) -> None:
        """End the run in progress, close the model's connections and stop watching."""
        if self.sessions is not None:
            await self.sessions.plan_files.close()  # a change just made still written
        if self.workers is not None:  # each stores what it did first
            await self.workers.close()
        if self.session is not None:
            await self.session.close()


@contextmanager
def engine_errors(model_failed: str = "") -> Iterator[None]:
    """The engine's refusals as the JSON-RPC errors the protocol gives them (a failed model
    request, outside a run, with its message after `model_failed`)."""
    from plansight.checkpoints import CheckpointError
    from plansight.checkpoints.facade import CheckpointsOff
    from plansight.engine.model import ModelError
    from plansight.parallel.workers import ParallelRefused, UnknownWorker
    from plansight.plan.plan import PlanError, StalePlanError
    from plansight.session.lock import SessionBusy
    from plansight.session.registry import UnknownSession

    try:
        yield
    except (SessionBusy, StalePlanError, CheckpointsOff, ParallelRefused) as err:
        raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from err
    except (PlanError, CheckpointError, UnknownSession, UnknownWorker) as err:
        raise JsonRpcException(message=str(err), code=INVALID_PARAMS) from err
    except ModelError as err:
        raise JsonRpcException(message=f"{model_failed}{err}", code=REQUEST_FAILED) from err


def _not_serving(code: int, *, client_gone: bool = False) -> None:
    log.warning("exit requested (%d) but the server is not serving", code)


def workspace_root(params: types.InitializeParams) -> Path | None:
    """The folder the editor opened; None when it named none (never the server's cwd)."""
    for uri in [
        *(folder.uri for folder in params.workspace_folders or []),
        params.root_uri,
    ]:
        if uri and (path := to_fs_path(uri)):
            return Path(path)
    if params.root_path:
        return Path(params.root_path)
    return None


def create_server() -> PlansightServer:
    server = PlansightServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: PlansightServer, params: types.InitializeParams) -> None:
        ls.claim_storage(params)
        ls.init_params = params

    @server.feature(types.INITIALIZED)
    def initialized(ls: PlansightServer, params: types.InitializedParams) -> None:
        if ls.init_params is not None:
            ls.setup(ls.init_params)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: PlansightServer, params: Any) -> None:
        ls.shut_down = True
        await ls.stop()

    @server.feature(RUN)
    async def run(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, RunParams)
        sessions = ls.require_sessions()
        with engine_errors():  # an unknown todoId is a PlanError: -32602
            result = await sessions.run(
                asked.prompt,
                session_id=asked.session_id,
                new_session=asked.new_session,
                mode=asked.run_mode,
                todo_id=asked.todo_id,
            )
        return result.to_wire()

    @server.feature(STATE)
    def state(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, SessionParams)
        sessions = ls.require_sessions()
        with engine_errors():
            # As versions 1–3 answered it (clients check its fields): the session is the one
            # asked for, or the current one (`plansight/sessions` says which).
            return sessions.state(asked.session_id).to_wire()

    @server.feature(EDIT_PLAN)
    def edit_plan(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, EditPlanParams)
        sessions = ls.require_sessions()
        with engine_errors():
            # The TodoState as versions 1–3 answered it (the `todos` notification names the
            # session).
            return sessions.edit_plan(asked.items, asked.version, asked.session_id).to_wire()

    @server.feature(RESET)
    def reset(ls: PlansightServer, params: Any) -> None:
        sessions = ls.require_sessions()
        with engine_errors():
            sessions.reset()  # a new session; the old one stays listed

    @server.feature(COMPACT)
    async def compact(ls: PlansightServer, params: Any) -> dict[str, int]:
        asked = ls.params.read(params, SessionParams)
        sessions = ls.require_sessions()
        with engine_errors("Compaction failed: "):
            return (await sessions.compact(asked.session_id)).to_wire()

    @server.feature(HISTORY)
    def history(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, HistoryParams)
        with engine_errors():
            return ls.require_sessions().history(asked.limit, asked.session_id).to_wire()

    @server.feature(SESSIONS)
    def sessions_list(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return {"sessions": [info.to_wire() for info in ls.require_sessions().list()]}

    @server.feature(NEW_SESSION)
    def new_session(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, NewSessionParams)
        sessions = ls.require_sessions()
        with engine_errors():
            session_id = sessions.new(asked.title)
        if session_id != sessions.loaded:  # another session runs: its state was not sent
            ls.send_state(session_id)
        return {"id": session_id}

    @server.feature(OPEN_SESSION)
    def open_session(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, SessionIdParams)
        sessions = ls.require_sessions()
        switched: list[str] = []
        sessions.on_switch.append(switched.append)
        try:
            with engine_errors():
                state = sessions.open(asked.id)
        finally:
            sessions.on_switch.remove(switched.append)
        if not switched:  # loaded already, or read from its files: not sent yet
            ls.send_state(asked.id)
        ls.send_history(asked.id)
        return {**state.to_wire(), "sessionId": asked.id}

    @server.feature(RENAME_SESSION)
    def rename_session(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, RenameSessionParams)
        with engine_errors():
            return ls.require_sessions().rename(asked.id, asked.title).to_wire()

    @server.feature(DELETE_SESSION)
    def delete_session(ls: PlansightServer, params: Any) -> None:
        asked = ls.params.read(params, SessionIdParams)
        with engine_errors():
            ls.require_sessions().delete(asked.id)

    @server.feature(MCP)
    def mcp(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return ls.require_session().mcp.to_wire()

    @server.feature(CHECKPOINTS)
    async def checkpoints(ls: PlansightServer, params: Any) -> dict[str, Any]:
        session = ls.require_session()
        with engine_errors():
            found = await session.checkpoints.taken()
        return {"checkpoints": [c.to_wire() for c in found]}

    @server.feature(RESTORE)
    async def restore(ls: PlansightServer, params: Any) -> dict[str, Any]:
        read = ls.params.read(params, RestoreParams)
        asked = read.request()
        sessions = ls.require_sessions()
        with engine_errors():
            result = await sessions.restore(asked, read.session_id)
        return result.to_wire()

    @server.feature(CHANGES)
    async def changes(ls: PlansightServer, params: Any) -> dict[str, Any]:
        session = ls.require_session()
        with engine_errors():
            return (await session.checkpoints.step_changes()).to_wire()

    @server.feature(MODELS)
    async def models(ls: PlansightServer, params: Any) -> dict[str, Any]:
        session = ls.require_session()
        with engine_errors():
            return (await session.model.list_models()).to_wire()

    @server.feature(CHECKPOINT_FILE)
    async def checkpoint_file(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, CheckpointFileParams)
        session = ls.require_session()
        with engine_errors():
            return (await session.checkpoints.file_at(asked.checkpoint, asked.path)).to_wire()

    @server.feature(RUN_PARALLEL)
    async def run_parallel(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, RunParallelParams)
        workers = ls.require_workers()
        with engine_errors():
            if asked.take_in:
                run = await workers.run_then_take_in(list(asked.todo_ids), asked.session_id)
                return run.to_wire()
            return await workers.run_parallel(list(asked.todo_ids), asked.session_id)

    @server.feature(WORKERS)
    def workers_list(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return {"workers": ls.require_workers().listed()}

    @server.feature(TAKE_IN)
    async def take_in(ls: PlansightServer, params: Any) -> dict[str, Any]:
        asked = ls.params.read(params, WorkerParams)
        workers = ls.require_workers()
        with engine_errors():
            return await workers.take_in(asked.todo_id, asked.session_id)

    @server.feature(DROP_CHANGES)
    def drop_changes(ls: PlansightServer, params: Any) -> None:
        asked = ls.params.read(params, WorkerParams)
        with engine_errors():
            ls.require_workers().drop(asked.todo_id, asked.session_id)

    @server.feature(CANCEL_WORKER)
    def cancel_worker(ls: PlansightServer, params: Any) -> None:
        asked = ls.params.read(params, WorkerParams)
        with engine_errors():
            ls.require_workers().cancel(asked.todo_id, asked.session_id)

    return server


def serve() -> None:
    logging.basicConfig(
        level=os.environ.get("PLANSIGHT_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("pygls", "httpx2", "httpcore2", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    server = create_server()
    logging.getLogger().addHandler(LogMessageHandler(server, logging.INFO))
    code = server.start_io()
    # Everything is saved as it happens; skip the slow teardown of the SDK's objects at exit,
    # and the join of the thread still blocked reading stdin.
    logging.shutdown()
    os._exit(code)
