"""Shared fixtures: a copy of a fixture workspace, and the fake Messages API."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.hooks import ApproveHook, ReviewHook, accept_all_edits, approve_all_commands
from plansight.session import Session, SessionSettings
from plansight.storage import SessionStore

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@pytest.fixture
def hello_workspace(tmp_path: Path) -> Path:
    target = tmp_path / "hello"
    shutil.copytree(FIXTURES / "hello", target)
    return target


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A scripted fake Messages API on 127.0.0.1; tests `push` the steps they need."""
    api = FakeMessagesAPI()
    api.start()
    yield api
    api.stop()


def make_session(
    root: Path,
    api: FakeMessagesAPI,
    *,
    max_rounds: int = 50,
    store: SessionStore | None = None,
    review: ReviewHook | None = None,
    approve: ApproveHook | None = None,
) -> Session:
    settings = SessionSettings(
        model="claude-sonnet-5-5",
        api_key="test-key",
        base_url=api.base_url,
        max_rounds=max_rounds,
    )
    return Session(
        root,
        settings,
        review=review or accept_all_edits,
        approve=approve or approve_all_commands,
        store=store,
    )


def user_texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [block["text"] for block in content if block["type"] == "text"]


def block_types(message: dict[str, Any]) -> list[str]:
    return [block["type"] for block in message["content"]]


def strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value
