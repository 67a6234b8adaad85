"""Session: the rules it keeps for whoever embeds it, through the real SDK against the fake API."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.events import Event, FilesChanged, PlanChanged, RunFinished, RunStarted
from plansight.fakeapi import FakeMessagesAPI, Hang
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.protocol.options import InitOptions
from plansight.session.lock import SessionBusy
from plansight.session.session import Session
from plansight.session.settings import SessionSettings

from conftest import make_session, wait_until


def collect(session: Session) -> list[Event]:
    events: list[Event] = []
    session.events.subscribe(events.append)
    return events


def plan(*specs: tuple[str, str, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "text": t, "status": s} for i, t, s in specs]}


async def start_hanging_run(session: Session, api: FakeMessagesAPI) -> asyncio.Task[Any]:
    """A run whose plan is set and whose second model request hangs."""
    api.push(tool("todo", plan(("1", "Add hints", "in_progress"))), Hang(60))
    run = asyncio.create_task(session.run("Add type hints"))
    await wait_until(lambda: len(api.message_requests) == 2, "the second model request")
    return run


# ----- one run at a time --------------------------------------------------------------------


async def test_reset_and_a_second_run_are_refused_during_a_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = make_session(hello_workspace, fake_api)
    run = await start_hanging_run(session, fake_api)
    messages = len(session.conversation.messages)
    with pytest.raises(SessionBusy, match="in progress"):
        session.reset()
    with pytest.raises(SessionBusy, match="in progress"):
        await session.run("Something else")
    # Neither refusal touched the session.
    assert session.plan.state.rendered == "[>] #1: Add hints\n(0/1 completed)"
    assert len(session.conversation.messages) == messages
    assert session.running

    assert session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not session.running
    session.reset()
    assert session.plan.state.items == () and session.conversation.messages == []


async def test_a_new_session_run_clears_the_old_one_first(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = make_session(hello_workspace, fake_api)
    fake_api.push(tool("todo", plan(("1", "Old item", "pending"))), text("Planned."))
    await session.run("Plan something")
    events = collect(session)
    fake_api.push(text("Fresh start."))
    result = await session.run("Start over", new_session=True)
    assert result.status == "done"
    cleared = next(e for e in events if isinstance(e, PlanChanged))
    assert cleared.state.items == () and cleared.state.source == "user"
    assert events.index(cleared) < next(
        i for i, e in enumerate(events) if isinstance(e, RunStarted)
    )
    # The model saw only the new prompt.
    assert len(fake_api.bodies[-1]["messages"]) == 1


# ----- closing -------------------------------------------------------------------------------


async def test_close_ends_the_run_cancelled_and_closes_the_sdk_client(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = make_session(hello_workspace, fake_api)
    events = collect(session)
    run = await start_hanging_run(session, fake_api)
    client = await session.model.sdk_client()
    await session.close()
    assert run.cancelled()
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert [e.result.status for e in finished] == ["cancelled"]
    assert client.is_closed()
    # The conversation stayed valid: a later run in the same session is accepted by the API.
    # (Its plan item is still open, so the done gate asks once more.)
    fake_api.push(text("Back again."), text("Leaving it open."))
    result = await session.run("Carry on")
    assert result.status == "done" and result.text == "Leaving it open."
    assert [r.outcome for r in fake_api.message_requests[2:]] == ["reply", "reply"]
    await session.close()


async def test_close_without_a_run_only_closes_the_client(tmp_path: Path) -> None:
    session = Session(tmp_path, SessionSettings())
    await session.close()  # nothing was ever created: nothing to close
    assert not session.running


# ----- settings --------------------------------------------------------------------------------


async def test_the_model_settings_reach_the_api(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake_api.base_url}
    settings = SessionSettings.from_options(
        InitOptions(model="claude-sonnet-5-5", max_rounds=1), env
    )
    session = Session(hello_workspace, settings)
    fake_api.push(tool("read_file", {"path": "hello.py"}))
    result = await session.run("Read hello.py")
    assert result.status == "limit" and result.rounds == 1  # maxRounds held
    request = fake_api.message_requests[0]
    assert request.body["model"] == "claude-sonnet-5-5"
    assert request.body["max_tokens"] == settings.model.max_tokens
    assert request.outcome == "reply"  # the key was sent: the fake answers 401 without one
    await session.close()


# ----- leftovers of a killed server ---------------------------------------------------------


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


async def test_start_removes_the_temporary_files_of_a_killed_writer(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("print('intact')\n")
    # The names atomic writes give their temporary files: the target, the writer's pid.
    killed = root / "pkg" / f".mod.py.{dead_pid()}.k1ll3d.plansight-tmp"
    killed.write_text("half of a new vers")
    ours = root / f".other.py.{os.getpid()}.wr1t1n.plansight-tmp"  # a write in progress
    ours.write_text("being written")
    ignored = root / "node_modules" / f".dep.js.{dead_pid()}.x.plansight-tmp"
    ignored.parent.mkdir()
    ignored.write_text("not ours to walk")

    session = Session(root, SessionSettings())
    session.start()  # off the caller's thread
    await wait_until(lambda: not killed.exists(), "the killed writer's temporary file removed")
    assert ours.exists() and ignored.exists()
    assert (root / "pkg" / "mod.py").read_text() == "print('intact')\n"
    await session.close()


async def test_a_started_session_watches_its_workspace_until_it_closes(tmp_path: Path) -> None:
    session = Session(tmp_path, SessionSettings(checkpoints=False))
    changed: list[str] = []
    session.events.subscribe(
        lambda event: changed.extend(event.paths) if isinstance(event, FilesChanged) else None
    )
    session.start()
    watcher = session.changes.watcher
    assert watcher is not None
    await wait_until(watcher.watching.is_set, "the session's watcher is watching")
    (tmp_path / "theirs.py").write_text("changed by someone else\n")
    await wait_until(lambda: "theirs.py" in changed, "the change reported as someone else's")
    assert "theirs.py" in session.notices.changed_files  # the model hears of it too
    await session.close()
    assert session.changes.watcher is None  # stopped by the close


async def test_a_session_started_without_watching_reports_nothing(tmp_path: Path) -> None:
    session = Session(tmp_path, SessionSettings(checkpoints=False))
    session.start(watch=False)
    assert session.changes.watcher is None
    assert not session.changes.command_echoes.watched  # each command scans for its own changes
    await session.close()
