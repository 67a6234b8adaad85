"""plansight.protocol: the wire's names in one place, engine-free, and agreeing with everything
that also spells them: the engine's events and statuses, the server's handlers, the VS Code
client's protocol.ts, and docs/protocol.md."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from plansight.checkpoints import Checkpoint
from plansight.engine import events
from plansight.mcp.servers import ServerStatus
from plansight.plan import plan
from plansight.protocol import names as protocol
from plansight.protocol.names import event_payload
from plansight.protocol.options import InitOptions, Thinking
from plansight.protocol.reference import with_reference

REPO = Path(__file__).resolve().parent.parent
PROTOCOL_TS = REPO / "vscode-client" / "src" / "protocol.ts"
DOC = REPO / "docs" / "protocol.md"

TERMINAL_CLIENT = (
    "plansight.cli.client",
    "plansight.cli.run",
    "plansight.cli.ui",
    "plansight.cli.render",
)


def modules_after_importing(*names: str) -> set[str]:
    """sys.modules of a fresh interpreter that imported `names`."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(names)!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(out.stdout))


def test_the_terminal_client_loads_nothing_of_the_server_but_the_protocol() -> None:
    loaded = modules_after_importing(*TERMINAL_CLIENT)
    ours = {m for m in loaded if m == "plansight" or m.startswith("plansight.")}
    allowed = {
        "plansight",
        "plansight.cli",
        "plansight.plan",
        "plansight.plan.text",
        "plansight.protocol",
        "plansight.protocol.names",
        "plansight.protocol.options",
    }
    stray = {m for m in ours if m not in allowed and not m.startswith("plansight.cli.")}
    assert stray == set(), f"the terminal client loads engine modules: {sorted(stray)}"
    assert "plansight.cli.demo" not in loaded  # the demo serves a recording: not the client
    assert not {m for m in loaded if m.split(".")[0] in {"anthropic", "httpx2", "watchfiles"}}


def test_the_protocol_modules_need_only_the_standard_library() -> None:
    loaded = modules_after_importing(
        "plansight.protocol.names",
        "plansight.protocol.options",
        "plansight.protocol.reference",
        "plansight.plan.text",
    )
    assert {m for m in loaded if m.startswith("plansight")} == {
        "plansight",
        "plansight.plan",
        "plansight.plan.text",
        "plansight.protocol",
        "plansight.protocol.names",
        "plansight.protocol.options",
        "plansight.protocol.reference",
    }
    assert not {m for m in loaded if m.split(".")[0] in {"pygls", "lsprotocol", "anthropic"}}


# ----- the engine and the server agree with the protocol ------------------------------------


def wire_event_classes() -> dict[str, type]:
    """The engine's event classes by wire type, for those sent as `plansight/event`."""
    found: dict[str, type] = {}
    from plansight.parallel.workers import WorkerEvent  # sent beside the engine's

    for cls in (*typing.get_args(events.Event), *typing.get_args(WorkerEvent)):
        kind = next(f.default for f in dataclasses.fields(cls) if f.name == "type")
        if kind in protocol.EVENT_TYPES:
            found[kind] = cls
    return found


def test_the_events_built_are_exactly_those_the_engine_sends() -> None:
    built = {spec.type for spec in protocol.EVENTS if spec.built}
    assert set(wire_event_classes()) == built


def test_the_client_requests_built_are_exactly_those_the_server_answers() -> None:
    from plansight.lsp.server import create_server

    answered = {m for m in create_server().protocol.fm.features if m.startswith("plansight/")}
    built = {
        m.name
        for m in protocol.METHODS
        if m.built and m.direction == "client→server" and m.name.startswith("plansight/")
    }
    assert answered == built


def test_statuses_and_sources_are_the_engines() -> None:
    assert typing.get_args(plan.Status) == protocol.TODO_STATUSES == plan.STATUSES
    assert typing.get_args(plan.Source) == protocol.PLAN_SOURCES
    assert typing.get_args(events.RunStatus) == protocol.RUN_STATUSES


def test_method_names_are_unique_and_namespaced() -> None:
    names = [m.name for m in protocol.METHODS]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"plansight/[a-z][A-Za-z]+", name) for name in names)
    assert len({spec.type for spec in protocol.EVENTS}) == len(protocol.EVENTS)


# ----- events on the wire -------------------------------------------------------------------


def test_events_become_their_payloads_with_camel_case_fields() -> None:
    from plansight.parallel import workers

    result = events.RunResult("error", "It failed.", 3, events.Usage(5, 6, 7, 8), error="boom")
    location = events.Location("hello.py", 2, 4)
    cases: list[tuple[Any, dict[str, Any]]] = [
        (
            events.RunStarted("Refactor"),
            {"type": "runStarted", "prompt": "Refactor", "mode": "act"},
        ),
        (
            events.RunStarted("Step 3", "plan", "3"),
            {"type": "runStarted", "prompt": "Step 3", "mode": "plan", "todoId": "3"},
        ),
        (events.TextDelta("Hi"), {"type": "textDelta", "text": "Hi"}),
        (
            events.ToolCall("t1", "read_file", {"path": "a.py", "old_text": "x"}),
            # A tool's input is the model's JSON: its keys are kept as they are.
            {
                "type": "toolCall",
                "id": "t1",
                "name": "read_file",
                "input": {"path": "a.py", "old_text": "x"},
            },
        ),
        (
            events.ToolCall("t2", "bash", {"command": "make test"}, "$ make test"),
            # The call's one-line summary, made by its tool, is sent when there is one.
            {
                "type": "toolCall",
                "id": "t2",
                "name": "bash",
                "input": {"command": "make test"},
                "summary": "$ make test",
            },
        ),
        (
            events.ToolResult("t1", "read_file", True, "No such file"),
            {
                "type": "toolResult",
                "id": "t1",
                "name": "read_file",
                "isError": True,
                "summary": "No such file",
            },
        ),
        (
            # The location becomes the diagnostic's range; it is not part of the event.
            events.Reminder("<reminder>Update your todos.</reminder>", 1, 3, location),
            {
                "type": "reminder",
                "text": "<reminder>Update your todos.</reminder>",
                "level": 1,
                "rounds": 3,
            },
        ),
        (
            events.FilesChanged(("a.py", "b.py")),
            {"type": "filesChanged", "paths": ["a.py", "b.py"]},
        ),
        (
            events.Compacted(180_000, 24_000, "summary"),
            {
                "type": "compacted",
                "beforeTokens": 180_000,
                "afterTokens": 24_000,
                "strategy": "summary",
            },
        ),
        (
            events.Compacted(5_000, 5_000, "summary", unchanged=True),
            {
                "type": "compacted",
                "beforeTokens": 5_000,
                "afterTokens": 5_000,
                "strategy": "summary",
                "unchanged": True,
            },
        ),
        (events.ThinkingDelta("Let me see"), {"type": "thinkingDelta", "text": "Let me see"}),
        (
            events.ToolInputDelta("t1", "todo", '{"it'),
            {"type": "toolInputDelta", "id": "t1", "name": "todo", "partialJson": '{"it'},
        ),
        (
            events.PlanDraft(({"id": "1", "text": "A"},)),
            {"type": "planDraft", "items": [{"id": "1", "text": "A"}]},
        ),
        (
            events.EditReviewed("e1", "hello.py", "Type hints", "changed", todo_id="2"),
            {
                "type": "editReviewed",
                "id": "e1",
                "path": "hello.py",
                "description": "Type hints",
                "outcome": "changed",
                "todoId": "2",
            },
        ),
        (
            events.CheckpointTaken(
                Checkpoint(
                    seq=4,
                    commit="c" * 40,
                    tree="t" * 40,
                    kind="edit",
                    label="Edited a.py",
                    created_at="2026-12-01T10:00:00.000Z",
                    session=1,
                    todo_id="2",
                    changed=("a.py",),
                    agent=("a.py",),
                )
            ),
            # The store's own fields (commit, tree, what the agent changed) stay off the wire.
            {
                "type": "checkpoint",
                "checkpoint": {
                    "id": "4",
                    "todoId": "2",
                    "label": "Edited a.py",
                    "createdAt": "2026-12-01T10:00:00.000Z",
                    "paths": ["a.py"],
                    "kind": "edit",
                },
            },
        ),
        (
            events.RunFinished(result),
            {
                "type": "runFinished",
                "result": {
                    "status": "error",
                    "text": "It failed.",
                    "rounds": 3,
                    "usage": {
                        "inputTokens": 5,
                        "outputTokens": 6,
                        "cacheReadInputTokens": 7,
                        "cacheCreationInputTokens": 8,
                        "totalInputTokens": 20,  # the whole input: 5 + 7 + 8
                    },
                    "error": "boom",
                },
            },
        ),
        (
            events.McpChanged(
                (
                    ServerStatus("time", "client", "ready", ("get_current_time",)),
                    ServerStatus("evil", "/ws/.mcp.json", "untrusted", (), "not trusted"),
                )
            ),
            {
                "type": "mcp",
                "servers": [
                    {
                        "name": "time",
                        "source": "client",
                        "status": "ready",
                        "tools": ["get_current_time"],
                    },
                    {
                        "name": "evil",
                        "source": "/ws/.mcp.json",
                        "status": "untrusted",
                        "tools": [],
                        "error": "not trusted",
                    },
                ],
            },
        ),
        (
            events.Retrying(1, 2, "rate_limited", 0.5, "rate_limit_error: slow down (HTTP 429)"),
            {
                "type": "retrying",
                "attempt": 1,
                "of": 2,
                "reason": "rate_limited",
                "delaySeconds": 0.5,
                "message": "rate_limit_error: slow down (HTTP 429)",
            },
        ),
        (
            events.SessionHistory(({"prompt": "Go", "startedAt": "t", "events": []},), "s1"),
            {
                "type": "history",
                "runs": [{"prompt": "Go", "startedAt": "t", "events": []}],
                "sessionId": "s1",
            },
        ),
        (
            workers.WorkerStarted("2", "w1"),
            {"type": "workerStarted", "todoId": "2", "sessionId": "w1"},
        ),
        (
            workers.WorkerProgress("2", "w1", "bash", "$ make", 3),
            {
                "type": "workerProgress",
                "todoId": "2",
                "sessionId": "w1",
                "tool": "bash",
                "summary": "$ make",
                "rounds": 3,
            },
        ),
        (
            workers.WorkerFinished(
                "2", "w1", "completed", ({"path": "a.py", "added": 1, "removed": 0},), "Done."
            ),
            {
                "type": "workerFinished",
                "todoId": "2",
                "sessionId": "w1",
                "status": "completed",
                "files": [{"path": "a.py", "added": 1, "removed": 0}],
                "summary": "Done.",
            },
        ),
        (
            events.UsageReport("claude-x", 4200, 200_000, events.Usage(1000, 200, 3000, 0), 0.5),
            {
                "type": "usage",
                "model": "claude-x",
                "contextUsed": 4200,
                "contextWindow": 200_000,
                "usage": {
                    "inputTokens": 1000,
                    "outputTokens": 200,
                    "cacheReadInputTokens": 3000,
                    "cacheCreationInputTokens": 0,
                    "totalInputTokens": 4000,
                },
                "costUsd": 0.5,
            },
        ),
    ]
    assert {case[1]["type"] for case in cases} == set(wire_event_classes())
    for event, payload in cases:
        assert event_payload(event) == payload
        assert next(iter(event_payload(event) or {})) == "type"


def test_a_run_result_without_an_error_has_no_error_field() -> None:
    payload = event_payload(events.RunFinished(events.RunResult("done", "Done.", 1)))
    assert payload is not None and "error" not in payload["result"]


def test_events_for_the_servers_own_listeners_are_not_sent() -> None:
    state = plan.Plan().state
    for event in (
        events.PlanChanged(state),
        events.ScratchpadChanged("notes"),
        events.ReminderCleared(),
        events.ConversationChanged(),
    ):
        assert event_payload(event) is None
    assert event_payload({"type": "textDelta", "text": "not a dataclass"}) is None


# ----- initialization options ---------------------------------------------------------------


def test_every_option_of_v1_and_v2_is_read() -> None:
    options = InitOptions.parse(
        {
            "model": "claude-sonnet-5-5",
            "maxRounds": 12,
            "storageDir": "/tmp/state",
            "autoApprove": {"edits": True, "commands": False},
            "contextWindow": 100_000,
            "compactAt": 0.5,
            "thinking": {"budgetTokens": 2048},
            "checkpoints": False,
        }
    )
    assert options == InitOptions(
        model="claude-sonnet-5-5",
        max_rounds=12,
        storage_dir="/tmp/state",
        auto_approve_edits=True,
        auto_approve_commands=False,
        context_window=100_000,
        compact_at=0.5,
        thinking=Thinking(budget_tokens=2048),
        checkpoints=False,
    )
    assert options.problems == ()


@pytest.mark.parametrize("raw", [None, {}])
def test_no_options_mean_the_defaults(raw: Any) -> None:
    options = InitOptions.parse(raw)
    assert options == InitOptions() and options.problems == ()
    assert options.thinking is None and options.checkpoints is True
    assert not options.auto_approve_edits and not options.auto_approve_commands


def test_thinking_is_on_with_an_object_and_off_with_null() -> None:
    assert InitOptions.parse({"thinking": {}}).thinking == Thinking(budget_tokens=None)
    assert InitOptions.parse({"thinking": None}).thinking is None


def test_options_as_pygls_delivers_them_are_read() -> None:
    from pygls.protocol import _dict_to_object  # how pygls structures custom params

    raw = _dict_to_object({"maxRounds": 7, "autoApprove": {"edits": True, "commands": True}})
    assert isinstance(raw, tuple)  # nested namedtuples, not dicts
    options = InitOptions.parse(raw)
    assert options.max_rounds == 7 and options.auto_approve_commands is True


def test_a_bad_thinking_budget_leaves_thinking_on_with_the_default_budget() -> None:
    # 0 is a budget below the minimum (raised to 1024 when requests are made), not a bad one.
    assert InitOptions.parse({"thinking": {"budgetTokens": 0}}).thinking == Thinking(0)
    options = InitOptions.parse({"thinking": {"budgetTokens": -5}})
    assert options.thinking == Thinking(budget_tokens=None)
    assert options.problems[0].startswith("initializationOptions.thinking.budgetTokens must be")


BAD_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"model": ""}, "initializationOptions.model must be a non-empty string"),
    ({"model": 5}, "initializationOptions.model must be a non-empty string"),
    ({"maxRounds": 0}, "initializationOptions.maxRounds must be a whole number of at least 1"),
    ({"maxRounds": "ten"}, "initializationOptions.maxRounds must be a whole number"),
    ({"maxRounds": True}, "initializationOptions.maxRounds must be a whole number"),
    ({"maxRounds": 2.5}, "initializationOptions.maxRounds must be a whole number"),
    ({"storageDir": ["a"]}, "initializationOptions.storageDir must be a non-empty string"),
    ({"autoApprove": True}, "initializationOptions.autoApprove must be an object"),
    (
        {"autoApprove": {"edits": "yes"}},
        "initializationOptions.autoApprove.edits must be true or false",
    ),
    ({"contextWindow": -1}, "initializationOptions.contextWindow must be a whole number"),
    ({"compactAt": 0}, "initializationOptions.compactAt must be a number above 0 and at most 1"),
    ({"compactAt": 1.5}, "initializationOptions.compactAt must be a number above 0"),
    ({"compactAt": float("nan")}, "initializationOptions.compactAt must be a number"),
    ({"thinking": True}, "initializationOptions.thinking must be an object or null"),
    ({"checkpoints": "no"}, "initializationOptions.checkpoints must be true or false"),
]


@pytest.mark.parametrize(("raw", "problem"), BAD_OPTIONS)
def test_a_bad_option_is_named_and_its_default_applies(raw: dict[str, Any], problem: str) -> None:
    options = InitOptions.parse(raw)
    assert len(options.problems) == 1 and options.problems[0].startswith(problem)
    assert "the default applies" in options.problems[0]
    assert options == InitOptions()  # problems are not compared: every value is the default


def test_the_other_options_survive_a_bad_one() -> None:
    options = InitOptions.parse({"maxRounds": "ten", "model": "m", "autoApprove": {"edits": True}})
    assert (
        options.model == "m" and options.auto_approve_edits is True and options.max_rounds is None
    )


def test_options_that_are_not_an_object_are_a_problem() -> None:
    options = InitOptions.parse(["model", "x"])
    assert options == InitOptions() and "must be an object" in options.problems[0]


# ----- capabilities ---------------------------------------------------------------------------


def test_client_capabilities_are_read_from_experimental() -> None:
    experimental = {"plansight": {"reviewEdit": True, "approveCommand": False}}
    assert protocol.client_offers(experimental, "reviewEdit")
    assert not protocol.client_offers(experimental, "approveCommand")
    assert not protocol.client_offers(None, "reviewEdit")
    assert not protocol.client_offers({"plansight": True}, "reviewEdit")
    assert protocol.server_capability() == {"version": 4}


# ----- the VS Code client's protocol.ts -----------------------------------------------------


def ts_object(source: str, name: str) -> dict[str, str]:
    """`export const <name> = { key: value, ... }` as raw key → value text."""
    match = re.search(rf"export const {name}\b[^=]*=\s*\{{(.*?)\}}", source, re.S)
    assert match, f"protocol.ts has no {name}"
    return dict(re.findall(r"(\w+):\s*([^,\n]+)", match.group(1)))


def ts_union(source: str, name: str) -> list[str]:
    match = re.search(rf"export type {name}\s*=\s*([^;]+);", source)
    assert match, f"protocol.ts has no type {name}"
    return re.findall(r"'([^']*)'", match.group(1))


def test_protocol_ts_spells_the_methods_as_the_server_does() -> None:
    source = PROTOCOL_TS.read_text()
    methods = {
        key: value.strip().strip("'\"") for key, value in ts_object(source, "Methods").items()
    }
    known = {m.name for m in protocol.METHODS}
    assert set(methods.values()) <= known, set(methods.values()) - known
    for key, name in methods.items():
        assert name == f"plansight/{key}", f"Methods.{key} is {name}"
    v1 = {m.name for m in protocol.METHODS if m.since == 1}
    assert v1 <= set(methods.values())  # the client speaks all of version 1


def test_protocol_ts_error_codes_are_the_servers() -> None:
    codes = ts_object(PROTOCOL_TS.read_text(), "ErrorCodes")
    assert codes
    for key, value in codes.items():
        name = re.sub(r"(?<!^)([A-Z])", r"_\1", key).upper()
        assert protocol.ERROR_CODES.get(name) == int(value), f"ErrorCodes.{key}"


def test_protocol_ts_events_statuses_and_capabilities_are_the_servers() -> None:
    source = PROTOCOL_TS.read_text()
    event_types = set(re.findall(r"^\s*type:\s*'(\w+)';", source, re.M))
    assert event_types and event_types <= protocol.EVENT_TYPES, event_types - protocol.EVENT_TYPES
    assert tuple(ts_union(source, "TodoStatus")) == protocol.TODO_STATUSES
    statuses = re.search(r"todoStatuses[^=]*=\s*\[(.*?)\]", source, re.S)
    assert statuses and tuple(re.findall(r"'(\w+)'", statuses.group(1))) == protocol.TODO_STATUSES
    assert set(ts_union(source, "RunStatus")) <= set(protocol.RUN_STATUSES)
    sources = re.search(r"source:\s*([^;]+);", source)
    assert sources and tuple(re.findall(r"'(\w+)'", sources.group(1))) == protocol.PLAN_SOURCES
    capability = ts_object(source, "clientCapability")
    assert set(capability) <= set(protocol.CLIENT_CAPABILITIES)
    # Which items are done and which open: one rule, the server's, where the client counts.
    for name, values in (
        ("doneStatuses", protocol.DONE_STATUSES),
        ("openStatuses", protocol.OPEN_STATUSES),
    ):
        listed = re.search(rf"export const {name}[^=]*=\s*\[(.*?)\]", source, re.S)
        assert listed and tuple(re.findall(r"'(\w+)'", listed.group(1))) == values, name


# ----- docs/protocol.md -----------------------------------------------------------------------


def test_the_docs_reference_tables_are_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert with_reference(text) == text, (
        "docs/protocol.md is out of date: run "
        "`python -m plansight.protocol.reference docs/protocol.md`"
    )


def test_the_readme_links_the_docs_not_the_shared_contract() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/protocol.md" in readme and "../shared/PROTOCOL.md" not in readme
