"""Compaction as an editor sees it, through the real language server process: the `compacted`
event, `plansight/compact` (refused while a run goes on), the `contextWindow`/`compactAt`
options, and a kill -9 at random moments of a session that compacts again and again, after
which the stored conversation is always whole (the old one or the new one, never torn)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from plansight.engine.compaction.rules import HEADER_OPEN, NOTE_PREFIX, SUMMARY_INSTRUCTION
from plansight.fakeapi import FakeMessagesAPI, Hang, Step, validate_request
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.protocol.names import REQUEST_FAILED

from conftest import session_folder, wait_until
from lsp_harness import EditorHandle, start_editor

PLAN = {"items": [{"id": "1", "text": "Read the modules", "status": "in_progress"}]}
RENDERED = "[>] #1: Read the modules\n(0/1 completed)"
SEED = 9


def big_files(root: Path, count: int, lines: int = 100) -> list[str]:
    names = []
    for n in range(count):
        name = f"m{n}.py"
        body = "".join(f"value_{n}_{i} = {i}  # {'padding ' * 5}\n" for i in range(lines))
        (root / name).write_text(body)
        names.append(name)
    return names


class Model:
    """The next scripted step for each request; any summary request gets ``summary``."""

    def __init__(self, steps: list[Step], summary: str = "SUMMARY of the work") -> None:
        self.steps = list(steps)
        self.summary = summary

    def __call__(self, body: dict[str, Any]) -> Step:
        if body["messages"][-1]["content"][-1].get("text") == SUMMARY_INSTRUCTION:
            assert body["tool_choice"] == {"type": "none"}
            return text(self.summary, chunk_delay=0.01)
        if not self.steps:
            return text("All read.")
        return self.steps.pop(0)


def reads(names: list[str], delay: float = 0.0) -> list[Step]:
    return [
        tool("todo", PLAN, chunk_delay=delay),
        *[tool("read_file", {"path": n}, text="Reading.", chunk_delay=delay) for n in names],
        text("All read.", chunk_delay=delay),
        text("The plan stays open.", chunk_delay=delay),
    ]


async def test_compacted_events_and_compact_on_request(
    hello_workspace: Path, tmp_path: Path
) -> None:
    names = big_files(hello_workspace, 6)
    model = Model(reads(names))
    with FakeMessagesAPI([model] * 40, context_window=12_000) as api:
        handle = await start_editor(
            hello_workspace,
            api,
            storage=tmp_path / "state",
            init_options={"contextWindow": 12_000, "compactAt": 0.6},
        )
        try:
            result = await handle.request("plansight/run", {"prompt": "Read the modules"})
            assert result["status"] == "done", result
            compacted = [e for e in handle.recorder.events if e["type"] == "compacted"]
            assert compacted, handle.recorder.event_types()
            for event in compacted:
                assert set(event) == {
                    "type",
                    "beforeTokens",
                    "afterTokens",
                    "strategy",
                    "sessionId",
                }
                assert event["strategy"] in ("clearToolResults", "summary")
                assert event["afterTokens"] < event["beforeTokens"]
            assert all(r.status == 200 for r in api.message_requests)
            answer = await handle.request("plansight/compact", {})
            assert set(answer) == {"beforeTokens", "afterTokens"}
            assert answer["afterTokens"] <= answer["beforeTokens"]
            last = handle.recorder.events[-1]
            assert last["type"] == "compacted" and last["strategy"] == "summary"
            stored = [
                json.loads(line)
                for line in (session_folder(tmp_path / "state") / "conversation.jsonl").open()
            ]
            assert stored[0]["content"][0]["text"].startswith(HEADER_OPEN)
            assert RENDERED in stored[0]["content"][0]["text"]
            # a run in progress: compaction is refused with -32803, the run goes on
            model.steps = [Hang(30)]
            msg_id, running = handle.start_request("plansight/run", {"prompt": "More"})

            async def in_progress() -> bool:
                return bool((await handle.request("plansight/state", {}))["running"])

            await wait_until(in_progress, "the server reports the run as running")
            with pytest.raises(JsonRpcException) as refused:
                await handle.request("plansight/compact", {})
            assert refused.value.code == REQUEST_FAILED  # type: ignore[attr-defined]
            assert "in progress" in str(refused.value)
            handle.cancel(msg_id)
            with pytest.raises(JsonRpcException):
                await running
        finally:
            await handle.stop()


def stored_conversation(storage: Path, when: str) -> list[Any]:
    """The stored conversation, read as a restarted server reads it; it must be whole."""
    path = session_folder(storage) / "conversation.jsonl"
    if not path.exists():
        return []
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), f"a torn last line {when}"
    return [json.loads(line) for line in raw.decode().splitlines()]


def assert_sendable(messages: list[Any], tools: list[Any], when: str) -> None:
    """What a restarted server sends from it is a request the real API accepts."""
    if not messages:
        return
    from plansight.engine.conversation import Conversation
    from plansight.engine.model import sendable

    conversation = Conversation(json.loads(json.dumps(messages)))
    conversation.repair("The previous run stopped before this tool finished.")
    conversation.add_user([{"type": "text", "text": "go on"}])
    body = {
        "model": "m",
        "max_tokens": 64,
        "tools": tools,
        "messages": sendable(conversation.messages),
    }
    assert validate_request(body) is None, f"{when}: {validate_request(body)}"


async def kill(handle: EditorHandle) -> None:
    server = handle.client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    await handle.client.stop()


@pytest.mark.slow
# Ten server starts and kills: 120 s (the suite's hang limit) was passed at a load of 20.
@pytest.mark.timeout(480)
async def test_kill_9_during_compactions_leaves_a_whole_conversation(
    hello_workspace: Path, tmp_path: Path
) -> None:
    names = big_files(hello_workspace, 12)
    storage = tmp_path / "state"
    rng = random.Random(SEED)
    # A window this small compacts at nearly every request; slow streams let kills land
    # mid-stream, mid-tool, mid-summary and mid-save.
    model = Model(reads(names, delay=0.004) * 3)
    options = {"contextWindow": 9_000, "compactAt": 0.5}
    seen_compacted = False
    with FakeMessagesAPI([model] * 400) as api:
        tools: list[Any] = []
        for kill_number in range(5):
            handle = await start_editor(hello_workspace, api, storage=storage, init_options=options)
            answered = len(api.message_requests)
            _, running = handle.start_request("plansight/run", {"prompt": f"Go on ({kill_number})"})
            # Some requests into the run (compactions happen between them), then a moment more.
            wanted = answered + rng.randint(1, 3)
            # (or the run ends first: the script may be nearly used up by earlier runs)
            await handle.recorder.wait_for(
                lambda n=wanted, r=running: len(api.message_requests) >= n or r.done(), 60
            )
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            await kill(handle)
            running.cancel()
            when = f"after kill {kill_number} ({len(api.message_requests)} requests)"
            messages = stored_conversation(storage, when)
            if api.bodies:
                tools = api.bodies[-1]["tools"]
            assert_sendable(messages, tools, when)
            dumped = json.dumps(messages)
            seen_compacted = seen_compacted or HEADER_OPEN in dumped or NOTE_PREFIX in dumped
        # then a server on the same storage runs to the end
        model.steps = [text("Finished."), text("Plan left open.")]
        handle = await start_editor(hello_workspace, api, storage=storage, init_options=options)
        try:
            result = await handle.request("plansight/run", {"prompt": "Finish"})
        finally:
            await handle.stop()
    assert result["status"] == "done", result
    assert seen_compacted, "no kill landed after a compaction: the test proved nothing"
    refused = [
        (r.index, r.status, r.error) for r in api.message_requests if r.status not in (200, None)
    ]
    assert not refused
