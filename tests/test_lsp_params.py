"""lsp/params.py: the requests' params, typed; a bad field is -32602 with a message naming it."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest

from plansight.checkpoints import RestoreRequest
from plansight.lsp.params import (
    CheckpointFileParams,
    EditPlanParams,
    HistoryParams,
    InvalidParams,
    ParamsReader,
    RestoreParams,
    RunParams,
)
from plansight.protocol.names import INVALID_PARAMS
from plansight.session.history import DEFAULT_LIMIT


@pytest.fixture(scope="module")
def reader() -> ParamsReader:
    return ParamsReader()


def refusal(reader: ParamsReader, raw: Any, kind: type) -> str:
    with pytest.raises(InvalidParams) as refused:
        reader.read(raw, kind)
    assert refused.value.code == INVALID_PARAMS
    return str(refused.value.message)


def test_a_run_is_read_with_its_defaults(reader: ParamsReader) -> None:
    assert reader.read({"prompt": "Refactor"}, RunParams) == RunParams(prompt="Refactor")
    asked = reader.read(
        {"prompt": "Go", "newSession": True, "mode": "plan", "todoId": " 2 "}, RunParams
    )
    assert (asked.prompt, asked.new_session, asked.run_mode, asked.todo_id) == (
        "Go",
        True,
        "plan",
        "2",
    )
    assert reader.read({"prompt": "Go", "todoId": 3}, RunParams).todo_id == "3"


def test_params_as_pygls_delivers_them_are_read(reader: ParamsReader) -> None:
    Object = namedtuple("Object", ["prompt", "newSession"])
    assert reader.read(Object("Go", True), RunParams) == RunParams("Go", True)


def test_null_is_as_good_as_absent(reader: ParamsReader) -> None:
    asked = reader.read({"prompt": "Go", "newSession": None, "mode": None}, RunParams)
    assert asked == RunParams(prompt="Go")
    assert reader.read(None, HistoryParams) == HistoryParams(DEFAULT_LIMIT)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"prompt": 42}, "'prompt' must be a non-empty string."),
        ({"prompt": "  \n"}, "'prompt' must be a non-empty string."),
        ({}, "'prompt' must be a non-empty string."),
        ({"promptt": "typo"}, "'prompt' must be a non-empty string."),
        ({"prompt": "Go", "mode": "think"}, "'mode' must be one of act, plan, not 'think'."),
        ({"prompt": "Go", "todoId": True}, "'todoId' must be a plan item's id (a string)."),
        ({"prompt": "Go", "todoId": ["1"]}, "'todoId' must be a plan item's id (a string)."),
        ({"prompt": "Go", "newSession": "yes"}, "'newSession' must be true or false."),
        (["a positional", "array"], "The params must be an object."),
        ("just a string", "The params must be an object."),
    ],
)
def test_a_bad_run_field_is_named(reader: ParamsReader, raw: Any, message: str) -> None:
    assert refusal(reader, raw, RunParams) == message


def test_a_plans_version_must_be_a_whole_number(reader: ParamsReader) -> None:
    assert reader.read({"items": [], "version": 3}, EditPlanParams) == EditPlanParams([], 3)
    for version in ("1", 1.5, True, [1]):
        message = refusal(reader, {"items": [], "version": version}, EditPlanParams)
        assert message == "'version' must be a whole number (the plan's version)."


def test_the_plans_items_are_left_to_the_plans_own_rules(reader: ParamsReader) -> None:
    # PlanError names the rule an item breaks; the params only carry them, as plain values.
    item = namedtuple("Object", ["id", "text", "status"])("1", "a", "pending")
    asked = reader.read({"items": [item]}, EditPlanParams)
    assert asked.items == [{"id": "1", "text": "a", "status": "pending"}]
    assert reader.read({"items": "nope"}, EditPlanParams).items == "nope"


@pytest.mark.parametrize("limit", [-1, "3", 2.5, True, None])
def test_a_bad_history_limit_is_named(reader: ParamsReader, limit: Any) -> None:
    message = refusal(reader, {"limit": limit}, HistoryParams)
    assert message == "'limit' must be a whole number of runs, 0 or more."


def test_a_restore_becomes_one_request_for_the_checkpoints(reader: ParamsReader) -> None:
    raw = {"todoId": "2", "paths": ["src/", "README.md"], "conversation": True, "dryRun": True}
    assert reader.read(raw, RestoreParams).request() == RestoreRequest(
        todo_id="2", paths=("src/", "README.md"), conversation=True, dry_run=True
    )
    assert reader.read({"checkpoint": "4"}, RestoreParams).request() == RestoreRequest("4")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"checkpoint": "1", "paths": "app.py"}, "'paths' must be a list of paths relative"),
        ({"checkpoint": "1", "paths": ["a.py", ""]}, "'paths' must be a list of paths relative"),
        ({"checkpoint": "1", "force": "yes"}, "'force' must be true or false."),
        ({"checkpoint": "1", "dryRun": 1}, "'dryRun' must be true or false."),
        ({"checkpoint": ""}, "'checkpoint' must be a non-empty string."),
        ({"todoId": 7}, "'todoId' must be a non-empty string."),
    ],
)
def test_a_bad_restore_field_is_named(reader: ParamsReader, raw: Any, message: str) -> None:
    assert refusal(reader, raw, RestoreParams).startswith(message)


@pytest.mark.parametrize("raw", [{}, {"checkpoint": "1", "todoId": "1"}])
def test_a_restore_names_one_checkpoint_or_one_plan_item(
    reader: ParamsReader, raw: dict[str, Any]
) -> None:
    with pytest.raises(InvalidParams, match="Give either 'checkpoint'"):
        reader.read(raw, RestoreParams).request()


def test_a_checkpoint_file_needs_both_fields(reader: ParamsReader) -> None:
    asked = reader.read({"checkpoint": "3", "path": "app.py"}, CheckpointFileParams)
    assert asked == CheckpointFileParams("3", "app.py")
    assert refusal(reader, {"checkpoint": "3"}, CheckpointFileParams) == (
        "'path' must be a non-empty string."
    )
