"""The terminal: a rich console that streams the run, shows the plan and asks for reviews.

On a terminal the plan, the progress line ("2/5 · Add docstrings") and what is happening
now (a spinner: starting the language server, waiting for the model, running a tool, with the
seconds it has taken) stay at the bottom in a `rich.live.Live` region while the model's text,
tool calls and results scroll above it. Only that region is ever redrawn: every line printed
above it stays in the scrollback. A question is asked below the last printed line with the
region taken down, and a new region (a new `Live`: a restarted one would first erase as many
lines as it last drew, which are now the review and its answer) comes up after the answer.
When stdout is not a terminal (tests, CI logs) nothing is redrawn: everything is printed
once, in order, the plan again each time it changes.

Prompts read lines from stdin in a daemon thread, so a pending prompt never blocks the
connection to the server and never keeps the process alive. The thread reads a line only when
one is asked for, so a program started in between (the user's editor, to edit a plan) has the
terminal to itself.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from plansight.cli import render

if TYPE_CHECKING:
    from plansight.cli.client import Answer

SCRATCHPAD_LINES = 12
EDIT_TOOLS = ("edit_file", "write_file")


class LineReader:
    """Lines from a text stream, read in a daemon thread (one per request) for the event loop."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._queue: asyncio.Queue[str | None] | None = None
        self._wanted = threading.Semaphore(0)  # a line was asked for
        self._pending = False  # asked for and not yet received (its reader may be gone)
        self._ended = False

    async def readline(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        if self._ended:
            return None
        if self._queue is None:
            self._queue = asyncio.Queue()
            loop = asyncio.get_running_loop()
            thread = threading.Thread(
                target=self._pump, args=(loop, self._queue), name="stdin", daemon=True
            )
            thread.start()
        if not self._pending:  # else the line asked for by a cancelled question comes first
            self._pending = True
            self._wanted.release()
        line = await self._queue.get()
        self._pending = False
        self._ended = line is None  # end of input stays the end
        return line

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        while True:
            self._wanted.acquire()
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                line = ""
            item = line.rstrip("\r\n") if line else None
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is asking any more
                return
            if item is None:
                return


class TerminalUI:
    """Implements `plansight.cli.client.Frontend` on a rich console."""

    def __init__(
        self,
        console: Console,
        *,
        live: bool | None = None,
        stdin: IO[str] | None = None,
        inline_edits: bool = False,
    ) -> None:
        self.console = console
        self.live_mode = (
            console.is_terminal and not console.is_dumb_terminal if live is None else live
        )
        self.reader = LineReader(stdin if stdin is not None else sys.stdin)
        # Show edit_file/write_file calls as diffs: when edits are accepted without a
        # review, this is where the user sees them.
        self.inline_edits = inline_edits
        self.plan: dict[str, Any] | None = None
        self.partial = ""  # streamed text not yet ended by a newline
        self.streamed_text = False  # some text was streamed since the last tool call
        self.reminders = 0
        self._asking = False  # a question is printed and its answer not yet read
        self._live: Live | None = None
        # What is happening now, shown with a spinner and its seconds in the live region.
        self.activity = ""
        self._activity_since = time.monotonic()
        self._spinner = Spinner("dots", style="bold blue")

    # Live region -------------------------------------------------------------------------
    def start(self) -> None:
        """Bring up the live region below the last printed line (a new `Live` every time)."""
        if self.live_mode and self._live is None:
            self._live = Live(
                get_renderable=self._live_renderable,
                console=self.console,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start(refresh=True)

    def stop(self) -> None:
        """End the live region, leaving the final plan printed in the scrollback."""
        self._end_text()
        if self._take_down_live():
            if self.plan is not None and render.plan_items(self.plan):
                self.console.print(self._plan_panel())

    def _take_down_live(self) -> bool:
        """Erase the live region (only it) and drop its `Live`; False if there was none."""
        live, self._live = self._live, None
        if live is None:
            return False
        live.stop()
        return True

    def set_activity(self, activity: str) -> None:
        """What the user is waiting for ("waiting for the model"); "" when nothing is."""
        if activity != self.activity:
            self.activity = activity
            self._activity_since = time.monotonic()
            self._refresh()

    def _live_renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.partial:
            parts.append(Text(self.partial))
        has_plan = self.plan is not None and render.plan_items(self.plan)
        if has_plan:
            parts.append(self._plan_panel())
        if self.activity:
            elapsed = time.monotonic() - self._activity_since
            self._spinner.update(text=render.activity_text(self.activity, elapsed))
            parts.append(self._spinner)
        elif not has_plan:
            parts.append(Text("▶ " + render.progress_line(self.plan), style="bold blue"))
        return Group(*parts)

    def _plan_panel(self) -> Panel:
        return Panel(
            render.plan_text(self.plan or {}),
            title="plan",
            title_align="left",
            subtitle="▶ " + render.progress_line(self.plan),
            subtitle_align="left",
            border_style="blue",
            expand=False,
        )

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.refresh()

    # Output --------------------------------------------------------------------------------
    def print(self, *renderables: RenderableType) -> None:
        """Print whole lines above the live region (after any half-streamed line)."""
        self._end_text()
        for renderable in renderables:
            self.console.print(renderable, soft_wrap=isinstance(renderable, Text | str))

    def _end_text(self) -> None:
        if self._asking:  # a question waits on this line: move below it
            self._asking = False
            self.console.file.write("\n")
            self.console.file.flush()
        if not self.partial:
            return
        if self._live is not None:
            self.console.print(Text(self.partial), soft_wrap=True)
        else:
            self.console.file.write("\n")
            self.console.file.flush()
        self.partial = ""
        self._refresh()

    def text(self, delta: str) -> None:
        self.streamed_text = True
        if self._live is None:
            self.console.file.write(delta)
            self.console.file.flush()
            self.partial = (self.partial + delta).rsplit("\n", 1)[-1]
            return
        self.partial += delta
        if "\n" in self.partial:
            done, self.partial = self.partial.rsplit("\n", 1)
            self.console.print(Text(done), soft_wrap=True)
        self._refresh()

    def header(self, workspace: str, prompt: str, *, mode: str) -> None:
        self.print(
            Text.assemble(("plansight ", "bold blue"), (f"· {workspace} · {mode}", "dim")),
            Text.assemble(("› ", "bold"), (prompt, "bold")),
        )

    def notice(self, message: str, style: str = "yellow") -> None:
        self.print(Text(message, style=style))

    # Frontend -----------------------------------------------------------------------------
    def on_todos(self, state: dict[str, Any]) -> None:
        had_plan = self.plan is not None and bool(render.plan_items(self.plan))
        self.plan = state
        if not render.plan_items(state):
            if had_plan:
                self.print(Text("plan cleared", style="blue"))
            self._refresh()
            return
        if self._live is not None:
            self.print(Text("▶ plan: " + render.progress_line(state), style="blue"))
            return
        self.print(
            Text("plan:", style="bold blue"),
            render.plan_text(state),
            Text("▶ " + render.progress_line(state), style="bold blue"),
        )

    def on_scratchpad(self, content: str) -> None:
        if not content:
            return
        lines = content.strip().splitlines()
        shown = "\n".join(lines[:SCRATCHPAD_LINES])
        if len(lines) > SCRATCHPAD_LINES:
            shown += f"\n… ({len(lines) - SCRATCHPAD_LINES} more lines)"
        self.print(Text("scratchpad:", style="bold magenta"), Text(shown, style="magenta"))

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "textDelta" and isinstance(event.get("text"), str):
            self.set_activity("the model is writing")
            self.text(event["text"])
        elif kind == "toolCall":
            self._tool_call(event)
        elif kind == "toolResult":
            self.set_activity("waiting for the model")
            self.print(
                render.tool_result_line(
                    str(event.get("name", "")),
                    event.get("isError") is True,
                    str(event.get("summary", "")),
                )
            )
        elif kind == "reminder":
            self.reminders += 1
            rounds = event.get("rounds")
            level = event.get("level")
            self.print(
                render.reminder_line(
                    str(event.get("text", "")),
                    level if isinstance(level, int) else 1,
                    rounds if isinstance(rounds, int) else None,
                )
            )
        elif kind == "filesChanged":
            paths = event.get("paths")
            if isinstance(paths, list) and paths:
                self.print(render.files_changed_line(str(p) for p in paths))
        elif kind == "compacted":
            self.print(
                render.compacted_line(
                    event.get("beforeTokens"),
                    event.get("afterTokens"),
                    event.get("strategy"),
                    event.get("unchanged"),
                )
            )
        elif kind == "thinkingDelta":
            # Thinking stays collapsed: the live line says it is happening, nothing is printed.
            self.set_activity("the model is thinking")
        # runStarted, runFinished (the answer is printed at the end) and unknown types: quiet.

    def _tool_call(self, event: dict[str, Any]) -> None:
        name = str(event.get("name", ""))
        tool_input = event.get("input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        summary = render.call_summary(event)
        self.streamed_text = False
        self.set_activity(render.running_text(name, summary))
        self.print(render.tool_call_line(name, summary))
        if self.inline_edits and name in EDIT_TOOLS:
            old = tool_input.get("old_text") if name == "edit_file" else ""
            new = tool_input.get("new_text") if name == "edit_file" else tool_input.get("content")
            if isinstance(old, str) and isinstance(new, str):
                self.print(render.diff_text(render.snippet_diff(old, new)))

    def on_message(self, level: int, message: str) -> None:
        style = {1: "bold red", 2: "yellow"}.get(level, "dim")
        self.print(Text(f"server: {message}", style=style))

    def show_edit(self, review: dict[str, Any], path: str) -> None:
        old, new = str(review.get("oldText", "")), str(review.get("newText", ""))
        path = path or str(review.get("uri", ""))
        diff = render.unified_diff(old, new, path)
        added, removed = render.diff_stats(diff)
        title = Text.assemble(
            ("review edit ", "bold"),
            (path, "bold cyan"),
            (f" (+{added} -{removed})", "dim"),
        )
        description = str(review.get("description", ""))
        if description:
            title.append(f": {render.shorten(description, 120)}")
        todo = review.get("todoId")
        if isinstance(todo, str) and todo:
            title.append(f"  [plan #{todo}]", style="dim")
        self.print(title, render.diff_text(diff))

    def show_command(self, request: dict[str, Any]) -> None:
        allowed = render.sandbox_text(request)
        shown = [
            Text.assemble(
                ("run command ", "bold"),
                ("$ " + str(request.get("command", "")), "bold cyan"),
                (f"  (in {request.get('cwd', '.')})", "dim"),
            )
        ]
        if allowed:
            style = "green" if allowed.startswith("sandboxed") else "bold yellow"
            shown.append(Text("  " + allowed, style=style))
        self.print(*shown)

    def show_plan_review(self, review: dict[str, Any]) -> None:
        todos = review.get("todos")
        todos = todos if isinstance(todos, dict) else {}
        summary = review.get("summary")
        problem = review.get("problem")
        shown: list[RenderableType] = [Text("plan proposed for your approval", style="bold blue")]
        if isinstance(summary, str) and summary.strip():
            shown.append(Text(summary.strip()))
        shown.append(render.plan_text(todos))
        if isinstance(problem, str) and problem:
            shown.append(Text(problem, style="bold red"))
        self.print(*shown)

    def show_edited_plan(self, items: list[dict[str, str]]) -> None:
        self.print(
            Text("your edited plan (sent with your answer):", style="bold blue"),
            render.plan_text({"items": items}),
        )

    def show_question(self, question: dict[str, Any]) -> None:
        text = Text.assemble(("? ", "bold magenta"), (str(question.get("question", "")), "bold"))
        options = question.get("options")
        lines: list[RenderableType] = [text]
        for number, option in enumerate(options if isinstance(options, list) else [], start=1):
            lines.append(Text(f"  {number}. {option}"))
        self.print(*lines)

    def warn(self, message: str) -> None:
        self.print(Text(message, style="bold yellow"))

    def show_recorded_answer(self, answer: str) -> None:
        self.print(
            Text.assemble(
                ("› ", "bold"), (answer, "bold"), ("  (the demo's recorded answer)", "dim")
            )
        )

    async def edit_text(self, text: str) -> str | None:
        """Open `text` in $VISUAL / $EDITOR (else vi) on this terminal; what it saved, or None."""
        self._end_text()
        had_live = self._take_down_live()
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with tempfile.TemporaryDirectory(prefix="plansight-plan-") as folder:
                path = Path(folder) / "plan.txt"
                path.write_text(text, encoding="utf-8")
                self.console.print(Text(f"editing the plan with {editor}…", style="dim"))
                try:
                    process = await asyncio.create_subprocess_shell(
                        f"{editor} {shlex.quote(str(path))}"
                    )
                except OSError as err:
                    self.warn(f"Could not start the editor ({editor}): {err}.")
                    return None
                try:
                    code = await process.wait()
                except asyncio.CancelledError:
                    process.terminate()  # the run was cancelled: give the terminal back
                    await process.wait()
                    raise
                if code != 0:
                    self.warn(f"The editor ({editor}) exited with status {code}.")
                    return None
                return path.read_text(encoding="utf-8")
        finally:
            if had_live:
                self.start()

    async def ask(self, question: str) -> Answer:
        self._end_text()
        had_live = self._take_down_live()
        try:
            self.console.print(Text(question + " ", style="bold"), end="")
            self.console.file.flush()
            self._asking = True
            answer = await self.reader.readline()
            if self._asking and not self.console.is_terminal:
                # Echo what was read, as a terminal would have shown it.
                self.console.print(Text(answer if answer is not None else "(end of input)"))
            self._asking = False
            return answer
        finally:
            self._asking = False
            if had_live:
                self.start()

    # The end ------------------------------------------------------------------------------
    def result(self, result: dict[str, Any], error: str | None = None) -> None:
        self.set_activity("")
        self.stop()
        status = str(result.get("status", "error"))
        include_text = status != "done" or not self.streamed_text
        self.console.print()
        self.console.print(render.result_text(result, include_text=include_text), soft_wrap=True)
        if error:
            self.console.print(Text(f"error: {error}", style="bold red"), soft_wrap=True)
        if self.plan is not None and render.plan_items(self.plan) and not self.live_mode:
            self.console.print(Text(f"plan: {render.count_detail(self.plan)}", style="blue"))
        usage = result.get("usage")
        if isinstance(usage, dict):
            self.console.print(Text(render.usage_line(usage), style="dim"))
