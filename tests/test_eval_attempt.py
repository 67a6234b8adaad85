"""One attempt through the real server: its round and cost limits, and what it reports."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.pricing import list_prices
from plansight.eval import attempt
from plansight.eval.arms import ARMS
from plansight.eval.attempt import AttemptSpec, Limits, Upstream, run_attempt
from plansight.eval.recordings import Recording, task_digest
from plansight.eval.tasks import default_tasks_dir, load_task
from plansight.workspace.sandbox import detect

TASK = load_task(default_tasks_dir() / "rename-function")
MODEL = "claude-sonnet-5-5"


def recording(steps: list[dict]) -> Recording:
    data = {
        "eval": {
            "task": TASK.name,
            "arm": "plan",
            "index": 1,
            "model": MODEL,
            "origin": "hand-written",
            "taskDigest": task_digest(TASK),
        },
        "steps": steps,
    }
    return Recording(Path("test.json"), TASK.name, "plan", 1, MODEL, "hand-written", "", data)


def read_step(path: str, output_tokens: int | None = None) -> dict:
    step: dict = {"content": [{"type": "tool_use", "name": "read_file", "input": {"path": path}}]}
    if output_tokens is not None:
        step["usage"] = {"output_tokens": output_tokens}
    return step


def spec(steps: list[dict], limits: Limits) -> AttemptSpec:
    return AttemptSpec(
        TASK,
        ARMS["plan"],
        1,
        MODEL,
        Upstream(recording=recording(steps)),
        limits,
        list_prices(MODEL),
    )


async def test_the_round_limit_stops_the_attempt_and_the_checks_still_judge() -> None:
    steps = [read_step("README.md")] * 5 + [{"text": "done"}]
    result = await run_attempt(spec(steps, Limits(max_rounds=2)))
    assert (result.status, result.stopped_by, result.rounds) == ("limit", "round limit", 2)
    assert not result.passed and result.check.total > 0  # nothing was renamed
    assert result.source == "replay" and result.model == MODEL


async def test_the_cost_limit_cancels_the_run_once_the_answers_cost_too_much() -> None:
    # Each answer's 300k output tokens cost $3 at the list price: over the $1 limit at once.
    steps = [read_step("README.md", output_tokens=300_000)] * 4 + [{"text": "done"}]
    spent: list[float] = []
    result = await run_attempt(spec(steps, Limits(max_cost=1.0)), on_usage=spent.append)
    assert result.stopped_by == "cost limit"
    assert result.status == "cancelled"
    # The first answer is over the limit: the proxy holds the next request until the cancel
    # lands, however late, so one answer is all that was paid for.
    assert result.rounds <= 2 and result.usage.output_tokens == 300_000
    assert result.cost is not None and result.cost >= 3.0
    assert sum(spent) == pytest.approx(result.cost)


@pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")
async def test_an_attempt_runs_its_commands_in_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attempt's server is the one this test imports (the eval drops PYTHONPATH, which
    # would start another checkout's installed package in a worktree).
    own_env = attempt.server_env

    def with_this_checkout(*args: Any) -> dict[str, str]:
        env = own_env(*args)
        env["PYTHONPATH"] = str(Path(attempt.__file__).resolve().parents[2])
        return env

    monkeypatch.setattr(attempt, "server_env", with_this_checkout)
    outside = Path(tempfile.mkdtemp(prefix="plansight-eval-test-", dir="/var/tmp"))
    try:
        escape = outside / "escaped.txt"
        command = f"echo out > {escape}; echo in > inside.txt"
        steps = [
            {"content": [{"type": "tool_use", "name": "bash", "input": {"command": command}}]},
            {"text": "done"},
        ]
        result = await run_attempt(spec(steps, Limits()))
        assert result.tool_calls.get("bash") == 1 and result.status == "done"
        assert not escape.exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)
