"""The session's busy rule (session/lock.py): one run at a time, whatever asks meanwhile is
refused with a message that says what to do, and the lock is free again however the holder ends."""

from __future__ import annotations

import asyncio

import pytest

from plansight.session.lock import RunLock, SessionBusy


async def test_a_second_holder_is_refused_while_the_first_holds_and_admitted_after() -> None:
    lock = RunLock()
    entered = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        with lock.hold("starting another"):
            entered.set()
            await release.wait()

    task = asyncio.create_task(first())
    await asyncio.wait_for(entered.wait(), 10)
    assert lock.held and lock.task is task
    with pytest.raises(SessionBusy, match="cancel it before compacting"):
        with lock.hold("compacting"):
            pytest.fail("a second holder got in")
    with pytest.raises(SessionBusy, match="cancel it before resetting"):
        lock.refuse_if_held("resetting")
    release.set()
    await asyncio.wait_for(task, 10)
    assert not lock.held and lock.task is None
    with lock.hold("compacting"):  # free again
        assert lock.task is asyncio.current_task()


async def test_the_lock_is_free_after_its_holder_fails_or_is_cancelled() -> None:
    lock = RunLock()
    with pytest.raises(RuntimeError):
        with lock.hold("restoring"):
            raise RuntimeError("a bug in the holder")
    assert not lock.held
    entered = asyncio.Event()

    async def holder() -> None:
        with lock.hold("restoring"):
            entered.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(holder())
    await asyncio.wait_for(entered.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not lock.held
    lock.refuse_if_held("starting another")  # nothing raised


async def test_a_finished_holder_that_left_its_task_behind_does_not_hold() -> None:
    # `held` asks whether the holding task is still running, not only whether one was noted.
    lock = RunLock()

    async def done() -> None:
        return None

    finished = asyncio.create_task(done())
    await finished
    lock.task = finished
    assert not lock.held
