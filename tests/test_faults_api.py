"""The model API failing mid-run, seen through the language server as an editor sees it.

Each fault hits the second round of a run (after a `todo` call), so the conversation already
holds a tool round. The run either recovers (the SDK's retries) or ends with status "error" and
a clear message that keeps the API's own words; `runFinished` is sent either way; the plan
survives; and the next run's request passes the fake's validation, so the conversation is
still one the real API would take.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import Drop, FakeMessagesAPI, Hang, HttpError, Step, StreamError
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import PATIENCE
from lsp_harness import EditorHandle, start_editor

FAST = {"retry-after-ms": "1"}  # the SDK honours it: retries without the default backoff
# PLANSIGHT_API_TIMEOUT for the hang group's server only: a hang ends only by the API timeout.
# Every other request of that server must never meet it, however busy the machine: the fake's
# first byte can come late, and a request timed out and retried takes a second script step.
# (At 0.5 s, for every group, a reply under load was taken twice and the next run found the
# script exhausted.) The other groups keep the default timeout.
HANG_API_TIMEOUT = "2"
NEVER = 10 * PATIENCE  # a hang that outlasts any wait: only the API timeout ends it
# Completed, so that the done gate does not ask about it: a run that recovers ends at once.
PLAN = {"items": [{"id": "1", "text": "Survive the outage", "status": "completed"}]}
RENDERED = "[x] #1: Survive the outage\n(1/1 completed)"


@dataclass(frozen=True)
class Fault:
    steps: tuple[Step, ...]
    status: str  # "done": the run recovered; "error": it ended with an error
    says: tuple[str, ...] = ()  # what the run's `error` must contain (the API's own words)
    attempts: int = 1  # requests the fault takes (the SDK's retries included)


PARTIAL_TOOL = (
    {"type": "text", "text": "Now I will read the file that matters most. "},
    {"type": "tool_use", "name": "read_file", "input": {"path": "hello.py", "limit": 40}},
)

FAULTS: dict[str, Fault] = {
    "429-burst-then-ok": Fault(
        (HttpError(429, headers=FAST), HttpError(429, headers=FAST)), "done", attempts=2
    ),
    "529-burst-then-ok": Fault(
        (HttpError(529, headers=FAST), HttpError(529, headers=FAST)), "done", attempts=2
    ),
    "429-exhausted": Fault(
        tuple(HttpError(429, message="Slow down: test burst 429", headers=FAST) for _ in range(3)),
        "error",
        ("rate_limit_error", "Slow down: test burst 429", "429"),
        attempts=3,
    ),
    "529-exhausted": Fault(
        tuple(HttpError(529, message="Overloaded: test burst 529", headers=FAST) for _ in range(3)),
        "error",
        ("overloaded_error", "Overloaded: test burst 529", "529"),
        attempts=3,
    ),
    "500-once-then-ok": Fault((HttpError(500, headers=FAST),), "done", attempts=1),
    "500-exhausted": Fault(
        tuple(HttpError(500, message="Internal failure: test 500", headers=FAST) for _ in range(3)),
        "error",
        ("api_error", "Internal failure: test 500", "500"),
        attempts=3,
    ),
    "401-not-retried": Fault(
        (HttpError(401, message="invalid x-api-key (test 401)"),),
        "error",
        ("authentication_error", "invalid x-api-key (test 401)"),
    ),
    # An `error` event inside a 200 stream is retried like its HTTP status (529, 500).
    "error-event-then-ok": Fault(
        (StreamError(after_blocks=1, message="Overloaded mid-stream", content=PARTIAL_TOOL),),
        "done",
        attempts=1,
    ),
    "error-event-after-text": Fault(
        tuple(
            StreamError(
                after_blocks=1, message="Overloaded mid-stream (test)", content=PARTIAL_TOOL
            )
            for _ in range(3)
        ),
        "error",
        ("Overloaded mid-stream (test)",),
        attempts=3,
    ),
    "error-event-inside-tool-use": Fault(
        tuple(
            StreamError(
                after_blocks=1,
                partial=True,
                error_type="api_error",
                message="Stream broke inside a tool call (test)",
                content=PARTIAL_TOOL,
            )
            for _ in range(3)
        ),
        "error",
        ("Stream broke inside a tool call (test)",),
        attempts=3,
    ),
    "drop-inside-tool-use": Fault(
        (Drop(after_blocks=1, partial=True, content=PARTIAL_TOOL),), "error", ("connection",)
    ),
    "drop-before-any-block": Fault(
        (Drop(after_blocks=0, content=PARTIAL_TOOL),), "error", ("connection",)
    ),
    "hang-then-ok": Fault((Hang(NEVER),), "done", attempts=1),
    "hang-exhausted": Fault(
        tuple(Hang(NEVER) for _ in range(3)), "error", ("timed out",), attempts=3
    ),
}


GROUPS = {
    "http": [
        "429-burst-then-ok",
        "529-burst-then-ok",
        "429-exhausted",
        "529-exhausted",
        "500-once-then-ok",
        "500-exhausted",
        "401-not-retried",
    ],
    "stream": [
        "error-event-then-ok",
        "error-event-after-text",
        "error-event-inside-tool-use",
        "drop-inside-tool-use",
        "drop-before-any-block",
    ],
    "hang": ["hang-then-ok", "hang-exhausted"],
}


@pytest.fixture
async def editor(
    request: pytest.FixtureRequest, hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> Any:
    callspec = getattr(request.node, "callspec", None)
    hangs = callspec is not None and callspec.params.get("group") == "hang"
    handle = await start_editor(
        hello_workspace,
        fake_api,
        storage=tmp_path / "state",
        env={"PLANSIGHT_API_TIMEOUT": HANG_API_TIMEOUT} if hangs else None,
    )
    yield handle
    await handle.stop()


def finished_results(editor: EditorHandle) -> list[dict[str, Any]]:
    return [e["result"] for e in editor.recorder.events if e["type"] == "runFinished"]


async def fault_then_next_run(editor: EditorHandle, fake_api: FakeMessagesAPI, name: str) -> None:
    """One run hit by the fault in its second round, then a run that must go through."""
    fault = FAULTS[name]
    requests_before = len(fake_api.message_requests)
    finished_before = len(finished_results(editor))
    prompt = f"Work through the outage ({name})"
    fake_api.push(tool("todo", PLAN), *fault.steps)
    if fault.status == "done":
        fake_api.push(text("Finished after the fault."))
    # A run that waited out a hang (or the SDK's default backoff for ever) never ends.
    result = await asyncio.wait_for(editor.request("plansight/run", {"prompt": prompt}), PATIENCE)
    made = len(fake_api.message_requests) - requests_before
    assert made == 1 + fault.attempts + (fault.status == "done"), (name, made)

    # The user sees how the run ended, and the same result in runFinished.
    assert result["status"] == fault.status, (name, result)
    await editor.recorder.wait_for(lambda: len(finished_results(editor)) > finished_before)
    assert finished_results(editor)[finished_before:] == [result], name
    if fault.status == "done":
        assert result["text"] == "Finished after the fault." and "error" not in result, name
    else:
        error = result.get("error")
        assert isinstance(error, str) and error.strip(), (name, result)
        for words in fault.says:
            assert words in error, (name, error, words)
        assert error in result["text"], name  # the final text says why the run stopped
        assert result["rounds"] == 2, name

    # Nothing of the run is stuck, and the plan written before the fault is intact.
    state = await editor.request("plansight/state", {})
    assert state["running"] is False, name
    assert state["todos"]["rendered"] == RENDERED, name

    # The conversation is still one the API accepts: the next run goes through validation.
    fake_api.push(text("Back to work."))
    again = await editor.request("plansight/run", {"prompt": f"Try again after {name}"})
    assert again["status"] == "done" and again["text"] == "Back to work.", (name, again)
    last = fake_api.message_requests[-1]
    assert last.status == 200 and last.outcome == "reply", (name, last.status, last.error)
    messages = last.body["messages"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles)), (name, roles)
    texts = [b.get("text") for m in messages for b in m["content"] if b["type"] == "text"]
    assert prompt in texts, name
    # The partial tool call of a broken stream never reached the conversation.
    assert not any(
        block["type"] == "tool_use" and block["name"] == "read_file"
        for m in messages
        for block in m["content"]
    ), name


# The hang group waits out its API timeouts (about 10 s): started first, with the other slow tests.
@pytest.mark.parametrize(
    "group", [pytest.param(g, marks=pytest.mark.slow) if g == "hang" else g for g in GROUPS]
)
async def test_api_faults_mid_run_recover_or_end_cleanly(
    editor: EditorHandle, fake_api: FakeMessagesAPI, group: str
) -> None:
    """One server takes every fault of the group in a row (a stricter test of the
    conversation than a fresh server per fault, and the SDK is imported once)."""
    for name in GROUPS[group]:
        await fault_then_next_run(editor, fake_api, name)
    assert len(finished_results(editor)) == 2 * len(GROUPS[group])


async def test_a_fault_in_the_first_round_keeps_the_prompt_for_the_next_run(
    editor: EditorHandle, fake_api: FakeMessagesAPI
) -> None:
    fake_api.push(*(HttpError(529, headers=FAST) for _ in range(3)))
    first = await editor.request("plansight/run", {"prompt": "First attempt"})
    assert first["status"] == "error" and "overloaded_error" in first["error"]
    assert first["rounds"] == 1
    fake_api.push(text("Now it works."))
    second = await editor.request("plansight/run", {"prompt": "Second attempt"})
    assert second["status"] == "done"
    messages = fake_api.message_requests[-1].body["messages"]
    texts = [b["text"] for b in messages[0]["content"] if b["type"] == "text"]
    assert texts == ["First attempt", "Second attempt"]
    assert len(messages) == 1


def test_every_fault_is_exercised() -> None:
    assert sorted(name for names in GROUPS.values() for name in names) == sorted(FAULTS)
