"""`plansight run "<prompt>"`: one agent run from the terminal, through `plansight lsp`.

Reviews: with `--yes` every edit and command is accepted (the server is told so through
`autoApprove`, so it does not even ask). Without it each edit is shown as a coloured diff
and each command before it runs, and the answer is read from stdin: `a` accepts, `r`
rejects, anything else rejects with that text as the reason the model reads. When stdin is
not a terminal the answers are read from it all the same (`echo a | plansight run ...`);
once it is exhausted, every further review is rejected with the feedback
"not approved (no interactive terminal)", so a run never hangs on a closed stdin.

Ctrl-C cancels the run (`$/cancelRequest`); the run's result is printed and the exit code is
130. A second Ctrl-C quits at once. Exit codes: `plansight.__main__.RUN_EXIT_CODES`, which
`run --help` and docs/terminal.md say word for word. Errors that stop a command before its run (no
such folder, no API key) go to stderr; with stdout redirected, reviews are asked on the
terminal (stderr or /dev/tty) and the run's error is said there too.

The header and the live region come up before the LSP client (pygls, lsprotocol: a few tenths
of a second) is imported, so the user sees at once what is happening.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.cli.ui import LogToTerminal, TerminalUI, stderr_console, terminal_for_questions
from plansight.protocol.names import SESSIONS

if TYPE_CHECKING:
    from plansight.cli.client import ClientOptions, PlansightClient, RunOutcome

CANCEL_GRACE = 10.0  # seconds the server gets to answer a cancelled run before we quit


def make_console() -> Console:
    return Console(highlight=False)


def error_console() -> Console:
    return stderr_console()


def folder_problem(root: Path) -> str | None:
    """Why `root` cannot be a workspace, in words (a file is not "no such folder"), or None."""
    if root.is_dir():
        return None
    if root.exists():
        return f"{root} is a file, not a folder: give the project's folder"
    return f"no such folder: {root}"


async def run_session(
    ui: TerminalUI,
    options: ClientOptions,
    prompt: str,
    *,
    new_session: bool,
    mode: str = "act",
    todo_id: str | None = None,
    session: str | None = None,
) -> int:
    """Start the server, run `prompt`, print the result, shut the server down: the exit code.
    `session`: the id of the workspace's session to run in, or `last` (the one used last);
    None: the current one (`new_session`: a new one)."""
    ui.set_activity("starting the language server")
    ui.start()
    from plansight.cli.client import PlansightClient

    client = PlansightClient(options, ui)
    loop = asyncio.get_running_loop()
    logs = LogToTerminal(ui)
    logging.getLogger().addHandler(logs)
    interrupts = 0

    def quit_now() -> None:
        client.kill()
        ui.stop()
        ui.console.print(Text("interrupted", style="bold red"))
        ui.console.file.flush()
        os._exit(130)

    def on_interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1 and client.cancel():
            ui.notice("Cancelling the run… (press Ctrl-C again to quit at once)")
            loop.call_later(CANCEL_GRACE, quit_now)
            return
        quit_now()

    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        installed = True
    try:

        async def start_and_run() -> RunOutcome:
            await client.start()
            session_id = session
            if session == "last":
                listed = await client.request(SESSIONS, {})
                found = listed.get("sessions") if isinstance(listed, dict) else None
                session_id = str(found[0]["id"]) if found else None  # newest first
            await show_instructions(ui, client)
            ui.set_activity("waiting for the model")
            return await client.run(
                prompt, new_session, mode=mode, todo_id=todo_id, session_id=session_id
            )

        outcome = await outcome_of(client, start_and_run())
        show_outcome(ui, outcome, options.env)
        await client.close()
    finally:
        ui.stop()
        client.kill()
        logging.getLogger().removeHandler(logs)
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
    return outcome_exit_code(client, outcome)


async def show_instructions(ui: TerminalUI, client: PlansightClient) -> None:
    """The banner's last line: which of the repository's instructions the model reads."""
    from pygls.exceptions import JsonRpcException

    from plansight.protocol.names import STATE

    try:
        state = await client.request(STATE, {})
    except JsonRpcException:
        return
    line = render.instructions_line(state.get("instructions") if isinstance(state, dict) else None)
    if line is not None:
        ui.print(line)


async def outcome_of(client: PlansightClient, work: Awaitable[RunOutcome]) -> RunOutcome:
    """How the run went, a server that failed to start, died or refused it included."""
    from pygls.exceptions import JsonRpcException

    from plansight.cli.client import RunOutcome, ServerExited

    try:
        return await work
    except ServerExited as err:
        return RunOutcome("error", client.last_result or {}, str(err))
    except OSError as err:
        return RunOutcome("error", {}, f"could not start the language server: {err}")
    except JsonRpcException as err:  # initialize refused
        return RunOutcome("error", {}, f"the language server refused: {err.message}")


def show_outcome(ui: TerminalUI, outcome: RunOutcome, env: Mapping[str, str] | None = None) -> None:
    """The run's end as the terminal says it; an API failure names the key or the URL to check
    (from `env`, the server's environment, by default ours)."""
    result = dict(outcome.result)
    result.setdefault("status", outcome.status)
    said = " ".join(str(e) for e in (result.get("error"), outcome.error) if e)
    hint = render.api_error_hint(said, env if env is not None else os.environ)
    ui.result(result, outcome.error, hint)


def outcome_exit_code(client: PlansightClient, outcome: RunOutcome) -> int:
    if outcome.status == "cancelled" or (client.cancelling and outcome.error is not None):
        return 130
    return render.exit_code(outcome.status) if outcome.error is None else 1


def header_mode(yes: bool, plan: bool, step: str | None) -> str:
    """How this run goes, for the header: `plan first · step 3 · review each change`."""
    parts = ["plan first"] if plan else []
    if step is not None:
        parts.append(f"step {step} only")
    parts.append("auto-accept" if yes else "review each change")
    return " · ".join(parts)


def open_tty() -> IO[str] | None:
    """The controlling terminal to read answers from, or None without one."""
    try:
        return open("/dev/tty", encoding="utf-8")  # kept open until the process ends
    except OSError:
        return None


def has_api_key(env: dict[str, str]) -> bool:
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


def run_cli(
    prompt: str,
    workspace: str,
    yes: bool,
    model: str | None,
    new_session: bool,
    *,
    plan: bool = False,
    step: str | None = None,
    answers_from_tty: bool = False,
    session: str | None = None,
    output_format: str = "text",
) -> int:
    """One run; `answers_from_tty`: stdin held the prompt, so the reviews are asked on the
    terminal (/dev/tty) when there is one. `output_format` json or stream-json: the run as
    JSON on stdout (cli/output.py), what a person reads on stderr."""
    console = make_console() if output_format == "text" else error_console()
    root = Path(workspace).expanduser()
    if (problem := folder_problem(root)) is not None:
        error_console().print(Text(f"plansight: {problem}", style="bold red"))
        return 1
    if not has_api_key(dict(os.environ)):
        error_console().print(
            Text(
                "plansight: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another "
                "endpoint), or try `plansight demo` for an offline recorded session.",
                style="bold red",
            )
        )
        return 1
    answers = open_tty() if answers_from_tty and not yes else None
    ui: TerminalUI
    if output_format == "text":
        ui = TerminalUI(
            console, inline_edits=yes, stdin=answers, prompts=terminal_for_questions(console)
        )
    else:
        from plansight.cli.output import ScriptOutput

        ui = ScriptOutput(output_format, sys.stdout, console, inline_edits=yes, stdin=answers)
    ui.begin()
    ui.header(str(root.resolve()), prompt, mode=header_mode(yes, plan, step))
    from plansight.cli.client import ClientOptions

    options = ClientOptions(workspace=root, model=model, accept_edits=yes, approve_commands=yes)
    running = run_session(
        ui,
        options,
        prompt,
        new_session=new_session,
        mode="plan" if plan else "act",
        todo_id=step,
        session=session,
    )
    try:
        return asyncio.run(running)
    except KeyboardInterrupt:  # before the handler was installed
        sys.stdout.flush()
        return 130
