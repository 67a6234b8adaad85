"""`plansight acp`: the Agent Client Protocol (version 1) front door over `Session`.

Each workspace `cwd` open on the connection has one engine (`Session`) and one `Sessions`
(workspaces.py), with the options of `plansight lsp` (the environment, then
`$XDG_CONFIG_HOME/plansight/config.json`), its storage, checkpoints and history. Each ACP
session is one of the workspace's stored sessions, its id the Plansight session's id, so that
`session/list` names it and `session/resume` (no replay) or `session/load` (replayed: updates.py
`replayed`) open it after a restart; `session/new` adds a session and keeps the others. One
prompt runs at a time in a workspace; its prompts go through `Sessions.run`, so titles, times
and statuses are kept. The engine's events become
`session/update`s (updates.py), sent in order through one outbox per session; the engine's
hooks are answered by the client (permissions.py); files go through the client's `fs/*` where
it offers them (files.py); prompts beginning `/plan`, `/step`, `/undo`, `/compact` or
`/checkpoints` are the slash commands (commands.py).

Errors a client can cause (an unknown session, a bad `cwd`, a prompt while one runs, an unknown
plan item) are JSON-RPC errors saying what to do (errors.py; none with a null member); the
agent keeps serving. The mode is offered as `modes` and as a config option (modes.py); each
model turn's usage is told (usage.py); the session's title, from its first prompt, is told as
`session_info_update`; `session/close` ends a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import (
    PROTOCOL_VERSION,
    Client,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionModeResponse,
    update_agent_message_text,
)
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    ListSessionsResponse,
    McpCapabilities,
    PromptCapabilities,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
)
from acp.schema import SessionInfo as AcpSessionInfo

from plansight import __version__
from plansight.acp.commands import SlashCommand, available_commands, item_id, parse_command
from plansight.acp.errors import INTERNAL_ERROR, invalid_params, request_failed, run_error
from plansight.acp.files import ClientFiles
from plansight.acp.modes import (
    MODE_OPTION,
    Mode,
    as_mode,
    config_options,
    mode_changed,
    mode_state,
    unknown_mode,
)
from plansight.acp.outbox import Outbox
from plansight.acp.permissions import ClientHooks, ShownCall
from plansight.acp.servers import mcp_servers
from plansight.acp.texts import (
    checkpoints_text,
    no_such_item,
    prompt_text,
    restore_text,
    session_title,
    workspace,
)
from plansight.acp.updates import (
    TurnText,
    Update,
    call_display,
    cut_off_reason,
    event_updates,
    message_chunk,
    new_run_id,
    plan_checklist,
    session_prompts,
    stop_reason,
    tool_cut_off,
    tool_finished,
    tool_kind,
)
from plansight.acp.usage import usage_update
from plansight.acp.workspaces import Attending, Workspace
from plansight.engine.events import (
    Event,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnUsage,
)
from plansight.engine.spend import Spend
from plansight.protocol.options import InitOptions

if TYPE_CHECKING:
    from plansight.session.session import Session

log = logging.getLogger(__name__)

STORED_ID = "acp"  # the part of the session's storage that holds its ACP session id
# Whose results the tool call shows in full (a command's output, matches); others their summary.
# `other`: an MCP tool's (its result is what the call was for, as a command's output is).
FULL_OUTPUT_KINDS = frozenset({"execute", "search", "other"})
OUTPUT_CHARS = 30_000
# How long a prompt sent right after session/cancel waits for the cancelled run to wind down
# (stopping a command's process group takes a moment) before it is refused as before.
CANCEL_GRACE = 10.0


# ----- one ACP session --------------------------------------------------------------------------


@dataclass
class AcpSession:
    id: str
    session: Session
    hooks: ClientHooks
    outbox: Outbox
    max_rounds: int
    sid: str  # the Plansight session's id (session/sessions.py): the ACP id but for a v3 one
    workspace: Workspace
    mode: Mode = "act"
    prompting: bool = False
    cancelling: bool = False  # session/cancel came for the prompt in progress
    idle: asyncio.Event = field(default_factory=asyncio.Event)  # set when no prompt is in progress
    run: asyncio.Task[Any] | None = None
    unsubscribe: list[Any] = field(default_factory=list)
    run_id: str = ""  # unique to the run in progress: its text's messageIds
    turn_text: TurnText = field(default_factory=TurnText)  # the run's text, turns apart
    open_calls: dict[str, ShownCall] = field(default_factory=dict)  # started, not yet ended
    spend: Spend = field(default_factory=Spend)
    title: str | None = None  # told once (`session_info_update`)

    def switched(self, mode: Mode) -> None:
        """The run switched the session's mode (an approved plan: `act`)."""
        self.mode = mode

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.run_id = new_run_id()
            self.turn_text = TurnText()
        if isinstance(event, TextDelta):
            if event.text:
                text = self.turn_text(event.text, event.turn)
                self.outbox.put(message_chunk(text, self.run_id, event.turn))
            return
        if isinstance(event, TurnUsage):
            # Told once what the turn called has begun (the next turn of the event loop): off
            # the path of the plan update a todo call makes, which editors wait for.
            asyncio.get_running_loop().call_soon(self._usage, event)
            return
        if isinstance(event, ToolCall):
            # What the permission requests about it repeat (permissions.py).
            shown = call_display(self.session.tools, event.name, event.input, event.summary)
            self.open_calls[event.id] = ShownCall(shown.kind, shown.title)
        if isinstance(event, ToolResult):
            self.open_calls.pop(event.id, None)
            self.outbox.put(self._finished(event))
            return
        if isinstance(event, RunFinished):
            self.cut_off(event.result.status)
        for update in event_updates(self.session.root, self.session.tools, event, self.run_id):
            self.outbox.put(update)

    def cut_off(self, status: str) -> None:
        """End the calls the run's end cut off (a cancel, an error): the engine ends none of
        them, and ACP wants each to end. Called again, nothing is left to end."""
        why = cut_off_reason(status)
        for call_id, named in list(self.open_calls.items()):
            self.outbox.put(tool_cut_off(call_id, why, named.kind, named.title))
        self.open_calls.clear()
        self.hooks.shown.clear()

    def _usage(self, event: TurnUsage) -> None:
        self.outbox.put(usage_update(self.spend.update(event)))

    def _finished(self, result: ToolResult) -> Update:
        kept = self.hooks.shown.pop(result.id, [])
        if result.is_error:
            kept = []  # a rejected edit's diff was not applied: its end shows why instead
        if result.name == "todo" and not result.is_error:
            # The whole plan, for clients that render no `plan` update (the summary names one
            # item): the plan file's item lines.
            return tool_finished(result, plan_checklist(self.session.plan.state))
        shown = (
            result.output
            if tool_kind(self.session.tools, result.name) in FULL_OUTPUT_KINDS
            else None
        )
        return tool_finished(result, shown[:OUTPUT_CHARS] if shown else None, kept)


class KeptElsewhere(RequestError):
    """Another Plansight server keeps the folder (session/lock.py): one server per folder."""

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, message)


@dataclass
class WaitingSession:
    """A session made while another server keeps its folder: its prompts are refused with
    `refusal` until that server gives the folder up; then the first prompt opens it."""

    id: str
    cwd: str
    refusal: KeptElsewhere
    mode: Mode = "act"
    servers: list[Any] = field(default_factory=list)


# ----- the agent --------------------------------------------------------------------------------


class PlansightAgent:
    """The ACP agent (`acp.Agent`): one per connection, any number of sessions."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        write: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.write = write  # the transport's immediate write of a message, where it has one
        self.conn: Client | None = None
        self.client_caps = ClientCapabilities()
        self.client_name = "an ACP client"  # whom this server serves, for another's refusal
        self.sessions: dict[str, AcpSession] = {}
        self.workspaces: dict[Path, Workspace] = {}  # by resolved root
        # Sessions made while another server kept their folder (WaitingSession).
        self.waiting: dict[str, WaitingSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    @cached_property
    def options(self) -> InitOptions:
        """The options of `plansight lsp` (the environment, then the user's config.json),
        read once for the connection: every workspace, session and `/parallel` uses these
        (its problems logged once)."""
        from plansight.session.settings import user_config

        options = InitOptions.parse(user_config(self.env))
        for problem in options.problems:
            log.warning("config.json: %s", problem)
        return options

    # initialize --------------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self.client_caps = client_capabilities
        if client_info is not None:
            self.client_name = f"{client_info.name} (ACP)"
        log.info(
            "ACP client %s (protocol %d)",
            client_info.name if client_info else "unnamed",
            protocol_version,
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=False),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(
                    close=SessionCloseCapabilities(),
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                ),
            ),
            agent_info=Implementation(name="plansight", title="Plansight", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # the API key comes from the environment

    # sessions ----------------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        try:
            opened = await self._new(cwd, mcp_servers)
        except KeptElsewhere as err:
            # A second chat on the same project (a second `plansight acp`): most clients show a
            # failed session/new as a bare "Failed to create session" (CodeCompanion.nvim), but
            # a prompt's error in the chat. So the session is made, and each prompt tries the
            # folder again: refused with the reason while the other server keeps it.
            waiting = WaitingSession(f"plansight-waiting-{uuid.uuid4().hex[:12]}", cwd, err)
            waiting.servers = list(mcp_servers or [])
            self.waiting[waiting.id] = waiting
            return NewSessionResponse(
                session_id=waiting.id,
                modes=mode_state(waiting.mode),
                config_options=list(config_options(waiting.mode)),
            )
        self._after_answer(opened, available_commands())
        return NewSessionResponse(
            session_id=opened.id,
            modes=mode_state(opened.mode),
            config_options=list(config_options(opened.mode)),
        )

    async def _new(
        self, cwd: str, mcp_servers: Sequence[Any] | None, acp_id: str | None = None
    ) -> AcpSession:
        """A new session of `cwd` open here (ACP id `acp_id`, default its own id)."""
        place, fresh = await self._workspace(cwd, mcp_servers)
        # A workspace opened with nothing stored has a new, empty session already: use it.
        sid = place.sessions.current if fresh and place.sessions.current else None
        if sid is None:
            place.engine.lock.refuse_if_read_only()
            sid = place.sessions.new()  # the others, and the checkpoints, stay
        return self._attach(place, acp_id or sid, sid)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        from plansight.acp.updates import replayed  # only a load needs it

        opened = await self._reopen(cwd, session_id, mcp_servers)
        sessions = opened.workspace.sessions
        runs = sessions.history(50, opened.sid).runs
        todos = sessions.state(opened.sid).todos
        for update in replayed(opened.session.root, opened.session.tools, runs, todos):
            opened.outbox.put(update)
        await opened.outbox.flush()  # the replay comes before the answer
        self._told_reopened(opened, runs)
        return LoadSessionResponse(
            modes=mode_state(opened.mode), config_options=list(config_options(opened.mode))
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """`session/resume`: a stored session opened without its replay (the client shows
        the conversation it kept); the next prompt continues it."""
        opened = await self._reopen(cwd, session_id, mcp_servers)
        self._told_reopened(opened, opened.workspace.sessions.history(1, opened.sid).runs)
        return ResumeSessionResponse(
            modes=mode_state(opened.mode), config_options=list(config_options(opened.mode))
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """`session/list`: the stored sessions of `cwd` (whether open here or not), else of
        every workspace open on this connection; the one used last first, in one page."""
        from plansight.session.registry import LEGACY, SessionRegistry
        from plansight.session.settings import SessionSettings
        from plansight.session.storage import SessionStore

        found: list[AcpSessionInfo] = []
        roots = [workspace(cwd).resolve()] if cwd is not None else list(self.workspaces)
        for root in roots:
            place = self.workspaces.get(root)
            if place is not None:
                metas = [info.meta for info in place.sessions.list()]
            else:  # read where it lies, claiming and writing nothing: it is not open here
                settings = SessionSettings.from_options(self.options, self.env)
                registry = SessionRegistry(
                    SessionStore(settings.store_for(root).directory, read_only=True)
                )
                # A version 3 folder nobody moved yet has no id a load could name.
                metas = [registry.meta(i) for i in registry.ids() if i != LEGACY]
            found.extend(
                AcpSessionInfo(
                    session_id=meta.id,
                    cwd=str(root),
                    title=meta.title or None,
                    updated_at=meta.updated_at or None,
                )
                for meta in metas
            )
        found.sort(key=lambda info: info.updated_at or "", reverse=True)
        return ListSessionsResponse(sessions=found)

    async def _reopen(self, cwd: str, session_id: str, servers: Sequence[Any] | None) -> AcpSession:
        """The stored session `session_id` of `cwd`, open on this connection and current."""
        from plansight.session.registry import UnknownSession

        place, _ = await self._workspace(cwd, servers)
        sid = session_id
        if sid not in place.sessions.registry.ids():
            # Before version 4 the ACP id was our own, kept in the storage: that session
            # became the workspace's first one.
            stored = place.engine.store.load(STORED_ID) if place.engine.store else None
            legacy = isinstance(stored, dict) and stored.get("sessionId") == session_id
            sid = place.sessions.registry.current() if legacy else None  # type: ignore[assignment]
            if sid is None:
                raise invalid_params(
                    f"Unknown session {session_id!r} for {place.root}: session/list names the "
                    "stored ones; start a new session with session/new."
                )
        try:
            place.sessions.open(sid)
        except UnknownSession as err:
            raise invalid_params(f"Unknown session {session_id!r}: {err}") from None
        return self.sessions.get(session_id) or self._attach(place, session_id, sid)

    def _told_reopened(self, opened: AcpSession, runs: Sequence[Any]) -> None:
        self._after_answer(opened, available_commands())
        first = next(iter(session_prompts(runs)), None)
        title = opened.workspace.sessions.get(opened.sid).title
        if first is not None or title:
            opened.title = title or session_title(first or "")
            self._after_answer(
                opened, SessionInfoUpdate(session_update="session_info_update", title=opened.title)
            )

    def _after_answer(self, opened: AcpSession, update: Update | Any) -> None:
        # The answer is written before the next turn of the event loop (stdio.py sends at once),
        # so an update scheduled now reaches the client once it knows the session.
        asyncio.get_running_loop().call_soon(opened.outbox.put, update)

    async def _workspace(self, cwd: str, servers: Sequence[Any] | None) -> tuple[Workspace, bool]:
        """The workspace `cwd` open on this connection (opened now if it was not), and whether
        it was opened now with nothing stored."""
        from plansight.session.lock import StorageUnavailable
        from plansight.session.session import Session
        from plansight.session.sessions import Sessions
        from plansight.session.settings import SessionSettings

        root = workspace(cwd).resolve()
        if (place := self.workspaces.get(root)) is not None:
            if servers:
                # The engine's MCP servers were fixed when the workspace opened.
                log.info("%s is open already: its MCP servers stay those it opened with", root)
            return place, False
        conn = self._require_conn()
        settings = SessionSettings.from_options(self.options, self.env)
        store = settings.store_for(root)
        try:  # one server per workspace (session/lock.py): refused, never shared
            store.claim.take(self.client_name)
        except StorageUnavailable as err:
            # A second chat on the same project, in most editors: a second `plansight acp`.
            raise KeptElsewhere(
                f"Plansight could not open a session in {root}: {err} In an editor: continue "
                "in the chat that has this project open, or close that chat (or stop its "
                "agent) and send your prompt again."
            ) from None
        attending = Attending()
        fs = self.client_caps.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            attending.files = ClientFiles(
                conn, "", read=bool(fs.read_text_file), write=bool(fs.write_text_file)
            )
        engine = Session(
            root,
            settings,
            review=attending.review,
            approve=attending.approve,
            review_plan=attending.review_plan,
            ask=attending.ask,
            documents=attending.files,
            store=store,
            # The editor's MCP servers are trusted; their tools are approved like commands.
            approve_tool=attending.approve_tool,
            unasked=attending.unasked,
            mcp_servers=mcp_servers(servers),
        )
        sessions = Sessions(engine)  # the workspace's many (session/sessions.py)
        stored = sessions.load_stored()
        place = Workspace(root, engine, sessions, attending)
        place.unsubscribe.append(engine.events.subscribe(attending.on_event))
        engine.start()
        self.workspaces[root] = place
        log.info("workspace %s: storage %s", root, store.directory)
        return place, not stored

    def _attach(self, place: Workspace, acp_id: str, sid: str) -> AcpSession:
        """An ACP session `acp_id` on the workspace's session `sid` (the same id, but for a
        version 3 client's stored one)."""
        conn = self._require_conn()
        outbox = Outbox(conn, acp_id, self.write)
        engine = place.engine
        hooks = ClientHooks(
            conn=conn,
            session_id=acp_id,
            send=outbox.send,
            end_run=lambda text: engine.ctx.run.end(text),
            elicitation=self._offers_elicitation(),
        )
        opened = AcpSession(
            acp_id, engine, hooks, outbox, engine.settings.max_rounds, sid=sid, workspace=place
        )
        hooks.calls = opened.open_calls
        hooks.on_mode = opened.switched
        hooks.cancel_run = engine.cancel
        self.sessions[acp_id] = opened
        log.info("session %s: workspace %s", acp_id, place.root)
        return opened

    def _offers_elicitation(self) -> bool:
        elicitation = getattr(self.client_caps, "elicitation", None)
        return elicitation is not None and getattr(elicitation, "form", None) is not None

    def _require_conn(self) -> Client:
        if self.conn is None:
            raise request_failed("The agent is not connected.")
        return self.conn

    def _session(self, session_id: str) -> AcpSession:
        found = self.sessions.get(session_id)
        if found is None and (waiting := self.waiting.get(session_id)) is not None:
            raise request_failed(str(waiting.refusal))
        if found is None:
            raise invalid_params(
                f"Unknown session {session_id!r}: create one with session/new (or open a stored "
                "one with session/load or session/resume)."
            )
        return found

    async def _close(self, opened: AcpSession) -> None:
        """Frees the ACP session; the workspace (its engine, its storage) goes with the last
        of its sessions on this connection. The session stays stored for a load."""
        self.sessions.pop(opened.id, None)
        place = opened.workspace
        if place.busy is opened:
            place.engine.cancel()
        if any(other.workspace is place for other in self.sessions.values()):
            return
        self.workspaces.pop(place.root, None)
        for unsubscribe in place.unsubscribe:
            unsubscribe()
        await place.sessions.plan_files.close()  # a change just made still written
        await place.engine.close()

    async def close(self) -> None:
        for opened in list(self.sessions.values()):
            await self._close(opened)
        for place in list(self.workspaces.values()):  # opened, but no session attached
            self.workspaces.pop(place.root, None)
            await place.sessions.plan_files.close()
            await place.engine.close()

    # modes -------------------------------------------------------------------------------------

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        mode = as_mode(mode_id)
        if mode is None:
            raise invalid_params(unknown_mode(mode_id))
        if (waiting := self.waiting.get(session_id)) is not None:
            waiting.mode = mode  # the mode of its first prompt, once it has its folder
            return SetSessionModeResponse()
        opened = self._session(session_id)
        opened.mode = mode
        # The client knows the mode it set; the config option says it too (after the answer).
        self._after_answer(opened, mode_changed(mode)[1])
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        waiting = self.waiting.get(session_id)
        opened = self._session(session_id) if waiting is None else None
        if config_id != MODE_OPTION:
            raise invalid_params(
                f"Unknown config option {config_id!r}: Plansight offers {MODE_OPTION!r} only."
            )
        mode = as_mode(value) if isinstance(value, str) else None
        if mode is None:
            raise invalid_params(unknown_mode(str(value)))
        if opened is None:
            assert waiting is not None
            waiting.mode = mode
            return SetSessionConfigOptionResponse(config_options=list(config_options(mode)))
        opened.mode = mode
        self._after_answer(opened, mode_changed(mode)[0])  # the modes say it too
        return SetSessionConfigOptionResponse(config_options=list(config_options(mode)))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """`session/close`: the run in progress is cancelled, the session's resources freed
        (and its workspace given up, for another server); it stays stored for a load."""
        if self.waiting.pop(session_id, None) is None:
            await self._close(self._session(session_id))
        return CloseSessionResponse()

    # prompts -----------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        if (waiting := self.waiting.get(session_id)) is not None:
            await self._take_up(waiting)
        opened = self._session(session_id)
        place = opened.workspace
        await self._after_cancelled(opened)
        if opened.prompting:
            raise request_failed(
                "A prompt is already in progress in this session; wait for it or cancel it."
            )
        place.hold(opened)  # one run at a time in a working tree: refused naming the running one
        opened.prompting, opened.cancelling = True, False
        opened.idle.clear()
        try:
            text = prompt_text(prompt)
            if opened.title is None:
                opened.title = session_title(text)
                await opened.outbox.send(
                    SessionInfoUpdate(session_update="session_info_update", title=opened.title)
                )
            command = parse_command(text)
            if command is not None and command.name in ("undo", "compact", "checkpoints"):
                await self._command(opened, command)
                return PromptResponse(stop_reason="end_turn")
            if command is not None and command.name == "parallel":
                await self._parallel(opened, command.argument)
                return PromptResponse(stop_reason="end_turn")
            mode: Mode = opened.mode
            todo_id: str | None = None
            if command is not None and command.name == "plan":
                if not command.argument:
                    raise invalid_params("/plan needs the request: /plan <what to do>.")
                mode, text = "plan", command.argument
                if opened.mode != "plan":
                    opened.mode = "plan"
                    for update in mode_changed("plan"):
                        await opened.outbox.send(update)
            elif command is not None and command.name == "step":
                todo_id, rest = item_id(command.argument)
                if not todo_id:
                    raise invalid_params("/step needs a plan item's id: /step 2.")
                plan = place.sessions.state(opened.sid).todos
                if (refusal := no_such_item(todo_id, plan, "step")) is not None:
                    raise invalid_params(refusal)
                text = rest or f"Work on plan item #{todo_id}."
            plan_feedback, question = opened.hooks.turn_end.take()
            if plan_feedback and todo_id is None and command is None:
                mode = "plan"
                text = f"The user kept planning. Their feedback on the plan:\n\n{text}"
            elif question is not None and command is None:
                text = f"The user's answer to your question ({question}):\n\n{text}"
            return await self._run(opened, text, mode, todo_id)
        finally:
            opened.prompting, opened.cancelling = False, False
            opened.idle.set()
            place.release(opened)

    async def _take_up(self, waiting: WaitingSession) -> None:
        """A waiting session's folder, opened now if the other server gave it up; else the
        prompt is refused, saying who keeps it and what to do."""
        try:
            opened = await self._new(waiting.cwd, waiting.servers, waiting.id)
        except KeptElsewhere as err:
            raise request_failed(str(err)) from None
        del self.waiting[waiting.id]
        opened.mode = waiting.mode
        await opened.outbox.send(available_commands())

    async def _after_cancelled(self, opened: AcpSession) -> None:
        """A prompt that comes while a cancelled prompt of its working tree winds down (a
        command being stopped) waits for its end, a few seconds at most: some clients
        (CodeCompanion.nvim's Stop) take the turn as ended once they sent session/cancel and
        let the user send the next prompt at once, which would be refused as one in progress."""
        holder = opened if opened.prompting else opened.workspace.busy
        if holder is not None and holder.prompting and holder.cancelling:
            # Still winding down after the wait: the prompt is refused as before, saying so.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(holder.idle.wait(), CANCEL_GRACE)

    async def _run(
        self, opened: AcpSession, text: str, mode: Mode, todo_id: str | None
    ) -> PromptResponse:
        from plansight.plan.plan import PlanError
        from plansight.session.lock import SessionBusy
        from plansight.session.registry import UnknownSession

        opened.run = asyncio.ensure_future(
            opened.workspace.sessions.run(text, session_id=opened.sid, mode=mode, todo_id=todo_id)
        )
        try:
            result = await asyncio.shield(opened.run)
        except asyncio.CancelledError:
            if opened.run.done() or not (task := asyncio.current_task()) or not task.cancelling():
                # Before the answer, not when the run has wound down: a client renders an
                # update after the turn's end in the next turn (CodeCompanion.nvim does).
                opened.cut_off("cancelled")
                await opened.outbox.flush()
                return PromptResponse(stop_reason="cancelled")
            opened.run.cancel()  # the connection is going: stop the run too
            raise
        except PlanError as err:
            raise invalid_params(str(err)) from err
        except SessionBusy as err:
            raise request_failed(str(err)) from err
        except UnknownSession as err:  # deleted by another client (the terminal) meanwhile
            raise invalid_params(f"{err} Start a new session with session/new.") from err
        finally:
            opened.run = None
        await opened.outbox.flush()
        reason = stop_reason(result, opened.max_rounds)
        if reason is None:
            raise run_error(result.error or result.text)
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        opened = self.sessions.get(session_id)
        if opened is None:
            log.warning("session/cancel for unknown session %r", session_id)
            return
        if opened.workspace.busy is opened:  # never another session's run
            opened.cancelling = opened.prompting
            opened.session.cancel()

    async def _parallel(self, opened: AcpSession, argument: str) -> None:
        """`/parallel 2 3`: `Workers.run_then_take_in` (workers on those items, then each
        one's changes put to the user file by file, through the permission requests every
        edit gets), told as agent text: each worker's start and end, each take-in. A cancel
        stops the workers still running; what they did stays stored."""
        from plansight.parallel.workers import (
            ParallelRefused,
            WorkerEvent,
            WorkerFinished,
            Workers,
            WorkerStarted,
        )
        from plansight.plan.plan import PlanError

        ids = [part.lstrip("#") for part in argument.replace(",", " ").split()]
        if not ids:
            raise invalid_params("/parallel needs plan items' ids: /parallel 2 3.")
        place = opened.workspace
        if place.workers is None:
            place.workers = Workers(place.sessions, max_workers=self.options.parallel_max)
        workers = place.workers

        def say(text: str) -> None:
            opened.outbox.put(update_agent_message_text(text))

        def on_event(event: WorkerEvent) -> None:
            if event.parent_session_id != opened.sid:
                return  # another session's worker
            if isinstance(event, WorkerStarted):
                say(f"Worker #{event.todo_id} started.\n")
            elif isinstance(event, WorkerFinished):
                files = ", ".join(f"{f['path']} +{f['added']} -{f['removed']}" for f in event.files)
                say(
                    f"Worker #{event.todo_id} {event.status}"
                    + (f": {files}.\n" if files else ", no changes.\n")
                )

        def on_answer(answer: dict[str, Any]) -> None:
            for skipped in answer["skipped"]:
                say(f"#{skipped['todoId']}: not started, {skipped['reason']}.\n")

        def on_taken_in(todo_id: str, taken: dict[str, Any]) -> None:
            counts = ", ".join(
                f"{len(taken[k])} {k}"
                for k in ("applied", "rejected", "conflicts", "skipped")
                if taken[k]
            )
            say(f"Took in #{todo_id}'s changes: {counts}.\n")

        workers.on_event.append(on_event)
        try:
            await workers.run_then_take_in(
                ids, opened.sid, on_answer=on_answer, on_taken_in=on_taken_in
            )
        except ParallelRefused as err:
            raise request_failed(str(err)) from err
        except PlanError as err:
            raise invalid_params(str(err)) from err
        finally:
            workers.on_event.remove(on_event)
        await opened.outbox.flush()

    async def _command(self, opened: AcpSession, command: SlashCommand) -> None:
        from plansight.checkpoints.facade import CheckpointsOff
        from plansight.checkpoints.restore import RestoreRequest
        from plansight.engine.model import ModelError
        from plansight.session.lock import SessionBusy
        from plansight.session.registry import UnknownSession

        session, sessions = opened.session, opened.workspace.sessions
        try:
            if command.name == "compact":
                done = await sessions.compact(opened.sid)
                said = (
                    "Compacted the conversation: "
                    f"{done.before_tokens} → {done.after_tokens} tokens."
                    if done.strategy is not None
                    else f"Nothing to compact: no smaller conversation than {done.before_tokens} "
                    "tokens keeps the plan, the scratchpad and the last round."
                )
            elif command.name == "checkpoints":
                said = checkpoints_text([c.to_wire() for c in await session.checkpoints.taken()])
            else:
                todo_id, _ = item_id(command.argument)
                if not todo_id:
                    raise invalid_params("/undo needs a plan item's id: /undo 2.")
                plan = sessions.state(opened.sid).todos
                if (refusal := no_such_item(todo_id, plan, "undo")) is not None:
                    raise invalid_params(refusal)
                restored = await sessions.restore(RestoreRequest(todo_id=todo_id), opened.sid)
                said = restore_text(todo_id, restored.to_wire())
        except (SessionBusy, CheckpointsOff, ModelError) as err:
            raise request_failed(str(err)) from err
        except RequestError:
            raise
        except UnknownSession as err:
            raise invalid_params(f"{err} Start a new session with session/new.") from err
        except ValueError as err:  # PlanError, CheckpointError: a request that names nothing
            raise invalid_params(str(err)) from err
        await opened.outbox.send(update_agent_message_text(said))


# ----- serving ----------------------------------------------------------------------------------


async def serve_stdio(agent: PlansightAgent) -> None:
    from acp.core import AgentSideConnection
    from acp.stdio import stdio_streams

    from plansight.acp.stdio import StdioTransport

    reader, writer = await stdio_streams(limit=50 * 1024 * 1024)
    transport = StdioTransport(reader, writer)
    agent.write = transport.write
    # `use_unstable_protocol`: the SDK routes `session/close` only then (stable in ACP's schema).
    conn = AgentSideConnection(
        cast(Any, agent), transport, listening=False, use_unstable_protocol=True
    )
    try:
        await conn.listen()
    finally:
        await agent.close()
        await conn.close()


def serve() -> None:
    logging.basicConfig(
        level=os.environ.get("PLANSIGHT_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )  # on stderr: stdout carries JSON-RPC only
    for noisy in ("httpx2", "httpcore2", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    code = 0
    try:
        asyncio.run(serve_stdio(PlansightAgent()))
    except KeyboardInterrupt:
        pass
    except ValueError as err:
        # asyncio serves pipes, sockets and terminals only: an editor always gives pipes.
        log.error(
            "plansight acp needs its stdin and stdout to be pipes (as an editor starts it): %s", err
        )
        code = 2
    logging.shutdown()
    # Everything is saved as it happens; skip the slow teardown of the SDK's objects, and the
    # thread still blocked reading stdin.
    os._exit(code)
