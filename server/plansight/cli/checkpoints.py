"""`plansight checkpoints`, `plansight undo --step N`, `plansight restore <id>`: from the terminal.

Each starts `plansight lsp` on the workspace (no API key needed: nothing here asks the model),
sends `plansight/checkpoints` or `plansight/restore`, prints the answer and shuts the server
down. The listing asks for the read-only view (the readOnly option, session/lock.py), so it
works while another server keeps the session, and says so; a restore writes, and is refused
then. A restore prints each file it wrote back and each it deleted (never "restored"), the
later steps whose changes a forced step undo lost too, each file it left as it was, with the
reason (its flag named as typed here: `--force`), the checkpoint that undoes it, and for a step
undo that the step is pending again. `--dry-run` asks the server the same with `dryRun` and
says what would happen, changing nothing. A `--force` restore that would delete or overwrite
files changed outside Plansight names them and asks y/N on the terminal first (`--yes` skips
the question; without a terminal and without `--yes` it is refused). Exit codes: 0 when the
server answered (whatever was skipped), 1 when it refused (a run in progress elsewhere,
checkpoints off, an unknown checkpoint or step) or the forced restore was not confirmed.
"""

from __future__ import annotations

import asyncio
import datetime
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.text import Text

from plansight.cli import render
from plansight.cli.echo import echo
from plansight.protocol.names import CHECKPOINTS, RESTORE

if TYPE_CHECKING:
    from plansight.cli.client import Answer, PlansightClient

T = TypeVar("T")

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


def terminal_reason(reason: str) -> str:
    """A skip reason as the terminal's user acts on it: the server's "with force" (an option
    every client has) is the `--force` flag here."""
    return reason.replace("with force", "with --force")


def restore_lines(
    result: dict[str, Any], what: str, undo_id: str | None, *, dry_run: bool = False
) -> list[Text]:
    """What a restore did (or, `dry_run`, would do): the files written back and those
    deleted, the later steps' changes a forced step undo lost too, the files left alone and
    why, how to undo it."""
    restored = [render.visible(str(p)) for p in result.get("restored", [])]
    deleted = [render.visible(str(p)) for p in result.get("deleted", [])]
    skipped = [s for s in result.get("skipped", []) if isinstance(s, dict)]
    also = [a for a in result.get("alsoUndone", []) if isinstance(a, dict)]
    would = "would be " if dry_run else ""
    lines: list[Text] = []
    if restored or deleted:
        done = [f"restored {_files(len(restored))}"] if restored else []
        done += [f"deleted {_files(len(deleted))}"] if deleted else []
        said = ", ".join(done) if not dry_run else "would have " + " and ".join(done)
        lines.append(Text(f"{what}: {said}", style="bold green"))
        lines += [Text.assemble(("  ✓ ", "green"), path) for path in restored]
        lines += [
            Text.assemble(("  - ", "green"), path, (f" ({would}deleted)", "dim"))
            for path in deleted
        ]
    else:
        lines.append(Text(f"{what}: no file needed restoring", style="bold"))
    if also:
        lines.append(Text(f"Later steps' changes also undone ({len(also)}):", style="bold yellow"))
        for item in also:
            steps = ", ".join(f"#{t}" for t in item.get("todoIds", []))
            lines.append(
                Text.assemble(
                    ("  ! ", "yellow"),
                    render.visible(str(item.get("path", "?"))),
                    (" — ", "dim"),
                    f"the changes of {steps}",
                )
            )
    if skipped:
        left = "Would be left as they are" if dry_run else "Left as they are"
        lines.append(Text(f"{left} ({len(skipped)}):", style="bold yellow"))
        for item in skipped:
            lines.append(
                Text.assemble(
                    ("  ✗ ", "yellow"),
                    render.visible(str(item.get("path", "?"))),
                    (" — ", "dim"),
                    render.visible(terminal_reason(str(item.get("reason", "")))),
                )
            )
    if dry_run:
        lines.append(Text("Nothing was changed: this was a dry run.", style="dim"))
    elif undo_id is not None and (restored or deleted):
        lines.append(Text(f"To undo this: plansight restore {undo_id}", style="dim"))
    return lines


def at_risk(forced: dict[str, Any], unforced: dict[str, Any]) -> list[tuple[str, bool]]:
    """The files a forced restore deletes (True) or overwrites (False) that the same restore
    without force would leave alone: files changed outside Plansight, the user's work."""
    kept = {str(s.get("path")) for s in unforced.get("skipped", []) if isinstance(s, dict)}
    lost = [(str(p), True) for p in forced.get("deleted", []) if str(p) in kept]
    lost += [(str(p), False) for p in forced.get("restored", []) if str(p) in kept]
    return sorted(lost)


# Running ------------------------------------------------------------------------------------


class QuietFrontend:
    """These commands run no agent: what the server sends besides the answer is not shown,
    except warnings."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.plan: dict[str, Any] | None = None  # the latest plan the server sent

    def on_todos(self, state: dict[str, Any]) -> None:
        self.plan = state

    def on_scratchpad(self, content: str) -> None: ...

    def on_event(self, event: dict[str, Any]) -> None: ...

    def on_message(self, level: int, message: str) -> None:
        if level <= 2:  # errors and warnings
            echo(self.console, Text(message, style="yellow"))

    def show_edit(self, review: dict[str, Any], path: str) -> None: ...

    def show_command(self, request: dict[str, Any]) -> None: ...

    def show_plan_review(self, review: dict[str, Any]) -> None: ...

    def show_edited_plan(self, items: list[dict[str, str]]) -> None: ...

    def show_question(self, question: dict[str, Any]) -> None: ...

    def warn(self, message: str) -> None:
        echo(self.console, Text(message, style="yellow"))

    def show_recorded_answer(self, answer: str) -> None: ...

    async def edit_text(self, text: str) -> str | None:
        return None

    async def ask(self, question: str) -> Answer:
        return None  # nothing is asked: no run


def _errors() -> Console:
    from plansight.cli.ui import stderr_console

    return stderr_console()


async def _with_server(
    workspace: Path,
    frontend: QuietFrontend,
    work: Callable[[PlansightClient], Awaitable[T]],
    *,
    read_only: Console | None = None,
) -> T | None:
    """`work` done with a language server on `workspace`; None after an error (said on
    stderr). `read_only`: of a read-only server (the commands that only look), which works
    beside the one keeping the session and says so on that console when there is one."""
    from pygls.exceptions import JsonRpcException

    from plansight.cli.client import ClientOptions, PlansightClient, ServerExited

    options = ClientOptions(
        workspace=workspace, extra_options={"readOnly": True} if read_only is not None else {}
    )
    client = PlansightClient(options, frontend)
    try:
        started = await client.start()
        if read_only is not None and (elsewhere := held_by(started)) is not None:
            echo(read_only, Text(elsewhere, style="yellow"), soft_wrap=True)
        return await work(client)
    except JsonRpcException as err:
        echo(_errors(), Text(f"plansight: {render.visible(err.message)}", style="bold red"))
    except (ServerExited, OSError) as err:
        echo(_errors(), Text(f"plansight: the language server failed: {err}", style="bold red"))
    finally:
        await client.close()
    return None


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

    async def work(client: PlansightClient) -> tuple[Any, Any]:
        answer = await client.request(method, params)
        # After a restore, the checkpoints: the one it took first undoes it.
        listed = await client.request(CHECKPOINTS, {}) if method == RESTORE else answer
        return answer, listed

    return await _with_server(
        workspace, QuietFrontend(console), work, read_only=console if read_only else None
    )


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
    from plansight.cli.run import folder_problem

    root = Path(raw).expanduser()
    if (problem := folder_problem(root)) is not None:
        echo(_errors(), Text(f"plansight: {problem}", style="bold red"))
        return None
    return root.resolve()  # the storage folder is named after it: never "." (empty name)


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
    echo(console, Text(f"Checkpoints of {root.resolve()}, oldest first:", style="bold"))
    for line in checkpoint_lines(checkpoints):
        echo(console, line)
    if checkpoints:
        echo(
            console,
            Text(
                "Undo a plan step with `plansight undo --step N`; go back to a checkpoint "
                "with `plansight restore ID`.",
                style="dim",
            ),
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
    dry_run: bool = False,
    yes: bool = False,
    console: Console | None = None,
) -> int:
    """`plansight restore ID` (checkpoint) or `plansight undo --step N` (step)."""
    console = console or Console(highlight=False)
    root = _workspace(workspace, console)
    if root is None:
        return 1
    if never_checkpointed(root):
        echo(console, Text(f"plansight: {root.resolve()} has no checkpoints yet", style="bold red"))
        return 1
    params: dict[str, Any] = {"checkpoint": checkpoint} if checkpoint else {"todoId": step}
    if paths:
        params["paths"] = list(paths)
    if conversation:
        params["conversation"] = True
    if dry_run:
        params["dryRun"] = True
    frontend = QuietFrontend(console)

    async def work(client: PlansightClient) -> tuple[Any, Any] | None:
        if force and not dry_run and not await _confirmed(client, console, params, yes):
            return None
        answer = await client.request(RESTORE, params | ({"force": True} if force else {}))
        return answer, await client.request(CHECKPOINTS, {})

    answered = asyncio.run(_with_server(root, frontend, work))
    if answered is None:
        return 1
    result, listed = answered
    undo_id = undo_id_of(listed)
    what = f"Checkpoint {checkpoint}" if checkpoint else f"Step #{step} undone"
    if dry_run:
        what = f"Restoring checkpoint {checkpoint}" if checkpoint else f"Undoing step #{step}"
        what += " (dry run)"
    if conversation:
        what += " (and the conversation)"
    result = result if isinstance(result, dict) else {}
    for line in restore_lines(result, what, undo_id, dry_run=dry_run):
        echo(console, line)
    if step is not None and not dry_run and _status_of(frontend.plan, step) == "pending":
        echo(console, Text(f"Step #{step} is pending again in the plan.", style="bold"))
    return 0


def _status_of(plan: dict[str, Any] | None, item_id: str) -> str | None:
    for item in render.plan_items(plan or {}):
        if str(item.get("id")) == item_id:
            return str(item.get("status"))
    return None


async def _confirmed(
    client: PlansightClient, console: Console, params: dict[str, Any], yes: bool
) -> bool:
    """Whether a forced restore may go ahead: asked (y/N) when it would delete or overwrite
    files changed outside Plansight, which the same restore without force leaves alone."""
    forced = await client.request(RESTORE, params | {"force": True, "dryRun": True})
    unforced = await client.request(RESTORE, params | {"dryRun": True})
    lost = at_risk(forced if isinstance(forced, dict) else {}, unforced or {})
    if not lost or yes:
        return True
    ask_on = console if console.is_terminal else _errors()
    echo(ask_on, Text("--force would lose changes made outside Plansight:", style="bold yellow"))
    for path, deleted in lost:
        did = "deleted" if deleted else "overwritten"
        echo(ask_on, Text.assemble(("  ! ", "yellow"), render.visible(path), (f" ({did})", "dim")))
    if not sys.stdin.isatty():
        echo(
            _errors(),
            Text(
                "plansight: not restored: confirm on a terminal, or add --yes to go ahead.",
                style="bold red",
            ),
        )
        return False
    echo(ask_on, Text("Go ahead? [y/N] ", style="bold"), end="")
    answer = await asyncio.to_thread(sys.stdin.readline)
    if answer.strip().lower() in ("y", "yes"):
        return True
    echo(ask_on, Text("Nothing was restored.", style="bold"))
    return False
