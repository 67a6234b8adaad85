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

The live region is redrawn from the event loop (the spinner's ticks too), never from a thread:
rich's refresh thread would draw it while the loop prints a line, and one would write over the
other. The cursor waits at the region's top, where the next frame erases from (`AnchoredRender`:
a resize re-wraps the rows, never that spot); each print is made at one width (`LiveRegion`),
and the region is cut to the screen's height (a taller one would scroll pieces of itself into
the scrollback). The model's
text is shown as Markdown: each block (a paragraph, a list, a table, a code block) is printed
once it is complete, and the one being written shows as it comes in the live region. Everything
from the model, a file or a command goes through `render.visible`: its control characters are
shown, never obeyed.

With stdout redirected to a file and a terminal to ask on (stderr, else /dev/tty), each review
and question is shown and asked there too, while the file keeps the whole transcript.

Prompts read lines from stdin in a daemon thread, so a pending prompt never blocks the
connection to the server and never keeps the process alive. The thread reads a line only when
one is asked for, so a program started in between (the user's editor, to edit a plan) has the
terminal to itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import (
    Console,
    ConsoleOptions,
    ConsoleRenderable,
    Group,
    RenderableType,
    RenderResult,
)
from rich.control import Control
from rich.live import Live
from rich.live_render import LiveRender
from rich.panel import Panel
from rich.segment import ControlType, Segment
from rich.spinner import Spinner
from rich.text import Text

from plansight.cli import render
from plansight.cli.cursor import CursorQuery, to_the_bottom
from plansight.cli.echo import echo
from plansight.cli.pipe import PipeToTheTerminal
from plansight.cli.prompts import prompt_echo
from plansight.plan.text import review_changes_lines

if TYPE_CHECKING:
    from plansight.cli.client import Answer

SCRATCHPAD_LINES = 12
EDIT_TOOLS = ("edit_file", "write_file")
REFRESH_SECONDS = 1 / 8  # the live region's redraws: the spinner's ticks and the seconds


def stderr_console() -> Console:
    """stderr: lines wrapped at words on a terminal, whole in a file or pipe (a log)."""
    console = Console(stderr=True, highlight=False)
    console.soft_wrap = not console.is_terminal
    return console


def terminal_for_questions(console: Console) -> Console | None:
    """Where to show reviews and ask when `console` (stdout) is not a terminal but the user
    is at one: stderr if it is a terminal, else /dev/tty when stdin is one; else None."""
    if console.is_terminal:
        return None
    errors = stderr_console()
    if errors.is_terminal:
        return errors
    if not sys.stdin.isatty():
        return None
    try:
        # Open as long as the process runs: the questions of the whole run go to it.
        tty = open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None
    return Console(file=tty, highlight=False, force_terminal=True)


def is_pipe(console: Console) -> bool:
    """Whether `console` writes to a pipe (`plansight run … | cat`), not a file or terminal."""
    try:
        return stat.S_ISFIFO(os.fstat(console.file.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's StringIO)
        return False


def cursor_query(console: Console, environ: dict[str, str]) -> CursorQuery | None:
    """A way to ask `console`'s terminal where its cursor is, if it writes to one inside tmux
    (the terminal that counts blank rows when it re-wraps: `scroll_to_the_bottom`)."""
    if "TMUX" not in environ:
        return None
    try:
        descriptor = console.file.fileno()
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's StringIO)
        return None
    return CursorQuery(descriptor) if os.isatty(descriptor) else None


def scroll_to_the_bottom(console: Console, cursor: CursorQuery, *, least: int = 1) -> int:
    """Scroll the screen's content down so that no blank row is left below the cursor, when
    there are at least `least` of them: tmux counts those rows when it re-wraps the screen
    at a narrower width, and with too many of them it pushes the row the cursor is on (the
    live region's top) into the scrollback, out of reach of any erase
    (`plansight.cli.cursor`). Once at the bottom, output stays there as it scrolls up; a
    window made taller brings rows back from the scrollback.

    Done as the output begins and as a region comes up, never after a resize: the rows that
    scroll off the bottom must be the blank ones below the cursor, and a resize between the
    terminal's answer and the scroll (a window being dragged) scrolled off rows of text.

    The rows from the cursor's to the screen's last, after: 0 if the terminal did not say."""
    file = console.file
    file.write(ERASE_BELOW)  # nothing of the region is drawn yet: this row and below are blank
    file.flush()
    rows = console.height
    row = cursor.row()
    if row is None:
        return 0
    # The lower of the heights read before and after the answer: a window made lower
    # meanwhile has fewer rows below the cursor to scroll off.
    rows = min(rows, console.height)
    if rows - row >= least:
        file.write(to_the_bottom(row, rows))
        file.flush()
        return 1
    return max(0, rows - row + 1)


class LogToTerminal(logging.Handler):
    """Log records of this process (the LSP client's library) printed above the live region:
    Python's last-resort handler would write them to stderr in the middle of it, a row the
    region never counted, and leave a torn copy of it in the scrollback."""

    def __init__(self, ui: TerminalUI) -> None:
        super().__init__(logging.WARNING)
        self.ui = ui

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.ui.print(Text(f"{record.levelname.lower()}: {message}", style="dim"))


class Cropped:
    """A renderable cut to the console's height: its first rows and its last (the progress
    line), so a live region never scrolls itself off the screen."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        room = max(2, console.height - 2)
        if len(lines) > room:
            cut = [Segment(f"… {len(lines) - room + 1} more lines", console.get_style("dim"))]
            lines = [*lines[: room - 2], cut, lines[-1]]
        for number, line in enumerate(lines):
            yield from line
            if number < len(lines) - 1:
                yield Segment.line()


class StatusLine:
    """The status line at the bottom of the live region, made to fit the width it is drawn at
    (one row, never wrapped: a wrapped one would leave pieces of itself in the scrollback)."""

    def __init__(self, usage: dict[str, Any], mode: str) -> None:
        self.usage, self.mode = usage, mode

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = render.status_line(self.usage, self.mode, options.max_width)
        yield Text(line, style="dim", no_wrap=True, overflow="ellipsis")


# Written as they are: rich's `ControlType` names neither erasing below the cursor nor the
# terminal's autowrap. The codes only mark each segment as control (no width, not written to a
# file); nothing reads them on a terminal that is not Windows' legacy console.
# To the line's start, erase the line, and every row below from its second column: "erase
# below" at the screen's top left would have tmux push the whole screen into the scrollback
# (its `scroll-on-clear`), the live region with it.
ERASE_BELOW = "\r\x1b[2K\x1b[C\x1b[J\r"
AUTOWRAP_OFF, AUTOWRAP_ON = "\x1b[?7l", "\x1b[?7h"
DOWN = "\x1b[B"  # a row down; on the screen's last row, nowhere (a newline would scroll)
CONTROL_MARK = ((ControlType.CARRIAGE_RETURN,),)


def control(sequence: str) -> Control:
    """A `Control` writing `sequence` as it is."""
    made = Control()
    made.segment = Segment(sequence, None, CONTROL_MARK)
    return made


class AnchoredRender(LiveRender):
    """The live region's drawing with the cursor left at its top, where it is erased from:
    a carriage return and "erase below", whatever the terminal did to its rows since.

    rich leaves the cursor below the region and erases it by moving up as many rows as it drew.
    A terminal that reflows its lines on a resize (tmux, VTE, iTerm2, kitty, Windows Terminal)
    wraps them at the new width, so after the window narrowed they take more rows than were
    drawn, and rows pushed above the screen's top by a resize cannot be reached at all; worse,
    a frame is counted at the width of the moment it is made and the terminal reads it later,
    maybe after a resize, which no count made by this process can know. The region's top
    stays where it was through any reflow: these terminals keep the cursor on the character it
    was on, and one that does not reflow (xterm) does not move it.

    So that the cursor's way back up to that top does not depend on the width either, the
    region is drawn with the terminal's autowrap off: each of its lines takes exactly one row
    whatever the width is when the terminal reads it (too wide a line is cut at the edge, and
    redrawn whole by the next tick at the new width). Text printed above the region is
    written with autowrap on, so none of it is lost at any width."""

    def __init__(self, renderable: RenderableType, *, docked: bool = False, room: int = 0) -> None:
        super().__init__(renderable, vertical_overflow="visible")  # `Cropped` cuts it
        # Docked (inside tmux, whose output begins at the screen's bottom): the region's last
        # row is kept on the screen's last row. A region that gets shorter (a wider window
        # wraps the plan in fewer rows) left blank rows below it, which tmux counts when it
        # re-wraps at a narrower width: with enough of them it pushed the region's top into
        # the scrollback. The region is moved down instead, with newlines (which never lose a
        # row: at the bottom they scroll), and leaves a hole of blank rows above it.
        self.docked = docked
        # The blank rows right above the region's top, left by moving it down: the next text
        # printed begins at their top and fills them. A reflow never splits or joins a blank
        # row, so they stay right above the top; going up through them stops at the screen's
        # top at worst, on one of them.
        self.hole = 0
        # The rows from the region's top to the screen's bottom as the terminal said when the
        # region came up: the first frame is moved down by what it leaves blank.
        self._room: int | None = room or None
        self._extent: int | None = None  # on a print with text: the hole and the region's rows
        self.text_rows = 0  # the rows of the text printed above the region by this print

    def position_cursor(self) -> Control:
        return Control() if self._shape is None else control(ERASE_BELOW)

    def position_cursor_for_text(self) -> Control:
        """To the hole's top, where the text printed begins, and erase below."""
        if self._shape is None:
            return Control()
        self._extent = self.hole + self._shape[1]
        self.text_rows = 0
        up = f"\x1b[{self.hole}A" if self.hole else ""
        self.hole = 0
        return control("\r" + up + ERASE_BELOW)

    def restore_cursor(self) -> Control:
        if self._shape is None:
            return Control()
        # `Live.stop` drew the region a last time and then ended its line (one row down, the
        # screen scrolled if that row was the last): one row up is the region's top again,
        # and the hole above it is given back to what is printed next.
        up = 1 if self.last_render_height else 0
        up, self.hole = up + self.hole, 0
        return control("\r" + (f"\x1b[{up}A" if up else "") + ERASE_BELOW)

    def _docking(self, rows: int) -> str:
        """The move that keeps this frame of `rows` rows ending where the last one did (at the
        screen's bottom): down by newlines into a new hole, or up into the hole there is."""
        if not self.docked:
            return ""
        if self._extent is not None:  # text was printed from the hole's top
            down = self._extent - self.text_rows - rows
            self._extent = self._room = None
        elif self._room is not None:  # the first frame: the terminal said how far the bottom is
            down = max(0, self._room - rows)
            self._room = None
        elif self._shape is None:
            down = 0
        else:
            down = self._shape[1] - rows
        if down >= 0:
            self.hole += down
            return "\n" * down
        up = min(-down, self.hole)
        self.hole -= up
        return f"\x1b[{up}A" if up else ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(
            self.renderable, options, style=console.get_style(self.style), pad=False
        )
        docking = self._docking(len(lines))
        self._shape = Segment.get_shape(lines)
        up = f"\x1b[{len(lines) - 1}A" if len(lines) > 1 else ""
        # Room made first (the text above scrolls up as far as needed), then each row drawn a
        # row down without ever scrolling: a frame made for a taller screen and read by the
        # terminal after the window got lower (the frames in its input when the user resized)
        # scrolls blank rows up, and its last rows fall on the screen's last row, where the
        # next frame draws over them. Drawn with newlines, it scrolled its own first rows
        # into the scrollback.
        # The rows go as control segments too: rich crops what it prints to the width by the
        # lines its newlines make, and with none between the rows it took the whole frame for
        # one line and cut it, the controls that bring the cursor back up with it. Each row is
        # already cut to the width it is made at.
        yield control(docking + AUTOWRAP_OFF + "\n" * (len(lines) - 1) + up).segment
        for number, line in enumerate(lines):
            for text, style, _ in line:
                yield Segment(text, style, CONTROL_MARK)
            if number < len(lines) - 1:
                yield control("\r" + DOWN).segment
        yield control(AUTOWRAP_ON + "\r" + up).segment


class RowCounter:
    """A renderable printed above the live region, its rows counted as rich writes them (each
    newline it writes ends one) into `AnchoredRender.text_rows`: how far the hole was filled."""

    def __init__(self, renderable: ConsoleRenderable, region: AnchoredRender) -> None:
        self.renderable, self.region = renderable, region

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if not segment.control:
                self.region.text_rows += segment.text.count("\n")
            yield segment


class QuietKeys:
    """The terminal's echo of what is typed, off while the live region is up.

    The cursor waits at the region's top (`AnchoredRender`): a key typed meanwhile was echoed
    there, and an Enter moved the cursor a row down, so the next frame erased from below the
    region's top and left that row in the scrollback. What is typed is still read as before
    (the terminal stays in its line mode, Ctrl-C still interrupts); only its echo waits until
    the region is taken down (before every question, and at the run's end)."""

    def __init__(self, terminal: IO[str]) -> None:
        self.terminal = terminal
        self._saved: list[Any] | None = None  # the attributes to put back

    def off(self) -> None:
        if self._saved is not None:
            return
        try:
            import termios

            descriptor = self.terminal.fileno()
            if not os.isatty(descriptor):
                return
            saved = termios.tcgetattr(descriptor)
            quiet = list(saved)
            quiet[3] = saved[3] & ~(termios.ECHO | termios.ECHONL)  # the local modes
            termios.tcsetattr(descriptor, termios.TCSANOW, quiet)
            self._saved = saved
        except Exception as err:  # no termios, or not a terminal one can set (termios.error)
            logging.getLogger(__name__).debug("the terminal's echo stays on: %r", err)

    def restore(self) -> None:
        saved, self._saved = self._saved, None
        if saved is None:
            return
        try:
            import termios

            termios.tcsetattr(self.terminal.fileno(), termios.TCSANOW, saved)
        except Exception as err:  # gone already (the terminal closed): nothing to give back
            logging.getLogger(__name__).debug("could not turn the echo back on: %r", err)


class LiveRegion(Live):
    """`Live` whose region is erased from its top (`AnchoredRender`), redrawn by the caller."""

    def __init__(
        self,
        console: Console,
        get_renderable: Callable[[], RenderableType],
        *,
        docked: bool = False,
        room: int = 0,
    ) -> None:
        super().__init__(
            get_renderable=get_renderable,
            console=console,
            auto_refresh=False,  # redrawn by `TerminalUI._tick`, on the event loop
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live_render = AnchoredRender(self.get_renderable(), docked=docked, room=room)
        # Whether the console follows the terminal's width (one made for a test has its own).
        self._follows_terminal = console._width is None

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        # Each print is made at one width: rich renders at the width it reads first and then
        # cuts every line at the width it reads again. A resize in between (Markdown takes
        # milliseconds to render) cut the text printed above at the new width, and with the
        # last line of the region went the controls after it (autowrap back on, the cursor
        # back to the region's top): the next text was cut, the region left in the scrollback.
        if self._follows_terminal:
            self.console._width = None  # the terminal's width now, kept until the next print
            self.console.width = self.console.width
        anchored = self._live_render
        assert isinstance(anchored, AnchoredRender)
        if not self.console.is_interactive or all(isinstance(r, Control) for r in renderables):
            return super().process_renderables(renderables)
        # Text printed above the region: from the hole's top, its rows counted as written;
        # the region below it as it is now (the text may be what it showed until now: the
        # paragraph it held, just completed, was drawn twice until the next refresh).
        with self._lock:
            reset = anchored.position_cursor_for_text()
            anchored.set_renderable(self.renderable)
        if anchored.docked:  # how far the text fills the hole (there is none otherwise)
            renderables = [RowCounter(r, anchored) for r in renderables]
        return [reset, *renderables, anchored]

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self._follows_terminal:
                self.console._width = None


class PromptLine:
    """The line the user is typing at the interactive prompt (GNU readline's), kept whole
    when a notice (files changed, a server message) is printed while it waits: the line is
    cleared, the notice printed, and readline draws the prompt and the typed text again
    below it. Without it the notice was written over the typed text, at the cursor."""

    def __init__(self, readline: Any, prompt: str) -> None:
        self.readline = readline
        self.prompt = prompt
        self._on_new_line: Callable[[], object] | None = None
        try:
            import ctypes

            # `rl_on_new_line` is not in Python's module; it is in the library it links.
            self._on_new_line = ctypes.CDLL(readline.__file__).rl_on_new_line
        except (OSError, AttributeError, ImportError):
            self._on_new_line = None

    def prefill(self, text: str) -> None:
        """Start the next line with `text`, as if typed (once)."""

        def insert() -> None:
            self.readline.set_pre_input_hook(None)
            self.readline.insert_text(text)
            self.readline.redisplay()

        self.readline.set_pre_input_hook(insert)

    def clear(self, console: Console) -> None:
        console.file.write("\r\x1b[2K")

    def redraw(self, console: Console) -> None:
        console.file.flush()
        if self._on_new_line is not None:
            self._on_new_line()
            self.readline.redisplay()  # the prompt and the typed text, the cursor in place
        else:  # no readline library to call: the cursor ends at the end of the line
            console.file.write(self.prompt + self.readline.get_line_buffer())
            console.file.flush()


class LineReader:
    """Lines from a text stream, read in a daemon thread (one per request) for the event loop."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.typed = ""  # keys read from the terminal by someone else, for the next line
        self._queue: asyncio.Queue[str | None] | None = None
        self._wanted = threading.Semaphore(0)  # a line was asked for
        self._pending = False  # asked for and not yet received (its reader may be gone)
        self._ended = False

    def give_back(self, typed: str) -> None:
        """Keys typed at the terminal and read by someone else (`CursorQuery`): they begin
        the next line, as they would have had nobody read them."""
        self.typed += typed

    def _typed_line(self) -> str | None:
        """A whole line typed ahead and given back, if there is one."""
        if "\n" not in self.typed and "\r" not in self.typed:
            return None
        line, _, self.typed = self.typed.replace("\r", "\n").partition("\n")
        return line

    async def readline(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        typed = self._typed_line()
        if typed is not None:
            return typed
        line = await self._readline()
        typed, self.typed = self.typed, ""
        return line if not typed else typed + (line or "")

    async def _readline(self) -> str | None:
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
        prompts: Console | None = None,
    ) -> None:
        self.console = console
        self._plan_file_shown: str | None = None  # the plan file's path, once shown
        # The terminal to show reviews and ask on when `console` is not one (a file).
        self.prompts = prompts
        # With stdout a pipe, what it carries most often reaches the same terminal (`| cat`,
        # `| tee`, `| less`): the reviews and questions are shown and asked there only, not
        # twice. A file keeps them, as the transcript.
        self.transcript = prompts is None or not is_pipe(console)
        # That pipe, when it is one: what it carries is let through before the terminal is
        # written to directly, or the two arrive out of order (`plansight.cli.pipe`).
        self._pipe = None if self.transcript else PipeToTheTerminal(console.file.fileno())
        self.live_mode = (
            console.is_terminal and not console.is_dumb_terminal if live is None else live
        )
        self.reader = LineReader(stdin if stdin is not None else sys.stdin)
        self._keys = QuietKeys(console.file)  # the region's terminal: its typing unechoed
        self._cursor = cursor_query(console, dict(os.environ)) if self.live_mode else None
        # Show edit_file/write_file calls as diffs: when edits are accepted without a
        # review, this is where the user sees them.
        self.inline_edits = inline_edits
        self.plan: dict[str, Any] | None = None
        self.partial = ""  # streamed text not yet ended by a newline
        self.streamed_text = False  # some text was streamed since the last tool call
        self.reminders = 0
        self._asking = False  # a question is printed and its answer not yet read
        self._asking_on = console  # where it is printed
        self._live: LiveRegion | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self._blocks_printed = False  # a block of the model's current text is printed
        # The model turn (`textDelta.turn`) whose text was shown last, None once something
        # else was printed after it: text of a later turn starts a paragraph of its own.
        self._text_turn: int | None = None
        self._turn_break = False  # a later turn began: its first visible text breaks first
        self._newlines = 0  # without a live region: how many newlines the text ends in (to 2)
        # The tool call just printed (name, summary): an approval of it does not repeat it.
        self._last_call: tuple[str, str] | None = None
        # What is happening now, shown with a spinner and its seconds in the live region.
        self.activity = ""
        self._activity_since = time.monotonic()
        self._spinner = Spinner("dots", style="bold blue")
        # Version 4: the parallel workers by item id, as their events told (`worker_lines`).
        self.workers: dict[str, dict[str, Any]] = {}
        self.on_worker: list[Callable[[], None]] = []  # told after each worker event
        # The worker whose change set is being reviewed (`reviewEdit`'s `worker`): its first
        # file's review is headed by whose changes they are.
        self.reviewing_worker: str | None = None
        # Set while the interactive prompt waits for a line: printing goes above it.
        self.prompt_line: PromptLine | None = None
        # The last `usage` event (the server's figures) and the run's mode: the status line.
        self.usage: dict[str, Any] = {}
        self.mode = "act"

    def begin(self) -> None:
        """Before the first line of output: on a live terminal inside tmux, start it at the
        screen's bottom (`scroll_to_the_bottom`), the lines above shown as they were."""
        if self._cursor is not None:
            scroll_to_the_bottom(self.console, self._cursor)

    def typed_ahead(self) -> str:
        """Keys typed at the terminal that this process read for someone else (with the
        terminal's answers about its cursor) and no answer took: the next prompt's to show."""
        self._give_back_keys()
        typed, self.reader.typed = self.reader.typed, ""
        return typed

    def _give_back_keys(self) -> None:
        """The keys read with the terminal's answers, to the next line read."""
        if self._cursor is not None:
            self.reader.give_back(self._cursor.take_typed())

    # Live region -------------------------------------------------------------------------
    def start(self) -> None:
        """Bring up the live region below the last printed line (a new `Live` every time)."""
        if self.live_mode and self._live is None:
            self._keys.off()
            room = 0
            if self._cursor is not None:
                # On a screen at least half blank (cleared since the output began at its
                # bottom, `begin`), the region comes up at the bottom too; below fewer blank
                # rows (a question's), its first frame is moved down to it (`AnchoredRender`).
                room = scroll_to_the_bottom(
                    self.console, self._cursor, least=self.console.height // 2
                )
            self._live = LiveRegion(
                self.console, self._live_renderable, docked=self._cursor is not None, room=room
            )
            self._live.start(refresh=True)
            self._tick()

    def _tick(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test drawing once): redrawn as things change
            return
        self._ticker = loop.call_later(REFRESH_SECONDS, self._on_tick)

    def _on_tick(self) -> None:
        self._ticker = None
        if self._live is not None:
            self._live.refresh()
            self._tick()

    def stop(self) -> None:
        """End the live region, leaving the final plan printed in the scrollback."""
        self._end_text()
        if self._take_down_live():
            if self.plan is not None and render.plan_items(self.plan):
                self.console.print(self._plan_panel())

    def _take_down_live(self) -> bool:
        """Erase the live region (only it) and drop its `Live`; False if there was none."""
        live, self._live = self._live, None
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if live is None:
            return False
        try:
            live.stop()
        finally:
            self._keys.restore()
        return True

    def set_activity(self, activity: str) -> None:
        """What the user is waiting for ("waiting for the model"); "" when nothing is."""
        if activity != self.activity:
            self.activity = activity
            self._activity_since = time.monotonic()
            self._refresh()

    def _live_renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.partial.strip():
            # Below the blank line its block will be printed under once complete, and without
            # the blank lines it ends in (the next block's): the paragraph being written does
            # not move as it is done, and leaves no blank rows behind in the region.
            above = "\n" if self._blocks_printed else ""
            parts.append(Text(above + render.visible(self.partial.rstrip("\n"))))
        has_plan = self.plan is not None and render.plan_items(self.plan)
        if has_plan:
            parts.append(self._plan_panel())
        # Only the running ones: how each ended is printed above as it ends.
        running = {i: w for i, w in self.workers.items() if w.get("status") == "running"}
        if running:
            parts.append(render.visible_text(Text("\n".join(worker_lines(running)))))
        if self.usage:  # above the activity: the last line stays what the user waits for
            parts.append(StatusLine(self.usage, self.mode))
        if self.activity:
            elapsed = time.monotonic() - self._activity_since
            self._spinner.update(text=render.activity_text(self.activity, elapsed))
            parts.append(self._spinner)
        elif not has_plan:
            line = Text("▶ " + render.progress_line(self.plan), style="bold blue")
            parts.append(render.visible_text(line))
        return Cropped(Group(*parts))

    def _plan_panel(self) -> Panel:
        return Panel(
            render.visible_text(render.plan_text(self.plan or {})),
            title="plan",
            title_align="left",
            subtitle=render.visible("▶ " + render.progress_line(self.plan)),
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
        self._last_call = None
        prompt_line = self.prompt_line
        if prompt_line is not None and self._live is None:
            prompt_line.clear(self.console)
            self._emit(self.console, renderables)
            prompt_line.redraw(self.console)
            return
        self._emit(self.console, renderables)

    def _emit(self, console: Console, renderables: tuple[RenderableType, ...]) -> None:
        for renderable in renderables:
            # On a terminal rich wraps at words and counts the rows; a file gets whole lines.
            wrap = isinstance(renderable, Text | str) and not console.is_terminal
            echo(console, renderable, soft_wrap=wrap)

    def _show(self, *renderables: RenderableType) -> None:
        """Print what the user is asked about; on the terminal asked on too, if that is
        another one (stdout is a file)."""
        if self.transcript:
            self.print(*renderables)
        else:
            self._end_text()
            self._last_call = None
        if self.prompts is not None:
            self._after_the_pipe()
            self._emit(self.prompts, renderables)

    def _after_the_pipe(self) -> None:
        """Before writing to the terminal directly: let the pipe to it pass on what it holds."""
        if self._pipe is not None:
            self.console.file.flush()
            self._pipe.wait()

    def _end_text(self) -> None:
        if self._asking:  # a question waits on this line (in the file too): move below it
            self._asking = False
            for console in {id(c): c for c in (self._asking_on, self.console)}.values():
                console.file.write("\n")
                console.file.flush()
        self._text_turn, self._turn_break, self._newlines = None, False, 0
        if not self.partial:
            self._blocks_printed = False
            return
        if self._live is not None:
            self._print_blocks(self.partial)
        else:
            self.console.file.write("\n")
            self.console.file.flush()
        self.partial = ""
        self._blocks_printed = False
        self._refresh()

    def _print_blocks(self, markdown: str) -> None:
        """Complete Markdown blocks of the model's text, rendered, a blank line between."""
        if self._blocks_printed:
            self.console.print()
        self.console.print(render.markdown(markdown))
        self._blocks_printed = True

    def text(self, delta: str, turn: int | None = None) -> None:
        """Stream the model's text; `turn` (the server's, when it says) tells two model turns
        apart, so that a later turn's text never runs on from an earlier one's."""
        self.streamed_text = True
        if turn is not None:
            if self._text_turn is not None and turn != self._text_turn:
                self._turn_break = True
            self._text_turn = turn
        if self._turn_break:
            delta = delta.lstrip("\n")  # the paragraph break is ours: no blank lines on top
            if not delta:
                return  # nothing to show yet: no empty paragraph
            self._turn_break = False
            self._new_paragraph()
        if self._live is None:
            self.console.file.write(render.visible(delta))
            self.console.file.flush()
            self.partial = (self.partial + delta).rsplit("\n", 1)[-1]
            ends = len(delta) - len(delta.rstrip("\n"))
            self._newlines = min(2, self._newlines + ends if ends == len(delta) else ends)
            return
        self.partial += delta
        done, rest = render.complete_blocks(self.partial)
        if done:
            self.partial = rest
            self._print_blocks(done)
        self._refresh()

    def _new_paragraph(self) -> None:
        """End the earlier turn's text as a paragraph: its last block printed, the next one
        below a blank line (as between two blocks of one text)."""
        if self._live is None:
            self.console.file.write("\n" * (2 - self._newlines))
            self.console.file.flush()
            self.partial, self._newlines = "", 2
            return
        if self.partial.strip():
            self._print_blocks(self.partial)
        self.partial = ""

    def header(self, workspace: str, prompt: str, *, mode: str) -> None:
        self.print(
            Text.assemble(("plansight ", "bold blue"), (f"· {workspace} · {mode}", "dim")),
            Text.assemble(("› ", "bold"), (prompt_echo(prompt), "bold")),
        )

    def notice(self, message: str, style: str = "yellow") -> None:
        self.print(Text(message, style=style))

    # Frontend -----------------------------------------------------------------------------
    def on_todos(self, state: dict[str, Any]) -> None:
        had_plan = self.plan is not None and bool(render.plan_items(self.plan))
        self.plan = state
        plan_file = state.get("planFile")
        if isinstance(plan_file, str) and plan_file != self._plan_file_shown:
            # Once per file: where the plan is, to open in any editor (its saves are read back).
            self._plan_file_shown = plan_file
            self.print(Text(f"plan file: {render.visible(plan_file)}", style="dim"))
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
            turn = event.get("turn")
            self.text(event["text"], turn if isinstance(turn, int) else None)
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
        elif kind == "retrying":
            self.print(
                render.retrying_line(
                    event.get("attempt"),
                    event.get("of"),
                    event.get("reason"),
                    event.get("delaySeconds"),
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
        elif kind in ("workerStarted", "workerProgress", "workerFinished"):
            self._worker_event(kind, event)
        elif kind == "usage":
            self.usage = event
            self._refresh()
        elif kind == "runStarted":
            self.mode = "plan" if event.get("mode") == "plan" else "act"
        elif kind == "thinkingDelta":
            # Thinking stays collapsed: the live line says it is happening, nothing is printed.
            self.set_activity("the model is thinking")
        # runStarted, runFinished (the answer is printed at the end) and unknown types: quiet.

    def _worker_event(self, kind: str, event: dict[str, Any]) -> None:
        todo_id = str(event.get("todoId", ""))
        worker = self.workers.setdefault(todo_id, {"status": "running", "rounds": 0})
        if kind == "workerProgress":
            worker.update(tool=event.get("tool"), summary=event.get("summary"))
            worker["rounds"] = event.get("rounds", worker["rounds"])
        elif kind == "workerFinished":
            files = event.get("files") if isinstance(event.get("files"), list) else []
            worker.update(status=event.get("status"), files=files, tool=None)
            self.print(Text(render.visible(worker_line(todo_id, worker)), style="bold"))
        self._refresh()
        for listener in list(self.on_worker):
            listener()

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
        self._last_call = (name, summary)

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
        worker = review.get("worker")
        if isinstance(worker, str) and worker and worker != self.reviewing_worker:
            self.reviewing_worker = worker
            self._show(Text(render.visible(f"Worker #{worker}'s changes, file by file:"), "bold"))
        self._show(title, render.diff_text(diff))

    def show_command(self, request: dict[str, Any]) -> None:
        allowed = render.sandbox_text(request)
        command = str(request.get("command", ""))
        where = f"in {request.get('cwd', '.')}"
        shown: list[RenderableType] = []
        if self._last_call is not None and self._last_call[1].startswith("$ " + command):
            # The `⚙ bash $ command` line just above names it: say only where it runs.
            shown.append(Text("  " + where, style="dim"))
        else:
            shown.append(
                Text.assemble(
                    ("run command ", "bold"), ("$ " + command, "bold cyan"), (f"  ({where})", "dim")
                )
            )
        if allowed:
            style = "green" if allowed.startswith("sandboxed") else "bold yellow"
            shown.append(Text("  " + allowed, style=style))
        self._show(*shown)

    def show_plan_review(self, review: dict[str, Any]) -> None:
        todos = review.get("todos")
        todos = todos if isinstance(todos, dict) else {}
        summary = review.get("summary")
        problem = review.get("problem")
        shown: list[RenderableType] = [Text("plan proposed for your approval", style="bold blue")]
        if isinstance(summary, str) and summary.strip():
            shown.append(Text(summary.strip()))
        shown.append(render.plan_text(todos))
        for line in review_changes_lines(review):  # beside the proposal the user saw before
            style = "bold" if not line.startswith(("-", " ")) else ""
            shown.append(Text(line, style="dim" if line.startswith("  ") else style))
        if isinstance(problem, str) and problem:
            shown.append(Text(problem, style="bold red"))
        self._show(*shown)

    def show_edited_plan(self, items: list[dict[str, str]]) -> None:
        self._show(
            Text("your edited plan (sent with your answer):", style="bold blue"),
            render.plan_text({"items": items}),
        )

    def show_question(self, question: dict[str, Any]) -> None:
        text = Text.assemble(("? ", "bold magenta"), (str(question.get("question", "")), "bold"))
        options = question.get("options")
        lines: list[RenderableType] = [text]
        for number, option in enumerate(options if isinstance(options, list) else [], start=1):
            lines.append(Text(f"  {number}. {option}"))
        self._show(*lines)

    def warn(self, message: str) -> None:
        self._show(Text(message, style="bold yellow"))

    def show_recorded_answer(self, answer: str) -> None:
        self.print(
            Text.assemble(
                ("› ", "bold"), (answer, "bold"), ("  (the demo's recorded answer)", "dim")
            )
        )

    async def edit_text(
        self, text: str, what: str = "the plan", name: str = "plan.txt"
    ) -> str | None:
        """Open `text` in $VISUAL / $EDITOR (else vi) on this terminal, as a file `name`; what
        it saved, or None. `what`: what the user edits, as the line before says it."""
        self._end_text()
        had_live = self._take_down_live()
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with tempfile.TemporaryDirectory(prefix="plansight-edit-") as folder:
                path = Path(folder) / name
                path.write_text(text, encoding="utf-8")
                self.console.print(Text(f"editing {what} with {editor}…", style="dim"))
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
            on = self.prompts or self.console
            self._after_the_pipe()
            # A file gets the question whole, as every line (a terminal wraps it at words).
            on.print(Text(question + " ", style="bold"), end="", soft_wrap=not on.is_terminal)
            on.file.flush()
            transcript = on is self.console or self.transcript
            if on is not self.console and transcript:  # the file keeps the question too
                self.console.print(Text(question + " ", style="bold"), end="", soft_wrap=True)
            self._asking, self._asking_on = transcript, on
            self._give_back_keys()  # keys read with the terminal's answers begin this one
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
    def result(
        self, result: dict[str, Any], error: str | None = None, hint: str | None = None
    ) -> None:
        """The run's end: its status, error and text (as Markdown on a terminal), `hint` (what
        to check for an error), the plan's count and the tokens. With stdout a file, the
        error is said on the terminal (stderr) too."""
        self.set_activity("")
        self.stop()
        status = str(result.get("status", "error"))
        include_text = status != "done" or not self.streamed_text
        self.console.print()
        self._emit(self.console, (render.result_text(result, include_text=False),))
        body = render.result_body(result) if include_text else ""
        if body and self.console.is_terminal:
            self.console.print(render.markdown(body))
        elif body:
            self._emit(self.console, (Text(body),))
        failure = [Text(f"error: {error}", style="bold red")] if error else []
        if hint:
            failure.append(Text(hint, style="bold yellow"))
        errors = stderr_console()
        said_on_stderr = not self.console.is_terminal and errors.is_terminal
        if self.transcript or not said_on_stderr:  # a pipe to the terminal: said there once
            self._emit(self.console, tuple(failure))
        if said_on_stderr:
            self._after_the_pipe()
            said = render.result_text(result, include_text=False)
            self._emit(errors, tuple(([said] if status != "done" else []) + failure))
        if self.plan is not None and render.plan_items(self.plan) and not self.live_mode:
            self.console.print(Text(f"plan: {render.count_detail(self.plan)}", style="blue"))
        usage = result.get("usage")
        if isinstance(usage, dict):
            self.console.print(Text(render.usage_line(usage), style="dim"))


def worker_line(todo_id: str, worker: dict[str, Any]) -> str:
    """One worker as the live region shows it: its item, its current tool or how it ended."""
    status = str(worker.get("status", "running"))
    if status == "running":
        tool = worker.get("tool")
        summary = worker.get("summary")
        doing = f"{tool}: {summary}" if tool and summary else str(tool or "starting")
        return f"⟳ #{todo_id} {render.shorten(doing, 70)} ({worker.get('rounds', 0)} tools)"
    files = worker.get("files") or []
    mark = {"completed": "✓", "failed": "✗", "cancelled": "–"}.get(status, "?")
    changed = ", ".join(
        f"{f.get('path')} +{f.get('added', 0)} -{f.get('removed', 0)}"
        for f in files
        if isinstance(f, dict)
    )
    return f"{mark} #{todo_id} {status}" + (f": {changed}" if changed else ", no changes")


def worker_lines(workers: dict[str, dict[str, Any]]) -> list[str]:
    return [worker_line(todo_id, worker) for todo_id, worker in workers.items()]
