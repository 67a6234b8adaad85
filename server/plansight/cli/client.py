"""The terminal's LSP client of `plansight lsp`: connection, handlers and review decisions.

It speaks exactly the protocol an editor speaks (PROTOCOL.md): it spawns the language server
on stdio, initializes it with the `reviewEdit` / `approveCommand` / `reviewPlan` / `askUser`
capabilities (and MCP's `approveTool` / `approveMcpServer`), sends `plansight/run` and answers
the server's requests. Everything shown to the
user goes through a `Frontend`, so tests can drive this part without a terminal.

A plan review (`plansight/reviewPlan`) is answered `a` (approve), `c` (cancel), `e` (edit: the
plan opens in the user's editor as `[ ] #1: text` lines, read back with
`plansight.protocol.names.parse_plan_text`; a text that cannot be read is shown with its error and
kept for the next edit), or any other text: feedback, to revise. The user's edited plan goes
with the answer as `items`. A question (`plansight/askUser`) is answered with an option's
number, several numbers for a multi-select question, or free text; an empty line lets the
agent decide (dismissed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import tempfile
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from plansight import __version__
from plansight.plan.text import (
    PLAN_TEXT_HELP,
    PlanTextError,
    parse_plan_review_text,
    plan_text,
)
from plansight.protocol.names import (
    APPROVE_COMMAND,
    APPROVE_MCP_SERVER,
    APPROVE_TOOL,
    ASK_USER,
    EVENT,
    REQUEST_CANCELLED,
    REVIEW_EDIT,
    REVIEW_PLAN,
    RUN,
    RUN_PARALLEL,
    SCRATCHPAD,
    TODOS,
    to_plain,
)

log = logging.getLogger(__name__)
PYGLS_RPC_LOGGER = "pygls.protocol.json_rpc"
UNKNOWN_CANCEL = "Cancel notification for unknown message id"


class ExpectedCancel(logging.Filter):
    """Drops pygls's warning that the server withdrew (`$/cancelRequest`) a review or question
    this client had already answered: a cancel crossing the answer is the protocol working.
    Without a handler, Python's last resort printed it on the terminal, over the prompt."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(UNKNOWN_CANCEL)


def silence_expected_cancels() -> None:
    """Put `ExpectedCancel` on pygls's JSON-RPC logger, once per process."""
    logger = logging.getLogger(PYGLS_RPC_LOGGER)
    if not any(isinstance(f, ExpectedCancel) for f in logger.filters):
        logger.addFilter(ExpectedCancel())


ACCEPT_WORDS = frozenset({"a", "accept", "y", "yes"})
REJECT_WORDS = frozenset({"r", "reject", "n", "no", "d", "deny"})
EDIT_QUESTION = (
    "Apply this edit? [a]ccept, [s] accept all this session, [r]eject, or type a reason to reject:"
)
COMMAND_QUESTION = (
    "Run this command? [a]ccept, [always] for this command, [r]eject, or type a reason to reject:"
)
SESSION_WORDS = frozenset({"s", "session"})  # accept this edit and the session's next ones
TOOL_QUESTION = (
    "Allow this MCP tool call? [a]llow, [always] allow this tool, [d]eny, or type a reason to deny:"
)
TRUST_QUESTION = "Start this MCP server? [a]llow or [d]eny:"
ALWAYS_WORDS = frozenset({"always"})
PLAN_QUESTION = "Approve this plan? [a]pprove, [e]dit, type feedback to revise, or [c]ancel:"
APPROVE_WORDS = ACCEPT_WORDS | {"approve"}
EDIT_WORDS = frozenset({"e", "edit"})
CANCEL_WORDS = frozenset({"c", "cancel"})
NO_TERMINAL_FEEDBACK = "not approved (no interactive terminal)"
CONTROL_EDIT_QUESTION = "Change this control file? [a]ccept, [r]eject, or type a reason to reject:"
NO_TERMINAL_CONTROL_FEEDBACK = (
    "not approved: {path} is a control file, whose changes --yes does not cover, and there is "
    "no interactive terminal to ask the user"
)
CANCELLED_FEEDBACK = "not approved: the user cancelled the run"
STDERR_TAIL_BYTES = 4000


def server_command() -> list[str]:
    """The language server this client starts: the same Python, `-m plansight lsp`."""
    return [sys.executable, "-m", "plansight", "lsp"]


def as_dict(value: Any) -> dict[str, Any]:
    plain = to_plain(value)
    return plain if isinstance(plain, dict) else {}


# Decisions --------------------------------------------------------------------------------


class Cancelled:
    """What `Frontend.ask` returns when the run was cancelled while it waited."""


CANCELLED = Cancelled()
Answer = str | None | Cancelled  # a line typed, end of input, or the run was cancelled


@dataclass(frozen=True)
class Decision:
    approved: bool
    feedback: str | None = None


def decide(answer: Answer) -> Decision | None:
    """The user's answer to a review: None means "ask again" (an empty line).

    `a`/`accept`/`y`/`yes` approve; `r`/`reject`/`n`/`no` reject without a reason; any
    other text rejects with that text as the feedback the model reads. End of input (no
    interactive terminal, nothing more piped in) rejects with `NO_TERMINAL_FEEDBACK`.
    """
    if isinstance(answer, Cancelled):
        return Decision(False, CANCELLED_FEEDBACK)
    if answer is None:
        return Decision(False, NO_TERMINAL_FEEDBACK)
    text = answer.strip()
    if not text:
        return None
    if text.lower() in ACCEPT_WORDS:
        return Decision(True)
    if text.lower() in REJECT_WORDS:
        return Decision(False)
    return Decision(False, text)


def edit_result(decision: Decision) -> dict[str, Any]:
    result: dict[str, Any] = {"accepted": decision.approved}
    if decision.feedback:
        result["feedback"] = decision.feedback
    return result


def command_result(decision: Decision) -> dict[str, Any]:
    result: dict[str, Any] = {"approved": decision.approved}
    if decision.feedback:
        result["feedback"] = decision.feedback
    return result


def question_prompt(question: dict[str, Any]) -> str:
    options = question_options(question)
    if not options:
        return "Your answer (Enter alone: let the agent decide):"
    if question.get("multiSelect") is True:
        return (
            f"Choose one or more of 1-{len(options)} (e.g. 1 3), or type your own answer "
            "(Enter alone: let the agent decide):"
        )
    return f"Choose 1-{len(options)}, or type your own answer (Enter alone: let the agent decide):"


def question_options(question: dict[str, Any]) -> list[str]:
    options = question.get("options")
    return [o for o in options if isinstance(o, str)] if isinstance(options, list) else []


def read_answer(question: dict[str, Any], typed: str) -> dict[str, Any] | str:
    """An `askUser` result from what the user typed, or a message saying why to ask again.

    Numbers (separated by spaces or commas) choose options; anything else is the answer
    itself; an empty line is a dismissal.
    """
    text = typed.strip()
    if not text:
        return {"dismissed": True}
    options = question_options(question)
    tokens = [t for t in text.replace(",", " ").split() if t]
    if options and tokens and all(t.isdigit() for t in tokens):
        numbers = [int(t) for t in tokens]
        if any(not 1 <= n <= len(options) for n in numbers):
            return f"Choose between 1 and {len(options)}."
        chosen = list(dict.fromkeys(options[n - 1] for n in numbers))
        if question.get("multiSelect") is True:
            return {"answers": chosen}
        if len(chosen) > 1:
            return "Choose one option (or type your own answer)."
        return {"answer": chosen[0]}
    return {"answer": text}


# The frontend -----------------------------------------------------------------------------


class Frontend(Protocol):
    """What the client shows and asks; implemented by the terminal UI (and by tests)."""

    def on_todos(self, state: dict[str, Any]) -> None: ...

    def on_scratchpad(self, content: str) -> None: ...

    def on_event(self, event: dict[str, Any]) -> None: ...

    def on_message(self, level: int, message: str) -> None: ...

    def show_edit(self, review: dict[str, Any], path: str) -> None: ...

    def show_command(self, request: dict[str, Any]) -> None: ...

    def show_plan_review(self, review: dict[str, Any]) -> None: ...

    def show_edited_plan(self, items: list[dict[str, str]]) -> None: ...

    def show_question(self, question: dict[str, Any]) -> None: ...

    def warn(self, message: str) -> None: ...

    def show_recorded_answer(self, answer: str) -> None:
        """An answer given for the user (a demo's recording), shown as if they typed it."""
        ...

    async def edit_text(self, text: str) -> str | None:
        """`text` as the user left it in their editor, or None if the editor failed."""
        ...

    async def ask(self, question: str) -> Answer: ...


# The client -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientOptions:
    workspace: Path
    model: str | None = None
    accept_edits: bool = False  # sent as autoApprove.edits, and reviews are accepted unasked
    approve_commands: bool = False  # autoApprove.commands
    storage_dir: str | None = None
    env: Mapping[str, str] | None = None  # the server's environment (default: ours)
    command: Sequence[str] = field(default_factory=server_command)
    # More initializationOptions, sent as they are (a recording's contextWindow, say).
    extra_options: Mapping[str, Any] = field(default_factory=dict)
    # Answers to the plan reviews, in order, given for the user (a demo's recorded answers).
    plan_answers: Sequence[Mapping[str, Any]] = ()

    def initialization_options(self) -> dict[str, Any]:
        """The user's `$XDG_CONFIG_HOME/plansight/config.json` (the reader `plansight acp`
        uses; never a file of the workspace), then what this command line says on top."""
        from plansight.session.settings import user_config

        env = self.env if self.env is not None else os.environ
        configured = user_config(env)
        options: dict[str, Any] = dict(configured) if isinstance(configured, dict) else {}
        approve = options.get("autoApprove")
        approve = dict(approve) if isinstance(approve, dict) else {}
        # `--yes` turns on what the file left off; it never turns off what the user set there.
        if self.accept_edits:
            approve["edits"] = True
        if self.approve_commands:
            approve["commands"] = True
        approve.setdefault("edits", False)
        approve.setdefault("commands", False)
        options["autoApprove"] = approve
        if self.model:
            options["model"] = self.model
        if self.storage_dir:
            options["storageDir"] = self.storage_dir
        # User-level settings the terminal takes from the user's own config file (never from
        # a file in the workspace): where the plan files go.
        config = _user_config(self.env if self.env is not None else os.environ)
        if isinstance(config, dict) and "plansDirectory" in config:
            options["plansDirectory"] = config["plansDirectory"]
        options.update(self.extra_options)
        return options


def _user_config(env: Mapping[str, str]) -> Any:
    """The user's `$XDG_CONFIG_HOME/plansight/config.json` (as session/settings.py's
    `user_config` reads it, without importing the engine into the terminal client)."""
    home = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    try:
        with open(os.path.join(home, "plansight", "config.json"), encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


@dataclass
class RunOutcome:
    """How a run ended: the `RunResult` (from the answer or the `runFinished` event)."""

    status: str
    result: dict[str, Any]
    error: str | None = None  # a protocol-level failure (no RunResult)


class ServerExited(Exception):
    """The language server process ended while we waited for it."""


class PlansightClient:
    """One language server process and one LSP session with it."""

    def __init__(self, options: ClientOptions, frontend: Frontend) -> None:
        self.options = options
        self.frontend = frontend
        self.client = LanguageClient("plansight-cli", __version__)
        self.process: asyncio.subprocess.Process | None = None
        self.server_info: types.InitializeResult | None = None
        self.last_result: dict[str, Any] | None = None  # from the latest runFinished event
        self.cancelling = False
        self._run_id: str | None = None  # the run (or /parallel) that `cancel()` cancels
        self._stop = threading.Event()
        self._reader: asyncio.Task[None] | None = None
        self._exited: asyncio.Task[int] | None = None
        self._stderr: IO[bytes] | None = None
        self._cancelled = asyncio.Event()
        # The plan text the user last edited in this run: a plan asked again keeps it.
        self._plan_draft: str | None = None
        self._plan_ids: list[str] = []  # the ids of the plan under review
        self._plan_comments: list[dict[str, str]] = []  # the draft's `> ` comments, with ids
        self._recorded_answers = [dict(answer) for answer in options.plan_answers]
        # The MCP servers whose trust question was answered, with the answer (`plansight mcp`
        # waits for them).
        self.trust_answered: dict[str, bool] = {}
        self._register()

    # Handlers --------------------------------------------------------------------------
    def _register(self) -> None:
        # pygls tags each handler with attributes, which bound methods cannot carry: wrap them.
        def sync(method: Callable[[Any], None]) -> Callable[[Any], None]:
            def handler(params: Any) -> None:
                method(params)

            return handler

        def asynchronous(
            method: Callable[[Any], Awaitable[dict[str, Any]]],
        ) -> Callable[[Any], Awaitable[dict[str, Any]]]:
            async def handler(params: Any) -> dict[str, Any]:
                return await method(params)

            return handler

        feature = self.client.protocol.fm.feature
        feature(TODOS)(sync(self._on_todos))
        feature(SCRATCHPAD)(sync(self._on_scratchpad))
        feature(EVENT)(sync(self._on_event))
        feature(REVIEW_EDIT)(asynchronous(self._on_review_edit))
        feature(APPROVE_COMMAND)(asynchronous(self._on_approve_command))
        feature(APPROVE_TOOL)(asynchronous(self._on_approve_tool))
        feature(APPROVE_MCP_SERVER)(asynchronous(self._on_approve_mcp_server))
        feature(REVIEW_PLAN)(asynchronous(self._on_review_plan))
        feature(ASK_USER)(asynchronous(self._on_ask_user))
        feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(sync(self._ignore))
        feature(types.PROGRESS)(sync(self._ignore))
        feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(sync(self._ignore))
        feature(types.WINDOW_LOG_MESSAGE)(sync(self._on_log_message))
        feature(types.WINDOW_SHOW_MESSAGE)(sync(self._on_show_message))

    def _on_todos(self, params: Any) -> None:
        self.frontend.on_todos(as_dict(params))

    def _on_scratchpad(self, params: Any) -> None:
        content = as_dict(params).get("content")
        self.frontend.on_scratchpad(content if isinstance(content, str) else "")

    def _on_event(self, params: Any) -> None:
        event = as_dict(params)
        if event.get("type") == "runFinished" and isinstance(event.get("result"), dict):
            self.last_result = event["result"]
        self.frontend.on_event(event)

    async def _on_review_edit(self, params: Any) -> dict[str, Any]:
        review = as_dict(params)
        path = self.relative_path(str(review.get("uri", "")))
        self.frontend.show_edit(review, path)
        if review.get("control") is True:
            return edit_result(await self._control_decision(path))
        if self.options.accept_edits:
            return edit_result(Decision(True))
        while True:
            if self._cancelled.is_set():
                return edit_result(Decision(False, CANCELLED_FEEDBACK))
            answer = await self.ask(EDIT_QUESTION)
            if isinstance(answer, str) and answer.strip().lower() in SESSION_WORDS:
                # The session's next edits unasked: the server's policy remembers it
                # (session/approvals.py), and still asks for control files.
                return {"accepted": True, "always": True}
            decision = decide(answer)
            if decision is not None:
                return edit_result(decision)

    async def _control_decision(self, path: str) -> Decision:
        """A control file's edit (`"control": true`): never accepted by `--yes`. With `--yes`
        only a terminal may answer (what is piped in was written before the question); without
        one it is refused."""
        self.frontend.warn(
            f"{path} is a control file: it steers your tools (git, the editor, Plansight). "
            "Accept only a change you have read."
        )
        if self.options.accept_edits and not sys.stdin.isatty():
            return Decision(False, NO_TERMINAL_CONTROL_FEEDBACK.format(path=path))
        return await self._decision(CONTROL_EDIT_QUESTION)

    async def _on_approve_command(self, params: Any) -> dict[str, Any]:
        request = as_dict(params)
        self.frontend.show_command(request)
        if self.options.approve_commands:
            return command_result(Decision(True))
        while True:
            if self._cancelled.is_set():
                return command_result(Decision(False, CANCELLED_FEEDBACK))
            answer = await self.ask(COMMAND_QUESTION)
            if isinstance(answer, str) and answer.strip().lower() in ALWAYS_WORDS:
                # "Don't ask again" for this exact command in this folder, for the session:
                # the server's policy remembers it (session/approvals.py).
                return {"approved": True, "always": True}
            decision = decide(answer)
            if decision is not None:
                return command_result(decision)

    async def _on_approve_tool(self, params: Any) -> dict[str, Any]:
        from plansight.cli.render import mcp_call_text

        request = as_dict(params)
        self.frontend.warn(mcp_call_text(request))
        if self.options.approve_commands:
            return {"approved": True}
        while True:
            answer = await self.ask(TOOL_QUESTION)
            if isinstance(answer, str) and answer.strip().lower() in ALWAYS_WORDS:
                return {"approved": True, "always": True}
            decision = decide(answer)
            if decision is not None:
                return command_result(decision)

    async def _on_approve_mcp_server(self, params: Any) -> dict[str, Any]:
        """Trust in a workspace's MCP server: only a typed yes starts it (never `--yes`)."""
        from plansight.cli.render import mcp_trust_text

        request = as_dict(params)
        self.frontend.warn(mcp_trust_text(request))
        while True:
            decision = decide(await self.ask(TRUST_QUESTION))
            if decision is not None:
                self.trust_answered[str(request.get("name"))] = decision.approved
                return {"approved": decision.approved}

    async def _on_review_plan(self, params: Any) -> dict[str, Any]:
        review = as_dict(params)
        self.frontend.show_plan_review(review)
        if self._recorded_answers:
            recorded = self._recorded_answers.pop(0)
            feedback = recorded.get("feedback")
            said = str(recorded.get("decision", "cancel"))
            self.frontend.show_recorded_answer(f"{said}: {feedback}" if feedback else said)
            return recorded
        if self.options.accept_edits:
            return {"decision": "approve"}
        todos = review.get("todos")
        items = todos.get("items") if isinstance(todos, dict) else None
        if review.get("problem") is None or self._plan_draft is None:
            self._plan_draft = PLAN_TEXT_HELP + plan_text(items)
            self._plan_comments = []  # a plan asked again keeps the draft and its comments
        self._plan_ids = [str(i.get("id")) for i in items or [] if isinstance(i, dict)]
        edited: list[dict[str, str]] | None = None
        while True:
            if self._cancelled.is_set():
                return {"decision": "cancel"}
            answer = await self.ask(PLAN_QUESTION)
            if answer is None or isinstance(answer, Cancelled):
                return {"decision": "cancel"}  # no answer is a cancel
            word = answer.strip()
            if not word:
                continue
            if word.lower() in CANCEL_WORDS:
                return {"decision": "cancel"}
            if word.lower() in EDIT_WORDS:
                edited = await self._edit_plan(edited)
                continue
            result: dict[str, Any] = (
                {"decision": "approve"}
                if word.lower() in APPROVE_WORDS
                else {"decision": "revise", "feedback": word}
            )
            if edited is not None:
                result["items"] = edited
            if self._plan_comments:
                result["comments"] = self._plan_comments
            return result

    async def _edit_plan(self, edited: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
        """Open the plan in the user's editor; the items read back, or `edited` as it was."""
        text = await self.frontend.edit_text(self._plan_draft or "")
        if text is None:
            return edited
        self._plan_draft = text  # kept whatever happens: nothing the user typed is lost
        try:
            items, comments = parse_plan_review_text(text, self._plan_ids)
        except PlanTextError as err:
            self.frontend.warn(f"The plan was not changed: {err} Edit it again with e.")
            return edited
        if not items:
            self.frontend.warn("The edited plan has no items; the plan was not changed.")
            return edited
        self.frontend.show_edited_plan(items)
        # The comments of the text as it is now (the last edit's, each with an id of its own:
        # ids must differ from the session's comments still open).
        self._plan_comments = [{"id": f"c{uuid.uuid4().hex[:6]}", **c} for c in comments]
        return items

    async def _on_ask_user(self, params: Any) -> dict[str, Any]:
        question = as_dict(params)
        self.frontend.show_question(question)
        while True:
            if self._cancelled.is_set():
                return {"dismissed": True}
            answer = await self.ask(question_prompt(question))
            if answer is None or isinstance(answer, Cancelled):
                return {"dismissed": True}
            result = read_answer(question, answer)
            if isinstance(result, dict):
                return result
            self.frontend.warn(result)

    async def _decision(self, question: str) -> Decision:
        while True:
            if self._cancelled.is_set():
                return Decision(False, CANCELLED_FEEDBACK)
            decision = decide(await self.ask(question))
            if decision is not None:
                return decision

    async def ask(self, question: str) -> Answer:
        """Ask the frontend, giving up (CANCELLED) as soon as the run is cancelled."""
        asking = asyncio.ensure_future(self.frontend.ask(question))
        cancelled = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if asking.done():
            return asking.result()
        asking.cancel()
        return CANCELLED

    def _ignore(self, params: Any) -> None:
        """Accepted and not shown: progress repeats the plan, diagnostics are for editors."""

    def _on_log_message(self, params: types.LogMessageParams) -> None:
        if params.type in (types.MessageType.Error, types.MessageType.Warning):
            self.frontend.on_message(int(params.type), params.message)

    def _on_show_message(self, params: types.ShowMessageParams) -> None:
        self.frontend.on_message(int(params.type), params.message)

    def relative_path(self, uri: str) -> str:
        from pygls.uris import to_fs_path

        fs_path = to_fs_path(uri) if uri else None
        if not fs_path:
            return uri
        path = Path(fs_path)
        root = self.options.workspace.resolve()
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

    # Lifecycle -------------------------------------------------------------------------
    async def start(self) -> types.InitializeResult:
        """Spawn `plansight lsp` in the workspace and initialize it."""
        silence_expected_cancels()
        workspace = self.options.workspace.resolve()
        # The server's log goes to a file we only show if it dies; a pipe nobody reads
        # would fill up and block it.
        self._stderr = tempfile.TemporaryFile(prefix="plansight-lsp-", suffix=".log")
        env = dict(self.options.env) if self.options.env is not None else dict(os.environ)
        command = list(self.options.command)
        self.process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr,
            cwd=workspace,
            env=env,
            # Its own session: a Ctrl-C in the terminal reaches us, not the server, and we
            # cancel the run properly.
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.client.protocol.set_writer(self.process.stdin)
        self._reader = asyncio.create_task(
            run_async(
                stop_event=self._stop,
                reader=self.process.stdout,
                protocol=self.client.protocol,
                logger=log,
            )
        )
        self._exited = asyncio.create_task(self.process.wait())
        uri = from_fs_path(str(workspace)) or workspace.as_uri()
        params = types.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            root_path=str(workspace),
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=workspace.name)],
            client_info=types.ClientInfo(name="plansight-cli", version=__version__),
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                experimental={
                    "plansight": {
                        "reviewEdit": True,
                        "approveCommand": True,
                        "reviewPlan": True,
                        "askUser": True,
                        "approveTool": True,
                        "approveMcpServer": True,
                    }
                },
            ),
            initialization_options=self.options.initialization_options(),
        )
        self.server_info = await self._until_exit(self.client.initialize_async(params))
        self.client.initialized(types.InitializedParams())
        return self.server_info

    async def _until_exit(self, awaitable: Any) -> Any:
        """Await a request's answer, or raise ServerExited if the server dies first."""
        assert self._exited is not None
        answer = asyncio.ensure_future(awaitable)
        await asyncio.wait({answer, self._exited}, return_when=asyncio.FIRST_COMPLETED)
        if answer.done():
            return answer.result()
        answer.cancel()
        raise ServerExited(self.exit_description())

    async def run(
        self,
        prompt: str,
        new_session: bool = False,
        *,
        mode: str = "act",
        todo_id: str | None = None,
        session_id: str | None = None,
    ) -> RunOutcome:
        """Send `plansight/run` and wait for its answer (cancel with `cancel()`);
        `session_id`: in that session of the workspace (None: the current one)."""
        self._plan_draft = None
        self.last_result = None
        params: dict[str, Any] = {"prompt": prompt, "newSession": new_session}
        if mode != "act":
            params["mode"] = mode
        if todo_id is not None:
            params["todoId"] = todo_id
        if session_id is not None:
            params["sessionId"] = session_id
        try:
            answer = await self._cancellable(RUN, params, f"plansight-run-{uuid.uuid4().hex[:12]}")
        except JsonRpcException as err:
            if err.code == REQUEST_CANCELLED:
                return self._cancelled_outcome()
            # The message in words: a JSON-RPC code (-32602) means nothing to the user.
            return RunOutcome("error", self.last_result or {}, err.message)
        except ServerExited as err:
            return RunOutcome("error", self.last_result or {}, str(err))
        result = as_dict(answer)
        status = result.get("status")
        if not isinstance(status, str):
            return RunOutcome("error", result, f"unexpected answer to {RUN}: {answer!r}")
        return RunOutcome(status, result)

    async def run_parallel(self, todo_ids: Sequence[str]) -> dict[str, Any] | None:
        """`plansight/runParallel` with `takeIn`: the server runs the items' workers, waits
        for all of them, then puts each change set to the user through the usual
        `reviewEdit`s, all in this one request; `cancel()` cancels it (and the server the
        workers still running). Its answer (with `finished` and `takenIn`), None once
        cancelled; JsonRpcException when refused, ServerExited if the server died."""
        params = {"todoIds": list(todo_ids), "takeIn": True}
        try:
            answer = await self._cancellable(
                RUN_PARALLEL, params, f"plansight-parallel-{uuid.uuid4().hex[:12]}"
            )
        except JsonRpcException as err:
            if err.code == REQUEST_CANCELLED:
                return None
            raise
        return as_dict(answer)

    async def _cancellable(self, method: str, params: dict[str, Any], msg_id: str) -> Any:
        """Send the request that `cancel()` cancels (one at a time) and wait for its answer."""
        self._run_id = msg_id
        # A new one on the same connection (the interactive session): an earlier one's cancel
        # must not cancel this one's questions.
        self._cancelled.clear()
        self.cancelling = False
        future = asyncio.wrap_future(
            self.client.protocol.send_request(method, params, msg_id=msg_id)
        )
        try:
            return await self._until_exit(future)
        finally:
            self._run_id = None

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Any other request, its answer as plain values (JsonRpcException when refused)."""
        future = asyncio.wrap_future(self.client.protocol.send_request(method, params))
        return to_plain(await self._until_exit(future))

    def _cancelled_outcome(self) -> RunOutcome:
        result = dict(self.last_result or {})
        result["status"] = "cancelled"
        result.setdefault("text", "The run was cancelled.")
        return RunOutcome("cancelled", result)

    def cancel(self) -> bool:
        """Ask the server to stop the run (or the /parallel): `$/cancelRequest` for it."""
        self._cancelled.set()
        if self._run_id is None or self.cancelling:
            return False
        self.cancelling = True
        self._send(
            lambda: self.client.protocol.notify(
                types.CANCEL_REQUEST, types.CancelParams(id=self._run_id or "")
            )
        )
        return True

    def _send(self, send: Any) -> None:
        try:
            send()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as err:
            log.debug("could not write to the server: %s", err)

    async def close(self, grace: float = 5.0) -> None:
        """shutdown + exit, then make sure the process is gone."""
        process = self.process
        try:
            if process is not None and process.returncode is None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        self._until_exit(self.client.shutdown_async(None)), grace
                    )
                self._send(lambda: self.client.exit(None))
                if process.stdin is not None:
                    process.stdin.close()  # end of input: the server's reader stops too
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), grace)
        finally:
            self.kill()
            await self._stop_reading()

    def kill(self) -> None:
        """Kill the server's whole process group (it runs in its own session)."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    async def _stop_reading(self) -> None:
        self._stop.set()
        if self.process is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.process.wait(), 5)
        for task in (self._reader, self._exited):
            if task is not None and not task.done():
                task.cancel()
            if task is not None:
                with contextlib.suppress(BaseException):
                    await task
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def exit_description(self) -> str:
        code = self.process.returncode if self.process is not None else None
        tail = self.stderr_tail()
        message = f"the language server exited unexpectedly (exit code {code})"
        return f"{message}; its last log lines:\n{tail}" if tail else message

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_TAIL_BYTES))
            data = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return data.decode("utf-8", errors="replace").strip()
