"""`plansight checkpoints`, `plansight undo --step N`, `plansight restore <id>`: from the terminal.

Each starts `plansight lsp` on the workspace (no API key needed: nothing here asks the model),
sends `plansight/checkpoints` or `plansight/restore`, prints the answer and shuts the server
down. The listing asks for the read-only view (the readOnly option, session/lock.py), so it
works while another server keeps the session, and says so; a restore writes, and is refused
then. A restore prints each file it wrote back and each it deleted (never "restored"), the
later steps whose changes a forced step undo lost too, each file it left as it was, with the
reason, and the checkpoint that undoes it. Exit codes: 0 when the server answered (whatever
was skipped), 1 when it refused (a run in progress elsewhere, checkpoints off, an unknown
checkpoint or step).
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.protocol.names import CHECKPOINTS, RESTORE

if TYPE_CHECKING:
    from plansight.cli.client import Answer

KIND_WORDS = {
    "outside": "changed outside",
    "runStart": "run started",
    "itemStart": "step started",
    "edit": "edit",
    "command": "command",
    "beforeRestore": "before a restore",
    "restore": "restore",
}
MAX_PATHS_SHOWN = 3


# Rendering (pure) -----------------------------------------------------------------------------


def when(created_at: str, today: datetime.date | None = None) -> str:
    """`14:02:31` for today, `Dec 01 14:02` for another day (local time)."""
    try:
        moment = datetime.datetime.fromisoformat(created_at.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return created_at
    if moment.date() == (today or datetime.date.today()):
        return moment.strftime("%H:%M:%S")
    return moment.strftime("%b %d %H:%M")


def paths_shown(paths: Sequence[str], limit: int = MAX_PATHS_SHOWN) -> str:
    if len(paths) <= limit:
        return ", ".join(paths)
    return ", ".join(paths[:limit]) + f" and {len(paths) - limit} more"


def checkpoint_lines(
    checkpoints: Sequence[dict[str, Any]], today: datetime.date | None = None
) -> list[Text]:
    """One line per checkpoint, oldest first: id, time, step, label, the files it changed."""
    if not checkpoints:
        return [Text("No checkpoints yet: one is taken as each run starts.", style="dim")]
    width = max(len(str(c.get("id", ""))) for c in checkpoints)
    labels = [render.shorten(str(c.get("label", "")), 60) for c in checkpoints]
    label_width = max(len(label) for label in labels)
    lines: list[Text] = []
    for checkpoint, label in zip(checkpoints, labels, strict=True):
        line = Text()
        line.append(str(checkpoint.get("id", "?")).rjust(width), style="bold")
        line.append("  " + when(str(checkpoint.get("createdAt", "")), today), style="dim")
        todo = checkpoint.get("todoId")
        line.append(f"  {'#' + str(todo) if todo is not None else '':<4}", style="cyan")
        paths = [str(p) for p in checkpoint.get("paths", [])]
        line.append("  " + (label.ljust(label_width) if paths else label))
        if paths:
            line.append("  " + paths_shown(paths), style="dim")
        lines.append(line)
    return lines


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def restore_lines(result: dict[str, Any], what: str, undo_id: str | None) -> list[Text]:
    """What a restore did: the files written back and those deleted, the later steps' changes
    a forced step undo lost too, the files left alone and why, how to undo it."""
    restored = [str(p) for p in result.get("restored", [])]
    deleted = [str(p) for p in result.get("deleted", [])]
    skipped = [s for s in result.get("skipped", []) if isinstance(s, dict)]
    also = [a for a in result.get("alsoUndone", []) if isinstance(a, dict)]
    lines: list[Text] = []
    if restored or deleted:
        done = [f"restored {_files(len(restored))}"] if restored else []
        done += [f"deleted {_files(len(deleted))}"] if deleted else []
        lines.append(Text(f"{what}: {', '.join(done)}", style="bold green"))
        lines += [Text.assemble(("  ✓ ", "green"), path) for path in restored]
        lines += [Text.assemble(("  - ", "green"), path, (" (deleted)", "dim")) for path in deleted]
    else:
        lines.append(Text(f"{what}: no file needed restoring", style="bold"))
    if also:
        lines.append(Text(f"Later steps' changes also undone ({len(also)}):", style="bold yellow"))
        for item in also:
            steps = ", ".join(f"#{t}" for t in item.get("todoIds", []))
            lines.append(
                Text.assemble(
                    ("  ! ", "yellow"),
                    str(item.get("path", "?")),
                    (" — ", "dim"),
                    f"the changes of {steps}",
                )
            )
    if skipped:
        lines.append(Text(f"Left as they are ({len(skipped)}):", style="bold yellow"))
        for item in skipped:
            lines.append(
                Text.assemble(
                    ("  ✗ ", "yellow"),
                    str(item.get("path", "?")),
                    (" — ", "dim"),
                    str(item.get("reason", "")),
                )
            )
    if undo_id is not None and (restored or deleted):
        lines.append(Text(f"To undo this: plansight restore {undo_id}", style="dim"))
    return lines


# Running ------------------------------------------------------------------------------------


class QuietFrontend:
    """These commands run no agent: what the server sends besides the answer is not shown,
    except warnings."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_todos(self, state: dict[str, Any]) -> None: ...

    def on_scratchpad(self, content: str) -> None: ...

    def on_event(self, event: dict[str, Any]) -> None: ...

    def on_message(self, level: int, message: str) -> None:
        if level <= 2:  # errors and warnings
            self.console.print(Text(message, style="yellow"))

    def show_edit(self, review: dict[str, Any], path: str) -> None: ...

    def show_command(self, request: dict[str, Any]) -> None: ...

    def show_plan_review(self, review: dict[str, Any]) -> None: ...

    def show_edited_plan(self, items: list[dict[str, str]]) -> None: ...

    def show_question(self, question: dict[str, Any]) -> None: ...

    def warn(self, message: str) -> None:
        self.console.print(Text(message, style="yellow"))

    def show_recorded_answer(self, answer: str) -> None: ...

    async def edit_text(self, text: str) -> str | None:
        return None

    async def ask(self, question: str) -> Answer:
        return None  # nothing is asked: no run


async def _ask_server(
    workspace: Path,
    console: Console,
    method: str,
    params: dict[str, Any],
    *,
    read_only: bool = False,
) -> tuple[Any, Any] | None:
    """The answer to one request and then the checkpoints as they are; None after an error
    (printed). `read_only`: of a read-only server (the commands that only look), which works
    beside the one keeping the session and says so in a line when there is one."""
    from pygls.exceptions import JsonRpcException

    from plansight.cli.client import ClientOptions, PlansightClient, ServerExited

    options = ClientOptions(
        workspace=workspace, extra_options={"readOnly": True} if read_only else {}
    )
    client = PlansightClient(options, QuietFrontend(console))
    try:
        started = await client.start()
        if read_only and (elsewhere := held_by(started)) is not None:
            console.print(Text(elsewhere, style="yellow"), soft_wrap=True)
        answer = await client.request(method, params)
        # After a restore, the checkpoints: the one it took first undoes it.
        listed = await client.request(CHECKPOINTS, {}) if method == RESTORE else answer
        return answer, listed
    except JsonRpcException as err:
        console.print(Text(f"plansight: {err.message}", style="bold red"))
    except (ServerExited, OSError) as err:
        console.print(Text(f"plansight: the language server failed: {err}", style="bold red"))
    finally:
        await client.close()
    return None


def held_by(started: Any) -> str | None:
    """The line saying that another server keeps the session a read-only server looked at
    (from its `initialize` answer), or None when none does."""
    experimental = getattr(getattr(started, "capabilities", None), "experimental", None)
    plansight = experimental.get("plansight") if isinstance(experimental, dict) else None
    read_only = plansight.get("readOnly") if isinstance(plansight, dict) else None
    record = read_only.get("heldBy") if isinstance(read_only, dict) else None
    if not isinstance(record, dict):
        return None
    said = [f"pid {record['pid']}"] if record.get("pid") else []
    said += [f"for {record['holder']}"] if record.get("holder") else []
    said += [f"since {record['since']}"] if record.get("since") else []
    who = f" ({'; '.join(said)})" if said else ""
    return (
        f"A run or session is going on in another Plansight server{who}: "
        "this is what it has saved so far."
    )


def undo_id_of(listed: Any) -> str | None:
    """The checkpoint that undoes the restore just made: the newest `beforeRestore` one."""
    befores = [c for c in _checkpoints_of(listed) if c.get("kind") == "beforeRestore"]
    return str(befores[-1]["id"]) if befores else None


def _checkpoints_of(listed: Any) -> list[dict[str, Any]]:
    found = listed.get("checkpoints", []) if isinstance(listed, dict) else []
    return [c for c in found if isinstance(c, dict)]


def _workspace(raw: str, console: Console) -> Path | None:
    root = Path(raw).expanduser()
    if not root.is_dir():
        console.print(Text(f"plansight: no such folder: {root}", style="bold red"))
        return None
    return root


def never_checkpointed(root: Path) -> bool:
    """No session ever took a checkpoint of ``root`` (in the storage folder a server started
    here would use): there is nothing to list or restore, and no server need start to say so
    (its start would take a first snapshot of the whole workspace)."""
    from plansight.checkpoints.store import checkpoints_folder, ever_taken
    from plansight.session.storage import default_storage_dir

    return not ever_taken(checkpoints_folder(default_storage_dir(root)))


def checkpoints_cli(workspace: str, console: Console | None = None) -> int:
    console = console or Console(highlight=False)
    root = _workspace(workspace, console)
    if root is None:
        return 1
    if never_checkpointed(root):
        checkpoints: list[dict[str, Any]] = []
    else:
        answered = asyncio.run(_ask_server(root, console, CHECKPOINTS, {}, read_only=True))
        if answered is None:
            return 1
        checkpoints = _checkpoints_of(answered[0])
    console.print(Text(f"Checkpoints of {root.resolve()}, oldest first:", style="bold"))
    for line in checkpoint_lines(checkpoints):
        console.print(line)
    if checkpoints:
        console.print(
            Text(
                "Undo a plan step with `plansight undo --step N`; go back to a checkpoint "
                "with `plansight restore ID`.",
                style="dim",
            )
        )
    return 0


def restore_cli(
    workspace: str,
    *,
    checkpoint: str | None = None,
    step: str | None = None,
    paths: Sequence[str] = (),
    conversation: bool = False,
    force: bool = False,
    console: Console | None = None,
) -> int:
    """`plansight restore ID` (checkpoint) or `plansight undo --step N` (step)."""
    console = console or Console(highlight=False)
    root = _workspace(workspace, console)
    if root is None:
        return 1
    if never_checkpointed(root):
        console.print(Text(f"plansight: {root.resolve()} has no checkpoints yet", style="bold red"))
        return 1
    params: dict[str, Any] = {"checkpoint": checkpoint} if checkpoint else {"todoId": step}
    if paths:
        params["paths"] = list(paths)
    if conversation:
        params["conversation"] = True
    if force:
        params["force"] = True
    answered = asyncio.run(_ask_server(root, console, RESTORE, params))
    if answered is None:
        return 1
    result, listed = answered
    undo_id = undo_id_of(listed)
    what = f"Checkpoint {checkpoint}" if checkpoint else f"Step #{step} undone"
    if conversation:
        what += " (and the conversation)"
    for line in restore_lines(result if isinstance(result, dict) else {}, what, undo_id):
        console.print(line)
    return 0
