"""Switching sessions (protocol version 4): `plansight/openSession` of a session whose
conversation has 150 rounds, through the real server.

Two stored sessions of one workspace, each with a 150-round conversation (a text and a
`read_file` call per assistant turn, a 2 kB tool result per user turn: about 0.7 MB of JSON
Lines), a plan, a scratchpad and a history; the editor opens one, then the other, in turn.
Measured: from the request to its answer (the state of the session opened), and to the
`history` event that follows it (the client has all it shows by then). Nothing expensive is
built again on a switch (session/sessions.py): what it costs is reading the session's files.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.editor import Editor, proc_cpu_seconds
from bench.table import Row, ms, percentile
from bench.workspaces import small_project
from plansight.session.registry import SessionRegistry
from plansight.session.storage import SessionStore

ROUNDS = 150
SWITCHES = 30
GOAL = 0.1  # a click in a list: well under what a user notices as a wait


def conversation(tag: str, rounds: int = ROUNDS) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Task of session {tag}"}]
    body = "\n".join(f"    line {n}: value = compute({n}) + offset  # {tag}" for n in range(40))
    for n in range(rounds):
        call = f"toolu_{tag}_{n:04d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading module {n} to see how it is used."},
                    {
                        "type": "tool_use",
                        "id": call,
                        "name": "read_file",
                        "input": {"path": f"src/mod_{n % 20:02d}.py"},
                    },
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": body}],
            }
        )
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    return messages


def store_session(registry: SessionRegistry, store: SessionStore, tag: str) -> str:
    session_id = registry.create(f"Session {tag}")
    store.use(session_id)
    store.conversation.rewrite(conversation(tag))
    items = [
        {"id": str(n), "text": f"Step {n} of {tag}", "status": "completed"} for n in range(1, 6)
    ]
    store.save("plan", {"items": items, "version": 7, "planId": f"plan{tag}"})
    store.save("scratchpad", {"content": f"notes of {tag}\n" * 20})
    for run in range(5):
        store.history.record({"type": "runStarted", "prompt": f"Prompt {run} of {tag}"})
        store.history.record({"type": "textDelta", "text": "An answer. " * 50})
        store.history.record({"type": "runFinished", "result": {"status": "done", "rounds": 30}})
    store.history.flush()
    return session_id


async def measure(tmp: Path) -> tuple[list[float], list[float], float, int]:
    root, storage = tmp / "ws", tmp / "state"
    small_project(root)
    store = SessionStore(storage)
    registry = SessionRegistry(store)
    ids = [store_session(registry, store, tag) for tag in ("A", "B")]
    registry.set_current(ids[0])
    size = sum(p.stat().st_size for p in (storage / "sessions").rglob("conversation.jsonl"))
    editor = await Editor.start(root, base_url=None, storage=storage)
    answers: list[float] = []
    complete: list[float] = []
    cpu = 0.0
    try:
        await editor.request("plansight/sessions", {})  # the server is set up
        for n in range(SWITCHES + 2):
            target = ids[(n + 1) % 2]
            seen = len(editor.inbox.items)
            start = time.perf_counter()
            state = await editor.request("plansight/openSession", {"id": target})
            answered = time.perf_counter()
            assert state["sessionId"] == target and len(state["todos"]["items"]) == 5

            def histories(since: int = seen) -> list[Any]:
                return [
                    i
                    for i in editor.inbox.items[since:]
                    if i.method == "plansight/event" and i.params.get("type") == "history"
                ]

            await editor.inbox.wait_for(lambda: bool(histories()), 30)
            done = max(answered, histories()[0].at)
            if n == 1:
                cpu = proc_cpu_seconds(editor.pid)
            if n >= 2:  # the first two warm the server's code paths
                answers.append(answered - start)
                complete.append(done - start)
        # The server's CPU per switch: what a switch costs, whatever else the machine runs.
        cpu = (proc_cpu_seconds(editor.pid) - cpu) / SWITCHES
    finally:
        await editor.stop()
    return answers, complete, cpu, size


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-sessions-") as tmp:
        answers, complete, cpu, size = await measure(Path(tmp))
    p50 = percentile(answers, 50)
    note = f"{SWITCHES} switches between two {ROUNDS}-round sessions ({size / 2 / 1e6:.2f} MB each)"
    return [
        # What a session switch costs (issue 28's figure): `plansight/openSession`, request to
        # answer, the median of the switches.
        Row(
            "sessions",
            f"open a session with a {ROUNDS}-round conversation, median",
            ms(p50),
            f"≤ {ms(GOAL)}",
            p50 <= GOAL,
            f"p90 {ms(percentile(answers, 90))}; {note}",
        ),
        Row("sessions", "openSession: the server's CPU per switch", ms(cpu), note=note),
        Row(
            "sessions",
            "openSession: request → history event",
            f"p50 {ms(percentile(complete, 50))}, p90 {ms(percentile(complete, 90))}",
            note=json.dumps({"switches": SWITCHES}),
        ),
    ]
