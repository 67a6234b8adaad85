"""The plan's rules (PROTOCOL.md), as a table of cases and as random plans built from it, thrown
at the model's `todo` tool (through the tool registry) and at the user's `plansight/editPlan`
(over a real LSP connection, one server for the whole run).

The oracle is no validator: each case says what the rules make of it, and a random plan is put
together from field values whose verdict the tables give (an id of "" breaks the id rule; " 2 "
is the id "2"), so what a plan must become follows from how it was built. The rules: at most 20
items; `text` required and non-blank; `id` unique; `status` one of the five; at most one item
`in_progress`; a rejected plan changes nothing and its error names the rule.

Where PROTOCOL.md is silent, the tables record the choice made (and a user would see):
surrounding whitespace of ids and texts is trimmed; an integer id is its decimal text (models
send 1 for "1"), no other type is an id; keys besides id, text and status are ignored (a client's
`retries` too: the server counts them).

Whatever arrives: no crash, the rules always hold, an accepted change is exactly what the
tables say at the next version, a rejected one names a rule it breaks and changes nothing.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plansight.engine.events import Event, EventBus, PlanChanged
from plansight.engine.hooks import accept_all_edits, refuse_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace

from lsp_harness import EditorHandle, start_editor

REGISTRY = default_tools()
STATUSES = ("pending", "in_progress", "completed", "cancelled", "failed")
MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
MARKS["failed"] = "[!]"
MAX_ITEMS = 20

# What an error must say to name each rule (the rule's own words, not the product's sentence).
NAMES = {
    "list": r"\blist\b",
    "too-many": r"\b20\b",
    "object": r"\bobject\b",
    "id": r"'id'",
    "unique": r"unique|duplicate",
    "text": r"'text'",
    "status": r"\bstatus\b",
    "one-in-progress": r"(?i)\b(only|at most) one\b",
}


def names_rule(message: str, rules: set[str]) -> bool:
    return any(re.search(NAMES[rule], message) for rule in rules)


# ----- the tables ---------------------------------------------------------------------------

MISSING = object()  # the key is absent


@dataclass(frozen=True)
class Value:
    """A field's value as sent, and as the plan shows it (None: it breaks the field's rule)."""

    sent: Any
    shown: str | None


IDS = (
    Value("1", "1"),
    Value("2", "2"),
    Value(" 2 ", "2"),  # trimmed: the same id as "2"
    Value("step-3", "step-3"),
    Value("3", "3"),
    Value(3, "3"),  # an integer id is its decimal text
    Value(0, "0"),
    Value("", None),
    Value("  ", None),
    Value(None, None),
    Value(True, None),  # a boolean is no id, though Python counts it an int
    Value(1.5, None),
    Value(["1"], None),
    Value({"n": 1}, None),
    Value(MISSING, None),
)
TEXTS = (
    Value("Read the code", "Read the code"),
    Value("  Write tests  ", "Write tests"),
    Value("Grüße ✓", "Grüße ✓"),
    Value("x", "x"),
    Value("", None),
    Value(" \t\n", None),
    Value("\u2003", None),  # an em space is as blank as a space
    Value(5, None),
    Value(None, None),
    Value(["a"], None),
    Value(MISSING, None),
)
STATUS_VALUES = (
    *(Value(status, status) for status in STATUSES),
    Value("done", None),
    Value("IN_PROGRESS", None),
    Value("in progress", None),
    Value("", None),
    Value(None, None),
    Value(1, None),
    Value(MISSING, None),
)
IGNORED_KEYS = {"note": "ignored", "retries": 7, "type_name": None, "_hidden": 1}
NOT_OBJECTS = (None, 1, "1: Read the code", ["1", "Read", "pending"], True)  # as entries
NOT_LISTS = (None, "1. Read", 3, {"id": "1", "text": "Read", "status": "pending"}, True)


@dataclass(frozen=True)
class Item:
    id: Value
    text: Value
    status: Value
    extra: tuple[tuple[str, Any], ...] = ()

    def sent(self) -> dict[str, Any]:
        entry = {
            key: value.sent
            for key, value in (("id", self.id), ("text", self.text), ("status", self.status))
            if value.sent is not MISSING
        }
        entry.update(self.extra)
        return entry


@dataclass(frozen=True)
class NotAnObject:
    sent: Any


Entry = Item | NotAnObject


@dataclass(frozen=True)
class Case:
    """A plan as sent, what the plan must then show (None: refused), and the rules it breaks."""

    why: str
    sent: Any
    shown: tuple[tuple[str, str, str], ...] | None
    broken: frozenset[str]


def case(why: str, entries: list[Entry] | Any) -> Case:
    """The verdict of a plan put together from the tables' values, by the rules."""
    if not isinstance(entries, list):
        return Case(why, entries, None, frozenset({"list"}))
    broken: set[str] = set()
    if len(entries) > MAX_ITEMS:
        broken.add("too-many")
    shown = []
    ids: list[str] = []
    active = 0
    for entry in entries:
        if isinstance(entry, NotAnObject):
            broken.add("object")
            continue
        for rule, value in (("id", entry.id), ("text", entry.text), ("status", entry.status)):
            if value.shown is None:
                broken.add(rule)
        if entry.id.shown is not None:
            ids.append(entry.id.shown)
        active += entry.status.shown == "in_progress"
        shown.append((entry.id.shown, entry.text.shown, entry.status.shown))
    if len(set(ids)) < len(ids):
        broken.add("unique")
    if active > 1:
        broken.add("one-in-progress")
    sent = [e.sent if isinstance(e, NotAnObject) else e.sent() for e in entries]
    if broken:
        return Case(why, sent, None, frozenset(broken))
    return Case(why, sent, tuple(shown), frozenset())  # type: ignore[arg-type]


def item(id_: Any, text: Any = "Read the code", status: Any = "pending", **extra: Any) -> Item:
    """An item of the tables' values, looked up by what is sent."""

    def pick(table: tuple[Value, ...], sent: Any) -> Value:
        return next(
            v for v in table if v.sent is sent or (type(v.sent) is type(sent) and v.sent == sent)
        )

    return Item(
        pick(IDS, id_), pick(TEXTS, text), pick(STATUS_VALUES, status), tuple(extra.items())
    )


def numbered(n: int) -> list[Entry]:
    return [
        Item(Value(str(i), str(i)), Value(f"Step {i}", f"Step {i}"), Value("pending", "pending"))
        for i in range(1, n + 1)
    ]


CASES = (
    case("the empty plan", []),
    case(
        "one item of each status",
        [
            item("1", "x", "pending"),
            item("2", "x", "in_progress"),
            item(3, "x", "completed"),
            item(0, "x", "cancelled"),
            item("step-3", "x", "failed"),
        ],
    ),
    case("ids and texts are trimmed", [item(" 2 ", "  Write tests  ")]),
    case("an integer id is its decimal text", [item(3)]),
    case("other keys are ignored, a client's retries too", [item("1", note="x", retries=7)]),
    case("20 items", numbered(20)),
    case("21 items", numbered(21)),
    case("not a list", {"id": "1", "text": "Read", "status": "pending"}),
    case("no list at all", None),
    case("an entry that is no object", [item("1"), NotAnObject("2: Write tests")]),
    case("an empty id", [item("")]),
    case("a blank id", [item("  ")]),
    case("no id", [item(MISSING)]),
    case("a boolean id", [item(True)]),
    case("a float id", [item(1.5)]),
    case("a duplicate id", [item("1"), item("1", "x")]),
    case("a duplicate once trimmed", [item("2"), item(" 2 ")]),
    case("an integer id the same as a text one", [item(3), item("3")]),
    case("an empty text", [item("1", "")]),
    case("a blank text", [item("1", " \t\n")]),
    case("an em space for text", [item("1", "\u2003")]),
    case("no text", [item("1", MISSING)]),
    case("a number for text", [item("1", 5)]),
    case("a status that is not one of the five", [item("1", status="done")]),
    case("a status in the wrong case", [item("1", status="IN_PROGRESS")]),
    case("no status", [item("1", status=MISSING)]),
    case(
        "two items in progress", [item("1", status="in_progress"), item("2", status="in_progress")]
    ),
    case(
        "one in progress among others",
        [item("1", status="completed"), item("2", status="in_progress"), item(3)],
    ),
)


def test_the_tables_verdicts_are_the_rules_as_written() -> None:
    """The tables themselves, read against PROTOCOL.md by hand: a check on the oracle."""
    by_why = {c.why: c for c in CASES}
    assert by_why["20 items"].shown is not None and by_why["21 items"].broken == {"too-many"}
    assert by_why["ids and texts are trimmed"].shown == (("2", "Write tests", "pending"),)
    assert by_why["a duplicate once trimmed"].broken == {"unique"}
    assert by_why["two items in progress"].broken == {"one-in-progress"}
    assert by_why["not a list"].broken == {"list"}
    singles = [c for c in CASES if c.shown is None]
    assert all(len(c.broken) == 1 for c in singles), [c.why for c in singles if len(c.broken) != 1]


def call_todo(ctx: ToolContext, tool_input: Any) -> Any:
    return asyncio.run(REGISTRY.call(ctx, "todo", tool_input))


@pytest.mark.parametrize("plan_case", CASES, ids=[c.why for c in CASES])
def test_each_case_of_the_table(tmp_path: Path, plan_case: Case) -> None:
    events: list[Event] = []
    ctx = make_ctx(tmp_path, events)
    outcome = call_todo(ctx, {"items": plan_case.sent})
    state = ctx.plan.state.to_wire()
    if plan_case.shown is None:
        assert outcome.is_error and state["items"] == [] and state["version"] == 0
        assert outcome.content.startswith("Plan rejected, nothing changed: ")
        assert names_rule(outcome.content, set(plan_case.broken)), (
            outcome.content,
            plan_case.broken,
        )
    else:
        assert not outcome.is_error, outcome.content
        assert [(i["id"], i["text"], i["status"]) for i in state["items"]] == list(plan_case.shown)
        assert all("retries" not in i for i in state["items"])


def expected_retries(
    before: list[dict[str, Any]], items: tuple[tuple[str, str, str], ...]
) -> list[int]:
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


# ----- random plans, built from the tables ---------------------------------------------------

VALID_IDS = [v for v in IDS if v.shown is not None]
VALID_TEXTS = [v for v in TEXTS if v.shown is not None]
VALID_STATUSES = [v for v in STATUS_VALUES if v.shown is not None]

any_item = st.builds(
    Item,
    st.sampled_from(IDS),
    st.sampled_from(TEXTS),
    st.sampled_from(STATUS_VALUES),
    st.lists(st.sampled_from(sorted(IGNORED_KEYS.items(), key=str)), max_size=2, unique=True).map(
        tuple
    ),
)
good_item = st.builds(
    Item, st.sampled_from(VALID_IDS), st.sampled_from(VALID_TEXTS), st.sampled_from(VALID_STATUSES)
)
entries = st.one_of(any_item, good_item, st.sampled_from(NOT_OBJECTS).map(NotAnObject))


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked in proportion to its weight."""
    strategies = [strategy for _, strategy in choices]
    picks = [index for index, (weight, _) in enumerate(choices) for _ in range(weight)]
    return st.sampled_from(picks).flatmap(lambda index: strategies[index])


# Mostly well-formed plans (some with two items in progress or a duplicate), so that sequences
# of accepted changes, retries included, happen; then anything the tables hold.
plans = weighted(
    (8, st.lists(good_item, max_size=5).map(lambda e: case("random", e))),
    (4, st.lists(entries, max_size=6).map(lambda e: case("random", e))),
    (2, st.integers(19, 22).map(lambda n: case("random", numbered(n)))),
    (1, st.sampled_from(NOT_LISTS).map(lambda sent: case("random", sent))),
    (2, st.sampled_from(CASES)),
)


# ----- the todo tool through the registry ----------------------------------------------------


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


# (the tool's input, the plan case it carries; None: the input is not even an object)
tool_inputs = weighted(
    (8, plans.map(lambda c: ({"items": c.sent}, c))),
    (1, plans.map(lambda c: ({"items": c.sent, "extra": 1}, c))),
    # no "items": nothing to take as a list
    (1, st.sampled_from(["item", "plan", "todos"]).map(lambda key: ({key: []}, case("-", None)))),
    (
        1,
        st.sampled_from([v for v in NOT_LISTS if not isinstance(v, dict)]).map(lambda v: (v, None)),
    ),
)


def _retry_cycle(retries: int) -> list[tuple[Any, Case]]:
    """Item 1 fails and is taken up again `retries` times."""
    calls = []
    for _ in range(retries):
        for status in ("failed", "in_progress"):
            plan_case = case("retry", [item("1", "x", status)])
            calls.append(({"items": plan_case.sent}, plan_case))
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
def test_the_todo_tool_never_breaks_the_rules(
    tmp_path_factory: Any, calls: list[tuple[Any, Case | None]]
) -> None:
    events: list[Event] = []
    ctx = make_ctx(tmp_path_factory.getbasetemp(), events)
    for tool_input, plan_case in calls:
        before = ctx.plan.state.to_wire()
        updates_before = ctx.plan.model_updates
        seen = len(events)
        outcome = call_todo(ctx, tool_input)
        after = ctx.plan.state.to_wire()
        assert_rules(after)
        assert "internal error" not in outcome.content
        if plan_case is None or plan_case.shown is None:
            # Rejected: nothing changed, nothing was announced, and the error names a rule.
            assert outcome.is_error, (tool_input, outcome.content)
            assert after == before and ctx.plan.model_updates == updates_before
            assert events[seen:] == []
            if plan_case is None:
                assert "JSON object" in outcome.content
            else:
                assert outcome.content.startswith("Plan rejected, nothing changed: ")
                assert names_rule(outcome.content, set(plan_case.broken)), (
                    outcome.content,
                    plan_case.broken,
                )
            continue
        assert not outcome.is_error, (tool_input, outcome.content)
        shown = plan_case.shown
        assert tuple((i["id"], i["text"], i["status"]) for i in after["items"]) == shown
        assert [i.get("retries", 0) for i in after["items"]] == expected_retries(
            before["items"], shown
        )
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


async def edit_once(editor: EditorHandle, plan_case: Case, mode: str) -> None:
    before = (await editor.request("plansight/state", {}))["todos"]
    notified = len(editor.recorder.todos)
    params = params_for(plan_case.sent, mode, before["version"])
    try:
        answer = await editor.request("plansight/editPlan", params)
        error = None
    except Exception as err:  # a JSON-RPC error answer
        answer, error = None, err
    after = (await editor.request("plansight/state", {}))["todos"]
    assert_rules(after)

    expected = plan_case.shown
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
            assert names_rule(message, set(plan_case.broken)), (message, plan_case.broken)
        # The previous plan, unchanged, and no announcement of a change.
        assert after == before, params
        assert editor.recorder.todos[notified:] == []
        return
    assert error is None, (params, error)
    assert expected is not None and answer is not None
    assert_rules(answer)
    assert tuple((i["id"], i["text"], i["status"]) for i in answer["items"]) == expected
    assert [i.get("retries", 0) for i in answer["items"]] == expected_retries(
        before["items"], expected
    )
    assert answer["source"] == "user" and answer["version"] == before["version"] + 1
    assert after == answer
    await editor.recorder.wait_for(lambda: len(editor.recorder.todos) > notified)
    # Version 4: the notification also says whose plan it is.
    [told] = editor.recorder.todos[notified:]
    told.pop("planFile", None)  # the notification's own field (v4): where the plan file is
    assert isinstance(told.pop("sessionId"), str) and told == answer


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
    @given(plan_case=plans, mode=versions)
    def one_edit(plan_case: Case, mode: str) -> None:
        nonlocal examples
        examples += 1
        loop.run_until_complete(edit_once(editor, plan_case, mode))

    try:
        one_edit()
        assert examples >= EXAMPLES
        # The same server still works as a whole after all of it.
        state = loop.run_until_complete(editor.request("plansight/state", {}))
        assert state["running"] is False
    finally:
        loop.run_until_complete(editor.stop())
        loop.close()
