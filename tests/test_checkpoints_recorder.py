"""The checkpointer: when checkpoints are taken, in what order, with what they keep."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from plansight.checkpoints import Checkpoint, CheckpointError, RestoreRequest
from plansight.checkpoints.recorder import Checkpointer, SessionView
from plansight.engine.conversation import Conversation, text_block
from plansight.plan.plan import Plan

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")


class Harness:
    """A plan and a conversation as a session holds them, and what was announced."""

    def __init__(self, root: Path, storage: Path) -> None:
        self.root = root
        self.plan = Plan()
        self.conversation = Conversation()
        self.unsaved: set[str] = set()
        self.announced: list[Checkpoint] = []
        view = SessionView(
            in_progress=lambda: (
                item.id if (item := self.plan.state.in_progress) is not None else None
            ),
            plan=lambda: {
                "items": [i.to_wire() for i in self.plan.state.items],
                "version": self.plan.state.version,
            },
            messages=lambda: list(self.conversation.messages),
            unsaved=lambda path: path in self.unsaved,
        )
        self.checkpointer = Checkpointer(storage, root, view, self.announced.append)

    def set_plan(self, *statuses: str) -> None:
        items = [
            {"id": str(n), "text": f"step {n}", "status": status}
            for n, status in enumerate(statuses, 1)
        ]
        state = self.plan.update_from_model(items).state
        in_progress = state.in_progress
        self.checkpointer.plan_changed(in_progress.id if in_progress else None)

    def say(self, role: str, text: str) -> None:
        self.conversation.messages.append({"role": role, "content": [text_block(text)]})


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    (root / "notes.txt").write_text("notes v1\n")
    made = Harness(root, tmp_path / "checkpoints")
    await made.checkpointer.open()
    yield made
    await made.checkpointer.close()


async def test_a_run_takes_its_checkpoints_in_order_each_with_its_item(harness: Harness) -> None:
    cp = harness.checkpointer
    harness.say("user", "refactor it")
    cp.run_started()
    harness.set_plan("in_progress", "pending")
    await cp.before_edit("app.py")
    (harness.root / "app.py").write_text("print('v2')\n")
    cp.edited("app.py")
    await cp.before_command()
    (harness.root / "made.txt").write_text("by the command\n")
    cp.command_ran("python gen.py")
    await cp.before_command()
    cp.command_ran("ls")  # changed nothing: no checkpoint
    harness.set_plan("completed", "in_progress")
    await cp.settled()

    taken = await cp.checkpoints()
    assert [(c.kind, c.todo_id, c.label) for c in taken] == [
        ("runStart", None, "Run started"),
        ("itemStart", "1", "#1 started"),
        ("edit", "1", "Edited app.py"),
        ("command", "1", "Ran python gen.py"),
        ("itemStart", "2", "#2 started"),
    ]
    assert [c.to_wire()["paths"] for c in taken] == [[], [], ["app.py"], ["made.txt"], []]
    assert harness.announced == taken  # each announced once it was taken


async def test_outside_changes_before_a_command_are_not_the_commands(harness: Harness) -> None:
    cp = harness.checkpointer
    cp.run_started()
    await cp.settled()
    (harness.root / "notes.txt").write_text("the user typed this\n")
    await cp.before_command()
    (harness.root / "made.txt").write_text("by the command\n")
    cp.command_ran("make")
    taken = await cp.checkpoints()
    assert [(c.kind, c.changed, c.agent) for c in taken[1:]] == [
        ("outside", ("notes.txt",), ()),
        ("command", ("made.txt",), ("made.txt",)),
    ]


async def test_asking_for_a_snapshot_does_not_wait_for_it(harness: Harness) -> None:
    cp = harness.checkpointer
    await cp.settled()
    stored = cp.store.checkpoints()
    cp.run_started()
    # Not taken yet, nor announced: it is taken in the worker thread once the loop goes on.
    assert cp.store.checkpoints() == stored and harness.announced == []
    await cp.settled()
    assert [c.kind for c in harness.announced] == ["runStart"]
    assert [c.kind for c in cp.store.checkpoints()[len(stored) :]] == ["runStart"]


async def test_each_checkpoint_keeps_the_plan_and_the_complete_rounds(harness: Harness) -> None:
    cp = harness.checkpointer
    harness.say("user", "first")
    harness.say("assistant", "done")
    cp.run_started()
    await cp.settled()
    checkpoint = (await cp.checkpoints())[-1]
    assert cp.archive.load(checkpoint.extra["conversation"]) == harness.conversation.messages
    assert checkpoint.extra["plan"] == {"items": [], "version": 0}


async def test_undoing_a_step_with_the_conversation_goes_back_to_its_start(
    harness: Harness,
) -> None:
    cp = harness.checkpointer
    harness.say("user", "do both steps")
    cp.run_started()
    harness.set_plan("in_progress", "pending")
    before_step = list(harness.conversation.messages)
    harness.say("assistant", "working on step 1")
    await cp.before_edit("app.py")
    (harness.root / "app.py").write_text("print('step 1')\n")
    cp.edited("app.py")
    harness.set_plan("completed", "in_progress")

    restored = await cp.restore(RestoreRequest(todo_id="1", conversation=True))

    assert restored.result.restored == ("app.py",)
    assert (harness.root / "app.py").read_text() == "print('v1')\n"
    assert restored.messages == before_step
    assert restored.plan is not None
    assert [i["status"] for i in restored.plan["items"]] == ["pending", "pending"]
    kinds = [c.kind for c in harness.announced]
    assert kinds[-2:] == ["beforeRestore", "restore"]
    # The checkpoint taken first can undo the restore, conversation included.
    undo = await cp.restore(RestoreRequest(checkpoint=restored.result.before.id, conversation=True))
    assert (harness.root / "app.py").read_text() == "print('step 1')\n"
    assert undo.messages == harness.conversation.messages
    plan: dict[str, Any] | None = undo.plan
    assert plan is not None and [i["status"] for i in plan["items"]] == ["completed", "in_progress"]


async def test_unsaved_files_are_asked_about_on_the_event_loop(harness: Harness) -> None:
    cp = harness.checkpointer
    cp.run_started()
    await cp.before_edit("app.py")
    (harness.root / "app.py").write_text("print('agent')\n")
    cp.edited("app.py")
    harness.unsaved.add("app.py")
    restored = await cp.restore(RestoreRequest(checkpoint="1", force=True))
    assert restored.result.restored == ()
    assert [s.reason for s in restored.result.skipped] == ["it has unsaved changes in the editor"]
    assert restored.plan is None and restored.messages is None


async def test_a_conversation_that_is_not_held_refuses_before_any_file_changes(
    harness: Harness,
) -> None:
    cp = harness.checkpointer
    cp.run_started()
    await cp.before_edit("app.py")
    (harness.root / "app.py").write_text("print('agent')\n")
    cp.edited("app.py")
    await cp.settled()
    cp.archive.path.write_bytes(b"")  # the archive lost (deleted by hand, say)
    with pytest.raises(CheckpointError, match="does not hold the conversation"):
        await cp.restore(RestoreRequest(checkpoint="1", conversation=True))
    assert (harness.root / "app.py").read_text() == "print('agent')\n"


async def test_without_git_the_checkpointer_is_off_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    made = Harness(tmp_path, tmp_path / "cp")
    await made.checkpointer.open()
    assert not made.checkpointer.on
    assert made.checkpointer.off_reason is not None
    assert "git program was not found" in made.checkpointer.off_reason
    made.checkpointer.run_started()
    await made.checkpointer.settled()
    assert made.announced == []
