"""Shared fixtures: a copy of a fixture workspace, and the fake Messages API."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@pytest.fixture
def hello_workspace(tmp_path: Path) -> Path:
    target = tmp_path / "hello"
    shutil.copytree(FIXTURES / "hello", target)
    return target
