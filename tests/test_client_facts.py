"""The same plan and run, as the server sends them, shown by the terminal client as VS Code
shows them: the same count, current item and tool call lines (fixtures/plan-counts).

`wire.json` is what the server sends, made here from the server's own code (a test checks it is
current: `PLANSIGHT_WRITE_FIXTURES=1` rewrites it); `expected.json` says, once, what both
clients must show of it. vscode-client/test/clientFacts.test.ts checks VS Code against the same
two files.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from plansight.cli import render
from plansight.engine.events import RunResult, ToolCall, Usage
from plansight.plan.plan import Plan
from plansight.plan.text import parse_plan_text, plan_text
from plansight.protocol.names import event_payload
from plansight.tools import default_tools

from conftest import FIXTURES

FIXTURE = FIXTURES / "plan-counts"
WIRE = FIXTURE / "wire.json"
# The fields a version 1 server sends of a plan, a call and a run's usage.
V1_TODO_FIELDS = ("items", "completed", "total", "rendered", "source", "version")
V1_CALL_FIELDS = ("type", "id", "name", "input")
V1_USAGE_FIELDS = (
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
)

PLAN = [
    ("1", "Add type hints", "completed"),
    ("2", "Add docstrings", "in_progress"),
    ("3", "Add a main guard", "cancelled"),
    ("5", "Run the tests", "failed"),
    ("6", "Ship it", "pending"),
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "src/app.py", "offset": 10, "limit": 30}),
    ("bash", {"command": "npm test"}),
    ("grep", {"pattern": "TODO", "path": "src", "glob": "*.py"}),
    ("todo", {"items": [{"id": i, "text": t, "status": s} for i, t, s in PLAN]}),
    (
        "submit_plan",
        {"summary": "## Approach\n\n- Rename **greet** in `hello.py`\n- Run the [tests](tests/)"},
    ),
    ("read_scratchpad", {}),
]


def server_wire() -> dict[str, Any]:
    """What the server sends: the plan's state, each call's event, the run's result."""
    plan = Plan()
    state = plan.update_from_model([{"id": i, "text": t, "status": s} for i, t, s in PLAN]).state
    tools = default_tools()
    calls = [
        event_payload(ToolCall(f"t{n}", name, tool_input, tools.input_summary(name, tool_input)))
        for n, (name, tool_input) in enumerate(CALLS, start=1)
    ]
    result = RunResult("done", "Done.", 3, Usage(1234, 56, 7890, 0))
    # A plan's id is new for every plan (random): the fixture holds it as one fixed value.
    todos = state.to_wire() | {"planId": "plan-1"} if state.plan_id else state.to_wire()
    return {"todos": todos, "toolCalls": calls, "result": result.to_wire()}


def version_1(wire: dict[str, Any]) -> dict[str, Any]:
    """The same, as a server without the optional fields sends it."""
    result = wire["result"]
    return {
        "todos": {k: wire["todos"][k] for k in V1_TODO_FIELDS},
        "toolCalls": [{k: call[k] for k in V1_CALL_FIELDS} for call in wire["toolCalls"]],
        "result": result | {"usage": {k: result["usage"][k] for k in V1_USAGE_FIELDS}},
    }


def test_the_fixture_is_what_the_server_sends() -> None:
    made = json.dumps(server_wire(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("PLANSIGHT_WRITE_FIXTURES") == "1":
        WIRE.write_text(made, encoding="utf-8")
    assert WIRE.read_text(encoding="utf-8") == made, (
        f"{WIRE} is out of date: run PLANSIGHT_WRITE_FIXTURES=1 pytest {__file__}"
    )


@pytest.mark.parametrize("server", ["this", "version 1"])
def test_the_terminal_shows_what_expected_json_says(server: str) -> None:
    expected = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    wire = json.loads(WIRE.read_text(encoding="utf-8"))
    if server == "version 1":
        wire = version_1(wire)
    todos = wire["todos"]
    assert render.progress_line(todos) == f"{expected['count']} · {expected['current']}"
    footer = render.plan_text(todos).plain.splitlines()[-1]
    assert footer == f"({expected['count']} done · {expected['cancelled']} cancelled)"
    assert render.count_text(todos) == expected["count"]
    # A line added in the editor (`e` at a plan review) gets the id VS Code's "add" gives.
    ids = [item["id"] for item in todos["items"]]
    edited = parse_plan_text(plan_text(todos["items"]) + "[ ] Tell the users\n", reserved=ids)
    assert edited[-1] == {"id": expected["nextId"], "text": "Tell the users", "status": "pending"}
    if server == "this":
        assert todos["nextId"] == expected["nextId"]
        lines = [
            render.tool_call_line(call["name"], render.call_summary(call)).plain.removeprefix("⚙ ")
            for call in wire["toolCalls"]
        ]
        assert lines == expected["toolCalls"]
    usage = render.usage_line(wire["result"]["usage"])
    assert usage.startswith(f"tokens: input {expected['inputTokens']} "), usage
