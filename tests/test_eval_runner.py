"""Laying out and running many attempts (eval/runner.py): live attempts task by task, repeat by
repeat, each arm in turn; one replay attempt per recording that fits its task, in the same
order; and a budget that, once spent, starts no new attempt. (Attempts actually run, replayed:
test_eval_replay.py and test_eval_attempt.py.)"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from plansight.engine.pricing import Prices, list_prices
from plansight.eval.arms import ARMS
from plansight.eval.attempt import AttemptSpec, Limits, Upstream
from plansight.eval.recordings import Recording, RecordingError, find_recordings, save_recording
from plansight.eval.runner import Progress, live_attempts, replay_attempts, run_attempts
from plansight.eval.tasks import Task, load_task

from conftest import FIXTURES

TINY = FIXTURES / "eval_tiny" / "tasks" / "tiny-calc"
LIMITS = Limits(max_rounds=5)
STEPS = {"steps": [{"content": [{"type": "text", "text": "Done."}]}]}


@pytest.fixture
def tasks(tmp_path: Path) -> list[Task]:
    """Two tasks: the tiny one, and a copy of it under another name."""
    found = []
    for name in ("tiny-calc", "tiny-copy"):
        shutil.copytree(TINY, tmp_path / "tasks" / name)
        found.append(load_task(tmp_path / "tasks" / name))
    return found


def record(directory: Path, task: Task, arm: str, index: int, model: str) -> None:
    save_recording(
        directory,
        task=task,
        arm=arm,
        index=index,
        model=model,
        recorded_at="2026-12-01T20:00:00+00:00",
        recorded=STEPS,
    )


def layout(specs: list[AttemptSpec]) -> list[tuple[str, int, str]]:
    return [(s.task.name, s.index, s.arm.name) for s in specs]


def test_live_attempts_go_task_by_task_repeat_by_repeat_each_arm_in_turn(
    tasks: list[Task],
) -> None:
    arms = [ARMS["plan"], ARMS["noplan"]]
    prices = Prices(1, 2, 3, 4)
    upstream = Upstream(api_key="k")
    specs = live_attempts(
        tasks, arms, 2, model="m", upstream=upstream, limits=LIMITS, prices=prices
    )
    assert layout(specs) == [
        ("tiny-calc", 1, "plan"),
        ("tiny-calc", 1, "noplan"),
        ("tiny-calc", 2, "plan"),
        ("tiny-calc", 2, "noplan"),
        ("tiny-copy", 1, "plan"),
        ("tiny-copy", 1, "noplan"),
        ("tiny-copy", 2, "plan"),
        ("tiny-copy", 2, "noplan"),
    ]
    assert {(s.model, s.upstream, s.limits, s.prices) for s in specs} == {
        ("m", upstream, LIMITS, prices)
    }


def test_a_replay_runs_each_recording_of_the_tasks_and_arms_chosen_in_order(
    tasks: list[Task], tmp_path: Path
) -> None:
    rec = tmp_path / "rec"
    record(rec, tasks[1], "plan", 1, "claude-sonnet-5-5")
    record(rec, tasks[0], "planmode", 1, "claude-opus-4-1")
    record(rec, tasks[0], "plan", 2, "claude-sonnet-5-5")
    record(rec, tasks[0], "noplan", 1, "my-model")
    recordings = find_recordings(rec)
    specs = replay_attempts(recordings, tasks, None, limits=LIMITS, prices=None)
    assert layout(specs) == [
        ("tiny-calc", 1, "noplan"),
        ("tiny-calc", 1, "planmode"),
        ("tiny-calc", 2, "plan"),
        ("tiny-copy", 1, "plan"),
    ]
    assert all(s.upstream.replay and s.upstream.recording is not None for s in specs)
    assert [s.model for s in specs] == ["my-model", "claude-opus-4-1", *["claude-sonnet-5-5"] * 2]
    # Each at its own model's list price, unless prices were given.
    assert [s.prices for s in specs] == [list_prices(s.model) for s in specs]
    given = Prices(1, 1, 1, 1)
    chosen = replay_attempts(recordings, tasks[:1], [ARMS["plan"]], limits=LIMITS, prices=given)
    assert layout(chosen) == [("tiny-calc", 2, "plan")]
    assert chosen[0].prices == given


def test_a_replay_refuses_a_recording_that_does_not_fit(tasks: list[Task], tmp_path: Path) -> None:
    record(tmp_path / "rec", tasks[0], "plan", 1, "claude-sonnet-5-5")
    (recording,) = find_recordings(tmp_path / "rec")
    with pytest.raises(RecordingError, match="no recording matches the tasks and arms chosen"):
        replay_attempts([recording], tasks[1:], None, limits=LIMITS, prices=None)
    stale: Recording = dataclasses.replace(recording, digest="0" * 16)
    with pytest.raises(RecordingError, match="recorded for another version of task 'tiny-calc'"):
        replay_attempts([stale], tasks, None, limits=LIMITS, prices=None)
    alien = dataclasses.replace(recording, arm="whatif")
    with pytest.raises(RecordingError, match="arm 'whatif' cannot run here"):
        replay_attempts([alien], tasks, None, limits=LIMITS, prices=None)


async def test_a_spent_budget_starts_no_attempt_and_says_how_many_were_skipped(
    tasks: list[Task],
) -> None:
    specs = live_attempts(
        tasks, [ARMS["plan"]], 1, model="m", upstream=Upstream(), limits=LIMITS, prices=None
    )
    shown: list[Progress] = []
    finished: list[object] = []
    results, skipped = await run_attempts(
        specs,
        parallel=1,
        budget=0.0,
        on_progress=lambda p: shown.append(dataclasses.replace(p)),
        on_result=finished.append,
    )
    assert (results, skipped, finished) == ([], 2, [])
    assert shown[0] == Progress(total=2)
    assert shown[-1] == Progress(total=2, done=0, running=0, cost=0.0, skipped=2)
    assert all(p.running == 0 for p in shown)  # nothing ever started
