"""Checkpoints of the workspace and undo by checkpoint or by plan step (no LSP in here).

`CheckpointStore` (store.py) snapshots the workspace into a git repository of Plansight's own
and restores files from it; `Checkpoint` (manifest.py) is one snapshot's record.
"""

from plansight.checkpoints.manifest import Checkpoint, Kind
from plansight.checkpoints.restore import AlsoUndone, RestoreRequest, RestoreResult, Skipped
from plansight.checkpoints.store import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CHECKPOINTS,
    DEFAULT_MAX_FILE_BYTES,
    CheckpointError,
    CheckpointNotFound,
    CheckpointStore,
    CheckpointsUnavailable,
    StepFile,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CHECKPOINTS",
    "DEFAULT_MAX_FILE_BYTES",
    "AlsoUndone",
    "Checkpoint",
    "CheckpointError",
    "CheckpointNotFound",
    "CheckpointStore",
    "CheckpointsUnavailable",
    "Kind",
    "RestoreRequest",
    "RestoreResult",
    "Skipped",
    "StepFile",
]
