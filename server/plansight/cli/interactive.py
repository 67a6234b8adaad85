"""`plansight` alone on a terminal: an interactive session, one language server for every prompt.

The user types a task at the `› ` prompt; it runs as `plansight run` would (the live plan, the
streamed text, each edit and command reviewed), and the prompt comes back. Every follow-up
continues the same conversation, plan and scratchpad, on the same `plansight lsp` child: it is
started in the background as the session opens and kept until the session ends (one that died
is started again at the next prompt, continuing the stored conversation). Like `plansight
run`, the session continues the workspace's stored conversation; `/new` starts a new one.

Commands: `/plan` (the plan; `/plan TASK` plans TASK first, changing nothing until approved),
`/step N [TASK]` (work on plan item N only), `/undo N` (put back what step N changed),
`/checkpoints`, `/history`, `/compact`, `/new`, `/sessions` (the workspace's sessions),
`/resume [ID]` (go back to a session: by id or its first characters; alone, the one used last
before this one), `/help`, `/quit`. Ctrl-C during a run cancels
it and keeps the session (a second Ctrl-C while it is being cancelled, or a server that does
not answer the cancel within `CANCEL_GRACE`, stops that server; the next prompt starts
another). Ctrl-C at the prompt drops the line; a second one in a row leaves, as does Ctrl-D or
`/quit`, with exit code 0.

Threads: the prompt is read on the main thread with `input()` (GNU readline's line editing and
history, kept in `$XDG_STATE_HOME/plansight/prompt-history`, where the module exists), so
Ctrl-C there is an ordinary KeyboardInterrupt. The asyncio loop that talks to the server runs in
a thread of its own for the whole session, so the server is read from even while the prompt
waits. During a run the main thread only waits for it, turning Ctrl-C into a cancel; the run's
questions are read by the loop from the terminal's file descriptor (`TerminalLines`), which
leaves nothing behind to steal the next prompt's input when a cancel ends a question.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.cli.checkpoints import (
    _checkpoints_of,
    checkpoint_lines,
    restore_lines,
    undo_id_of,
)
from plansight.cli.echo import echo
from plansight.cli.run import (
    CANCEL_GRACE,
    has_api_key,
    make_console,
    outcome_of,
    show_instructions,
    show_outcome,
)
from plansight.cli.show import history_lines, plan_lines, sessions_lines
from plansight.cli.ui import LineReader, PromptLine, TerminalUI
from plansight.protocol.names import (
    CHECKPOINTS,
    COMPACT,
    HISTORY,
    MODELS,
    OPEN_SESSION,
    RESET,
    RESTORE,
    SESSIONS,
    STATE,
)

if TYPE_CHECKING:
    from plansight.cli.client import ClientOptions, PlansightClient, RunOutcome

log = logging.getLogger(__name__)
T = TypeVar("T")

PROMPT = "› "
HISTORY_LENGTH = 1000
DEFAULT_STEP_PROMPT = "Carry out this step of the plan."
HELP = """\
Type a task and press Enter; a follow-up continues the same conversation.
  /plan            the current plan and scratchpad
  /plan TASK       plan TASK first: nothing changes until you approve the plan
  /step N [TASK]   work on item N of the plan only
  /undo N          put back every file step N changed (the step is pending again)
  /parallel N M    run items N and M at once, each by a worker in a copy of the workspace;
                   then review each worker's changes file by file
  /checkpoints     the workspace's checkpoints
  /history         the past runs
  /compact         compact the conversation now
  /cost            the tokens of this session's runs and their cost at list prices
  /context         the context used of the model's window, and what fills it
  /model [NAME]    the models and the one in use; with NAME, the next runs use it
  /edit [TEXT]     write the task in $EDITOR (starting from TEXT); saved, it is sent
  /new             start a new session (the current one stays, listed by /sessions)
  /sessions        the workspace's sessions, the one used last first
  /resume [ID]     go back to a session (by its id or first characters; alone: the last)
  /help            this list
  /quit            leave (or Ctrl-D)
Tab completes /commands and @file mentions; a line ending in \\ goes on on the next.
Ctrl-C cancels a run and keeps the session; at the prompt, Ctrl-C twice leaves."""


class TerminalLines(LineReader):
    """The run's answers, read by the event loop from the terminal's descriptor.

    Unlike `LineReader`'s thread, a read given up (the run was cancelled while a question
    waited) leaves nothing blocked on the terminal: the next prompt gets what is typed next.
    The terminal is in its line mode then (readline is not active), so a read returns a line.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(sys.stdin)
        self.fd = fd
        self._buffer = b""

    async def _readline(self) -> str | None:
        while b"\n" not in self._buffer:
            chunk = await self._read()
            if not chunk:  # Ctrl-D: end of input for this answer
                line, self._buffer = self._buffer, b""
                return line.decode("utf-8", errors="replace") if line else None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")

    async def _read(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(self.fd, readable)
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)
        try:
            return os.read(self.fd, 65536)
        except OSError:
            return b""


@dataclass(frozen=True)
class Answered:
    """A request's answer (which may itself be null)."""

    value: Any


@dataclass(frozen=True)
class Command:
    """One line the user typed: a task for the agent, or a slash command and its argument."""

    name: str  # "" for a task
    argument: str


COMMANDS = frozenset(
    {
        "plan",
        "step",
        "undo",
        "parallel",
        "checkpoints",
        "history",
        "compact",
        "new",
        "help",
        "quit",
        "exit",
    }
)


def parse_line(line: str) -> Command:
    """`/undo 2` → Command("undo", "2"); anything not starting with `/` is a task."""
    text = line.strip()
    if not text.startswith("/"):
        return Command("", text)
    name, _, argument = text[1:].partition(" ")
    return Command(name.lower(), argument.strip())


def take_in_line(todo_id: str, answer: dict[str, Any]) -> str:
    """What a take-in did, in one line."""
    parts = [
        f"{len(answer.get(key) or [])} {key}"
        for key in ("applied", "rejected", "conflicts", "skipped")
        if answer.get(key)
    ]
    return f"#{todo_id}: " + (", ".join(parts) or "nothing to take in")


def step_id(argument: str) -> tuple[str, str] | None:
    """`3 then run the tests` → ("3", "then run the tests"); None without an id."""
    first, _, rest = argument.partition(" ")
    first = first.lstrip("#")
    return (first, rest.strip()) if first else None


def history_file() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "plansight" / "prompt-history"


class LoopThread:
    """An asyncio event loop running in a daemon thread, for the whole session."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lsp", daemon=True)
        self.thread.start()

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def call(self, function: Callable[[], object]) -> None:
        self.loop.call_soon_threadsafe(function)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


class InteractiveSession:
    """The session's server, its commands, and the prompt loop (`repl`)."""

    def __init__(self, ui: TerminalUI, options: ClientOptions) -> None:
        self.ui = ui
        self.console = ui.console
        self.options = options
        self.loops = LoopThread()
        self.client: PlansightClient | None = None
        self._started: asyncio.Future[Any] | None = None  # the client's start
        self._task: asyncio.Future[Any] | None = None  # the command running now
        self._stopped: PlansightClient | None = None  # the client whose server the user stopped
        # The server whose project instructions were shown (once a server, at its first run:
        # it starts while the user types, when a line would break into the prompt).
        self._told_instructions: PlansightClient | None = None
        self._closing: set[asyncio.Future[None]] = set()  # dead clients being cleaned up
        self._grace: asyncio.TimerHandle | None = None  # an unanswered cancel stops the server
        # The tokens of the runs since the session opened (for /cost), as the runs reported.
        self.usage: dict[str, int] = {}
        # Each other session's figures (`usage`, and its last `usage` event: the server's
        # cost of it) by id, as they were when the user left it: /resume shows them again.
        self._figures_of: dict[str, tuple[dict[str, int], dict[str, Any]]] = {}
        # The typed line to keep whole when a notice is printed at the prompt (with readline).
        self.prompt_line: PromptLine | None = None

    # The server (in the loop's thread) -----------------------------------------------------
    def current(self) -> PlansightClient:
        """The session's client: a new one (not started yet) when there is none or its server
        has exited."""
        from plansight.cli.client import PlansightClient

        client = self.client
        if client is not None and client.process is not None:
            if client.process.returncode is not None:  # it died, or was stopped
                closing = asyncio.ensure_future(client.close(grace=1))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
                client = None
        if client is None:
            client = PlansightClient(self.options, self.ui)
            self.client, self._started = client, None
        return client

    async def connected(self) -> PlansightClient:
        """The session's server, started (again) if there is none or it has exited."""
        client = self.current()
        if self._started is None:
            self._started = asyncio.ensure_future(client.start())
        started = self._started
        try:
            await asyncio.shield(started)  # a cancelled command leaves the start going on
        except BaseException:
            if started.done() and self.client is client:  # it failed: the next command retries
                self.client, self._started = None, None
                await client.close(grace=1)
            raise
        return client

    async def _warm_up(self) -> None:
        """Start the server while the user types the first prompt. A refusal (another server
        keeps the workspace's session, it cannot be saved) is said at once, above the prompt,
        not after the user has typed a task; the next command tries again."""
        from pygls.exceptions import JsonRpcException

        from plansight.cli.client import ServerExited

        try:
            await self.connected()
        except JsonRpcException as err:
            self.ui.notice(f"plansight: {err.message}", "bold red")
        except (ServerExited, OSError) as err:
            self.ui.notice(f"plansight: could not start the language server: {err}", "bold red")
        except Exception:  # a defect: the command that needs the server reports it
            log.debug("the warm-up failed", exc_info=True)

    async def run(self, prompt: str, *, mode: str = "act", todo_id: str | None = None) -> None:
        from plansight.cli.client import RunOutcome

        ui = self.ui
        ui.streamed_text = False  # the answer is printed unless this run streamed it
        ready = self._started is not None and self._started.done()
        ui.set_activity("waiting for the model" if ready else "starting the language server")
        ui.start()
        client = self.current()

        async def connect_and_run() -> RunOutcome:
            await self.connected()
            if self._told_instructions is not client:
                self._told_instructions = client
                await show_instructions(ui, client)
            ui.set_activity("waiting for the model")
            return await client.run(prompt, False, mode=mode, todo_id=todo_id)

        try:
            outcome = await outcome_of(client, connect_and_run())
            if self._stopped is client:  # the user stopped the server: that is a cancel
                result = dict(client.last_result or {})
                result.update(status="cancelled", text="The run was cancelled.")
                outcome = RunOutcome("cancelled", result)
            show_outcome(ui, outcome)
            self.add_usage(outcome.result.get("usage"))
        finally:
            ui.set_activity("")
            ui.stop()

    def add_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value

    async def show_cost(self) -> None:
        """The session's tokens, and the cost the server computed (its last `usage` event:
        the model's list price, `engine/spend.py`); the client prices nothing itself."""
        if not self.usage:
            self.say("No run yet in this session: nothing spent.", "dim")
            return
        told = self.ui.usage
        model = render.visible(str(told.get("model") or "")) or "the model"
        cost = told.get("costUsd")
        said = (
            f"≈ {render.cost_text(cost)} at {model}'s list prices"
            if isinstance(cost, int | float)
            else f"cost unknown: no list price for {model}"
        )
        self.say(f"This session: {render.usage_line(self.usage)} · {said}")

    async def edit_prompt(self, start: str) -> None:
        """`/edit`: the task written in $VISUAL / $EDITOR (a temporary file, `start` in it),
        sent as a prompt once saved; nothing is sent when it is left empty or the editor
        fails."""
        text = await self.ui.edit_text(start, "the task", "task.md")
        if text is None or not text.strip():
            self.say("Nothing sent: the task was empty.", "dim")
            return
        self.say(f"{PROMPT}{render.visible(text.strip())}")
        await self.run(text.strip())

    async def model(self, wanted: str) -> None:
        """`/model`: the models the server lists and the one it runs; `/model NAME`: the next
        runs use NAME. The model is the server's initialization option (`model`), read once
        as it starts, and the protocol has no request to change it: the server is started
        again with it, on the same session (its conversation, plan and scratchpad are stored)."""
        if not wanted:
            answer = await self.request(MODELS, {})
            if answer is not None and isinstance(answer.value, dict):
                for line in render.model_lines(answer.value):
                    self.say(line)
            return
        if any(ord(c) < 33 for c in wanted):
            self.say("A model's name is one word: /model claude-sonnet-5-5.", "bold yellow")
            return
        self.options = dataclasses.replace(self.options, model=wanted)
        client, self.client, self._started = self.client, None, None
        if client is not None:
            await client.close(grace=2)
        self.ui.usage = {}  # the next server's figures are its own
        self._figures_of.clear()  # and so are its costs of the other sessions
        self.say(
            f"The next runs use {render.visible(wanted)} (the language server starts again with "
            "it; the session goes on).",
            "bold",
        )

    async def request(self, method: str, params: dict[str, Any]) -> Answered | None:
        """A request to the session's server; None when it was refused or failed (printed).

        A server found dead on the way (it died since the last command) is replaced and the
        request sent once more to the new one."""
        return await self._call(lambda client: client.request(method, params))

    async def _call(
        self, send: Callable[[PlansightClient], Awaitable[Any]], *, again: bool = True
    ) -> Answered | None:
        """`send` to the session's server: its answer, None when it was refused or failed
        (printed). A server that dies on the way is replaced and `send` tried once more on
        the new one, if `again` (and the user did not stop it: that is a cancel)."""
        from pygls.exceptions import JsonRpcException

        from plansight.cli.client import ServerExited

        for attempt in (1, 2):
            client = None
            try:
                client = await self.connected()
                return Answered(await send(client))
            except JsonRpcException as err:
                self.say(f"plansight: {err.message}", "bold red")
                return None
            except ServerExited as err:
                if self._stopped is client and client is not None:
                    return None  # the user stopped it (said so then)
                if attempt == 2 or not again:
                    self.say(f"plansight: the language server failed: {err}", "bold red")
                    return None
            except OSError as err:
                self.say(f"plansight: could not start the language server: {err}", "bold red")
                return None
        return None

    async def show_plan(self) -> None:
        state = await self.request(STATE, {})
        if state is not None and isinstance(state.value, dict):
            self.print_lines(plan_lines(state.value))

    async def show_history(self) -> None:
        answer = await self.request(HISTORY, {"limit": 20})
        if answer is not None and isinstance(answer.value, dict):
            runs = [r for r in answer.value.get("runs", []) if isinstance(r, dict)]
            self.print_lines(history_lines(runs))

    async def show_checkpoints(self) -> None:
        answer = await self.request(CHECKPOINTS, {})
        if answer is not None:
            self.print_lines(checkpoint_lines(_checkpoints_of(answer.value)))

    async def parallel(self, todo_ids: list[str]) -> None:
        """`/parallel 2 3`: `plansight/runParallel` with `takeIn`, the whole of it on the
        server: the workers on items 2 and 3 (a live line each, from their events), then each
        one's changes put to the user file by file through the usual reviews; here only what
        it did is shown. Ctrl-C cancels the request: the server stops the workers still
        running (what they did is kept: `plansight/workers`)."""
        ui = self.ui
        ui.workers.clear()
        ui.reviewing_worker = None

        def doing() -> None:
            running = any(w.get("status") == "running" for w in ui.workers.values())
            ui.set_activity("workers running" if running else "taking in the workers' changes")

        ui.on_worker.append(doing)
        ui.start()
        ui.set_activity("workers running")
        try:
            # Never sent again to a new server: the workers died with the old one.
            answered = await self._call(lambda client: client.run_parallel(todo_ids), again=False)
        finally:
            ui.on_worker.remove(doing)
            ui.set_activity("")
            ui.stop()
        if answered is None:
            return
        if not isinstance(answered.value, dict):
            self.say(
                "Cancelled: the workers still running were stopped (what they did is kept).",
                "yellow",
            )
            return
        value = answered.value
        for skipped in value.get("skipped", []):
            if isinstance(skipped, dict):
                why = f"#{skipped.get('todoId')}: not started, {skipped.get('reason')}."
                self.say(render.visible(why))
        for taken in value.get("takenIn", []):
            if isinstance(taken, dict):
                self.say(render.visible(take_in_line(str(taken.get("todoId")), taken)))

    async def undo(self, todo_id: str) -> None:
        answered = await self.request(RESTORE, {"todoId": todo_id})
        if answered is None:
            return
        result = answered.value if isinstance(answered.value, dict) else {}
        listed = await self.request(CHECKPOINTS, {})  # the one the restore took undoes it
        undo_id = undo_id_of(listed.value) if listed is not None else None
        shown = restore_lines(result, f"Step #{todo_id} undone", undo_id)
        self.print_lines(shown)

    async def compact(self) -> None:
        answered = await self.request(COMPACT, {})
        answer = answered.value if answered is not None else None
        if not isinstance(answer, dict):
            return
        before, after = answer.get("beforeTokens"), answer.get("afterTokens")
        # A compaction that happened is shown by its `compacted` event, as in a run.
        if isinstance(before, int) and before == after:
            self.say(f"Nothing to compact: the conversation is ~{before:,} tokens.", "dim")

    async def new_conversation(self) -> None:
        if await self.request(RESET, {}) is not None:
            # /cost is the session's, as the server's costUsd is: the new one has spent nothing.
            self._switch_figures(None)
            self.say(
                "A new session: an empty plan and scratchpad (the previous session is kept: "
                "/sessions lists it, /resume goes back to it).",
                "bold",
            )

    def _switch_figures(self, session_id: str | None) -> None:
        """Set the current session's figures aside (its `usage` events name it) and show
        session `session_id`'s as they were when it was left (None, or one not run on this
        server: nothing spent, as the server's cost of it starts at nothing)."""
        left = self.ui.usage.get("sessionId")
        if isinstance(left, str) and left:
            self._figures_of[left] = (self.usage, self.ui.usage)
        figures = self._figures_of.pop(session_id, None) if session_id else None
        self.usage, self.ui.usage = figures or ({}, {})

    async def _sessions(self) -> list[dict[str, Any]] | None:
        answer = await self.request(SESSIONS, {})
        if answer is None or not isinstance(answer.value, dict):
            return None
        return [s for s in answer.value.get("sessions", []) if isinstance(s, dict)]

    async def show_sessions(self) -> None:
        sessions = await self._sessions()
        if sessions is not None:
            self.print_lines(sessions_lines(sessions))

    async def resume(self, wanted: str) -> None:
        """Open session `wanted` (an id or its first characters; "": the one used last
        before the current one) and show its plan."""
        sessions = await self._sessions()
        if sessions is None:
            return
        if wanted:
            found = [s for s in sessions if str(s.get("id", "")).startswith(wanted)]
        else:
            found = [s for s in sessions if s.get("current") is not True][:1]
        if len(found) != 1:
            said = (
                "No other session to go back to."
                if not wanted
                else (
                    f"No session {wanted!r}."
                    if not found
                    else f"{wanted!r} names several sessions."
                )
            )
            self.say(f"{said} /sessions lists them.", "bold yellow")
            return
        chosen = found[0]
        state = await self.request(OPEN_SESSION, {"id": chosen["id"]})
        if state is None or not isinstance(state.value, dict):
            return
        # /cost and the status line: that session's, as the server costs it (per session).
        self._switch_figures(str(chosen["id"]))
        title = render.visible(str(chosen.get("title") or "")) or "(untitled)"
        self.console.print(Text(f"Resumed: {render.shorten(title)}", style="bold"))
        self.print_lines(plan_lines(state.value))

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.close(grace=3)

    # Output ------------------------------------------------------------------------------
    def say(self, message: str, style: str = "") -> None:
        echo(self.console, Text(message, style=style))  # wrapped at words

    def print_lines(self, lines: list[Text]) -> None:
        for line in lines:
            echo(self.console, line, soft_wrap=True)

    # The prompt loop (main thread) ---------------------------------------------------------
    def repl(self) -> int:
        """Read and carry out lines until the user leaves; the exit code (0)."""
        self.loops.submit(self._warm_up())
        interrupted = False  # the last thing at the prompt was a Ctrl-C
        try:
            while True:
                try:
                    line = self.read_line()
                except EOFError:  # Ctrl-D
                    self.console.print()
                    return 0
                except KeyboardInterrupt:
                    self.console.print()
                    if interrupted:
                        return 0
                    interrupted = True
                    self.say("(Ctrl-C again, Ctrl-D or /quit to leave)", "dim")
                    continue
                interrupted = False
                if not self.carry_out(parse_line(line)):
                    return 0
        finally:
            self.shut_down()

    def read_line(self) -> str:
        """A line; one ending in `\\` goes on on the next (the backslash dropped), so a task
        can have several lines on any terminal."""
        lines: list[str] = []
        prompt = PROMPT
        while True:
            self.console.file.flush()
            self.ui.prompt_line = self.prompt_line
            typed = self.ui.typed_ahead()
            if typed and self.prompt_line is not None:  # shown as typed, to go on with
                self.prompt_line.prefill(" ".join(typed.splitlines()))
            try:
                line = input(prompt)
            finally:
                self.ui.prompt_line = None
            if not line.endswith("\\"):
                lines.append(line)
                return "\n".join(lines)
            lines.append(line[:-1])
            prompt = CONTINUATION

    def carry_out(self, command: Command) -> bool:
        """Do what the line says; False to leave."""
        name, argument = command.name, command.argument
        work: Awaitable[None] | None = None
        if name == "":
            if not argument:
                return True
            work = self.run(argument)
        elif name in ("quit", "exit"):
            return False
        elif name == "help":
            self.say(HELP)
        elif name == "plan":
            work = self.run(argument, mode="plan") if argument else self.show_plan()
        elif name == "step":
            step = step_id(argument)
            if step is None:
                self.say("Which step? /step N (and, if you like, what to do).", "bold yellow")
            else:
                work = self.run(step[1] or DEFAULT_STEP_PROMPT, todo_id=step[0])
        elif name == "undo":
            step = step_id(argument)
            if step is None or step[1]:
                self.say("Which step? /undo N, e.g. /undo 2.", "bold yellow")
            else:
                work = self.undo(step[0])
        elif name == "parallel":
            ids = [part.lstrip("#") for part in argument.replace(",", " ").split()]
            if not ids:
                self.say("Which items? /parallel N M, e.g. /parallel 2 3.", "bold yellow")
            else:
                work = self.parallel(ids)
        elif name == "checkpoints":
            work = self.show_checkpoints()
        elif name == "history":
            work = self.show_history()
        elif name == "compact":
            work = self.compact()
        elif name == "cost":
            work = self.show_cost()
        elif name == "edit":
            work = self.edit_prompt(argument)
        elif name == "model":
            work = self.model(argument.strip())
        elif name == "context":
            for line in render.context_lines(self.ui.usage):
                self.say(line)
        elif name == "new":
            work = self.new_conversation()
        elif name == "sessions":
            work = self.show_sessions()
        elif name == "resume":
            work = self.resume(argument.strip())
        else:
            self.say(f"No such command: /{name}. /help lists them.", "bold yellow")
        if work is not None:
            self.wait(work)
        return True

    def wait(self, work: Awaitable[None]) -> None:
        """Carry out `work` in the loop; Ctrl-C meanwhile cancels it and the session goes on."""

        async def tracked() -> None:
            self._task = asyncio.current_task()
            try:
                await work
            finally:
                self._task = None
                if self._grace is not None:  # a cancel's deadline ends with its command
                    self._grace.cancel()
                    self._grace = None

        future = self.loops.submit(tracked())
        interrupts = 0
        while True:
            try:
                future.result()
                return
            except KeyboardInterrupt:
                interrupts += 1
                self.loops.call(self._interrupt if interrupts == 1 else self._stop_server)
            except concurrent.futures.CancelledError:
                self.say("Cancelled.", "yellow")
                return
            except Exception as err:  # a defect: said, logged, and the session goes on
                log.exception("the command failed")
                self.say(f"plansight: the command failed unexpectedly: {err!r}", "bold red")
                return

    def _interrupt(self) -> None:
        """The first Ctrl-C: cancel the run (the server answers), else the command waited on."""
        client = self.client
        if client is not None and client.cancel():
            self.ui.notice("Cancelling the run… (Ctrl-C again stops the language server)")
            self._grace = self.loops.loop.call_later(
                CANCEL_GRACE, self._stop_if_still_cancelling, client
            )
            return
        if self._task is not None:
            self._task.cancel()

    def _stop_if_still_cancelling(self, client: PlansightClient) -> None:
        if client is self.client and client.cancelling and self._task is not None:
            self.ui.notice("The language server did not stop the run: stopping it.")
            self._stop_server()

    def _stop_server(self) -> None:
        """Kill the server (the run in progress ends with it); the next prompt starts another."""
        client = self.client
        if client is not None and client.process is not None:
            self._stopped = client
            client.kill()
            self.ui.notice("The language server was stopped; the next prompt starts a new one.")
        elif self._task is not None:
            self._task.cancel()

    def shut_down(self) -> None:
        """Shut the server down (killed if that takes too long, or on another Ctrl-C)."""
        try:
            self.loops.submit(self.close()).result(timeout=15)
        except KeyboardInterrupt:
            pass
        except Exception as err:
            log.warning("the language server did not shut down cleanly: %r", err)
        client = self.client
        if client is not None:
            client.kill()
        self.loops.close()


SLASH_COMMANDS = (
    "plan",
    "step",
    "undo",
    "checkpoints",
    "history",
    "compact",
    "cost",
    "context",
    "model",
    "edit",
    "new",
    "sessions",
    "resume",
    "help",
    "quit",
)
CONTINUATION = "… "  # the prompt of a line continued from one ending in `\\`


def completions(text: str, root: Path) -> list[str]:
    """What Tab completes `text` (the word before the cursor) to: a `/command` at the line's
    start, an `@path` of the workspace (a folder ends in `/`, to go on into it)."""
    if text.startswith("/"):
        return [f"/{name} " for name in SLASH_COMMANDS if name.startswith(text[1:])]
    if not text.startswith("@"):
        return []
    folder, _, start = text[1:].rpartition("/")
    where = (root / folder).resolve()
    if not where.is_dir() or not where.is_relative_to(root.resolve()):
        return []  # `@../` and the like: only the workspace's files are offered
    found = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(where), key=lambda e: e.name):
            if not entry.name.startswith(start) or (
                entry.name.startswith(".") and not start.startswith(".")
            ):
                continue
            name = f"{folder}/{entry.name}" if folder else entry.name
            found.append(f"@{name}/" if entry.is_dir() else f"@{name} ")
    return found


def set_up_completion(readline: Any, root: Path) -> None:
    """Tab completes `/commands` and `@file` mentions (words split at blanks only, so `/`,
    `@` and `.` stay in the word being completed)."""
    offered: list[str] = []

    def complete(text: str, state: int) -> str | None:
        if state == 0:
            offered[:] = completions(text, root)
        return offered[state] if state < len(offered) else None

    readline.set_completer_delims(" \t\n")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")


def set_up_readline(readline: Any, path: Path) -> None:
    # Python turns bracketed paste off for its own REPL; on, a pasted multi-line task is one
    # prompt (Enter sends it) instead of one run per line, the later lines answering reviews.
    readline.parse_and_bind("set enable-bracketed-paste on")
    readline.set_history_length(HISTORY_LENGTH)
    with contextlib.suppress(OSError):
        readline.read_history_file(str(path))


def save_history(readline: Any, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(str(path))
    except OSError as err:
        print(f"plansight: could not save the prompt history to {path}: {err}", file=sys.stderr)


def interactive_cli(workspace: str, console: Console | None = None) -> int:
    console = console or make_console()
    root = Path(workspace).expanduser()
    if not root.is_dir():
        console.print(Text(f"plansight: no such folder: {root}", style="bold red"))
        return 1
    if not has_api_key(dict(os.environ)):
        console.print(
            Text(
                "plansight: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another "
                "endpoint), or try `plansight demo` for an offline recorded session.",
                style="bold red",
            )
        )
        return 1
    from plansight.cli.client import ClientOptions

    try:
        import readline
    except ImportError:  # no line editing: the terminal's own line mode still works
        readline = None  # type: ignore[assignment]
    path = history_file()
    if readline is not None:
        set_up_readline(readline, path)
    ui = TerminalUI(console)
    ui.reader = TerminalLines(sys.stdin.fileno())
    ui.begin()
    console.print(  # wrapped at words, as the run's header is (a long path is cut where it must)
        Text.assemble(
            ("plansight ", "bold blue"), (f"· {root.resolve()} · review each change", "dim")
        ),
    )
    console.print(
        Text(
            "Type a task, /help for commands. Follow-ups continue this workspace's "
            "conversation (/new starts a new one); Ctrl-C cancels a run, Ctrl-D leaves.",
            style="dim",
        ),
    )
    session = InteractiveSession(ui, ClientOptions(workspace=root))
    if readline is not None:
        session.prompt_line = PromptLine(readline, PROMPT)
        set_up_completion(readline, root)
    try:
        return session.repl()
    finally:
        if readline is not None:
            save_history(readline, path)
