"""Prompt-cache share over a realistic 20-round session.

Plansight's server runs a scripted session of the kind it is built for (plan, list, read,
grep, scratchpad, edits, plan updates) over a copy of its own source, against the fake
Messages API, which computes usage with the real cache rules (prefix match up to a breakpoint,
20-block lookback, 1024-token minimum). The share is cache-read input tokens over all input
tokens (input + cache read + cache creation) summed over requests 2..20.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.editor import Editor
from bench.fakeproc import FakeAPIProcess, Record
from bench.table import Row
from plansight.engine.model import newest_sonnet
from plansight.fakeapi import ScriptStep, reply, text_reply

GOAL = 0.85
SOURCE = Path(__file__).resolve().parent.parent / "server" / "plansight"


def plan(*statuses: str) -> dict[str, Any]:
    texts = (
        "Understand how the agent loop calls the model",
        "Find where the request is built and sent",
        "Add a comment on the token budget",
        "Check the storage of the session",
    )
    return {
        "items": [
            {"id": str(i + 1), "text": text, "status": status}
            for i, (text, status) in enumerate(zip(texts, statuses, strict=True))
        ]
    }


def step(text: str, tool: str, tool_input: dict[str, Any]) -> ScriptStep:
    return reply(text, [(tool, tool_input)])


def session_script() -> list[ScriptStep]:
    return [
        step("I'll plan first.", "todo", plan("in_progress", "pending", "pending", "pending")),
        step("Let me see the files.", "list_files", {}),
        step("The loop first.", "read_file", {"path": "loop.py"}),
        step("Where are tools defined?", "grep", {"pattern": "def ", "path": "tools"}),
        step("The plan rules.", "read_file", {"path": "plan.py"}),
        step(
            "Noting what I found.",
            "write_scratchpad",
            {"content": "loop.py drives rounds; model.py builds requests; plan.py validates."},
        ),
        step("Progress.", "todo", plan("completed", "in_progress", "pending", "pending")),
        step("Now the model access.", "read_file", {"path": "model.py"}),
        step(
            "A comment on the budget.",
            "edit_file",
            {
                "path": "model.py",
                "old_text": "DEFAULT_MAX_TOKENS = 8192",
                "new_text": "DEFAULT_MAX_TOKENS = 8192  # the answer's token budget",
            },
        ),
        step("Which classes exist?", "grep", {"pattern": "^class "}),
        step("The session.", "read_file", {"path": "session.py", "offset": 1, "limit": 120}),
        step("Progress.", "todo", plan("completed", "completed", "completed", "in_progress")),
        step("Events next.", "read_file", {"path": "events.py"}),
        step("All Python files.", "list_files", {"pattern": "*.py"}),
        step("Storage.", "read_file", {"path": "storage.py"}),
        step(
            "A note in storage.",
            "edit_file",
            {
                "path": "storage.py",
                "old_text": "class SessionStore:",
                "new_text": "class SessionStore:  # each part replaced atomically",
            },
        ),
        step("Where is async used?", "grep", {"pattern": "async def"}),
        step("Almost there.", "todo", plan("completed", "completed", "completed", "in_progress")),
        step("Done.", "todo", plan("completed", "completed", "completed", "completed")),
        text_reply("I added two comments; the plan is complete."),
    ]


def tool_errors(body: dict[str, Any]) -> int:
    """tool_result blocks marked is_error in a request (a script step that went wrong)."""
    return sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    )


def share(records: list[Record]) -> tuple[float, float, int, int]:
    """(share over requests 2.., lowest share of one request, total input, cache read)."""
    read = total = 0
    lowest = 1.0
    for record in records[1:]:
        usage = record.usage or {}
        r = usage.get("cache_read_input_tokens", 0)
        t = r + usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
        read += r
        total += t
        lowest = min(lowest, r / t if t else 0.0)
    return (read / total if total else 0.0), lowest, total, read


async def run() -> list[Row]:
    steps = session_script()
    with tempfile.TemporaryDirectory(prefix="plansight-bench-cache-") as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(SOURCE, root, ignore=shutil.ignore_patterns("__pycache__"))
        with FakeAPIProcess(steps) as fake:
            editor = await Editor.start(
                root,
                base_url=fake.base_url,
                storage=Path(tmp) / "st",
                init_options={"model": newest_sonnet()},
            )
            try:
                result = await editor.run("Add a comment on the token budget; check storage.")
            finally:
                await editor.stop()
            records = fake.records()
            last_body = fake.bodies()[-1]
    if result["status"] != "done" or len(records) != len(steps):
        raise RuntimeError(f"cache session ended {result} after {len(records)} requests")
    errors = tool_errors(last_body)
    value, lowest, total, read = share(records)
    return [
        Row(
            "cache",
            f"cache-read share of input tokens, requests 2..{len(records)}",
            f"{value:.1%}",
            goal=f"≥ {GOAL:.0%}",
            met=value >= GOAL and errors == 0,
            note=(
                f"{read:,} of {total:,} tokens read from cache; lowest single request "
                f"{lowest:.1%}; tool results that were errors: {errors}"
            ),
        )
    ]
