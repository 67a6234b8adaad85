"""The model's tools under abuse, called through the registry exactly as the agent calls them.

Huge files are paged without being loaded, odd names stay addressable, loops end, and a command
that forks children which ignore SIGTERM leaves nothing running after its timeout. (What
tests/test_tools_*.py already cover identically, e.g. `yes` and a plain binary file, is
not repeated here.)
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import EventBus
from plansight.engine.hooks import accept_all_edits, approve_all_commands
from plansight.fakeapi import FakeMessagesAPI, text_reply
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import ToolOutcome, default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions

from conftest import PATIENCE, wait_until
from lsp_harness import start_editor

REGISTRY = default_tools()
MB = 1 << 20
RESULT_CAP = 110_000  # read_file shows at most 100 KB of lines, plus its notes


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "README.md").write_text("A workspace for abuse.\n")
    return folder


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=Workspace(root),
        review=accept_all_edits,
        approve=approve_all_commands,
        events=EventBus(),
    )


async def call(ctx: ToolContext, name: str, **tool_input: Any) -> ToolOutcome:
    return await REGISTRY.call(ctx, name, tool_input)


async def timed(ctx: ToolContext, name: str, **tool_input: Any) -> tuple[ToolOutcome, float, int]:
    """The outcome, the seconds it took and the peak of Python memory allocated meanwhile."""
    tracemalloc.start()
    began = time.monotonic()
    try:
        outcome = await call(ctx, name, **tool_input)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, time.monotonic() - began, peak


# ----- a 50 MB file -------------------------------------------------------------------------------

BIG_LINES = 500_000


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """50 MB: 500,000 numbered lines of 100 bytes; line 487,654 holds a unique needle."""
    folder = tmp_path_factory.mktemp("big")
    filler = "." * 80
    with (folder / "big.log").open("w") as fh:
        for n in range(1, BIG_LINES + 1):
            word = "NEEDLE-42" if n == 487_654 else "ordinary "
            fh.write(f"{n:08d} {word} {filler}\n")
    return folder


async def test_read_file_pages_a_50_mb_file_quickly_without_loading_it(big_file: Path) -> None:
    ctx = make_ctx(big_file)
    assert (big_file / "big.log").stat().st_size == 50_000_000
    first, seconds, peak = await timed(ctx, "read_file", path="big.log")
    assert not first.is_error
    assert len(first.content.encode()) < RESULT_CAP
    assert peak < 8 * MB, f"read_file held {peak / MB:.0f} MB"
    assert seconds < PATIENCE, f"read_file took {seconds:.1f} s"
    lines = first.content.split("\n")
    assert lines[0] == "     1\t00000001 ordinary  " + "." * 80
    # Capped by size before the 2000-line page ends, and it says how to go on.
    shown = int(lines[-2].split("\t")[0])
    assert 500 < shown < 2000
    assert lines[-1] == (
        f"[showing lines 1-{shown} of {BIG_LINES} (output size limit); "
        f"call read_file with offset={shown + 1} to continue]"
    )
    # Following the advice pages on; deep offsets and the end work the same way.
    following = await call(ctx, "read_file", path="big.log", offset=shown + 1, limit=3)
    assert following.content.split("\n")[0].startswith(f"{shown + 1:>6}\t{shown + 1:08d}")
    deep, seconds, peak = await timed(ctx, "read_file", path="big.log", offset=487_650, limit=10)
    assert "487654\t00487654 NEEDLE-42" in deep.content
    assert peak < 8 * MB and seconds < PATIENCE  # paged, not read to the end
    end = await call(ctx, "read_file", path="big.log", offset=BIG_LINES - 1)
    assert end.content.endswith(
        f"[showing lines {BIG_LINES - 1}-{BIG_LINES} of {BIG_LINES}; this is the end of the file]"
    )


async def test_grep_searches_a_50_mb_file_with_a_bounded_answer(big_file: Path) -> None:
    ctx = make_ctx(big_file)
    began = time.monotonic()
    one = await call(ctx, "grep", pattern="NEEDLE-\\d+")
    assert one.content == f"big.log:487654:00487654 NEEDLE-42 {'.' * 80}"
    every = await call(ctx, "grep", pattern="ordinary")
    lines = every.content.split("\n")
    assert len(lines) == 201 and lines[0].startswith("big.log:1:00000001 ordinary")
    assert lines[-1].startswith("[showing 200 of more than 10000 matching lines; narrow")
    assert len(every.content) < 32_000
    assert time.monotonic() - began < PATIENCE


async def test_a_50_mb_single_line_is_cut_not_loaded(root: Path) -> None:
    with (root / "one-line.min.js").open("w") as fh:
        for _ in range(50):
            fh.write("x" * MB)
        fh.write(" NEEDLE at the very end")
    ctx = make_ctx(root)
    read, seconds, peak = await timed(ctx, "read_file", path="one-line.min.js")
    assert not read.is_error
    assert read.content == (
        "     1\t" + "x" * 2000 + "\n[note: 1 line longer than 2000 characters were cut.]"
    )
    assert peak < 8 * MB and seconds < PATIENCE  # paged, not read to the end
    found = await call(ctx, "grep", pattern="NEEDLE")
    assert not found.is_error and found.content.startswith("one-line.min.js:1:")
    assert len(found.content) < 1000  # rg's --max-columns keeps the 50 MB line out


async def test_a_nul_deep_inside_a_big_file_still_makes_it_binary(root: Path) -> None:
    with (root / "data.bin").open("wb") as fh:
        fh.write(b"looks like text\n" * 200_000)  # 3.2 MB, then a NUL
        fh.write(b"\0\x01\x02 and more")
    ctx = make_ctx(root)
    read = await call(ctx, "read_file", path="data.bin", limit=5)
    assert read.is_error and "binary file" in read.content
    named = await call(ctx, "grep", pattern="looks", path="data.bin")
    assert not named.is_error and len(named.content) < 32_000
    assert "\0" not in named.content
    edit = await call(ctx, "edit_file", path="data.bin", old_text="and more", new_text="x")
    assert edit.is_error and "read_file" in edit.content  # never read, so never edited
    assert (root / "data.bin").stat().st_size == 3_200_000 + 12


# ----- invalid UTF-8 --------------------------------------------------------------------------


async def test_an_invalid_utf8_file_can_be_searched_and_replaced_whole(root: Path) -> None:
    (root / "legacy.txt").write_bytes(b"caf\xe9 cr\xe8me\nplain ascii line\n\xff\xfe\n")
    ctx = make_ctx(root)
    found = await call(ctx, "grep", pattern="ascii")
    assert found.content == "legacy.txt:2:plain ascii line"
    read = await call(ctx, "read_file", path="legacy.txt")
    assert "caf\ufffd cr\ufffdme" in read.content and "not valid UTF-8" in read.content
    edit = await call(ctx, "edit_file", path="legacy.txt", old_text="plain", new_text="fancy")
    assert edit.is_error and "write_file" in edit.content
    # The way out the error names works: a whole, valid UTF-8 replacement.
    write = await call(ctx, "write_file", path="legacy.txt", content="café crème\n")
    assert not write.is_error, write.content
    assert (root / "legacy.txt").read_bytes() == "café crème\n".encode()


async def test_a_file_name_that_is_not_utf8_does_not_break_listing_or_search(root: Path) -> None:
    raw = os.path.join(os.fsencode(root), b"caf\xe9-notes.txt")
    with open(raw, "wb") as fh:
        fh.write(b"needle in a latin-1 named file\n")
    ctx = make_ctx(root)
    listing = await call(ctx, "list_files")
    assert not listing.is_error
    assert listing.content.split("\n") == ["README.md", "caf\ufffd-notes.txt"]
    found = await call(ctx, "grep", pattern="needle")
    assert found.content == "caf\ufffd-notes.txt:1:needle in a latin-1 named file"
    # Tool results go to the API as JSON: nothing undecodable may slip into them.
    for outcome in (listing, found):
        outcome.content.encode("utf-8")


# ----- odd names --------------------------------------------------------------------------------

ODD_NAMES = [
    "tab\there.txt",
    "back\\slash.txt",
    "-leading-dash.txt",
    "--help",
    "emoji 🎉 and ünïcödé/deep ✓.txt",
    "semi;colon $(touch pwned) `x`.txt",
    "new\nline.txt",
]


async def test_odd_names_can_be_written_read_edited_listed_and_searched(root: Path) -> None:
    ctx = make_ctx(root)
    for name in ODD_NAMES:
        created = await call(ctx, "write_file", path=name, content=f"needle for {name!r}\n")
        assert not created.is_error, (name, created.content)
        assert (root / name).read_text() == f"needle for {name!r}\n"
        read = await call(ctx, "read_file", path=name)
        assert read.content == f"     1\tneedle for {name!r}", name
        edit = await call(ctx, "edit_file", path=name, old_text="needle", new_text="pin")
        assert not edit.is_error, (name, edit.content)
        assert (root / name).read_text() == f"pin for {name!r}\n"
    assert not (root / "pwned").exists()
    shell_free = [n for n in ODD_NAMES if "\n" not in n]
    listing = await call(ctx, "list_files")
    for name in shell_free:
        assert name in listing.content.split("\n"), (name, listing.content)
    found = await call(ctx, "grep", pattern="^pin for")
    for name in shell_free:
        assert f"{name}:1:pin for {name!r}" in found.content.split("\n"), (name, found.content)


async def test_a_newline_in_a_file_name_is_listed_and_found_as_one_file(root: Path) -> None:
    ctx = make_ctx(root)
    name = "new\nline.txt"
    await call(ctx, "write_file", path=name, content="needle\n")
    listing = await call(ctx, "list_files")
    # One entry for the file, written so that the model can pass it back.
    assert len(listing.content.split("\n")) == 2, listing.content
    entry = '"new\\nline.txt"'  # as a JSON string: one line, and the name it encodes
    assert listing.content.split("\n") == ["README.md", entry], listing.content
    found = await call(ctx, "grep", pattern="needle")
    assert found.content.count("needle") == 1 and "./" not in found.content, found.content
    assert found.content == f"{entry}:1:needle"
    # The entry as listed reaches the file, for reading, editing and searching.
    read = await call(ctx, "read_file", path=entry)
    assert (read.is_error, read.content) == (False, "     1\tneedle")
    edit = await call(ctx, "edit_file", path=entry, old_text="needle", new_text="pin")
    assert not edit.is_error, edit.content
    assert (root / name).read_text() == "pin\n"
    in_it = await call(ctx, "grep", pattern="pin", path=entry)
    assert in_it.content == f"{entry}:1:pin"
    assert (await call(ctx, "list_files", pattern="new*")).content == entry
    rewrite = await call(ctx, "write_file", path=entry, content="over\n")
    assert not rewrite.is_error and (root / name).read_text() == "over\n", rewrite.content
    assert sorted(p.name for p in root.iterdir()) == ["README.md", name]


# ----- symbolic link loops ----------------------------------------------------------------------


async def test_directory_link_loops_end_and_resolve_inside(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "deep.txt").write_text("needle deep\n")
    (root / "a" / "b" / "up").symlink_to("../..", target_is_directory=True)  # back to the root
    (root / "a" / "self").symlink_to("self")
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    ctx = make_ctx(root)
    began = time.monotonic()
    listing = await call(ctx, "list_files")
    assert listing.content.split("\n") == ["README.md", "a/b/deep.txt"]
    found = await call(ctx, "grep", pattern="needle")
    assert found.content == "a/b/deep.txt:1:needle deep"
    assert time.monotonic() - began < PATIENCE  # the loops ended
    # A path through the loop is just another name for a file inside the workspace.
    via_loop = await call(ctx, "read_file", path="a/b/up/a/b/up/a/b/deep.txt")
    assert via_loop.content == "     1\tneedle deep"
    for path in ("a/self", "a/self/x", "ping", "pong/deeper"):
        read = await call(ctx, "read_file", path=path)
        assert read.is_error and "loop" in read.content, (path, read.content)
        write = await call(ctx, "write_file", path=path, content="x")
        assert write.is_error, (path, write.content)
    assert (root / "a" / "self").is_symlink() and (root / "ping").is_symlink()


# ----- commands that fight back -----------------------------------------------------------------


def _session_members(sid: int) -> set[int]:
    """Live processes (not zombies) of session `sid`: the command's shell and its children."""
    members = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            members.add(int(entry))
    return members


async def test_forked_children_ignoring_sigterm_all_die_at_the_timeout(root: Path) -> None:
    ctx = make_ctx(root)
    # Without the sandbox: the test follows the host's process ids (in the sandbox `$$` is one
    # of its own process namespace, and nothing outlives the command anyway).
    ctx.sandbox = CommandSandbox(root, SandboxOptions(enabled=False))
    command = (
        "trap '' TERM; echo $$ > shell.pid; "
        "(trap '' TERM; echo $BASHPID > sub.pid; sleep 300) & sleep 300"
    )
    # The timeout leaves the command time to start its children on a busy machine too.
    task = asyncio.create_task(call(ctx, "bash", command=command, timeout=3))

    def started() -> set[int]:
        if not ((root / "shell.pid").exists() and (root / "sub.pid").exists()):
            return set()
        members = _session_members(int((root / "shell.pid").read_text()))
        # The shell and the subshell (each may have become its sleep by exec) and a sleep.
        return members if len(members) >= 3 else set()

    await wait_until(lambda: bool(started()) or task.done(), "the command started")
    assert not task.done(), "the command timed out before its children started"
    shell = int((root / "shell.pid").read_text())
    members = _session_members(shell)
    assert shell in members and int((root / "sub.pid").read_text()) in members
    began = time.monotonic()
    outcome = await task
    assert time.monotonic() - began < PATIENCE  # the timeout, not the children's 300 s
    assert outcome.is_error and outcome.content.startswith("Command timed out after 3 s")
    await wait_until(lambda: not _session_members(shell), "the command's processes are gone")


async def test_a_command_flooding_both_streams_without_newlines_is_capped(root: Path) -> None:
    ctx = make_ctx(root)
    command = "head -c 3000000 /dev/zero | tr '\\0' e >&2 & head -c 3000000 /dev/zero | tr '\\0' o"
    outcome = await call(ctx, "bash", command=command + "; wait")
    assert not outcome.is_error
    assert len(outcome.content) < 32_000
    assert re.search(r"\[\.\.\. \d+ bytes omitted \.\.\.\]", outcome.content)
    assert outcome.content.endswith("[exit code 0]")


# ----- the workspace watcher under abuse (a short LSP session) ---------------------------------


async def test_a_file_name_that_is_not_utf8_does_not_blind_the_watcher(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    """watchfiles cannot decode such a name and drops the batch it was collecting: the real
    outside edit made at the same moment must still reach the editor and the model."""
    handle = await start_editor(hello_workspace, fake_api, storage=tmp_path / "state")
    try:
        events = handle.recorder.events

        def changed(path: str) -> bool:
            return any(e["type"] == "filesChanged" and path in e["paths"] for e in events)

        await handle.wait_watching()
        raw = os.path.join(os.fsencode(hello_workspace), b"r\xe9sum\xe9.txt")
        with open(raw, "wb") as fh:
            fh.write(b"from an old zip archive\n")
        (hello_workspace / "test_hello.py").write_text("# changed outside\n")
        await handle.recorder.wait_for(lambda: changed("test_hello.py"))
        # The watcher came back and goes on reporting.
        await handle.wait_watching(times=2)
        (hello_workspace / "hello.py").write_text("# changed outside, later\n")
        await handle.recorder.wait_for(lambda: changed("hello.py"))
        # And the model hears of it, in a request the API accepts.
        fake_api.push(text_reply("noted"))
        result = await handle.request("plansight/run", {"prompt": "anything new?"})
        assert result["status"] == "done", result
        notices = [
            b["text"] for b in fake_api.bodies[-1]["messages"][-1]["content"] if b["type"] == "text"
        ]
        assert any("test_hello.py" in t and "Changed outside" in t for t in notices), notices
        assert any("hello.py" in t.replace("test_hello.py", "") for t in notices), notices
    finally:
        await handle.stop()
