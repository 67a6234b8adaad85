"""Recorded attempts: one JSON file each, in the fake Messages API's script format.

A recording is `{"eval": {...}, "prompt": str, "steps": [...], "models"?: [...]}`: `steps`
and `models` are what `plansight.fakeapi` serves (`Script.from_dict`, `FakeMessagesAPI(models=)`),
`eval` says what it is: `task`, `arm`, `index` (the repeat), `model`, `recordedAt`, `origin`
(`live`: recorded from a real endpoint by `--record`; `hand-written`: made for the kit's own
tests), and `taskDigest`, a hash of the task's prompt and project, so that a recording is
never replayed against a task that has changed since (its steps would no longer fit), and
`options`, the arm's initialization options it was recorded with (a replay sends them again;
a recording without them gets its arm's).

Files live at `DIR/<task>/<arm>-<index>.json`; `--replay DIR` finds every `*.json` below DIR.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plansight.eval.tasks import Task, project_files
from plansight.fakeapi import Script, ScriptError

ORIGINS = ("live", "hand-written")


class RecordingError(ValueError):
    """A recording is malformed or does not fit its task."""


def task_digest(task: Task) -> str:
    digest = hashlib.sha256(task.prompt.encode())
    for relative in sorted(project_files(task.project_dir)):
        digest.update(b"\0" + relative.encode() + b"\0")
        digest.update((task.project_dir / relative).read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Recording:
    path: Path
    task: str
    arm: str
    index: int
    model: str
    origin: str
    digest: str
    data: dict[str, Any]

    @property
    def options(self) -> dict[str, Any] | None:
        """The arm's initialization options as recorded, None when the recording has none."""
        meta = self.data.get("eval")
        options = meta.get("options") if isinstance(meta, dict) else None
        return dict(options) if isinstance(options, dict) else None

    def script(self) -> Script:
        return Script.from_dict(self.data)

    @property
    def models(self) -> list[dict[str, Any]] | None:
        models = self.data.get("models")
        return [dict(m) for m in models] if isinstance(models, list) else None


def load_recording(path: Path) -> Recording:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise RecordingError(f"{path}: cannot read it as JSON: {err}") from None
    meta = data.get("eval") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        raise RecordingError(f"{path}: not an eval recording (no 'eval' object)")
    try:
        Script.from_dict(data)
    except ScriptError as err:
        raise RecordingError(f"{path}: {err}") from None
    fields = {key: meta.get(key) for key in ("task", "arm", "model", "origin", "taskDigest")}
    missing = [key for key, value in fields.items() if not isinstance(value, str) or not value]
    index = meta.get("index")
    if missing or not isinstance(index, int):
        raise RecordingError(f"{path}: 'eval' lacks {', '.join(missing) or 'index'}")
    if fields["origin"] not in ORIGINS:
        raise RecordingError(f"{path}: origin must be one of {ORIGINS}")
    return Recording(
        path=path,
        task=str(fields["task"]),
        arm=str(fields["arm"]),
        index=index,
        model=str(fields["model"]),
        origin=str(fields["origin"]),
        digest=str(fields["taskDigest"]),
        data=data,
    )


def find_recordings(directory: Path) -> list[Recording]:
    if not directory.is_dir():
        raise RecordingError(f"no recordings folder at {directory}")
    found = [load_recording(path) for path in sorted(directory.rglob("*.json"))]
    if not found:
        raise RecordingError(f"no recordings (*.json) under {directory}")
    return sorted(found, key=lambda r: (r.task, r.arm, r.index))


def recording_path(directory: Path, task: str, arm: str, index: int) -> Path:
    return directory / task / f"{arm}-{index}.json"


def save_recording(
    directory: Path,
    *,
    task: Task,
    arm: str,
    index: int,
    model: str,
    recorded_at: str,
    recorded: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> Path:
    path = recording_path(directory, task.name, arm, index)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "eval": {
            "task": task.name,
            "arm": arm,
            "index": index,
            "model": model,
            "recordedAt": recorded_at,
            "origin": "live",
            "taskDigest": task_digest(task),
            "options": options or {},
        },
        "prompt": task.prompt,
        **recorded,
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
