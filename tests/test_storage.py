"""Session storage: atomic parts, restore, leftovers of an interrupted save."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.engine.events import PlanChanged
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore, default_storage_dir
from plansight.workspace.atomic import TEMP_SUFFIX


def test_default_storage_is_per_workspace_and_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    a, b = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert default_storage_dir(a) != default_storage_dir(b)
    assert default_storage_dir(a).is_relative_to(tmp_path / "state")
    assert not default_storage_dir(a).is_relative_to(a)


# Another server, killed by SIGKILL between writing its temporary file and the rename.
KILLED_MID_SAVE = """
import os, signal, sys
from pathlib import Path
from plansight.workspace import atomic
from plansight.session.storage import SessionStore
atomic.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
SessionStore(Path(sys.argv[1])).save("plan", {"items": [], "version": 99})
"""


def test_a_session_round_trips_and_drops_leftovers_of_a_killed_save(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "store")
    first = Session(tmp_path, SessionSettings(), store=store)
    first.edit_plan([{"id": "1", "text": "keep me", "status": "in_progress"}])
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SAVE, str(store.directory)], check=False, timeout=60
    )
    assert killed.returncode == -signal.SIGKILL
    [leftover] = [p for p in store.directory.iterdir() if p.name.endswith(TEMP_SUFFIX)]

    second = Session(tmp_path, SessionSettings(), store=SessionStore(tmp_path / "store"))
    seen: list[object] = []
    second.events.subscribe(seen.append)
    assert second.load_stored()
    assert second.plan.state.rendered == "[>] #1: keep me\n(0/1 completed)"
    assert second.plan.state.version == first.plan.state.version
    assert not leftover.exists()
    assert not [e for e in seen if isinstance(e, PlanChanged)]  # restoring is not a change


def test_a_corrupt_part_is_set_aside_and_the_rest_still_loads(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "store")
    store.save("scratchpad", {"content": "notes"})
    (store.directory / "plan.json").write_text("{not json")
    session = Session(tmp_path, SessionSettings(), store=store)
    assert session.load_stored()
    assert session.scratchpad.content == "notes"
    assert session.plan.state.items == ()
    assert (store.directory / "plan.corrupt").exists()


def test_the_conversation_log_appends_and_rewrites_only_on_change(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "store")
    log = store.conversation
    first = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    second = {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    log.save([first])
    inode = log.path.stat().st_ino
    log.save([first, second])
    assert log.path.stat().st_ino == inode  # appended, not rewritten
    assert log.path.read_text().count("\n") == 2
    second["content"].append({"type": "text", "text": "more"})  # an earlier message changed
    log.save([first, second])
    assert SessionStore(tmp_path / "store").conversation.load() == [first, second]
    log.save([])
    assert SessionStore(tmp_path / "store").conversation.load() == []


def test_a_damaged_tail_of_the_log_is_dropped_on_load(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "store")
    message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    store.conversation.save([message])
    with store.conversation.path.open("a") as handle:
        handle.write('{"role": "assistant", "cont')
    fresh = SessionStore(tmp_path / "store").conversation
    assert fresh.load() == [message]
    assert fresh.path.read_text().count("\n") == 1  # the damage is gone for good


def test_a_read_only_store_reads_what_it_can_and_writes_nothing(tmp_path: Path) -> None:
    """The read-only view's store (session/lock.py): another server may be writing these files
    at that moment, so nothing is repaired, set aside, cleaned up or saved."""
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "plan.json").write_text("{not json")
    (folder / "scratchpad.json").write_text('{"content": "kept"}')
    (folder / "conversation.jsonl").write_text('{"role": "user", "content": "hi"}\n{"role": "as')
    (folder / f"plan.json.x{TEMP_SUFFIX}").write_text("a save under way")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}

    store = SessionStore(folder, read_only=True)
    assert store.load("plan") is None
    assert store.load("scratchpad") == {"content": "kept"}
    assert store.conversation.load() == [{"role": "user", "content": "hi"}]
    store.remove_leftovers()
    store.save("scratchpad", {"content": "changed"})
    store.conversation.save([{"role": "user", "content": "other"}])
    store.clear()
    store.history.record({"type": "runStarted", "prompt": "p"})
    store.history.flush()

    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before
