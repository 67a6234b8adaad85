"""Recorded attempts (eval/recordings.py): saved where `--replay` finds them, read back as they
were, refused with the file and the reason when malformed, and tied to the version of their
task by a digest of its prompt and project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from plansight.eval.recordings import (
    RecordingError,
    find_recordings,
    load_recording,
    recording_path,
    save_recording,
    task_digest,
)
from plansight.eval.tasks import Task, load_task

from conftest import FIXTURES

TINY = FIXTURES / "eval_tiny" / "tasks" / "tiny-calc"
STEPS: dict[str, Any] = {"steps": [{"content": [{"type": "text", "text": "Done."}]}]}


@pytest.fixture
def task(tmp_path: Path) -> Task:
    root = tmp_path / "tasks" / "tiny-calc"
    shutil.copytree(TINY, root)
    return load_task(root)


def save(directory: Path, task: Task, arm: str = "plan", index: int = 1, **extra: Any) -> Path:
    return save_recording(
        directory,
        task=task,
        arm=arm,
        index=index,
        model="claude-sonnet-5-5",
        recorded_at="2026-12-01T20:00:00+00:00",
        recorded={**STEPS, **extra},
    )


def test_a_saved_recording_is_found_and_read_back_as_it_was(task: Task, tmp_path: Path) -> None:
    models = [{"id": "claude-sonnet-5-5", "display_name": "Sonnet"}]
    path = save(tmp_path / "rec", task, models=models)
    assert path == recording_path(tmp_path / "rec", "tiny-calc", "plan", 1)
    assert path == tmp_path / "rec" / "tiny-calc" / "plan-1.json"
    assert not list(path.parent.glob("*.tmp"))
    (found,) = find_recordings(tmp_path / "rec")
    assert (found.task, found.arm, found.index, found.model) == (
        "tiny-calc",
        "plan",
        1,
        "claude-sonnet-5-5",
    )
    assert found.origin == "live" and found.digest == task_digest(task)
    assert found.data["prompt"] == task.prompt
    assert found.models == models
    assert len(found.script().steps) == 1


def test_recordings_are_found_below_the_folder_in_task_arm_index_order(
    task: Task, tmp_path: Path
) -> None:
    for arm, index in (("plan", 2), ("noplan", 1), ("plan", 1)):
        save(tmp_path / "rec", task, arm, index)
    found = find_recordings(tmp_path / "rec")
    assert [(r.arm, r.index) for r in found] == [("noplan", 1), ("plan", 1), ("plan", 2)]
    assert found[0].models is None


def test_no_folder_or_an_empty_one_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="no recordings folder at"):
        find_recordings(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordingError, match=r"no recordings \(\*\.json\) under"):
        find_recordings(tmp_path / "empty")


META = {
    "task": "t",
    "arm": "plan",
    "index": 1,
    "model": "m",
    "origin": "hand-written",
    "taskDigest": "d",
}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read it as JSON"),
        (json.dumps([1, 2]), "not an eval recording"),
        (json.dumps(STEPS), "not an eval recording"),
        (json.dumps({"eval": META}), "'steps' list"),
        (json.dumps({"eval": {**META, "model": ""}, **STEPS}), "'eval' lacks model"),
        (json.dumps({"eval": {**META, "index": "1"}, **STEPS}), "'eval' lacks index"),
        (json.dumps({"eval": {**META, "origin": "guessed"}, **STEPS}), "origin must be one of"),
    ],
)
def test_a_malformed_recording_is_refused_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RecordingError, match=message) as refused:
        load_recording(path)
    assert str(path) in str(refused.value)


def test_the_digest_changes_with_the_prompt_or_the_project_only(task: Task) -> None:
    digest = task_digest(task)
    assert len(digest) == 16 and task_digest(load_task(task.root)) == digest
    (task.solution_dir / "calc.py").write_text("# another solution\n")
    (task.project_dir / "__pycache__").mkdir()
    (task.project_dir / "__pycache__" / "calc.pyc").write_bytes(b"cache")
    assert task_digest(task) == digest  # the solution and caches are no part of it
    (task.project_dir / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    changed_project = task_digest(task)
    assert changed_project != digest
    (task.project_dir / "calc.py").rename(task.project_dir / "calc2.py")
    assert task_digest(task) != changed_project  # a renamed file is a change too
    spec = task.root / "task.toml"
    spec.write_text(spec.read_text().replace("Make calc.add add", "Make calc.add sum"))
    assert task_digest(load_task(task.root)) != task_digest(task)
