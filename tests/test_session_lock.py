"""The session's rules (session/lock.py): one run at a time, whatever asks meanwhile is refused
with a message that says what to do, and the lock is free again however the holder ends; one
live process claims a session's storage folder, and a folder that cannot be written is refused."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.session.lock import RunLock, SessionBusy, StorageClaim, StorageUnavailable
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore

from conftest import PATIENCE


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


# Another server holding a session's folder until its stdin closes (or it is killed).
HOLDER = """
import sys
from pathlib import Path
from plansight.session.lock import StorageClaim
StorageClaim(Path(sys.argv[1])).take("Visual Studio Code, pid 4242")
print("held", flush=True)
sys.stdin.read()
"""


def hold_in_another_process(directory: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_folder_claimed_by_a_live_server_is_refused_naming_it_until_it_dies(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "session"
    holder = hold_in_another_process(directory)
    try:
        with pytest.raises(StorageUnavailable) as refused:
            StorageClaim(directory).take("plansight-cli", wait=0)
        message = str(refused.value)
        assert message.startswith("Another Plansight server is using this workspace's session")
        assert f"server pid {holder.pid}; for Visual Studio Code, pid 4242; since " in message
        assert str(directory) in message
        holder.send_signal(signal.SIGKILL)  # a crash: the kernel lets the claim go
        holder.wait(PATIENCE)
        claim = StorageClaim(directory)
        claim.take("plansight-cli", wait=0)
        assert claim.held
        claim.release()
    finally:
        holder.kill()
        holder.wait()


def test_a_claim_is_taken_once_and_released_for_the_next_server(tmp_path: Path) -> None:
    first = StorageClaim(tmp_path / "session")
    first.take("one")
    first.take("one")  # again: still held once, by this process
    with pytest.raises(StorageUnavailable, match="for one"):
        StorageClaim(tmp_path / "session").take("two", wait=0)
    first.release()
    second = StorageClaim(tmp_path / "session")
    second.take("two", wait=0)
    assert second.held and not first.held
    second.release()
    assert [p.name for p in (tmp_path / "session").iterdir()] == ["session.lock"]  # no probes


def test_a_folder_that_cannot_be_made_is_refused_saying_why_and_what_to_do(
    tmp_path: Path,
) -> None:
    (tmp_path / "state").write_text("a file where the state folder would be")
    directory = tmp_path / "state" / "plansight" / "workspaces" / "hello-1234"
    with pytest.raises(StorageUnavailable) as refused:
        StorageClaim(directory).take("plansight-cli")
    message = str(refused.value)
    assert message.startswith(f"Plansight cannot save this workspace's session in {directory}")
    assert os.strerror(20) in message  # ENOTDIR: a file in the way, named
    assert "XDG_STATE_HOME" in message and "storageDir" in message


async def test_a_session_keeps_its_store_from_load_to_close_and_a_second_loads_nothing(
    tmp_path: Path,
) -> None:
    settings = SessionSettings(checkpoints=False)
    first = Session(tmp_path, settings, store=SessionStore(tmp_path / "store"))
    assert not first.load_stored()
    first.edit_plan([{"id": "1", "text": "the first server's plan", "status": "pending"}])
    second = Session(tmp_path, settings, store=SessionStore(tmp_path / "store"))
    with pytest.raises(StorageUnavailable, match="Another Plansight server"):
        second.load_stored()
    assert second.plan.state.items == ()  # nothing of the first's session was taken in
    await first.close()
    third = Session(tmp_path, settings, store=SessionStore(tmp_path / "store"))
    assert third.load_stored()  # free once the first closed, and its plan was kept
    assert [item.text for item in third.plan.state.items] == ["the first server's plan"]
    await third.close()
