"""The one registry: definitions as the API gets them, dispatch, and what a failure becomes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from plansight.tools import Tool, ToolRegistry, default_tools
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.registry import ToolPlace

from tool_harness import make_ctx


async def _ok(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    return f"ok {tool_input}"


async def _refuses(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    raise ToolError("No, and here is why.")


async def _bug(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
    raise KeyError("a bug")


class _BrokenPreview:
    def __init__(self, ctx: ToolContext) -> None:
        pass

    def update(self, partial_json: str) -> None:
        raise ValueError("a bug in the preview")


SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
REGISTRY = ToolRegistry(
    [
        Tool("ok", "Works.", SCHEMA, _ok),
        Tool("refuses", "Refuses.", SCHEMA, _refuses),
        Tool("bug", "Breaks.", SCHEMA, _bug, preview=_BrokenPreview),
    ]
)


def test_every_tool_is_defined_once_with_its_schema() -> None:
    definitions = default_tools().definitions()
    names = [d["name"] for d in definitions]
    assert names == [
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "bash",
        "todo",
        "read_scratchpad",
        "write_scratchpad",
        "submit_plan",
        "ask_user",
    ]
    for definition in definitions:
        assert set(definition) == {"name", "description", "input_schema"}
        assert definition["input_schema"]["type"] == "object" and definition["description"]
    with pytest.raises(ValueError, match="duplicate tool 'ok'"):
        ToolRegistry([Tool("ok", "", SCHEMA, _ok), Tool("ok", "", SCHEMA, _ok)])


async def test_outcomes_of_a_call(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ctx = make_ctx(tmp_path)
    ok = await REGISTRY.call(ctx, "ok", {"x": 1})
    assert (ok.content, ok.is_error) == ("ok {'x': 1}", False)
    refused = await REGISTRY.call(ctx, "refuses", {})
    assert (refused.content, refused.is_error) == ("No, and here is why.", True)
    unknown = await REGISTRY.call(ctx, "nope", {})
    assert unknown.is_error and unknown.content == (
        "Unknown tool 'nope'. Available tools: ok, refuses, bug."
    )
    not_an_object = await REGISTRY.call(ctx, "ok", ["x"])
    assert not_an_object.is_error and "must be a JSON object" in not_an_object.content
    with caplog.at_level(logging.ERROR):
        bug = await REGISTRY.call(ctx, "bug", {})
    assert bug.is_error and "internal error" in bug.content and "KeyError" not in bug.content
    assert "tool bug failed unexpectedly" in caplog.text  # logged for the developers


def test_a_broken_preview_is_logged_and_costs_nothing_else(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stream = REGISTRY.preview_stream(make_ctx(tmp_path), "bug")
    assert stream is not None
    with caplog.at_level(logging.ERROR):
        stream.feed('{"items": [')
    assert "preview of bug failed" in caplog.text


def test_the_summary_clients_show_of_a_result(caplog: pytest.LogCaptureFixture) -> None:
    from plansight.tools import ToolOutcome

    def last_word(content: str) -> str:
        return content.split()[-1]

    def broken(content: str) -> str:
        raise ValueError("a bug in the summary")

    registry = ToolRegistry(
        [
            Tool("plain", "Plain.", SCHEMA, _ok),
            Tool("own", "Summarizes itself.", SCHEMA, _ok, summarize=last_word),
            Tool("broken", "Breaks.", SCHEMA, _ok, summarize=broken),
        ]
    )
    result = ToolOutcome("\n  first line\nsecond\nlast", False)
    assert registry.summary("plain", result) == "first line"
    assert registry.summary("own", result) == "last"
    # An error is said as it is: its first line is the message.
    assert registry.summary("own", ToolOutcome("Refused: no.\ndetail", True)) == "Refused: no."
    assert registry.summary("plain", ToolOutcome("x" * 500, False)) == "x" * 200
    assert registry.summary("plain", ToolOutcome("", False)) == ""
    with caplog.at_level(logging.ERROR):
        assert registry.summary("broken", result) == "first line"
    assert "summary of broken failed" in caplog.text


def test_the_summary_clients_show_of_a_call(caplog: pytest.LogCaptureFixture) -> None:
    def path_only(tool_input: dict[str, Any]) -> str:
        return f"at {tool_input['path']}\n  and more"

    def broken(tool_input: dict[str, Any]) -> str:
        raise ValueError("a bug in the summary")

    registry = ToolRegistry(
        [
            Tool("plain", "Plain.", SCHEMA, _ok),
            Tool("own", "Summarizes itself.", SCHEMA, _ok, summarize_input=path_only),
            Tool("broken", "Breaks.", SCHEMA, _ok, summarize_input=broken),
        ]
    )
    # The tool's own line, kept on one line.
    assert registry.input_summary("own", {"path": "a.py"}) == "at a.py and more"
    # A tool without a summarizer, an unknown one, input that is no object: compact JSON.
    assert registry.input_summary("plain", {"path": "a.py", "n": 2}) == '{"path":"a.py","n":2}'
    assert registry.input_summary("nope", {"é": "ü"}) == '{"é":"ü"}'
    assert registry.input_summary("own", ["x"]) == '["x"]'
    assert registry.input_summary("plain", {}) == ""
    long = registry.input_summary("plain", {"text": "x" * 500})
    assert len(long) == 100 and long.endswith("…")
    with caplog.at_level(logging.ERROR):
        assert registry.input_summary("broken", {"path": "a.py"}) == '{"path":"a.py"}'
    assert "input summary of broken failed" in caplog.text


def test_each_built_in_tool_declares_how_a_client_shows_its_calls() -> None:
    """Kind, title and places sit beside each tool's schema (ACP reads them from here)."""
    tools = default_tools()
    shown = {
        name: tools.display(name, tool_input, summary)
        for name, tool_input, summary in [
            ("read_file", {"path": "a.py", "offset": 3}, "a.py:3-"),
            ("write_file", {"path": "a.py", "content": "x"}, None),
            ("edit_file", {"path": "a.py"}, None),
            ("list_files", {"pattern": "*.py"}, None),
            ("grep", {"pattern": "x", "path": "src"}, None),
            ("bash", {"command": "make"}, None),
            ("todo", {"items": []}, None),
            ("read_scratchpad", {}, None),
            ("write_scratchpad", {"content": "x"}, None),
            ("submit_plan", {"summary": "s"}, None),
            ("ask_user", {"question": "Which?"}, None),
        ]
    }
    assert {name: (d.kind, d.title, d.asks) for name, d in shown.items() if d} == {
        "read_file": ("read", "Read a.py:3-", False),
        "write_file": ("edit", "Write a.py", True),
        "edit_file": ("edit", "Edit a.py", True),
        "list_files": ("search", "List files matching *.py", False),
        "grep": ("search", "Search for 'x' in src", False),
        "bash": ("execute", "Run make", True),
        "todo": ("think", "Update the plan", False),
        "read_scratchpad": ("think", "Read the scratchpad", False),
        "write_scratchpad": ("think", "Write the scratchpad", False),
        "submit_plan": ("switch_mode", "Submit the plan for approval", True),
        "ask_user": ("think", "Ask: Which?", False),
    }
    read = shown["read_file"]
    assert read is not None and read.places == [ToolPlace("a.py", 3)]
    assert tools.display("mcp__github__create_issue", {}) is None  # not offered now
