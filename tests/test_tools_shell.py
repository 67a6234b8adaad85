"""The bash tool and its process-group runner, through the registry as the agent calls it."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

from plansight.engine.hooks import CommandDecision, CommandRequest, SandboxDescription
from plansight.tools import shell
from plansight.tools.context import ToolContext
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions, result_line

from conftest import PATIENCE, wait_until
from tool_harness import REGISTRY, call, make_ctx, tools_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tools_workspace(tmp_path)


def unsandboxed(ctx: ToolContext) -> ToolContext:
    """Commands of this context run as before the sandbox (`sandbox.enabled: false`): what
    these tests check of process groups needs the host's process ids."""
    ctx.sandbox = CommandSandbox(ctx.workspace.root, SandboxOptions(enabled=False))
    return ctx


def test_tool_names_and_schemas() -> None:
    required = {tool.name: tool.input_schema.get("required", []) for tool in shell.TOOLS}
    assert required == {"bash": ["command"]}


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def _wait_dead(pid: int, within: float = PATIENCE) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False


def _pid_in(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


async def _read_pid(path: Path, within: float = PATIENCE) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pid = _pid_in(path)
        if pid is not None:
            return pid
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


async def test_bash_runs_in_the_root_after_approval(ws: Path) -> None:
    requests: list[CommandRequest] = []

    async def approve(request: CommandRequest) -> CommandDecision:
        requests.append(request)
        return CommandDecision(approved=True)

    ctx = unsandboxed(make_ctx(ws, approve=approve))
    outcome = await call(ctx, "bash", command="pwd; echo oops >&2; exit 3")
    assert not outcome.is_error
    assert outcome.content == f"{ctx.workspace.root}\noops\n[exit code 3]"
    assert requests == [CommandRequest("pwd; echo oops >&2; exit 3", str(ctx.workspace.root))]
    quiet = await call(ctx, "bash", command="true")
    assert quiet.content == "(no output)\n[exit code 0]"


async def test_a_sandboxed_command_says_so_before_its_exit_status(ws: Path) -> None:
    requests: list[CommandRequest] = []

    async def approve(request: CommandRequest) -> CommandDecision:
        requests.append(request)
        return CommandDecision(approved=True)

    ctx = make_ctx(ws, approve=approve)  # the default: `auto`, and bwrap is here
    root = str(ctx.workspace.root)
    outcome = await call(ctx, "bash", command="pwd; echo oops >&2; exit 3")
    assert not outcome.is_error
    allowed = SandboxDescription(network=False, writable=(root,))
    assert outcome.content == f"{root}\noops\n{result_line(allowed)}\n[exit code 3]"
    assert "sandbox" in outcome.content.splitlines()[-2]
    assert requests == [CommandRequest("pwd; echo oops >&2; exit 3", root, allowed)]
    assert REGISTRY.summary("bash", outcome) == "oops · exit code 3"


async def test_bash_refused_command_does_not_run(ws: Path) -> None:
    async def refuse(request: CommandRequest) -> CommandDecision:
        return CommandDecision(approved=False, feedback="Not on my machine.")

    outcome = await call(make_ctx(ws, approve=refuse), "bash", command="touch ran")
    assert outcome.is_error
    assert outcome.content == (
        "This command was rejected by the user; it was not run. Their feedback: Not on my machine."
    )
    assert not (ws / "ran").exists()


async def test_bash_timeout_kills_the_whole_group(ws: Path) -> None:
    ctx = unsandboxed(make_ctx(ws))
    # A child that ignores SIGTERM, inside a shell that waits for it.
    command = "echo started; sh -c 'trap \"\" TERM; sleep 300' & echo $! > pid; wait"
    began = time.monotonic()
    outcome = await call(ctx, "bash", command=command, timeout=1)
    assert time.monotonic() - began < PATIENCE  # not the child's 300 s
    assert outcome.is_error
    assert outcome.content.startswith(
        "Command timed out after 1 s; its process group was killed.\nstarted"
    )
    pid = int((ws / "pid").read_text())
    assert await _wait_dead(pid)


async def test_bash_cancellation_kills_the_whole_group(ws: Path) -> None:
    ctx = unsandboxed(make_ctx(ws))
    task = asyncio.create_task(
        call(ctx, "bash", command="trap '' TERM; sleep 300 & echo $! > pid; echo $$ > shell; wait")
    )
    child = await _read_pid(ws / "pid")
    shell = await _read_pid(ws / "shell")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_dead(child)
    assert await _wait_dead(shell)


async def test_bash_output_is_capped(ws: Path) -> None:
    ctx = unsandboxed(make_ctx(ws))
    big = await call(
        ctx, "bash", command="echo BEGIN; head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END"
    )
    assert not big.is_error
    assert big.content.startswith("BEGIN\naaa")
    assert big.content.endswith("a\nEND\n[exit code 0]")
    assert "bytes omitted ...]" in big.content
    assert len(big.content) < 32_000
    forever = await call(ctx, "bash", command="yes", timeout=0.5)
    assert forever.is_error and "timed out after 0.5 s" in forever.content
    assert "bytes omitted ...]" in forever.content and len(forever.content) < 32_000


async def test_bash_does_not_wait_for_background_output(ws: Path) -> None:
    ctx = unsandboxed(make_ctx(ws))
    began = time.monotonic()
    command = f"(sleep {2 * PATIENCE:g}; echo late) & echo $! > pid; echo early"
    outcome = await call(ctx, "bash", command=command)
    try:
        assert time.monotonic() - began < PATIENCE  # not the background sleep's
        assert outcome.content.startswith("early\n[background processes still held the output")
        assert outcome.content.endswith("[exit code 0]")
    finally:
        with suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.kill(int((ws / "pid").read_text()), signal.SIGKILL)


async def test_bash_timeout_input_is_checked(ws: Path) -> None:
    ctx = make_ctx(ws)
    bad = await call(ctx, "bash", command="true", timeout="soon")
    assert bad.is_error and "'timeout' must be a number of seconds" in bad.content
    zero = await call(ctx, "bash", command="true", timeout=0)
    assert zero.is_error and "more than 0" in zero.content


@pytest.mark.parametrize(
    ("content", "summary"),
    [
        # unittest: the "Ran" line and the verdict below it
        (
            "test_a ... ok\n\n" + "-" * 70 + "\nRan 2 tests in 0.001s\n\nOK\n[exit code 0]",
            "Ran 2 tests in 0.001s · OK · exit code 0",
        ),
        (
            "FAIL: test_a\n" + "-" * 70 + "\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
            "[exit code 1]",
            "Ran 1 test in 0.001s · FAILED (failures=1) · exit code 1",
        ),
        # pytest, with and without -q; its FAILED lines are not the verdict
        (
            "..F\n=== FAILURES ===\nFAILED t.py::test_x - assert 1 == 2\n"
            "========== 1 failed, 2 passed in 0.12s ==========\n[exit code 1]",
            "1 failed, 2 passed in 0.12s · exit code 1",
        ),
        ("3 passed in 0.03s\n[exit code 0]", "3 passed in 0.03s · exit code 0"),
        ("no tests ran in 0.01s\n[exit code 5]", "no tests ran in 0.01s · exit code 5"),
        # jest, mocha
        (
            "Tests:       1 failed, 4 passed, 5 total\n[exit code 1]",
            "Tests: 1 failed, 4 passed, 5 total · exit code 1",
        ),
        ("  2 passing (5ms)\n[exit code 0]", "2 passing (5ms) · exit code 0"),
        # no test run: the last line of the output
        (
            "Collecting x\nSuccessfully installed x-1.0\n[exit code 0]",
            "Successfully installed x-1.0 · exit code 0",
        ),
        ("(no output)\n[exit code 0]", "(no output) · exit code 0"),
        ("started\n[killed by SIGKILL]", "started · killed by SIGKILL"),
        (
            "server up\n[background processes still held the output open; later output was "
            "not captured. Redirect ...]\n[exit code 0]",
            "server up · exit code 0",
        ),
        # a long line is cut so that the exit status stays beside it
        ("y" * 300 + "\n[exit code 0]", "y" * 79 + "… · exit code 0"),
    ],
)
def test_a_command_is_summarized_by_its_verdict_and_exit_status(content: str, summary: str) -> None:
    assert shell.command_summary(content) == summary


async def test_a_real_test_run_is_summarized_as_it_ended(ws: Path) -> None:
    (ws / "test_sample.py").write_text(
        "import unittest\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_ok(self):\n        pass\n\n"
        "    def test_bad(self):\n        self.assertEqual(1, 2)\n"
    )
    ctx = make_ctx(ws)
    outcome = await call(ctx, "bash", command=f"{sys.executable} -m unittest test_sample")
    summary = REGISTRY.summary("bash", outcome)
    assert re.fullmatch(r"Ran 2 tests in [\d.]+s · FAILED \(failures=1\) · exit code 1", summary)


def _group(pgid: int) -> set[int]:
    """The live processes of process group `pgid`."""
    members = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.add(int(entry))
    return members


@pytest.mark.parametrize("turns", range(8))
async def test_a_command_cancelled_while_it_starts_leaves_nothing_running(
    ws: Path, turns: int
) -> None:
    """The run is cancelled `turns` turns of the event loop after the tool was called: while
    the command is approved, spawned or its pipes connected. The loop is then held for a
    moment, as on a busy machine, so that the shell gets to start its child first."""
    ctx = unsandboxed(make_ctx(ws))
    task = asyncio.create_task(
        call(ctx, "bash", command="echo $$ > group; sleep 300 & echo started; wait")
    )
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    time.sleep(0.1)  # the event loop busy elsewhere; the shell runs on
    with suppress(asyncio.CancelledError):
        await task
    group = _pid_in(ws / "group")
    if group is not None:  # the shell ran: it and all it started must be gone
        await wait_until(lambda: not _group(group), "the command's process group is gone")


async def test_a_capped_output_is_cut_between_words_not_inside_one(ws: Path) -> None:
    # Half a secret value cannot be recognised and withheld; a whole one (or none) can.
    token = "Tk" + "9" * 38
    before = 15_000 - 20  # the head keeps 15,000 bytes: the cut falls inside the token
    command = f"printf 'x%.0s' $(seq {before}); printf ' {token} '; head -c 100000 /dev/zero"
    outcome = await call(unsandboxed(make_ctx(ws)), "bash", command=command)
    assert not outcome.is_error and "bytes omitted ...]" in outcome.content
    assert "Tk9" not in outcome.content
    assert outcome.content.startswith("x" * before)
