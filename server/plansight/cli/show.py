"""`plansight plan`, `history` and `sessions`: the session's plan and its past runs, and the
workspace's sessions, without a run.

Each starts `plansight lsp` on the workspace (no API key needed: nothing here asks the model),
sends `plansight/state` or `plansight/history`, prints the answer and shuts the server down,
as `plansight checkpoints` does. The server is a read-only view (the readOnly option): it works
while another server keeps the session (a run in another terminal, VS Code), which a line
then says, and it writes nothing. The interactive session's `/plan` and `/history` print the
same lines (`plan_lines`, `history_lines`, `sessions_lines`), asked of the server it already
has. Titles, prompts and answers come from the model and the user: they are shown escaped
(`render.visible`), never as terminal sequences. Exit codes: 0
when the server answered, 1 when it could not (no such folder, the server failed).
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.cli.checkpoints import _ask_server, _workspace, when
from plansight.cli.echo import echo
from plansight.protocol.names import HISTORY, SESSIONS, STATE

EDIT_TOOLS = frozenset({"edit_file", "write_file"})
DEFAULT_RUNS = 20


# Rendering (pure) ---------------------------------------------------------------------------


def plan_lines(state: Mapping[str, Any]) -> list[Text]:
    """The plan with each item's status, its progress line, and the scratchpad's size."""
    todos = state.get("todos")
    todos = todos if isinstance(todos, Mapping) else {}
    lines: list[Text] = []
    if render.plan_items(todos):
        lines.append(Text("Plan · ▶ " + render.progress_line(todos), style="bold blue"))
        lines.append(render.plan_text(todos))
    else:
        lines.append(Text("No plan yet: the agent makes one as it starts a task.", style="dim"))
    scratchpad = state.get("scratchpad")
    if isinstance(scratchpad, str) and scratchpad.strip():
        lines.append(Text("Scratchpad:", style="bold magenta"))
        lines.append(Text(scratchpad.strip(), style="magenta"))
    if state.get("running") is True:
        lines.append(Text("A run is in progress.", style="yellow"))
    return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def run_summary(run: Mapping[str, Any]) -> str:
    """`done after 6 rounds · 2 edits · 1 command`: how the run ended and what it did."""
    result = run.get("result")
    if isinstance(result, Mapping):
        status = str(result.get("status", "ended"))
        rounds = result.get("rounds")
        said = status
        if isinstance(rounds, int) and rounds > 0:
            said += f" after {_plural(rounds, 'round')}"
    else:
        said = "in progress (or stopped without an answer)"
    events = [e for e in run.get("events", []) if isinstance(e, Mapping)]
    calls = [str(e.get("name", "")) for e in events if e.get("type") == "toolCall"]
    edits = sum(1 for name in calls if name in EDIT_TOOLS)
    commands = sum(1 for name in calls if name == "bash")
    parts = [said]
    if edits:
        parts.append(_plural(edits, "edit"))
    if commands:
        parts.append(_plural(commands, "command"))
    return " · ".join(parts)


def history_lines(
    runs: Sequence[Mapping[str, Any]], today: datetime.date | None = None
) -> list[Text]:
    """Each run, oldest first: when, how it ended, its prompt and the first line of its answer."""
    if not runs:
        return [Text("No runs yet in this workspace.", style="dim")]
    lines: list[Text] = []
    for run in runs:
        head = Text(when(str(run.get("startedAt", "")), today), style="bold")
        head.append("  " + run_summary(run))
        if run.get("newSession") is True:
            head.append("  (a new conversation)", style="dim")
        lines.append(head)
        lines.append(Text.assemble(("  › ", "bold"), render.shorten(str(run.get("prompt", "")))))
        result = run.get("result")
        answer = result.get("text") if isinstance(result, Mapping) else None
        if isinstance(answer, str) and answer.strip():
            first = next(line for line in answer.strip().splitlines() if line.strip())
            lines.append(Text("    " + render.shorten(first), style="dim"))
    return lines


def sessions_lines(
    sessions: Sequence[Mapping[str, Any]], today: datetime.date | None = None
) -> list[Text]:
    """One line per session, the one used last first: `*` for the current one, its id, when
    it was last used, its plan's progress, its status when not idle, and its title."""
    if not sessions:
        return [Text("No sessions yet in this workspace.", style="dim")]
    lines: list[Text] = []
    for session in sessions:
        line = Text("* " if session.get("current") is True else "  ", style="bold green")
        line.append(render.visible(str(session.get("id", ""))), style="bold")
        line.append("  " + when(str(session.get("updatedAt", "")), today))
        counts = session.get("counts")
        if isinstance(counts, Mapping) and counts.get("total"):
            line.append(f"  {counts.get('done', 0)}/{counts.get('total')} done", style="blue")
        status = session.get("status")
        if status in ("running", "waiting"):
            line.append(f"  {status}", style="yellow")
        title = render.visible(str(session.get("title") or "")) or "(untitled)"
        line.append("  " + render.shorten(title))
        lines.append(line)
    return lines


# Commands -----------------------------------------------------------------------------------


def _read(
    workspace: str, console: Console, method: str, params: dict[str, Any]
) -> tuple[Path, dict[str, Any]] | None:
    """One read-only request to a server of the workspace: the folder and the answer (an empty
    dict for one that is no object); None when it could not be asked (said on the console)."""
    root = _workspace(workspace, console)
    if root is None:
        return None
    answered = asyncio.run(_ask_server(root, console, method, params, read_only=True))
    if answered is None:
        return None
    return root, answered[0] if isinstance(answered[0], dict) else {}


def _show(console: Console, header: str, lines: Iterable[Text]) -> int:
    """The header and the lines, escaped as every terminal command prints (cli/echo.py)."""
    echo(console, Text(header, style="bold"), soft_wrap=True)
    for line in lines:
        echo(console, line, soft_wrap=True)
    return 0


def plan_cli(workspace: str, console: Console | None = None) -> int:
    console = console or Console(highlight=False)
    read = _read(workspace, console, STATE, {})
    if read is None:
        return 1
    root, state = read
    return _show(console, f"The session of {root.resolve()}:", plan_lines(state))


def history_cli(workspace: str, limit: int = DEFAULT_RUNS, console: Console | None = None) -> int:
    console = console or Console(highlight=False)
    read = _read(workspace, console, HISTORY, {"limit": limit})
    if read is None:
        return 1
    root, answer = read
    runs = [r for r in answer.get("runs", []) if isinstance(r, dict)]
    header = f"Runs in {root.resolve()}, oldest first (the last {limit} at most):"
    return _show(console, header, history_lines(runs))


def sessions_cli(workspace: str, console: Console | None = None) -> int:
    console = console or Console(highlight=False)
    read = _read(workspace, console, SESSIONS, {})
    if read is None:
        return 1
    root, answer = read
    sessions = [s for s in answer.get("sessions", []) if isinstance(s, dict)]
    header = f"Sessions of {root.resolve()}, the one used last first:"
    return _show(console, header, sessions_lines(sessions))
