"""Harness overhead per round: model answer complete → next request sent.

Three agents run the same scripted 20-round session (19 rounds of one small read_file, then a
final answer) against the fake Messages API, interleaved A B C A B C … over several
repetitions:

A. Plansight's server, driven over stdio by the bench's editor;
B. the simplest streaming agent loop (``client.messages.stream``, run the tool with
   ``open().read()``, append the results, nothing else);
C. the same loop without streaming (``client.messages.create``), for reference.

Each agent talks to its own fake (each in its own process) and the figure is the fake's own
``turnaround_times()``: from the end of one answer to the full arrival of the next request.
All three send the same system prompt and tool definitions, so request sizes match.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic

from bench.editor import Editor, proc_cpu_ns
from bench.fakeproc import FakeAPIProcess
from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import small_project
from plansight.engine.model import newest_sonnet
from plansight.engine.prompt import system_prompt
from plansight.fakeapi import ScriptStep, text_reply, tool_reply
from plansight.tools import default_tools

ROUNDS = 20
REPETITIONS = 6  # measured, after one warm-up repetition per variant
PROMPT = "Read the modules under src/ one by one."
GOAL_RATIO = 1.0


def session_script(paths: list[str]) -> list[ScriptStep]:
    steps: list[ScriptStep] = [tool_reply("read_file", {"path": p}) for p in paths[: ROUNDS - 1]]
    steps.append(text_reply("Done: all modules read."))
    return steps


async def simple_loop(
    client: anthropic.AsyncAnthropic, root: Path, model: str, *, stream: bool
) -> int:
    """The simplest agent loop there is. Returns the number of requests it made."""
    system = system_prompt(root.name)
    tools: Any = default_tools().definitions()
    messages: Any = [{"role": "user", "content": PROMPT}]
    requests = 0
    while True:
        requests += 1
        message: anthropic.types.Message
        if stream:
            async with client.messages.stream(
                model=model, max_tokens=8192, system=system, tools=tools, messages=messages
            ) as s:
                message = await s.get_final_message()
        else:
            message = await client.messages.create(
                model=model, max_tokens=8192, system=system, tools=tools, messages=messages
            )
        messages.append({"role": "assistant", "content": message.content})
        results = []
        for block in message.content:
            if block.type == "tool_use":
                path = root / str(block.input["path"])
                with open(path, encoding="utf-8") as handle:
                    content = handle.read()
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        if not results:
            return requests
        messages.append({"role": "user", "content": results})


def per_session(times: list[float], sessions: int) -> list[float]:
    """Drop the pairs that span two sessions (the bench's own pause between them)."""
    per = ROUNDS - 1
    if len(times) != sessions * ROUNDS - 1:
        raise RuntimeError(f"expected {sessions * ROUNDS - 1} turnarounds, got {len(times)}")
    return [t for i, t in enumerate(times) if (i + 1) % ROUNDS != 0][: sessions * per]


def check_records(api: FakeAPIProcess, name: str, sessions: int) -> None:
    records = api.records()
    bad = [r for r in records if r.status != 200]
    if bad or len(records) != sessions * ROUNDS:
        raise RuntimeError(
            f"{name}: {len(records)} requests ({len(bad)} not answered 200: "
            f"{[(r.index, r.status, r.outcome) for r in bad[:3]]})"
        )


async def run() -> list[Row]:
    model = newest_sonnet()
    with tempfile.TemporaryDirectory(prefix="plansight-bench-overhead-") as tmp:
        root = Path(tmp) / "ws"
        paths = small_project(root, files=ROUNDS, lines=30)
        script = session_script(paths)
        with (
            FakeAPIProcess() as fake_a,
            FakeAPIProcess() as fake_b,
            FakeAPIProcess() as fake_c,
        ):
            editor = await Editor.start(
                root,
                base_url=fake_a.base_url,
                storage=Path(tmp) / "storage",
                init_options={"model": model},
            )
            client_b = anthropic.AsyncAnthropic(base_url=fake_b.base_url, api_key="bench-key")
            client_c = anthropic.AsyncAnthropic(base_url=fake_c.base_url, api_key="bench-key")
            # CPU per round: the server process (all threads), the bench process running the
            # simple loop, and the bench process playing the editor during Plansight's run.
            cpu: dict[str, list[float]] = {"server": [], "editor": [], "stream": []}
            try:

                async def plansight_session() -> None:
                    fake_a.push(*script)
                    server_before = proc_cpu_ns(editor.pid)
                    editor_before = time.process_time()
                    result = await editor.run(PROMPT)
                    server_after = proc_cpu_ns(editor.pid)
                    cpu["editor"].append((time.process_time() - editor_before) / ROUNDS)
                    if server_before is not None and server_after is not None:
                        cpu["server"].append((server_after - server_before) / 1e9 / ROUNDS)
                    if result["status"] != "done" or result["rounds"] != ROUNDS:
                        raise RuntimeError(f"Plansight run ended {result}")

                async def streaming_session() -> None:
                    fake_b.push(*script)
                    before = time.process_time()
                    await simple_loop(client_b, root, model, stream=True)
                    cpu["stream"].append((time.process_time() - before) / ROUNDS)

                async def create_session() -> None:
                    fake_c.push(*script)
                    await simple_loop(client_c, root, model, stream=False)

                variants: list[Callable[[], Awaitable[None]]] = [
                    plansight_session,
                    streaming_session,
                    create_session,
                ]
                for _ in range(REPETITIONS + 1):  # the first is the warm-up
                    for variant in variants:
                        await variant()
                        await asyncio.sleep(0.05)
            finally:
                await client_b.close()
                await client_c.close()
                await editor.stop()
            sessions = REPETITIONS + 1
            for fake, name in ((fake_a, "Plansight"), (fake_b, "stream"), (fake_c, "create")):
                check_records(fake, name, sessions)
            per = ROUNDS - 1
            a = per_session(fake_a.turnaround_times(), sessions)[per:]
            b = per_session(fake_b.turnaround_times(), sessions)[per:]
            c = per_session(fake_c.turnaround_times(), sessions)[per:]
    server_cpu = statistics.median(cpu["server"][1:]) if cpu["server"][1:] else float("nan")
    stream_cpu = statistics.median(cpu["stream"][1:])
    editor_cpu = statistics.median(cpu["editor"][1:])
    ratio50 = percentile(a, 50) / percentile(b, 50)
    ratio90 = percentile(a, 90) / percentile(b, 90)
    n = f"{len(a)} rounds each ({REPETITIONS} sessions × {per}, interleaved)"
    return [
        Row("overhead", "Plansight over stdio (read_file round)", p50_p90(a), note=n),
        Row("overhead", "simple loop, messages.stream", p50_p90(b)),
        Row("overhead", "simple loop, messages.create (reference)", p50_p90(c)),
        Row(
            "overhead",
            "ratio Plansight / stream loop",
            f"p50 {ratio50:.2f}×, p90 {ratio90:.2f}×",
            goal=f"p50 ≤ {GOAL_RATIO:.1f}×",
            met=ratio50 <= GOAL_RATIO,
        ),
        Row(
            "overhead",
            "CPU per round: Plansight server / stream loop (reference)",
            f"{ms(server_cpu)} / {ms(stream_cpu)} = {server_cpu / stream_cpu:.2f}×",
            note=(
                f"medians per session, streaming included; the editor spent {ms(editor_cpu)} "
                "a round on Plansight's notifications"
            ),
        ),
    ]
