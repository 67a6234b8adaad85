"""A workspace stored by version 3 (fixtures/v3-workspace, made with the version 3 code) opened
by today's server: its one session becomes the workspace's first session, nothing lost, the
conversation, plan, scratchpad, usage, history and checkpoints all found again; and a kill in
the middle of the move is finished by the next start.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.session.registry import STAGING, SessionRegistry
from plansight.session.storage import SESSIONS, SessionStore

from conftest import FIXTURES
from lsp_harness import start_editor

V3 = FIXTURES / "v3-workspace"
FIRST_PROMPT = "Add type hints to hello.py and run the tests"


def copy_v3(tmp_path: Path) -> tuple[Path, Path]:
    workspace, storage = tmp_path / "workspace", tmp_path / "storage"
    shutil.copytree(V3 / "workspace", workspace)
    shutil.copytree(V3 / "storage", storage)
    return workspace, storage


def v3_part(name: str) -> Any:
    return json.loads((V3 / "storage" / name).read_text())


async def test_a_v3_workspace_opens_as_its_first_session_with_everything(
    tmp_path: Path,
) -> None:
    workspace, storage = copy_v3(tmp_path)
    with FakeMessagesAPI([text("Carrying on.")]) as api:
        handle = await start_editor(workspace, api, storage=storage)
        try:
            [session] = (await handle.request("plansight/sessions", {}))["sessions"]
            assert session["current"] is True and session["title"] == FIRST_PROMPT
            assert session["counts"]["completed"] == 2
            # Moved, not copied: no version 3 part is left at the top.
            folder = storage / SESSIONS / session["id"]
            for name in ("plan.json", "scratchpad.json", "usage.json", "conversation.jsonl"):
                assert not (storage / name).exists() and (folder / name).is_file(), name
            assert json.loads((folder / "usage.json").read_text()) == v3_part("usage.json")

            state = await handle.request("plansight/state", {})
            assert [i["text"] for i in state["todos"]["items"]] == [
                "Add type hints",
                "Run the tests",
            ]
            assert state["todos"]["version"] == v3_part("plan.json")["version"]
            assert state["scratchpad"] == "greet takes a str (v3 scratchpad canary)"
            history = await handle.request("plansight/history", {})
            assert [r["prompt"] for r in history["runs"]] == [
                FIRST_PROMPT,
                "Anything left? (second v3 prompt)",
            ]
            checkpoints = (await handle.request("plansight/checkpoints", {}))["checkpoints"]
            assert [c["id"] for c in checkpoints][:5] == ["1", "2", "3", "4", "5"]
            # The v3 checkpoints' files are there to look at and restore.
            shown = await handle.request(
                "plansight/checkpointFile", {"checkpoint": "1", "path": "hello.py"}
            )
            assert shown["exists"] is True and "def greet(name):" in shown["text"]
            await handle.request("plansight/restore", {"checkpoint": "1", "dryRun": True})

            # The conversation goes on: the model is sent the version 3 runs' messages.
            await handle.request("plansight/run", {"prompt": "And now?"})
            sent = json.dumps(api.bodies[-1])
            assert FIRST_PROMPT in sent and "v3 answer canary" in sent
            assert "second v3 run" in sent
            # The new run's checkpoints name the session (version 4); the v3 ones name none.
            after = (await handle.request("plansight/checkpoints", {}))["checkpoints"]
            assert after[-1]["sessionId"] == session["id"]
            assert all("sessionId" not in c for c in after[:5])
        finally:
            await handle.stop()


def test_a_move_killed_half_way_is_finished_by_the_next_start(tmp_path: Path) -> None:
    _, storage = copy_v3(tmp_path)
    # As a kill leaves it: the staging folder made, two parts moved, the rest not yet.
    staged = storage / SESSIONS / f"{STAGING}abc123"
    staged.mkdir(parents=True)
    for name in ("plan.json", "conversation.jsonl"):
        (storage / name).replace(staged / name)
    store = SessionStore(storage)
    registry = SessionRegistry(store)
    assert registry.migrate() == "abc123"
    folder = storage / SESSIONS / "abc123"
    expected = {"plan.json", "scratchpad.json", "usage.json", "conversation.jsonl"}
    assert expected | {"history.jsonl", "session.json"} <= {p.name for p in folder.iterdir()}
    assert registry.ids() == ["abc123"] and registry.current() == "abc123"
    assert registry.meta("abc123").title == FIRST_PROMPT
    assert registry.migrate() is None  # once moved, nothing more to do


def test_a_read_only_view_reads_a_v3_folder_where_it_is(tmp_path: Path) -> None:
    _, storage = copy_v3(tmp_path)
    registry = SessionRegistry(SessionStore(storage, read_only=True))
    assert registry.migrate() is None  # it moves nothing
    [legacy] = registry.ids()
    assert registry.scratchpad(legacy) == "greet takes a str (v3 scratchpad canary)"
    assert not (storage / SESSIONS).exists()
