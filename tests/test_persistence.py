"""session/persistence.py: each change saved as it happens, a restart loads it back, and
storage that cannot be read as a session is said so and left for a fresh start."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.engine.conversation import Conversation
from plansight.engine.events import (
    ConversationChanged,
    EventBus,
    PlanChanged,
    RunFinished,
    RunResult,
    RunStarted,
    ScratchpadChanged,
    Usage,
)
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.session.persistence import SessionPersistence
from plansight.session.storage import SessionStore
from plansight.workspace.atomic import TEMP_SUFFIX

USER = {"role": "user", "content": [{"type": "text", "text": "Add type hints"}]}
ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}


class Parts:
    """A session's parts and its event bus, with a persistence attached to them."""

    def __init__(self, directory: Path) -> None:
        self.events = EventBus()
        self.plan = Plan()
        self.scratchpad = Scratchpad()
        self.conversation = Conversation()
        self.persistence = SessionPersistence.attach(
            SessionStore(directory),
            self.events,
            plan=self.plan,
            scratchpad=self.scratchpad,
            conversation=self.conversation,
        )

    def work(self) -> None:
        """A run's worth of changes, told as the session tells them."""
        self.events.emit(RunStarted("Add type hints"))
        state = self.plan.update_from_user([{"id": "1", "text": "Hints", "status": "in_progress"}])
        self.events.emit(PlanChanged(state))
        self.scratchpad.write("hello.py has no hints yet")
        self.events.emit(ScratchpadChanged(self.scratchpad.content))
        self.conversation.messages[:] = [USER, ANSWER]
        self.events.emit(ConversationChanged())
        self.events.emit(RunFinished(RunResult("done", "Done.", 1, Usage(10, 5, 2, 1))))


def test_a_restart_loads_what_was_saved_as_it_happened(tmp_path: Path) -> None:
    first = Parts(tmp_path / "store")
    first.work()

    second = Parts(tmp_path / "store")
    heard: list[object] = []
    second.events.subscribe(heard.append)
    assert second.persistence.load_stored()

    assert second.plan.state.items == first.plan.state.items
    assert second.plan.state.version == first.plan.state.version
    assert second.plan.state.source == "restore"
    assert second.scratchpad.content == "hello.py has no hints yet"
    assert second.conversation.messages == [USER, ANSWER]
    assert second.persistence.usage == Usage(10, 5, 2, 1)
    assert second.persistence.last_prompt() == "Add type hints"
    assert [run["prompt"] for run in second.persistence.history(5)] == ["Add type hints"]
    assert heard == []  # loading is not a change: nothing is announced, nothing saved again


def test_nothing_stored_is_no_session(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "store")
    assert not parts.persistence.load_stored()
    assert parts.plan.state.items == () and parts.conversation.messages == []


def test_usage_adds_up_over_runs_and_compactions(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "store")
    parts.work()
    parts.persistence.spent(Usage(input_tokens=100))  # a compaction on request
    restarted = Parts(tmp_path / "store")
    restarted.persistence.load_stored()
    assert restarted.persistence.usage == Usage(110, 5, 2, 1)


def test_a_new_session_forgets_the_stored_one_but_not_its_history(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "store")
    parts.work()
    parts.persistence.new_session()
    restarted = Parts(tmp_path / "store")
    assert not restarted.persistence.load_stored()
    assert [run["prompt"] for run in restarted.persistence.history(5)] == ["Add type hints"]


# A server killed by SIGKILL as it saves the plan: between its temporary file and the rename.
KILLED_MID_SAVE = """
import os, signal, sys
from pathlib import Path
from plansight.engine.conversation import Conversation
from plansight.engine.events import EventBus, PlanChanged
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.session.persistence import SessionPersistence
from plansight.session.storage import SessionStore
from plansight.workspace import atomic

events, plan = EventBus(), Plan()
SessionPersistence.attach(
    SessionStore(Path(sys.argv[1])), events, plan=plan, scratchpad=Scratchpad(),
    conversation=Conversation(),
)
atomic.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
state = plan.update_from_user([{"id": "9", "text": "never saved", "status": "pending"}])
events.emit(PlanChanged(state))
"""


def test_a_kill_mid_save_leaves_the_previous_plan_whole(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    Parts(directory).work()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SAVE, str(directory)], check=False, timeout=60
    )
    assert killed.returncode == -signal.SIGKILL
    [leftover] = [p for p in directory.iterdir() if p.name.endswith(TEMP_SUFFIX)]

    restarted = Parts(directory)
    assert restarted.persistence.load_stored()
    assert restarted.plan.state.rendered == "[>] #1: Hints\n(0/1 completed)"
    assert not leftover.exists()  # the killed save's temporary file is cleaned up


@pytest.mark.parametrize(
    "plan",
    [
        {"items": [{"id": "1", "text": "no status"}], "version": 2},
        {"items": [{"id": "1", "text": "x", "status": "pending"}], "version": "two"},
        {"items": "not a list of items", "version": 1},
    ],
)
def test_a_malformed_stored_session_starts_fresh_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, plan: object
) -> None:
    directory = tmp_path / "store"
    directory.mkdir()
    (directory / "plan.json").write_text(json.dumps(plan))
    (directory / "scratchpad.json").write_text(json.dumps({"content": "kept notes?"}))
    parts = Parts(directory)

    with caplog.at_level(logging.ERROR, logger="plansight.session.persistence"):
        assert not parts.persistence.load_stored()

    assert parts.plan.state.items == ()
    assert parts.scratchpad.content == ""
    assert parts.conversation.messages == []
    [record] = caplog.records
    assert "malformed" in record.getMessage() and "starting fresh" in record.getMessage()
    assert str(directory) in record.getMessage()
