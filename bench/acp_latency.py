"""ACP latency: `plansight acp` driven by the Python ACP SDK's client side, as an editor.

Part 1: a prompt's first update (its first `agent_message_chunk`) received by the client minus
the fake's first byte of the model's answer. Part 2: the `plan` update received minus the fake's
`finished_at` of the answer that called todo (the call is complete then), with the input deltas
20 ms apart as a real model streams them, as bench/plan_latency.py measures `plansight/todos`.
Both clocks are `time.perf_counter()`, the same across processes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestPermissionResponse, spawn_agent_process, text_block
from acp.schema import DeniedOutcome

from bench.fakeproc import FakeAPIProcess
from bench.plan_latency import plan_input
from bench.table import Row, ms, p50_p90, percentile
from bench.workspaces import small_project
from plansight.engine.model import newest_sonnet
from plansight.fakeapi import text_reply, tool_reply

PROMPTS = 20
PLAN_ROUNDS = 20
PACED_DELAY = 0.02
FIRST_UPDATE_GOAL = 0.050
PLAN_GOAL = 0.005


class Timed:
    """The client: every update with the time it was received."""

    def __init__(self) -> None:
        self.updates: list[tuple[float, str]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.perf_counter(), update.session_update))

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def on_connect(self, conn: Any) -> None:
        pass


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-acp-") as tmp:
        root = Path(tmp) / "ws"
        small_project(root, files=2)
        env = {
            **os.environ,
            "XDG_STATE_HOME": str(Path(tmp) / "state"),
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
            "PLANSIGHT_MODEL": newest_sonnet(),
            "ANTHROPIC_API_KEY": "bench-key",
            "PLANSIGHT_LOG_LEVEL": "WARNING",
            **({"X": "1"}),
        }
        client = Timed()
        with FakeAPIProcess() as fake:
            env["ANTHROPIC_BASE_URL"] = fake.base_url
            async with spawn_agent_process(
                client, sys.executable, "-m", "plansight", "acp", env=env
            ) as (conn, _process):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(root), mcp_servers=[])

                async def prompt(text: str) -> None:
                    await asyncio.wait_for(
                        conn.prompt(session_id=session.session_id, prompt=[text_block(text)]), 60
                    )

                fake.push(text_reply("Warm-up."))
                await prompt("warm up")
                first_update: list[float] = []
                for _ in range(PROMPTS):
                    seen = len(client.updates)
                    before = len(fake.records())
                    fake.push(text_reply("A short answer, streamed.", chunk_delay=0.005))
                    await prompt("say something")
                    record = fake.records()[before]
                    chunks = [
                        at for at, kind in client.updates[seen:] if kind == "agent_message_chunk"
                    ]
                    assert record.first_byte_at is not None and chunks
                    first_update.append(chunks[0] - record.first_byte_at)
                seen = len(client.updates)
                before = len(fake.records())
                fake.push(
                    *(
                        tool_reply("todo", plan_input(r, PLAN_ROUNDS), chunk_delay=PACED_DELAY)
                        for r in range(PLAN_ROUNDS)
                    ),
                    text_reply("All done."),
                    text_reply("All done, really."),
                )
                await prompt("work through the plan")
                records = fake.records()[before : before + PLAN_ROUNDS]
                plans = [at for at, kind in client.updates[seen:] if kind == "plan"]
                plan_latency = []
                for record, received in zip(records, plans, strict=False):
                    assert record.finished_at is not None
                    plan_latency.append(received - record.finished_at)
    first_p50 = percentile(first_update, 50)
    plan_p50 = percentile(plan_latency, 50)
    return [
        Row(
            "acp",
            "prompt: model's first byte → first agent_message_chunk",
            p50_p90(first_update),
            goal=f"p50 ≤ {ms(FIRST_UPDATE_GOAL)}",
            met=first_p50 <= FIRST_UPDATE_GOAL,
            note=f"{len(first_update)} prompts, Python ACP SDK client",
        ),
        Row(
            "acp",
            "todo call complete → plan update (paced stream)",
            p50_p90(plan_latency),
            goal=f"p50 ≤ {ms(PLAN_GOAL)}",
            met=plan_p50 <= PLAN_GOAL,
            note=f"{len(plan_latency)} todo rounds, input deltas {ms(PACED_DELAY)} apart",
        ),
    ]
