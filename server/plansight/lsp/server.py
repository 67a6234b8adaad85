"""Thin LSP handlers; the work happens in Session (engine) and the features beside this module.

Features that own their state listen to the session's events: `forwarding` (notifications),
`progress` (the run's work-done progress), `diagnostics` (the reminder). `editor` answers the
engine's hooks with requests to the client; `stdio` is how the server meets its client and
leaves it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from plansight import __version__
from plansight.lsp.logs import LogMessageHandler
from plansight.lsp.stdio import serve_stdio
from plansight.protocol.names import (
    CHANGES,
    CHECKPOINT_FILE,
    CHECKPOINTS,
    COMPACT,
    EDIT_PLAN,
    HISTORY,
    INVALID_PARAMS,
    INVALID_REQUEST,
    REQUEST_FAILED,
    RESET,
    RESTORE,
    RUN,
    RUN_MODES,
    SERVER_NOT_INITIALIZED,
    STATE,
    field_of,
    server_capability,
    to_plain,
)
from plansight.protocol.options import InitOptions

if TYPE_CHECKING:
    from plansight.engine.planmode import RunMode
    from plansight.lsp.forwarding import EventForwarder
    from plansight.lsp.progress import RunProgress
    from plansight.session.session import Session
    from plansight.workspace.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)


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
        self.forwarder: EventForwarder | None = None
        self.run_progress: RunProgress | None = None
        self.watcher: WorkspaceWatcher | None = None
        self.init_params: types.InitializeParams | None = None
        self.shut_down = False
        self.exit_requested = _not_serving

    def start_io(self, stdin: Any = None, stdout: Any = None) -> int:
        """Serve the client on stdio until `exit`, the end of input or a signal: the exit code."""
        return serve_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    # Set-up ----------------------------------------------------------------------------
    def setup(self, params: types.InitializeParams) -> None:
        # The engine is imported here, after `initialize` was answered: the editor sees the
        # server ready sooner, and nothing it sends before `initialized` needs the engine.
        from plansight.lsp.diagnostics import ReminderDiagnostics
        from plansight.lsp.editor import EditorBridge, path_uri
        from plansight.lsp.forwarding import EventForwarder
        from plansight.lsp.progress import RunProgress
        from plansight.session.session import Session, SessionSettings

        options = InitOptions.parse(params.initialization_options)
        for problem in options.problems:
            log.warning("%s", problem)
        root = workspace_root(params)
        settings = SessionSettings.from_options(options, os.environ)
        bridge = EditorBridge(self, options)
        session = Session(
            root,
            settings,
            review=bridge.review,
            approve=bridge.approve,
            review_plan=bridge.review_plan,
            ask=bridge.ask,
            documents=bridge,
            store=settings.store_for(root),
        )
        self.session = session
        forwarder = EventForwarder(
            self.protocol.notify, tool_input=bridge.client_offers("toolInputDelta")
        )
        self.forwarder = forwarder
        self.run_progress = RunProgress(self, lambda: session.plan.state, session.cancel)
        diagnostics = ReminderDiagnostics(
            session.root, self.text_document_publish_diagnostics, path_uri, self.open_uri
        )
        for listener in (forwarder, self.run_progress, diagnostics):
            session.events.subscribe(listener)
        log.info(
            "workspace %s, storage %s, model %s",
            root,
            session.store.directory if session.store else None,
            settings.model.model or "default",
        )

    def start_background(self) -> None:
        from plansight.workspace.watcher import WorkspaceWatcher

        session = self.require_session()
        if session.restore() and self.forwarder is not None:
            self.forwarder.send_state(session.plan.state, session.scratchpad.content)
        self.watcher = WorkspaceWatcher(session.root, session.files_changed)
        self.watcher.start()
        session.files_watched()
        # The SDK's import (and the leftovers' removal) in threads, once the watcher's first
        # step has imported watchfiles: imports that run side by side slow each other down,
        # and this one is on the event loop.
        asyncio.get_running_loop().call_soon(session.start)

    def require_session(self) -> Session:
        if self.shut_down:
            raise JsonRpcException(message="The server is shutting down.", code=INVALID_REQUEST)
        if self.session is None:
            raise JsonRpcException(
                message="The server is not initialized.", code=SERVER_NOT_INITIALIZED
            )
        return self.session

    def open_uri(self) -> str | None:
        """Where a reminder goes when the agent has touched no file yet: an open document."""
        return next(iter(self.workspace.text_documents), None)

    # Requests --------------------------------------------------------------------------
    async def run(
        self, prompt: str, new_session: bool, mode: RunMode, todo_id: str | None
    ) -> dict[str, Any]:
        session = self.require_session()
        with engine_errors():  # an unknown todoId is a PlanError: -32602
            result = await session.run(prompt, new_session=new_session, mode=mode, todo_id=todo_id)
        return result.to_wire()

    def edit_plan(self, items: Any, version: int | None) -> dict[str, Any]:
        session = self.require_session()
        with engine_errors():
            return session.edit_plan(to_plain(items), version).to_wire()

    def reset(self) -> None:
        session = self.require_session()
        with engine_errors():
            session.reset()

    async def compact(self) -> dict[str, int]:
        session = self.require_session()
        with engine_errors("Compaction failed: "):
            result = await session.compact()
        return {"beforeTokens": result.before_tokens, "afterTokens": result.after_tokens}

    async def checkpoints(self) -> dict[str, Any]:
        session = self.require_session()
        with engine_errors():
            found = await session.checkpoints()
        return {"checkpoints": [c.to_wire() for c in found]}

    async def restore(self, params: Any) -> dict[str, Any]:
        session = self.require_session()
        checkpoint = _optional_text(params, "checkpoint")
        todo_id = _optional_text(params, "todoId")
        if (checkpoint is None) == (todo_id is None):
            raise invalid_params("Give either 'checkpoint' (an id) or 'todoId' (a plan item).")
        paths = to_plain(field_of(params, "paths"))
        if paths is not None and (
            not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths)
        ):
            raise invalid_params("'paths' must be a list of paths relative to the workspace.")
        flags = {name: field_of(params, name) for name in ("conversation", "force", "dryRun")}
        for name, value in flags.items():
            if value is not None and not isinstance(value, bool):
                raise invalid_params(f"'{name}' must be true or false.")
        with engine_errors():
            result = await session.restore_checkpoint(
                checkpoint=checkpoint,
                todo_id=todo_id,
                paths=paths,
                conversation=flags["conversation"] is True,
                force=flags["force"] is True,
                dry_run=flags["dryRun"] is True,
            )
        return {
            "restored": list(result.restored),
            "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped],
        }

    async def changes(self) -> dict[str, Any]:
        session = self.require_session()
        with engine_errors():
            steps = await session.step_changes()
        return {
            "steps": [
                {
                    "todoId": todo_id,
                    "files": [
                        {"path": f.path, "change": f.change}
                        | ({"before": f.before.id} if f.before is not None else {})
                        for f in files
                    ],
                }
                for todo_id, files in steps.items()
            ]
        }

    async def checkpoint_file(self, params: Any) -> dict[str, Any]:
        session = self.require_session()
        checkpoint = _optional_text(params, "checkpoint")
        path = _optional_text(params, "path")
        if checkpoint is None or path is None:
            raise invalid_params("Give 'checkpoint' (an id) and 'path' (relative to the root).")
        with engine_errors():
            data = await session.checkpoint_file(checkpoint, path)
        if data is None:
            return {"exists": False}
        try:
            return {"exists": True, "text": data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"exists": True, "binary": True}

    async def stop(self) -> None:
        """End the run in progress, close the model's connections and stop watching."""
        if self.session is not None:
            await self.session.close()
        if self.watcher is not None:
            await self.watcher.stop()
            self.watcher = None


@contextmanager
def engine_errors(model_failed: str = "") -> Iterator[None]:
    """The engine's refusals as the JSON-RPC errors the protocol gives them (a failed model
    request, outside a run, with its message after `model_failed`)."""
    from plansight.checkpoints import CheckpointError
    from plansight.engine.model import ModelError
    from plansight.plan.plan import PlanError, StalePlanError
    from plansight.session.session import CheckpointsOff, SessionBusy

    try:
        yield
    except (SessionBusy, StalePlanError, CheckpointsOff) as err:
        raise JsonRpcException(message=str(err), code=REQUEST_FAILED) from err
    except (PlanError, CheckpointError) as err:
        raise JsonRpcException(message=str(err), code=INVALID_PARAMS) from err
    except ModelError as err:
        raise JsonRpcException(message=f"{model_failed}{err}", code=REQUEST_FAILED) from err


def _not_serving(code: int, *, client_gone: bool = False) -> None:
    log.warning("exit requested (%d) but the server is not serving", code)


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


def invalid_params(message: str) -> JsonRpcException:
    return JsonRpcException(message=message, code=INVALID_PARAMS)


def _optional_text(params: Any, name: str) -> str | None:
    value = field_of(params, name)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise invalid_params(f"'{name}' must be a non-empty string.")
    return value


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
        ls.shut_down = True
        await ls.stop()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel_progress(ls: PlansightServer, params: types.WorkDoneProgressCancelParams) -> None:
        if ls.run_progress is not None:
            ls.run_progress.cancel(params.token)

    @server.feature(RUN)
    async def run(ls: PlansightServer, params: Any) -> dict[str, Any]:
        prompt = field_of(params, "prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise invalid_params("'prompt' must be a non-empty string.")
        mode = field_of(params, "mode") or "act"
        if mode not in RUN_MODES:
            raise invalid_params(f"'mode' must be one of {', '.join(RUN_MODES)}, not {mode!r}.")
        todo_id = field_of(params, "todoId")
        if todo_id is not None:
            if isinstance(todo_id, bool) or not isinstance(todo_id, str | int):
                raise invalid_params("'todoId' must be a plan item's id (a string).")
            todo_id = str(todo_id).strip()
        new_session = field_of(params, "newSession") is True
        return await ls.run(prompt, new_session, cast("RunMode", mode), todo_id)

    @server.feature(STATE)
    def state(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return ls.require_session().state()

    @server.feature(EDIT_PLAN)
    def edit_plan(ls: PlansightServer, params: Any) -> dict[str, Any]:
        version = field_of(params, "version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise invalid_params("'version' must be a whole number (the plan's version).")
        return ls.edit_plan(field_of(params, "items"), version)

    @server.feature(RESET)
    def reset(ls: PlansightServer, params: Any) -> None:
        ls.reset()

    @server.feature(COMPACT)
    async def compact(ls: PlansightServer, params: Any) -> dict[str, int]:
        return await ls.compact()

    @server.feature(HISTORY)
    def history(ls: PlansightServer, params: Any) -> dict[str, Any]:
        from plansight.session.history import DEFAULT_LIMIT

        limit = field_of(params, "limit", DEFAULT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise invalid_params("'limit' must be a whole number of runs, 0 or more.")
        return {"runs": ls.require_session().history(limit)}

    @server.feature(CHECKPOINTS)
    async def checkpoints(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return await ls.checkpoints()

    @server.feature(RESTORE)
    async def restore(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return await ls.restore(params)

    @server.feature(CHANGES)
    async def changes(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return await ls.changes()

    @server.feature(CHECKPOINT_FILE)
    async def checkpoint_file(ls: PlansightServer, params: Any) -> dict[str, Any]:
        return await ls.checkpoint_file(params)

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
