"""kill -9 of the server at chosen moments of a scripted session, ten times in a row.

Each session plans, reads, edits hello.py, writes new files and the scratchpad, with the model's
answers streamed slowly. The kills land where a crash can tear something: while an answer
streams, as the plan, the scratchpad or a round's results are saved, while an edit awaits the
user's review, as an accepted edit or a new file is written, and at random moments. Each moment
is recognised as the editor sees it (the notification that goes with it), and the server is
killed from inside that notification's handler, so the kill lands within a millisecond of it
however busy the machine is (twenty random delays hit these moments only by chance).

After each kill the server is started again on the same storage, as an editor restarts it, and
the user must find: the plan and scratchpad as last saved (the plan announced with source
"restore"), a conversation the API still accepts, and no file in the workspace torn,
half-written, or littered with the temporary files of atomic writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import sys
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI, Step, reply, text_reply
from plansight.plan.planfile import parse_plan_file
from plansight.workspace.atomic import TEMP_SUFFIX

from conftest import session_folder, strip_cache_control
from lsp_harness import EditorHandle, start_editor

SEED = 20261129
CHAINS = 2  # side by side, each its own workspace and storage
MAX_KILL_DELAY = 0.3  # seconds after the run's first model request, for a random moment
CHUNK_DELAY = 0.002  # between streamed deltas: a session streams for about 0.4 s
MARKER = "# plansight kill test, version {}"
VERSION = re.compile(rb"# plansight kill test, version (\d+)\n\Z")
ITEMS = ("Read hello.py", "Bump the version", "Write the notes")


@dataclass
class Expected:
    """What the workspace may hold: originals, any version of hello.py the script asked for,
    and each new file exactly as the script wrote it."""

    originals: dict[str, bytes]
    hello_base: bytes
    max_version: int = 0
    written: dict[str, bytes] = field(default_factory=dict)


def workspace_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            path = Path(dirpath) / name
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def temp_files(root: Path) -> list[str]:
    return sorted(rel for rel in workspace_files(root) if rel.endswith(TEMP_SUFFIX))


def check_workspace(root: Path, expected: Expected, when: str) -> int:
    """Assert that no file is torn or half-written; return hello.py's current version.

    The temporary file of a write the kill interrupted may still be there: it is the restarted
    server's to remove (see `restart`)."""
    files = workspace_files(root)
    version = -1
    for rel, data in files.items():
        if rel.endswith(TEMP_SUFFIX):
            continue
        if rel == "hello.py":
            match = VERSION.search(data)
            assert match, f"{when}: hello.py is torn: {data[-80:]!r}"
            version = int(match.group(1))
            assert version <= expected.max_version, when
            assert data == expected.hello_base + MARKER.format(version).encode() + b"\n", when
        elif rel in expected.originals:
            assert data == expected.originals[rel], f"{when}: {rel} changed"
        elif rel.startswith(".plansight/plans/"):
            # The session's plan file: whole (written atomically), whatever the kill cut.
            text = data.decode()
            assert text.endswith("\n") and "\n## Scratchpad\n" in text, f"{when}: {rel} torn"
            parse_plan_file(text)
        else:
            assert rel in expected.written, f"{when}: unexpected file {rel}"
            assert data == expected.written[rel], f"{when}: {rel} is half-written"
    assert set(expected.originals) <= set(files), when
    return version


def todo(active: int) -> tuple[str, dict[str, Any]]:
    """The plan with items before `active` completed and `active` in progress."""
    items = []
    for i, text in enumerate(ITEMS):
        status = "completed" if i < active else "in_progress" if i == active else "pending"
        items.append({"id": str(i + 1), "text": text, "status": status})
    return ("todo", {"items": items})


def session(k: int, version: int, expected: Expected, rng: random.Random) -> list[Step]:
    """Session k: plan, read, then three rounds of edit + new file + scratchpad + plan."""
    say = f"Iteration {k}: I keep going, step by step, with words streamed slowly. "

    def step(*tools: tuple[str, dict[str, Any]]) -> Step:
        return reply(say, tools, chunk_delay=CHUNK_DELAY)

    steps = [step(todo(0)), step(("read_file", {"path": "hello.py"}))]
    for j in range(3):
        old, new = MARKER.format(version), MARKER.format(version + 1)
        version += 1
        expected.max_version = max(expected.max_version, version)
        name = f"notes/kill{k:02}-{j}.txt"
        content = "".join(f"line {n}: {rng.random():.12f}\n" for n in range(40))
        expected.written[name] = content.encode()
        steps.append(step(("edit_file", {"path": "hello.py", "old_text": old, "new_text": new})))
        steps.append(
            step(
                ("write_file", {"path": name, "content": content}),
                ("write_scratchpad", {"content": f"Iteration {k}, step {j}: wrote {name}."}),
            )
        )
        steps.append(step(todo(min(j + 1, 2))))
    done = {"items": [{**i, "status": "completed"} for i in todo(0)[1]["items"]]}
    steps += [step(("todo", done)), text_reply(f"Iteration {k} is done.")]
    return steps


def stored(storage: Path, part: str) -> Any:
    if part == "conversation":  # JSON Lines, appended a whole line per write
        log = session_folder(storage) / "conversation.jsonl"
        if not log.exists():
            return None
        text = log.read_text()
        assert text == "" or text.endswith("\n"), "a torn last line"
        return {"messages": [json.loads(line) for line in text.splitlines()]}
    path = session_folder(storage) / f"{part}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())  # never torn: a JSONDecodeError fails the test


def assert_continues(stored_messages: list[dict[str, Any]], sent: list[dict[str, Any]]) -> None:
    """The request carries the stored conversation: the same messages, the last one possibly
    extended (the new prompt joins a trailing user turn)."""
    sent = strip_cache_control(sent)
    n = len(stored_messages)
    assert len(sent) >= n
    assert sent[: n - 1] == stored_messages[: n - 1]
    last, now = stored_messages[-1], sent[n - 1]
    assert last["role"] == now["role"]
    assert now["content"][: len(last["content"])] == last["content"]


@dataclass(frozen=True)
class KillPoint:
    """A moment of the session at which the server is killed: when the editor receives the
    `nth` message `method` (an event of `type`, of `tool`), or for `method="random"` a random
    time after the first model request was answered. With `after_answer`, once the editor has
    answered that request: the server is then acting on the answer."""

    what: str
    method: str
    type: str | None = None
    tool: str | None = None
    nth: int = 1
    after_answer: bool = False

    def matches(self, method: str, payload: dict[str, Any]) -> bool:
        return (
            method == self.method
            and (self.type is None or payload.get("type") == self.type)
            and (self.tool is None or payload.get("name") == self.tool)
        )


EVENT = "plansight/event"
TODOS = "plansight/todos"
SCRATCHPAD = "plansight/scratchpad"
REVIEW = "plansight/reviewEdit"  # a session's reviews: hello.py, a new file, hello.py, ...
KILL_POINTS = (
    KillPoint("the first answer streaming", EVENT, type="textDelta"),
    KillPoint("the first plan being saved", TODOS),
    KillPoint("an edit awaiting the user's review", REVIEW),
    KillPoint("an accepted edit being written", REVIEW, after_answer=True),
    KillPoint("the scratchpad being saved", SCRATCHPAD),
    KillPoint("an accepted new file being written", REVIEW, nth=2, after_answer=True),
    KillPoint("a round's results being saved", EVENT, type="toolResult", tool="write_scratchpad"),
    KillPoint("a later plan being saved", TODOS, nth=3),
    KillPoint("a random moment", "random"),
    KillPoint("another random moment", "random"),
)


def sigkill(handle: EditorHandle) -> None:
    server = handle.client._server
    assert server is not None
    with suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGKILL)


def arm(handle: EditorHandle, point: KillPoint) -> list[bool]:
    """Kill the server at `point`; the list returned gets an entry when the kill is sent."""
    fired: list[bool] = []
    seen = 0

    def listener(method: str, payload: dict[str, Any]) -> None:
        nonlocal seen
        if fired or not point.matches(method, payload):
            return
        seen += 1
        if seen < point.nth:
            return
        fired.append(True)
        if point.after_answer:  # a request handler's answer goes out as it returns
            asyncio.get_running_loop().call_soon(sigkill, handle)
        else:
            sigkill(handle)

    handle.recorder.listeners.append(listener)
    return fired


async def reap(handle: EditorHandle) -> None:
    """Wait until the killed server is gone, and close the editor's side."""
    server = handle.client._server
    assert server is not None
    await server.wait()
    await handle.client.stop()


async def restart(root: Path, api: FakeMessagesAPI, storage: Path, when: str) -> EditorHandle:
    """Start the server on the storage a killed one left, and check what it restored."""
    plan = stored(storage, "plan")
    scratch = stored(storage, "scratchpad")
    for leftover in storage.glob("*.json"):
        json.loads(leftover.read_text())
    litter = temp_files(root)
    handle = await start_editor(root, api, storage=storage)
    rec = handle.recorder
    # A write cut short by the kill leaves its temporary file; the new server removes it.
    await rec.wait_for(lambda: not temp_files(root))
    if litter:
        print(f"{when}: the restart removed {litter}")
    if plan is not None:
        await rec.wait_for(lambda: bool(rec.todos))
        restored = rec.todos[0]
        assert restored["source"] == "restore", when
        assert restored["items"] == plan["items"] and restored["version"] == plan["version"], when
    if scratch is not None:
        await rec.wait_for(lambda: bool(rec.scratchpad))
        assert rec.scratchpad[0] == scratch["content"], when
    state = await handle.request("plansight/state", {})
    assert state["running"] is False, when
    assert state["todos"]["items"] == (plan["items"] if plan else []), when
    assert state["scratchpad"] == (scratch["content"] if scratch else ""), when
    return handle


def first_request_answered(api: FakeMessagesAPI) -> bool:
    requests = api.message_requests
    return bool(requests) and requests[0].outcome is not None


async def kill_chain(
    source: Path, base_dir: Path, chain: int, points: tuple[KillPoint, ...]
) -> list[str]:
    """A session killed at each point, each restarted from the last one's storage, then a
    session run to its end. Returns what each kill hit."""
    rng = random.Random(SEED + chain)
    root = base_dir / f"chain{chain}" / "hello"
    shutil.copytree(source, root)
    storage = base_dir / f"chain{chain}" / "state"
    hello = root / "hello.py"
    base = hello.read_bytes()
    hello.write_bytes(base + MARKER.format(0).encode() + b"\n")
    expected = Expected(originals=workspace_files(root), hello_base=base)
    del expected.originals["hello.py"]
    version = 0
    hits: list[str] = []

    for k, point in enumerate([*points, None]):
        when = f"chain {chain}, iteration {k}: {point.what if point else 'the run to its end'}"
        api = FakeMessagesAPI()
        api.start()
        try:
            handle = await restart(root, api, storage, when)
            conversation = stored(storage, "conversation")
            api.push(*session(k, version, expected, rng))
            fired = arm(handle, point) if point and point.method != "random" else []
            run = asyncio.ensure_future(
                handle.request("plansight/run", {"prompt": f"Run {k}: bump and note."})
            )
            if point is None:
                # The last session runs to the end: everything still works after the kills.
                result = await run
                assert result["status"] == "done", (when, result)
                await handle.stop()
            else:
                if point.method == "random":
                    await handle.recorder.wait_for(lambda api=api: first_request_answered(api))
                    delay = rng.uniform(0, MAX_KILL_DELAY)
                    await asyncio.sleep(delay)
                    sigkill(handle)
                    hits.append(f"{point.what} ({delay * 1000:.0f} ms in)")
                else:
                    await handle.recorder.wait_for(lambda f=fired, r=run: bool(f) or r.done())
                    assert fired, f"{when}: the session ended before the kill point"
                    hits.append(point.what)
                await reap(handle)
                run.cancel()
                with suppress(BaseException):
                    await run
            # Every request of the run passed the fake's validation, the first one included:
            # the restored conversation (if any) is one the real API accepts, and it was used.
            outcomes = [r.outcome for r in api.message_requests]
            assert "rejected" not in outcomes and "exhausted" not in outcomes, (when, outcomes)
            if conversation is not None:
                assert_continues(conversation["messages"], api.message_requests[0].body["messages"])
        finally:
            api.stop()
        version = check_workspace(root, expected, when)
    assert version == expected.max_version, "the last session's edits all landed"
    assert temp_files(root) == []
    return hits


@pytest.mark.slow
# Ten server starts and kills: 120 s (the suite's hang limit) was passed at a load of 20.
@pytest.mark.timeout(480)
async def test_kill_9_at_chosen_points_never_tears_files_or_the_session(
    hello_workspace: Path, tmp_path: Path
) -> None:
    began = time.monotonic()
    # Chains side by side: while one waits for its kill, another's server starts up (the
    # restarts' start-up, which is CPU, takes most of the time).
    chains = await asyncio.gather(
        *(
            kill_chain(hello_workspace, tmp_path, chain, KILL_POINTS[chain::CHAINS])
            for chain in range(CHAINS)
        )
    )
    hits = [hit for chain in chains for hit in chain]
    assert len(hits) == len(KILL_POINTS)
    print(f"{len(hits)} kills in {time.monotonic() - began:.1f} s: " + "; ".join(hits))


# A process that dies by SIGKILL inside an atomic write, between writing its temporary file
# and renaming it over the target: the moment a random kill hits only now and then.
DIE_MID_SAVE = """
import os, signal, sys
from pathlib import Path
from plansight.workspace import atomic
def die(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)
atomic.os.replace = die
root = Path(sys.argv[1])
atomic.write_atomic(root / "hello.py", b"half of the new text", mode=0o644, durable=True)
"""


async def test_a_server_killed_mid_save_leaves_no_temporary_file_after_a_restart(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    original = (hello_workspace / "hello.py").read_bytes()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", DIE_MID_SAVE, str(hello_workspace.resolve())
    )
    assert await proc.wait() == -signal.SIGKILL
    litter = [p for p in hello_workspace.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    assert len(litter) == 1 and litter[0].read_bytes() == b"half of the new text"

    handle = await start_editor(hello_workspace, fake_api, storage=tmp_path / "state")
    try:
        await handle.recorder.wait_for(lambda: not litter[0].exists())
        assert (hello_workspace / "hello.py").read_bytes() == original
        assert [p.name for p in hello_workspace.iterdir() if TEMP_SUFFIX in p.name] == []
        # The removal is not reported to the model as an outside change.
        fake_api.push(text_reply("ok"))
        await handle.request("plansight/run", {"prompt": "anything changed?"})
        assert not any(e["type"] == "filesChanged" for e in handle.recorder.events)
    finally:
        await handle.stop()
