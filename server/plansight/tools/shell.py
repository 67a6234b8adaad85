"""The bash tool, and the runner beneath it: one command in its own process group.

The runner's contract: the command runs in the workspace root with stdin empty and an
environment without secrets (workspace/sandbox.py's `command_env`); its output (stdout and
stderr together) keeps its first and last bytes within a limit; on timeout or when the caller
is cancelled, the whole process group is killed, so nothing the command started survives it;
background processes that keep the output open do not hold the result back.

The tool runs each command in the session's sandbox where one can be made (bubblewrap: the
runner's process is then bwrap, which dies with its group, and every process inside with it),
tells the approval what the command may do, and ends a sandboxed result with a line saying so.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import signal
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.engine.hooks import CommandRequest
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.registry import OUTPUT_MAX_BYTES, Tool, line_of, require_str, text_of
from plansight.workspace.sandbox import SANDBOX_NOTE, CommandSandbox, command_env, result_line

log = logging.getLogger(__name__)

BASH_DEFAULT_TIMEOUT = 120.0
BASH_MAX_TIMEOUT = 600.0
BASH_DRAIN_GRACE = 1.0  # how long to wait for output after the command exited
SUMMARY_LINE_CHARS = 80  # of the output's line in a summary, so the exit status fits beside it

# What `bash` appends to the output: the exit status, and a note on lingering background output.
EXIT_STATUS = re.compile(r"\[(exit code -?\d+|killed by [^\]]+)\]")
LINGERING_NOTE = "[background processes still held the output open"
# A test runner's verdict: pytest's `=== 1 failed, 2 passed in 0.1s ===` and `-q` line, jest's
# `Tests: 1 failed, 2 total`, cargo's `test result: ok. 3 passed`, mocha's `2 passing`.
TEST_COUNTS = re.compile(r"\b\d+ (passed|failed|passing|failing|errors?|skipped)\b|no tests ran")
UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in ")
UNITTEST_VERDICT = re.compile(r"^(OK|FAILED)\b")


CUT_SLACK = 512  # how far from the limit a cut looks for whitespace
WHITESPACE = (b"\n", b" ", b"\t")


class _CappedOutput:
    """Keeps the first and last bytes of a stream, counting what falls in between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.omitted = 0

    def feed(self, data: bytes) -> None:
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._tail_limit
        if excess > 0:
            del self._tail[:excess]
            self.omitted += excess

    def text(self) -> str:
        head, tail, omitted = bytes(self._head), bytes(self._tail), self.omitted
        if omitted:
            # Cut at whitespace near the limits, not inside a word: half of a secret value
            # cannot be recognised and withheld (workspace/secretvalues.py), a whole one can.
            space = max(head.rfind(byte, -CUT_SLACK) for byte in WHITESPACE)
            if space >= 0:
                omitted += len(head) - space - 1
                head = head[: space + 1]
            spaces = [
                at for at in (tail.find(byte, 0, CUT_SLACK) for byte in WHITESPACE) if at >= 0
            ]
            if spaces:
                omitted += min(spaces) + 1
                tail = tail[min(spaces) + 1 :]
        text_head = head.decode("utf-8", errors="replace")
        text_tail = tail.decode("utf-8", errors="replace")
        if omitted:
            return f"{text_head.rstrip(chr(10))}\n[... {omitted} bytes omitted ...]\n{text_tail}"
        return text_head + text_tail


@dataclass(frozen=True)
class CommandOutput:
    text: str  # stdout and stderr as they interleaved, capped, trailing newlines removed
    returncode: int  # negative: killed by that signal
    timed_out: bool  # the group was killed at the timeout
    lingering: bool  # background processes still held the output open when we stopped reading


def _kill_group(pgid: int) -> None:
    # SIGKILL, to the whole group: children that ignore SIGTERM die too.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def bash_argv(command: str) -> list[str]:
    return ["/bin/bash", "-c", command]


async def run_command(
    command: str,
    cwd: Path,
    time_limit: float,
    *,
    output_limit: int = OUTPUT_MAX_BYTES,
    argv: list[str] | None = None,
) -> CommandOutput:
    """Run `command` with /bin/bash in `cwd`, in a process group of its own.

    `argv`: what to run instead of `bash -c command` (the sandbox's bwrap running it). After
    `time_limit` seconds the group is killed and the output so far returned (the caller
    decides what a timeout means), unlike a cancellation, which kills it and raises.
    """
    program, *args = argv if argv is not None else bash_argv(command)
    output = _CappedOutput(output_limit)
    loop = asyncio.get_running_loop()
    # Our own pipe rather than PIPE: asyncio's Process.wait() would otherwise also wait for
    # every background child that holds the output open.
    read_fd, write_fd = os.pipe()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            program,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,  # its own process group, killed as a whole
            env=command_env(),
        )
    )
    try:
        # Shielded: cancelled while asyncio connects the pipes, the shell is already running
        # (and may have started children); asyncio would kill only the shell.
        proc = await asyncio.shield(spawn)
    except BaseException:
        os.close(read_fd)
        with suppress(BaseException):
            started = await spawn
            _kill_group(started.pid)
            await started.wait()
        raise
    finally:
        os.close(write_fd)
    transport: asyncio.ReadTransport | None = None
    pump_task: asyncio.Task[None] | None = None
    timed_out = lingering = False
    try:
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )

        async def pump() -> None:
            while chunk := await reader.read(1 << 16):
                output.feed(chunk)

        pump_task = asyncio.create_task(pump())
        try:
            returncode = await asyncio.wait_for(proc.wait(), time_limit)
        except TimeoutError:
            timed_out = True
            log.info(
                "bash: %r timed out after %g s; killing group %d", command, time_limit, proc.pid
            )
            _kill_group(proc.pid)
            returncode = await proc.wait()
        done, _ = await asyncio.wait({pump_task}, timeout=BASH_DRAIN_GRACE)
        lingering = not done
    except BaseException:
        # Cancelled (the run was stopped) or failed: nothing of the command may survive.
        log.info("bash: stopping %r; killing group %d", command, proc.pid)
        _kill_group(proc.pid)
        await proc.wait()
        raise
    finally:
        if pump_task is not None:
            pump_task.cancel()
            with suppress(asyncio.CancelledError):
                await pump_task
        if transport is not None:
            transport.close()
        else:
            with suppress(OSError):
                os.close(read_fd)
    return CommandOutput(output.text().rstrip("\n"), returncode, timed_out, lingering)


def _parse_timeout(tool_input: dict[str, Any]) -> float:
    raw = tool_input.get("timeout")
    if raw is None:
        return BASH_DEFAULT_TIMEOUT
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise ToolError("'timeout' must be a number of seconds.")
    if raw <= 0:
        raise ToolError("'timeout' must be more than 0 seconds.")
    return min(float(raw), BASH_MAX_TIMEOUT)


def _exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"[killed by {name}]"
    return f"[exit code {returncode}]"


def command_summary(content: str) -> str:
    """The line of a command's result a person looks for, and its exit status.

    `Ran 2 tests in 0.001s · OK · exit code 0`, `1 failed, 2 passed in 0.12s · exit code 1`: a
    test runner's verdict where the output has one, else the output's last line (a command's
    conclusion comes last: the error count, "Successfully installed ...").
    """
    lines = [line.strip() for line in content.strip().splitlines()]
    status = ""
    if lines and (match := EXIT_STATUS.fullmatch(lines[-1])):
        status = match.group(1)
        lines.pop()
    lines = [line for line in lines if line and not line.startswith((LINGERING_NOTE, SANDBOX_NOTE))]
    found = test_verdict(lines) or (lines[-1] if lines else "")
    flat = " ".join(found.split())
    if len(flat) > SUMMARY_LINE_CHARS:
        flat = flat[: SUMMARY_LINE_CHARS - 1] + "…"
    return " · ".join(part for part in (flat, status) if part)


def test_verdict(lines: list[str]) -> str | None:
    """The last test-runner summary among `lines` (non-empty, stripped), or None."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if UNITTEST_RAN.match(line):
            verdict = next((v for v in lines[index + 1 :] if UNITTEST_VERDICT.match(v)), None)
            return f"{line} · {verdict}" if verdict else line
        if UNITTEST_VERDICT.match(line) and any(UNITTEST_RAN.match(x) for x in lines[:index]):
            continue  # unittest's verdict: reported with its "Ran N tests" line above
        if TEST_COUNTS.search(line):
            return line.strip("= ")
    return None


async def bash(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    command = require_str(tool_input, "command", allow_empty=False)
    timeout = _parse_timeout(tool_input)
    root = ctx.workspace.root
    sandbox = command_sandbox(ctx)
    # Found once (one bwrap start), in a thread: the first command of a session waits for it.
    refusal = await asyncio.to_thread(sandbox.refusal)
    if refusal is not None:
        raise ToolError(refusal)
    allowed = sandbox.description()
    decision = await ctx.approve(
        CommandRequest(command=command, cwd=str(root), sandbox=allowed, call_id=ctx.call_id)
    )
    if not decision.approved:
        message = "This command was rejected by the user; it was not run."
        if decision.feedback and decision.feedback.strip():
            message += f" Their feedback: {decision.feedback.strip()}"
        raise ToolError(message)
    argv: list[str] | None = None
    started = False
    try:
        await ctx.changes.before_command()
        started = True
        # After the command's start scan: the placeholders bwrap makes at absent control paths
        # appear and go within the command's window, never as changes made by someone else.
        # In a thread: it looks for the protected files to hide (a walk of the workspace).
        argv = await asyncio.to_thread(sandbox.argv, bash_argv(command)) if allowed else None
        out = await run_command(command, root, timeout, argv=argv)
    finally:
        if argv is not None:  # the placeholders bwrap made at absent control paths go
            ctx.changes.made_and_removed(await asyncio.to_thread(sandbox.finished))
        if started:
            ctx.changes.command_ran(command)  # stopped or not, it may have changed files
    said = [result_line(allowed)] if allowed is not None else []
    if out.timed_out:
        raise ToolError(
            "\n".join(
                [
                    f"Command timed out after {timeout:g} s; its process group was killed.",
                    out.text or "(no output)",
                    *said,
                ]
            )
        )
    parts = [out.text or "(no output)"]
    if out.lingering:
        parts.append(
            "[background processes still held the output open; later output was not captured. "
            "Redirect a background process's output, e.g. `nohup cmd > log 2>&1 &`.]"
        )
    parts += said
    parts.append(_exit_status(out.returncode))
    return "\n".join(parts)


def command_sandbox(ctx: ToolContext) -> CommandSandbox:
    """The context's sandbox; a context made without one gets the default (`auto`) once."""
    if ctx.sandbox is None:
        ctx.sandbox = CommandSandbox(ctx.workspace.root, protected=ctx.workspace.protected)
    return ctx.sandbox


BASH = Tool(
    name="bash",
    description=(
        "Run a command with /bin/bash in the workspace root, after the user approves it. "
        "Returns stdout and stderr together (long output keeps its start and end) and the exit "
        "code. stdin is empty: do not run interactive commands. timeout: seconds (default 120, "
        "at most 600); on timeout the command and all its child processes are killed. To leave "
        "a process running, redirect its output: `nohup cmd > log 2>&1 &`."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line to run."},
            "timeout": {"type": "number", "description": "Seconds (default 120, max 600)."},
        },
        "required": ["command"],
    },
    handler=bash,
    summarize=command_summary,
    # `$ make test`: the command line as a terminal shows it.
    summarize_input=lambda tool_input: "$ " + line_of(tool_input, "command"),
    changes_workspace=True,
    kind="execute",
    title=lambda tool_input, summary: f"Run {text_of(tool_input, 'command')}",
    asks=True,
)


TOOLS: tuple[Tool, ...] = (BASH,)
