"""Shared fixtures and helpers: a copy of a fixture workspace, the fake Messages API, waiting.

The suite runs in parallel (pytest-xdist, `make test-python`): every test gets its own folders
(`tmp_path`), its own fake API on a free port, and its own storage folder, and each worker its
own XDG_STATE_HOME, so that no two tests share anything but the source tree.
"""

from __future__ import annotations

import asyncio
import inspect
import shutil
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.hooks import (
    ApproveHook,
    AskHook,
    PlanReviewHook,
    ReviewHook,
    accept_all_edits,
    approve_all_commands,
    approve_all_plans,
    dismiss_all_questions,
)
from plansight.engine.model import ModelSettings
from plansight.fakeapi import FakeMessagesAPI
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

# How long a wait may last before it counts as a hang. Waits end as soon as what they wait for
# happens, so this is no time anything is expected to take: it is long, so that a busy machine
# (two suites on two cores) never fails a test that would pass on a quiet one.
PATIENCE = 60.0


async def wait_until(
    predicate: Callable[[], bool | Awaitable[bool]],
    what: str = "condition",
    timeout: float = PATIENCE,
) -> None:
    """Poll `predicate` (cheaply, every 10 ms) until it holds; TimeoutError after `timeout`.
    An async predicate (a request to the server, say) is awaited each time."""

    async def holds() -> bool:
        result = predicate()
        return await result if inspect.isawaitable(result) else result

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await holds():
        if loop.time() > deadline:
            raise TimeoutError(f"{what}: not met within {timeout:g} s")
        await asyncio.sleep(0.01)


def wait_until_sync(
    predicate: Callable[[], bool], what: str = "condition", timeout: float = PATIENCE
) -> None:
    """`wait_until` for code outside an event loop."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not met within {timeout:g} s")
        time.sleep(0.01)


class Held:
    """A fake API step answered only once the test calls `release()`: a model that takes as long
    as the test needs (to see a watcher's report, say), instead of a fixed hang that a busy
    machine can outlast. The fake API waits in its own thread, holding that request."""

    def __init__(self, step: Any) -> None:
        self.step = step
        self._released = threading.Event()
        self.asked = threading.Event()  # the request arrived

    def __call__(self, body: dict[str, Any]) -> Any:
        self.asked.set()
        if not self._released.wait(PATIENCE):
            raise TimeoutError("a held fake API step was never released")
        return self.step

    def release(self) -> None:
        self._released.set()


@pytest.fixture(autouse=True, scope="session")
def private_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A server started without `storageDir` stores its session under XDG_STATE_HOME: one of this
    test session (this worker), never the developer's own nor another worker's."""
    state = tmp_path_factory.mktemp("xdg-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(state))
        yield state


@pytest.fixture(autouse=True, scope="session")
def private_config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's own MCP servers (`$XDG_CONFIG_HOME/plansight/mcp.json`) are never started by
    a test: every server and session of the suite sees an empty config folder of its own."""
    config = tmp_path_factory.mktemp("xdg-config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(config))
        yield config


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first, so that parallel workers do not wait for one at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
    review_plan: PlanReviewHook | None = None,
    ask: AskHook | None = None,
) -> Session:
    settings = SessionSettings(
        ModelSettings(model="claude-sonnet-5-5", api_key="test-key", base_url=api.base_url),
        max_rounds=max_rounds,
    )
    return Session(
        root,
        settings,
        review=review or accept_all_edits,
        approve=approve or approve_all_commands,
        review_plan=review_plan or approve_all_plans,
        ask=ask or dismiss_all_questions,
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


def session_folder(storage: Path) -> Path:
    """Where the current session of a workspace's storage folder keeps its parts (protocol
    version 4: `sessions/<id>/`, registry.py); the folder itself before any session exists."""
    from plansight.session.registry import SessionRegistry

    current = SessionRegistry(SessionStore(storage, read_only=True)).current()
    return storage if current is None else storage / "sessions" / current
