"""Running many attempts: which ones, how many at once, the progress bar, the recordings.

Live attempts are laid out task by task, repeat by repeat, each arm in turn, so that a run
stopped by its budget has compared the arms on the same tasks. A replay runs one attempt per
recording. At most `parallel` attempts run at once (each is a server process plus its checks).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from plansight.engine.pricing import Prices, list_prices
from plansight.eval.arms import ARMS, Arm, arm_named
from plansight.eval.attempt import AttemptResult, AttemptSpec, Limits, Upstream, run_attempt
from plansight.eval.recordings import Recording, RecordingError, save_recording, task_digest
from plansight.eval.tasks import Task


def live_attempts(
    tasks: list[Task],
    arms: list[Arm],
    repeat: int,
    *,
    model: str | None,
    upstream: Upstream,
    limits: Limits,
    prices: Prices | None,
) -> list[AttemptSpec]:
    return [
        AttemptSpec(task, arm, index, model, upstream, limits, prices)
        for task in tasks
        for index in range(1, repeat + 1)
        for arm in arms
    ]


def replay_attempts(
    recordings: list[Recording],
    tasks: list[Task],
    arms: list[Arm] | None,
    *,
    limits: Limits,
    prices: Prices | None,
) -> list[AttemptSpec]:
    """One attempt per recording of the tasks (and arms) chosen; a recording made for another
    version of its task, or for an arm this server cannot run, is an error."""
    by_name = {task.name: task for task in tasks}
    wanted = {arm.name for arm in arms} if arms is not None else None
    specs = []
    for recording in recordings:
        task = by_name.get(recording.task)
        if task is None or (wanted is not None and recording.arm not in wanted):
            continue
        if recording.digest != task_digest(task):
            raise RecordingError(
                f"{recording.path} was recorded for another version of task {task.name!r} "
                "(its prompt or project changed since): record it again"
            )
        arm = arm_named(recording.arm)
        if arm is None or arm.unavailable:
            raise RecordingError(f"{recording.path}: arm {recording.arm!r} cannot run here")
        if recording.options is not None:
            # The options it was recorded with (a --reminder-after, say): the replay follows.
            arm = replace(arm, options=recording.options)
        specs.append(
            AttemptSpec(
                task,
                arm,
                recording.index,
                recording.model,
                Upstream(recording=recording),
                limits,
                prices if prices is not None else list_prices(recording.model),
            )
        )
    if not specs:
        raise RecordingError("no recording matches the tasks and arms chosen")
    order = {task.name: i for i, task in enumerate(tasks)}
    arm_order = {name: i for i, name in enumerate(ARMS)}
    return sorted(
        specs,
        key=lambda s: (
            order[s.task.name],
            s.index,
            arm_order.get(s.arm.name, len(arm_order)),
            s.arm.name,
        ),
    )


@dataclass
class Progress:
    """What the progress bar shows; `update` is called after every change."""

    total: int
    done: int = 0
    running: int = 0
    cost: float = 0.0
    skipped: int = 0


async def run_attempts(
    specs: list[AttemptSpec],
    *,
    parallel: int,
    budget: float | None = None,
    record_dir: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[AttemptResult], None] | None = None,
) -> tuple[list[AttemptResult], int]:
    """Run the attempts, at most `parallel` at once; stop starting new ones once `budget`
    (USD, estimated) is spent. Returns the results in the order of `specs` and how many
    attempts were not started."""
    progress = Progress(total=len(specs))
    gate = asyncio.Semaphore(max(1, parallel))
    results: list[AttemptResult | None] = [None] * len(specs)

    def show() -> None:
        if on_progress is not None:
            on_progress(progress)

    def spent(cost: float) -> None:
        progress.cost += cost
        show()

    async def one(position: int, spec: AttemptSpec) -> None:
        async with gate:
            if budget is not None and progress.cost >= budget:
                progress.skipped += 1
                show()
                return
            progress.running += 1
            show()
            try:
                result = await run_attempt(spec, on_usage=spent)
            finally:
                progress.running -= 1
            results[position] = result
            if record_dir is not None and result.recording is not None:
                save_recording(
                    record_dir,
                    task=spec.task,
                    arm=spec.arm.name,
                    options=dict(spec.arm.options),
                    index=spec.index,
                    model=result.model,
                    recorded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    recorded=result.recording,
                )
            progress.done += 1
            show()
            if on_result is not None:
                on_result(result)

    show()
    await asyncio.gather(*(one(i, spec) for i, spec in enumerate(specs)))
    return [r for r in results if r is not None], progress.skipped
