"""A long session: 150 rounds of read_file results of 2–25 kB against a 200,000-token window.

Plansight's server (`plansight lsp`, default options: the window is 200,000 tokens where the
endpoint has no Models API, compaction at 0.8 of it) runs a session that plans, writes a note,
then reads 150 files of 2 to 25 kB one round at a time, updating its plan every 30 rounds.
The fake in its own process refuses any request of more than 200,000 input tokens by its count
(the real 400 `prompt is too long`) and answers summary requests whenever compaction sends
one. Without compaction the session would need about 800,000 tokens by the end.

Shown: whether it ends `done`; the largest request against the window; that the plan is in
every request after the first compaction verbatim; the compactions; the cache-read share of
all input tokens over the whole session; and, measured in this process, what one compaction
of a 1.5 MB conversation costs the server itself (estimate, clearing or summary building, the
atomic rewrite of the stored conversation), without the summary request.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.editor import Editor
from bench.fakeproc import FakeAPIProcess, Record
from bench.table import Row, ms
from plansight.engine.compaction.compactor import CompactionSettings
from plansight.engine.compaction.rules import HEADER_OPEN, NOTE_PREFIX, SUMMARY_INSTRUCTION
from plansight.engine.model import ModelClient, ModelSettings, ModelTurn, newest_sonnet
from plansight.fakeapi import FakeMessagesAPI, ScriptStep, reply, text_reply

ROUNDS = 150
WINDOW = 200_000
SIZES = (2_000, 25_000)
PLAN_EVERY = 30
SHARE_GOAL = 0.80
COST_GOAL = 0.050  # seconds, for a 1.5 MB conversation
CONVERSATION_BYTES = 1_500_000
SEED = 150


def write_files(root: Path, count: int) -> list[str]:
    """``count`` Python-looking files of 2 to 25 kB under src/."""
    rng = random.Random(SEED)
    (root / "src").mkdir(parents=True, exist_ok=True)
    names = []
    for index in range(count):
        size = rng.randint(*SIZES)
        lines = []
        total = 0
        n = 0
        while total < size:
            factor, pad = rng.randint(2, 999), "x" * rng.randint(0, 40)
            line = f"def step_{index}_{n}(value):  return value * {factor}  # {pad}\n"
            lines.append(line)
            total += len(line)
            n += 1
        name = f"src/f{index:03d}.py"
        (root / name).write_text("".join(lines))
        names.append(name)
    return names


def plan_items(done: int, total: int = ROUNDS // PLAN_EVERY) -> dict[str, Any]:
    items = []
    for k in range(total):
        status = "completed" if k < done else ("in_progress" if k == done else "pending")
        first, last = k * PLAN_EVERY, (k + 1) * PLAN_EVERY - 1
        items.append({"id": str(k + 1), "text": f"Read files {first}-{last}", "status": status})
    return {"items": items}


def _texts(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    out.append(inner)
                elif isinstance(inner, list):
                    out.extend(b.get("text", "") for b in inner if isinstance(b, dict))
    return out


class LongSession:
    """The model of the session, as a step of the fake (it runs in the fake's process): the
    next step for each request, a summary for each summary request, and a check that each
    request after the first compaction holds the current plan verbatim."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.next_round = 0
        self.stage = "plan"
        self.plan: dict[str, Any] | None = None
        self.compacted = False
        self.checked = 0
        self.missing: list[int] = []
        self.summaries = 0
        self.requests = 0
        self.previous_length = 0
        self.shrunk: list[int] = []  # requests (0-based) whose conversation was compacted

    def report(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "missing": self.missing,
            "summaries": self.summaries,
            "requests": self.requests,
            "rounds": self.next_round,
            "shrunk": self.shrunk,
        }

    def _check(self, body: dict[str, Any]) -> None:
        from plansight.plan.plan import parse_items, render

        texts = _texts(body)
        if not self.compacted:
            self.compacted = any(NOTE_PREFIX in t or t.startswith(HEADER_OPEN) for t in texts)
        if self.compacted and self.plan is not None:
            self.checked += 1
            rendered = render(parse_items(self.plan["items"]))
            if not any(rendered in t for t in texts):
                self.missing.append(self.requests)

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        self.requests += 1
        length = len(json.dumps(body["messages"]))
        if length < self.previous_length:
            self.shrunk.append(self.requests - 1)
        self.previous_length = length
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last[-1].get("text") == SUMMARY_INSTRUCTION:
            self.summaries += 1
            self._check(body)
            return text_reply(
                f"I planned the reading of {len(self.files)} files, wrote a note, and read "
                f"files 0 to {self.next_round - 1}; nothing was changed. Next: file "
                f"{self.next_round}."
            )
        self._check(body)
        if self.stage == "plan":
            self.stage = "note"
            self.plan = plan_items(0)
            return reply("I'll plan the reading first.", [("todo", self.plan)])
        if self.stage == "note":
            self.stage = "read"
            note = f"{len(self.files)} files under src/; read each once, in order."
            return reply("A note to keep.", [("write_scratchpad", {"content": note})])
        if self.stage == "read":
            n = self.next_round
            self.next_round += 1
            if self.next_round == len(self.files):
                self.stage = "finish"
            calls: list[tuple[str, dict[str, Any]]] = []
            if n and n % PLAN_EVERY == 0:
                self.plan = plan_items(n // PLAN_EVERY)
                calls.append(("todo", self.plan))
            calls.append(("read_file", {"path": self.files[n]}))
            return reply(f"Reading file {n}.", calls)
        if self.stage == "finish":
            self.stage = "done"
            self.plan = plan_items(ROUNDS // PLAN_EVERY)
            return reply("All read; the plan is complete.", [("todo", self.plan)])
        return text_reply(f"I read all {len(self.files)} files.")


def _read_share(record: Record) -> float:
    usage = record.usage or {}
    read = usage.get("cache_read_input_tokens", 0)
    total = read + usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return read / total if total else 0.0


def cache_share(records: list[Record]) -> tuple[float, int, int]:
    read = total = 0
    for record in records:
        usage = record.usage or {}
        r = usage.get("cache_read_input_tokens", 0)
        read += r
        total += r + usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return (read / total if total else 0.0), read, total


async def session_rows() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-long-") as tmp:
        root = Path(tmp) / "ws"
        files = write_files(root, ROUNDS)
        model = LongSession(files)
        steps = [model] * (ROUNDS + 60)
        started = time.perf_counter()
        with FakeAPIProcess(steps, context_window=WINDOW) as fake:
            editor = await Editor.start(
                root,
                base_url=fake.base_url,
                storage=Path(tmp) / "st",
                init_options={"model": newest_sonnet(), "maxRounds": ROUNDS + 20},
            )
            try:
                result = await editor.run("Read every file under src/, in order.", timeout=1200)
                compacted = [e.params for e in editor.inbox.events("compacted")]
            finally:
                await editor.stop()
            records = fake.records()
            (report,) = fake.reports()
        elapsed = time.perf_counter() - started
    refused = [r for r in records if r.status != 200]
    largest = max((r.prompt_tokens or 0) for r in records)
    share, read, total = cache_share(records)
    after = [
        [_read_share(records[k + j]) for k in report["shrunk"] if k + j < len(records)]
        for j in (0, 1, 2)
    ]
    strategies = {
        s: sum(1 for c in compacted if c["strategy"] == s) for s in ("clearToolResults", "summary")
    }
    return [
        Row(
            "long",
            f"{ROUNDS} rounds of 2–25 kB reads, {WINDOW:,}-token window",
            result["status"],
            goal="done",
            met=result["status"] == "done" and report["rounds"] == ROUNDS,
            note=f"{len(records)} requests, {result['rounds']} rounds, {elapsed:.0f} s",
        ),
        Row(
            "long",
            "largest request / window",
            f"{largest:,} / {WINDOW:,}",
            goal="≤ window, none refused",
            met=largest <= WINDOW and not refused,
            note=f"requests refused: {len(refused)}",
        ),
        Row(
            "long",
            "plan verbatim in requests after the first compaction",
            f"{report['checked'] - len(report['missing'])} of {report['checked']}",
            goal="all",
            met=report["checked"] > 0 and not report["missing"],
            note=f"missing in requests {report['missing'][:5]}" if report["missing"] else "",
        ),
        Row(
            "long",
            "compactions",
            str(len(compacted)),
            note=(
                f"{strategies['clearToolResults']} clearing, {strategies['summary']} summary "
                f"({report['summaries']} summary requests)"
            ),
        ),
        Row(
            "long",
            "cache read after a compaction: 1st / 2nd / 3rd request (median)",
            " / ".join(f"{statistics.median(a):.0%}" if a else "n/a" for a in after),
            note="the 1st writes the new prefix (tools and system read); the next read it",
        ),
        Row(
            "long",
            "cache-read share of all input tokens, whole session",
            f"{share:.1%}",
            goal=f"≥ {SHARE_GOAL:.0%}",
            met=share >= SHARE_GOAL,
            note=f"{read:,} of {total:,} input tokens read from cache",
        ),
    ]


def big_conversation(size: int) -> list[dict[str, Any]]:
    """A conversation of about ``size`` bytes of JSON: read rounds of 2–25 kB, a plan."""
    rng = random.Random(SEED)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Read every file."}]}
    ]
    total = 0
    n = 0
    while total < size:
        tool_id = f"toolu_{n:04d}"
        name, tool_input = ("read_file", {"path": f"src/f{n:03d}.py"})
        result = "".join(
            f"{i:6}\tvalue_{n}_{i} = {rng.randint(0, 999)}\n"
            for i in range(rng.randint(*SIZES) // 24)
        )
        if n % PLAN_EVERY == 0:
            name, tool_input = "todo", plan_items(n // PLAN_EVERY)
            result = "[>] #1: Read files\n(0/5 completed)"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading file {n}."},
                    {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}],
            }
        )
        total += len(result) + 200
        n += 1
    return messages


class TimedModel(ModelClient):
    """The model client, timing its requests: a compaction's own cost excludes them."""

    spent = 0.0

    async def stream_turn(self, **request: Any) -> ModelTurn:
        started = time.perf_counter()
        try:
            return await super().stream_turn(**request)
        finally:
            self.spent += time.perf_counter() - started


async def cost_rows() -> list[Row]:
    from plansight.engine.hooks import accept_all_edits
    from plansight.engine.prompt import system_prompt
    from plansight.session.session import Session
    from plansight.session.settings import SessionSettings
    from plansight.session.storage import SessionStore

    messages = big_conversation(CONVERSATION_BYTES)
    size = len(json.dumps(messages))
    costs: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="plansight-bench-cost-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        store = SessionStore(Path(tmp) / "st")
        with FakeMessagesAPI([text_reply("A summary of the work.")] * 20) as fake:
            settings = SessionSettings(
                ModelSettings(model="claude-bench", api_key="bench", base_url=fake.base_url),
                CompactionSettings(context_window=WINDOW),
            )
            session = Session(root, settings, review=accept_all_edits, store=store)
            model = TimedModel(
                ModelSettings(model="claude-bench", api_key="bench", base_url=fake.base_url)
            )
            system = system_prompt(root.name)
            for _ in range(7):
                for summarize in (False, True):
                    session.conversation.replace(json.loads(json.dumps(messages)))
                    store.conversation.rewrite(session.conversation.messages)
                    session.compactor.meter.reset()
                    model.spent = 0.0
                    started = time.perf_counter()
                    result = await session.compactor.compact(
                        model, system=system, current_prompt="p", summarize=summarize
                    )
                    costs[summarize].append(time.perf_counter() - started - model.spent)
                    expected = "summary" if summarize else "clearToolResults"
                    assert result.strategy == expected, result
            await model.close()
    clear_cost, summary_cost = statistics.median(costs[False]), statistics.median(costs[True])
    note = (
        f"conversation of {size / 1e6:.2f} MB JSON; median of {len(costs[False])}; estimate, "
        "rewrite and the atomic store of the conversation included"
    )
    return [
        Row(
            "long",
            "one compaction of a 1.5 MB conversation (clearing), server's own cost",
            ms(clear_cost),
            goal=f"≤ {COST_GOAL * 1000:.0f} ms",
            met=clear_cost <= COST_GOAL,
            note=note,
        ),
        Row(
            "long",
            "one compaction of a 1.5 MB conversation (summary), without its request",
            ms(summary_cost),
            goal=f"≤ {COST_GOAL * 1000:.0f} ms",
            met=summary_cost <= COST_GOAL,
            note=note,
        ),
    ]


async def run() -> list[Row]:
    rows = await session_rows()
    rows.extend(await cost_rows())
    return rows


if __name__ == "__main__":
    for row in asyncio.run(run()):
        print(row)
