"""Random plans thrown at the model's `todo` tool (through the tool registry) and at the user's
`plansight/editPlan` (over a real LSP connection, one server for the whole run).

An oracle written here from PROTOCOL.md's rules, not the product's validator, decides which
payloads must be accepted. Whatever arrives: no crash, the rules always hold, an accepted
change is exactly what was sent (ids and texts trimmed, retries counted) at the next version,
a rejected one names a rule it breaks and changes nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plansight.events import Event, EventBus, PlanChanged
from plansight.hooks import accept_all_edits, refuse_all_commands
from plansight.plan import Plan
from plansight.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace import Workspace

from lsp_harness import EditorHandle, start_editor

REGISTRY = default_tools()
STATUSES = ("pending", "in_progress", "completed", "cancelled", "failed")
MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
MARKS["failed"] = "[!]"
MAX_ITEMS = 20

# ----- the rules, from PROTOCOL.md ------------------------------------------------------------

# The words each rule's error uses, so that "the error names the rule" can be checked.
RULE_WORDS = {
    "list": "must be a list",
    "too-many": "Too many items",
    "object": "must be an object",
    "id": "'id' is required",
    "unique": "duplicate id",
    "text": "'text' is required",
    "status": "invalid status",
    "one-in-progress": "Only one item may be in_progress",
}


def judge(raw: Any) -> tuple[list[tuple[str, str, str]] | None, set[str]]:
    """(id, text, status) of each item if the plan obeys every rule, and the rules it breaks."""
    if not isinstance(raw, list):
        return None, {"list"}
    broken: set[str] = set()
    if len(raw) > MAX_ITEMS:
        broken.add("too-many")
    items: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for entry in raw:
        if not isinstance(entry, dict):
            broken.add("object")
            continue
        raw_id, text, status = entry.get("id"), entry.get("text"), entry.get("status")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
            broken.add("id")
            item_id = None
        else:
            item_id = str(raw_id).strip()
            if item_id in seen:
                broken.add("unique")
            seen.add(item_id)
        if not isinstance(text, str) or not text.strip():
            broken.add("text")
        if status not in STATUSES:
            broken.add("status")
        if item_id is not None and isinstance(text, str) and status in STATUSES:
            items.append((item_id, text.strip(), status))
    if (
        sum(1 for entry in raw if isinstance(entry, dict) and entry.get("status") == "in_progress")
        > 1
    ):
        broken.add("one-in-progress")
    return (None if broken else items), broken


def expected_retries(before: list[dict[str, Any]], items: list[tuple[str, str, str]]) -> list[int]:
    """Moving a failed item back to in_progress counts as a retry; others keep their count."""
    previous = {item["id"]: item for item in before}
    counts = []
    for item_id, _, status in items:
        old = previous.get(item_id)
        retries = old.get("retries", 0) if old else 0
        if old and old["status"] == "failed" and status == "in_progress":
            retries += 1
        counts.append(retries)
    return counts


def rendered(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No todos."
    lines = [f"{MARKS[i['status']]} #{i['id']}: {i['text']}" for i in items]
    done = sum(1 for i in items if i["status"] == "completed")
    return "\n".join([*lines, f"({done}/{len(items)} completed)"])


def assert_rules(state: dict[str, Any]) -> None:
    """A TodoState on the wire that obeys every rule and describes itself consistently."""
    items = state["items"]
    assert len(items) <= MAX_ITEMS
    assert len({i["id"] for i in items}) == len(items)
    assert all(isinstance(i["id"], str) and i["id"].strip() == i["id"] != "" for i in items)
    assert all(isinstance(i["text"], str) and i["text"].strip() for i in items)
    assert all(i["status"] in STATUSES for i in items)
    assert sum(i["status"] == "in_progress" for i in items) <= 1
    assert state["total"] == len(items)
    assert state["completed"] == sum(i["status"] == "completed" for i in items)
    assert state["rendered"] == rendered(items)
    assert isinstance(state["version"], int) and state["version"] >= 0


# ----- random payloads --------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 30),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=5),
)
ids = st.one_of(st.sampled_from(["1", "2", "3", "4", " 2 ", "", "  "]), st.integers(0, 5), scalars)
texts = st.one_of(
    st.sampled_from(["Read the code", "  Write tests  ", "", " \t\n", "\u2003"]),
    st.text(max_size=12),
    scalars,
)
statuses = st.one_of(
    st.sampled_from(STATUSES),
    st.sampled_from(STATUSES),
    st.sampled_from(["done", "IN_PROGRESS", "", None]),
    scalars,
)
extra_keys = st.dictionaries(
    st.sampled_from(["note", "retries", "class", "1x", "_hidden", "type_name"]), scalars, max_size=2
)


@st.composite
def items_(draw: st.DrawFn) -> Any:
    item = {"id": draw(ids), "text": draw(texts), "status": draw(statuses)}
    item.update(draw(extra_keys))
    for key in draw(st.sets(st.sampled_from(["id", "text", "status"]), max_size=1)):
        del item[key]
    return item


# Mostly well-formed plans, so that sequences of accepted changes (retries included) happen.
good_item = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["1", "2", "3", "4"]),
        "text": st.sampled_from(["Read", "Edit", "Test", "Ship"]),
        "status": st.sampled_from(STATUSES),
    }
)


def _one_in_progress(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = False
    for item in items:
        if item["status"] == "in_progress":
            if seen:
                item["status"] = "pending"
            seen = True
    return items


valid_plans = st.lists(good_item, max_size=4, unique_by=lambda i: i["id"]).map(_one_in_progress)


def _numbered(n: int) -> list[dict[str, Any]]:
    return [{"id": str(i), "text": f"Step {i}", "status": "pending"} for i in range(1, n + 1)]


BAD_FIELDS: dict[str, list[Any]] = {
    "id": ["", "  ", None, True, 1.5, ["1"], {"n": 1}],
    "text": ["", " \t", None, 5, ["a"]],
    "status": ["done", "IN_PROGRESS", "", None, 1, "in progress"],
}


@st.composite
def near_valid(draw: st.DrawFn) -> list[Any]:
    """A valid plan with exactly one rule broken, so that each rule is tried on its own."""
    items = draw(valid_plans.filter(bool))
    index = draw(st.integers(0, len(items) - 1))
    how = draw(st.sampled_from(["id", "text", "status", "missing", "duplicate", "two-active"]))
    if how in BAD_FIELDS:
        items[index][how] = draw(st.sampled_from(BAD_FIELDS[how]))
    elif how == "missing":
        del items[index][draw(st.sampled_from(["id", "text", "status"]))]
    elif how == "duplicate":
        items.append({**items[index], "text": "Again"})
    else:
        for item in items:
            item["status"] = "pending" if item["status"] == "in_progress" else item["status"]
        items.append({"id": "9", "text": "Also active", "status": "in_progress"})
        items[index]["status"] = "in_progress"
    return items


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked in proportion to its weight."""
    strategies = [strategy for _, strategy in choices]
    picks = [index for index, (weight, _) in enumerate(choices) for _ in range(weight)]
    return st.sampled_from(picks).flatmap(lambda index: strategies[index])


plans = weighted(
    (6, valid_plans),
    (2, st.lists(good_item, max_size=4, unique_by=lambda i: i["id"])),  # maybe 2 in_progress
    (4, near_valid()),
    (3, st.lists(st.one_of(items_(), good_item, scalars), max_size=6)),
    (2, st.integers(19, 23).map(_numbered)),  # around the 20-item limit, ids unique
    (1, scalars),
    (1, st.dictionaries(st.sampled_from(["id", "text", "status"]), scalars)),
)


# ----- the todo tool through the registry ---------------------------------------------------------


def make_ctx(root: Path, events: list[Event]) -> ToolContext:
    bus = EventBus()
    bus.subscribe(events.append)
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=Workspace(root),
        review=accept_all_edits,
        approve=refuse_all_commands,
        events=bus,
    )


tool_inputs = weighted(
    (8, st.fixed_dictionaries({"items": plans})),
    (1, st.fixed_dictionaries({"items": plans}, optional={"extra": scalars})),
    (1, st.dictionaries(st.sampled_from(["item", "plan", "todos"]), plans, max_size=2)),
    (1, scalars),
    (1, st.lists(good_item, max_size=2)),
)


def _retry_cycle(retries: int) -> list[Any]:
    """Item 1 fails and is taken up again `retries` times."""
    calls = []
    for _ in range(retries):
        for status in ("failed", "in_progress"):
            calls.append({"items": [{"id": "1", "text": "Flaky step", "status": status}]})
    return calls


call_sequences = weighted(
    (5, st.lists(tool_inputs, min_size=1, max_size=8)),
    (
        1,
        st.tuples(st.integers(1, 4).map(_retry_cycle), st.lists(tool_inputs, max_size=3)).map(
            lambda parts: parts[0] + parts[1]
        ),
    ),
)


@settings(max_examples=250, deadline=None, derandomize=True, database=None)
@given(calls=call_sequences)
def test_the_todo_tool_never_breaks_the_rules(tmp_path_factory: Any, calls: list[Any]) -> None:
    events: list[Event] = []
    ctx = make_ctx(tmp_path_factory.getbasetemp(), events)
    for tool_input in calls:
        before = ctx.plan.state.to_wire()
        updates_before = ctx.plan.model_updates
        seen = len(events)
        outcome = asyncio.run(REGISTRY.call(ctx, "todo", tool_input))
        after = ctx.plan.state.to_wire()
        assert_rules(after)
        assert "internal error" not in outcome.content
        raw = tool_input.get("items") if isinstance(tool_input, dict) else None
        items, broken = judge(raw)
        if not isinstance(tool_input, dict):
            assert outcome.is_error and "JSON object" in outcome.content
            items = None
        if items is None:
            # Rejected: nothing changed, nothing was announced, and the error names a rule.
            assert outcome.is_error, (tool_input, outcome.content)
            assert after == before and ctx.plan.model_updates == updates_before
            assert events[seen:] == []
            if isinstance(tool_input, dict):
                assert outcome.content.startswith("Plan rejected, nothing changed: ")
                assert any(RULE_WORDS[rule] in outcome.content for rule in broken), (
                    outcome.content,
                    broken,
                )
            continue
        assert not outcome.is_error, (tool_input, outcome.content)
        retries = expected_retries(before["items"], items)
        assert [(i["id"], i["text"], i["status"]) for i in after["items"]] == items
        assert [i.get("retries", 0) for i in after["items"]] == retries
        assert after["version"] == before["version"] + 1 and after["source"] == "model"
        assert ctx.plan.model_updates == updates_before + 1
        assert outcome.content.startswith(after["rendered"])
        # The model is told to stop when an item reaches its third retry on this call.
        old = {i["id"]: i.get("retries", 0) for i in before["items"]}
        exhausted = [
            i["id"]
            for i in after["items"]
            if i.get("retries", 0) >= 3 and i.get("retries", 0) > old.get(i["id"], 0)
        ]
        assert [f"Item #{i} has been retried" in outcome.content for i in exhausted] == [
            True
        ] * len(exhausted)
        assert outcome.content.count("has been retried") == len(exhausted)
        changed = [e for e in events[seen:] if isinstance(e, PlanChanged)]
        assert len(changed) == 1 and changed[0].state.to_wire() == after


# ----- plansight/editPlan over LSP ------------------------------------------------------------

VERSION_MODES = ("absent", "current", "null", "stale", "ahead")
BAD_VERSION_MODES = ("string", "float", "bool")
versions = weighted(
    (3, st.just("absent")),
    (3, st.just("current")),
    (2, st.sampled_from(VERSION_MODES)),
    (2, st.sampled_from(BAD_VERSION_MODES)),
)
EXAMPLES = 60


def params_for(items: Any, mode: str, current: int) -> dict[str, Any]:
    params: dict[str, Any] = {"items": items}
    version: Any = {
        "current": current,
        "null": None,
        "stale": current - 1,
        "ahead": current + 3,
        "string": str(current),
        "float": current + 0.5,
        "bool": True,
    }.get(mode, "absent")
    if version != "absent":
        params["version"] = version
    return params


async def edit_once(editor: EditorHandle, items: Any, mode: str) -> None:
    before = (await editor.request("plansight/state", {}))["todos"]
    notified = len(editor.recorder.todos)
    params = params_for(items, mode, before["version"])
    try:
        answer = await editor.request("plansight/editPlan", params)
        error = None
    except Exception as err:  # a JSON-RPC error answer
        answer, error = None, err
    after = (await editor.request("plansight/state", {}))["todos"]
    assert_rules(after)

    expected, broken = judge(items)
    if mode in BAD_VERSION_MODES:
        expected_code: int | None = -32602
    elif mode in ("stale", "ahead"):
        expected_code = -32803
    else:
        expected_code = None if expected is not None else -32602
    if expected_code is not None:
        assert error is not None, (params, answer)
        assert getattr(error, "code", None) == expected_code, (params, error)
        if expected_code == -32602 and mode not in BAD_VERSION_MODES:
            message = str(getattr(error, "message", error))
            assert any(RULE_WORDS[rule] in message for rule in broken), (message, broken)
        # The previous plan, unchanged, and no announcement of a change.
        assert after == before, params
        assert editor.recorder.todos[notified:] == []
        return
    assert error is None, (params, error)
    assert expected is not None and answer is not None
    assert_rules(answer)
    assert [(i["id"], i["text"], i["status"]) for i in answer["items"]] == expected
    assert [i.get("retries", 0) for i in answer["items"]] == expected_retries(
        before["items"], expected
    )
    assert answer["source"] == "user" and answer["version"] == before["version"] + 1
    assert after == answer
    await editor.recorder.wait_for(lambda: len(editor.recorder.todos) > notified)
    assert editor.recorder.todos[notified:] == [answer]


def test_edit_plan_over_lsp_answers_a_valid_state_or_an_error_that_changes_nothing(
    hello_workspace: Path, tmp_path: Path
) -> None:
    loop = asyncio.new_event_loop()
    editor = loop.run_until_complete(start_editor(hello_workspace, None, storage=tmp_path / "s"))
    examples = 0

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        items=plans,
        mode=versions,
    )
    def one_edit(items: Any, mode: str) -> None:
        nonlocal examples
        examples += 1
        loop.run_until_complete(edit_once(editor, items, mode))

    try:
        one_edit()
        assert examples >= EXAMPLES
        # The same server still works as a whole after all of it.
        state = loop.run_until_complete(editor.request("plansight/state", {}))
        assert state["running"] is False
    finally:
        loop.run_until_complete(editor.stop())
        loop.close()
