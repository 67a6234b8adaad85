"""The ACP front door's pure parts: events → session updates (a table), the history replay, stop
reasons, ACP's MCP servers → `.mcp.json`'s shape, slash commands, the transport's checks, the
user's config file; and the layering (it needs nothing of `plansight.lsp`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plansight.acp.commands import SlashCommand, item_id, parse_command
from plansight.acp.errors import run_error, wire_error
from plansight.acp.modes import config_options, mode_changed, mode_state
from plansight.acp.servers import mcp_servers
from plansight.acp.stdio import checked
from plansight.acp.texts import no_such_item, session_title
from plansight.acp.updates import (
    TurnText,
    edit_diff,
    event_updates,
    first_changed_line,
    plan_checklist,
    plan_update,
    proposed_plan,
    replayed,
    stop_reason,
    tool_title,
)
from plansight.acp.usage import usage_update
from plansight.engine.events import (
    PlanChanged,
    Reminder,
    RunFinished,
    RunResult,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolResult,
    TurnUsage,
    Usage,
)
from plansight.engine.hooks import EditProposal
from plansight.engine.spend import Spend
from plansight.plan.plan import TodoItem, TodoState
from plansight.session.settings import user_config
from plansight.tools import default_tools

ROOT = Path("/work/project")
# How each call is shown is declared by its tool, next to its schema (tools/registry.py).
TOOLS = default_tools()


def wire(update: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def plan(*items: tuple[str, str, str]) -> TodoState:
    return TodoState(tuple(TodoItem(i, text, status) for i, text, status in items), 1, "model")  # type: ignore[arg-type]


EVENTS: list[tuple[Any, list[dict[str, Any]]]] = [
    (
        TextDelta("Hello"),
        [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}}],
    ),
    (
        ThinkingDelta("Hmm"),
        [{"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Hmm"}}],
    ),
    (TextDelta(""), []),
    (
        PlanChanged(
            plan(
                ("1", "A", "completed"),
                ("2", "B", "in_progress"),
                ("3", "C", "pending"),
                ("4", "D", "cancelled"),
                ("5", "E", "failed"),
            )
        ),
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "A", "priority": "medium", "status": "completed"},
                    {"content": "B", "priority": "medium", "status": "in_progress"},
                    {"content": "C", "priority": "medium", "status": "pending"},
                    {"content": "[cancelled] D", "priority": "medium", "status": "completed"},
                    {"content": "[failed] E", "priority": "medium", "status": "pending"},
                ],
            }
        ],
    ),
    (
        ToolCall("t1", "read_file", {"path": "src/a.py", "offset": 10}, "src/a.py:10-"),
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read src/a.py:10-",
                "kind": "read",
                "status": "pending",
                "locations": [{"path": "/work/project/src/a.py", "line": 10}],
                "rawInput": {"path": "src/a.py", "offset": 10},
            },
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
        ],
    ),
    (
        # Asks first: in_progress comes once the user allowed it (permissions.py).
        ToolCall("t2", "bash", {"command": "make test"}, "$ make test"),
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t2",
                "title": "Run make test",
                "kind": "execute",
                "status": "pending",
                "rawInput": {"command": "make test"},
            }
        ],
    ),
    (
        ToolResult("t2", "bash", True, "[exit code 2]"),
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t2",
                "status": "failed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": "[exit code 2]"}}
                ],
            }
        ],
    ),
    (RunFinished(RunResult("done", "ok", 1)), []),
]


@pytest.mark.parametrize(("event", "expected"), EVENTS, ids=[type(e).__name__ for e, _ in EVENTS])
def test_each_event_maps_to_its_updates(event: Any, expected: list[dict[str, Any]]) -> None:
    assert [wire(u) for u in event_updates(ROOT, TOOLS, event)] == expected


def test_the_reminder_is_a_think_call_titled_plan_reminder_completed_at_once() -> None:
    (update,) = event_updates(
        ROOT, TOOLS, Reminder("<reminder>Update your todos.</reminder>", 1, 3, None)
    )
    shown = wire(update)
    assert shown["sessionUpdate"] == "tool_call"
    assert (shown["title"], shown["kind"], shown["status"]) == (
        "Plan reminder",
        "think",
        "completed",
    )
    # In words, without the tags the model reads it in (a chat shows them as they are).
    assert shown["content"][0]["content"]["text"] == "Update your todos."


@pytest.mark.parametrize(
    ("name", "tool_input", "title", "kind"),
    [
        ("write_file", {"path": "a.txt"}, "Write a.txt", "edit"),
        ("edit_file", {"path": "a.txt"}, "Edit a.txt", "edit"),
        ("list_files", {"pattern": "*.py"}, "List files matching *.py", "search"),
        ("grep", {"pattern": "TODO", "path": "src"}, "Search for 'TODO' in src", "search"),
        ("todo", {"items": []}, "Update the plan", "think"),
        # The progress and the current item in the title: some clients show nothing else.
        (
            "todo",
            {
                "items": [
                    {"id": "1", "text": "Add hints", "status": "completed"},
                    {"id": "2", "text": "Add docstrings\nand more", "status": "in_progress"},
                    {"id": "3", "text": "Run tests", "status": "pending"},
                ]
            },
            "Update the plan (1/3 done; now #2: Add docstrings)",
            "think",
        ),
        ("write_scratchpad", {"content": "x"}, "Write the scratchpad", "think"),
        ("submit_plan", {"summary": "s"}, "Submit the plan for approval", "switch_mode"),
        ("ask_user", {"question": "Which?"}, "Ask: Which?", "think"),
        ("mcp__github__create_issue", {}, "Call create_issue of github", "other"),
    ],
)
def test_tool_titles_are_words_and_kinds_are_acps(
    name: str, tool_input: dict[str, Any], title: str, kind: str
) -> None:
    (started, *_rest) = event_updates(ROOT, TOOLS, ToolCall("x", name, tool_input))
    assert tool_title(TOOLS, name, tool_input) == title
    assert wire(started)["kind"] == kind


def test_an_edit_diff_holds_the_whole_documents_with_the_absolute_path() -> None:
    proposal = EditProposal(
        "r1", ROOT / "a.py", "a.py", "one\ntwo\nthree\n", "one\n2\nthree\n", "edit", None
    )
    assert wire(edit_diff("t9", proposal)) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t9",
        "content": [
            {
                "type": "diff",
                "path": "/work/project/a.py",
                "oldText": "one\ntwo\nthree\n",
                "newText": "one\n2\nthree\n",
            }
        ],
        "locations": [{"path": "/work/project/a.py", "line": 2}],
    }
    assert first_changed_line("", "new\n") == 1
    assert first_changed_line("a\n", "a\nb\n") == 2


@pytest.mark.parametrize(
    ("status", "rounds", "reason"),
    [
        ("done", 3, "end_turn"),
        ("cancelled", 1, "cancelled"),
        ("refused", 1, "refusal"),
        ("limit", 50, "max_turn_requests"),
        ("limit", 4, "max_tokens"),
        ("error", 1, None),
    ],
)
def test_stop_reasons(status: Any, rounds: int, reason: str | None) -> None:
    assert stop_reason(RunResult(status, "", rounds), max_rounds=50) == reason


def message_ids(updates: list[Any]) -> list[tuple[str, str]]:
    shown = [wire(u) for u in updates]
    return [
        (u.get("messageId", ""), u["content"]["text"])
        for u in shown
        if u["sessionUpdate"] == "agent_message_chunk"
    ]


def test_two_model_turns_text_are_two_acp_messages_live_and_replayed() -> None:
    deltas = [TextDelta("Plan", 1), TextDelta("ned.", 1), TextDelta("The plan waits.", 2)]
    live = message_ids([u for d in deltas for u in event_updates(ROOT, TOOLS, d, "run-a")])
    # One messageId per turn: a client starts a new message where it changes.
    assert live == [("run-a-1", "Plan"), ("run-a-1", "ned."), ("run-a-2", "The plan waits.")]
    other = message_ids(event_updates(ROOT, TOOLS, TextDelta("Again.", 1), "run-b"))
    assert other[0][0] not in {i for i, _ in live}  # a later run's turn 1 is another message
    events = [
        {"type": "runStarted", "prompt": "Plan it"},
        {"type": "textDelta", "text": "Planned.", "turn": 1},
        {"type": "textDelta", "text": "The plan waits.", "turn": 2},
    ]
    runs = [{"events": events}, {"events": events}]
    replay = message_ids(replayed(ROOT, TOOLS, runs, plan()))
    # The text itself has the turns apart too (a blank line), for clients ignoring messageId.
    assert [text for _, text in replay] == ["Planned.", "\n\nThe plan waits."] * 2
    assert len({i for i, _ in replay}) == 4 and all(replay_id for replay_id, _ in replay)
    # From a server that did not say the turn: no messageId, as before.
    assert message_ids(event_updates(ROOT, TOOLS, TextDelta("Hi"))) == [("", "Hi")]


def test_a_replayed_run_that_ended_in_an_error_shows_the_error() -> None:
    # Live, the prompt's answer was the error; a replay without it showed the prompt run on
    # into the next one in CodeCompanion.nvim ("Again, pleaseAre you still there?").
    runs = [
        {
            "events": [
                {"type": "runStarted", "prompt": "Again, please"},
                {
                    "type": "runFinished",
                    "result": {
                        "status": "error",
                        "text": "",
                        "error": "authentication_error: invalid x-api-key (HTTP 401)",
                    },
                },
            ]
        },
        {"events": [{"type": "runStarted", "prompt": "Are you still there?"}]},
    ]
    shown = [wire(u) for u in replayed(ROOT, TOOLS, runs, plan())]
    assert [u["sessionUpdate"] for u in shown] == [
        "user_message_chunk",
        "agent_message_chunk",
        "user_message_chunk",
        "plan",
    ]
    assert shown[1]["content"]["text"].startswith("The API key was refused: set ANTHROPIC_API_KEY")


def test_the_replay_starts_at_the_session_and_ends_with_the_plan() -> None:
    runs = [
        {"prompt": "old", "events": [{"type": "runStarted", "prompt": "old"}]},
        {
            "newSession": True,
            "events": [
                {"type": "runStarted", "prompt": "Fix it"},
                {"type": "thinkingDelta", "text": "thinking"},
                {"type": "textDelta", "text": "On it."},
                {"type": "toolCall", "id": "a", "name": "bash", "input": {"command": "ls"}},
                {
                    "type": "toolResult",
                    "id": "a",
                    "name": "bash",
                    "isError": False,
                    "summary": "ok",
                },
                {"type": "toolCall", "id": "b", "name": "read_file", "input": {"path": "x"}},
                {"type": "reminder", "text": "<reminder>Update your todos.</reminder>", "level": 1},
                {"type": "runFinished", "result": {"status": "cancelled"}},
            ],
        },
    ]
    shown = [wire(u) for u in replayed(ROOT, TOOLS, runs, plan(("1", "Fix", "pending")))]
    assert [u["sessionUpdate"] for u in shown] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "tool_call",
        "tool_call",
        "tool_call_update",
        "plan",
    ]
    assert shown[0]["content"]["text"] == "Fix it"
    assert shown[4]["status"] == "completed"
    assert shown[7] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "b",
        "title": "Read x",
        "kind": "read",
        "status": "failed",
        "content": [
            {
                "type": "content",
                "content": {
                    "type": "text",
                    "text": "Cancelled with the run: this call did not finish.",
                },
            }
        ],
    }
    assert wire(plan_update(plan(("1", "Fix", "pending")))) == shown[-1]


def test_acp_mcp_servers_become_the_mcp_json_shape() -> None:
    given = [
        {
            "name": "files",
            "command": "npx",
            "args": ["-y", "server-filesystem", "/tmp"],
            "env": [{"name": "TOKEN", "value": "t"}],
        },
        {
            "type": "http",
            "name": "remote",
            "url": "https://mcp.example/api",
            "headers": [{"name": "Authorization", "value": "Bearer x"}],
        },
        {"type": "sse", "name": "old", "url": "https://mcp.example/sse", "headers": []},
        {"name": "files", "command": "other", "args": [], "env": []},
        {"command": "nameless", "args": [], "env": []},
    ]
    assert mcp_servers(given) == {
        "files": {
            "command": "npx",
            "args": ["-y", "server-filesystem", "/tmp"],
            "env": {"TOKEN": "t"},
        },
        "remote": {"url": "https://mcp.example/api", "headers": {"Authorization": "Bearer x"}},
    }
    assert mcp_servers(None) == {}


def test_mcp_servers_from_the_sdk_models_convert_the_same() -> None:
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

    given = [
        McpServerStdio(name="s", command="run", args=["a"], env=[EnvVariable(name="K", value="v")]),
        HttpMcpServer(
            type="http", name="h", url="http://x", headers=[HttpHeader(name="H", value="1")]
        ),
    ]
    assert mcp_servers(given) == {
        "s": {"command": "run", "args": ["a"], "env": {"K": "v"}},
        "h": {"url": "http://x", "headers": {"H": "1"}},
    }


@pytest.mark.parametrize(
    ("prompt", "command"),
    [
        ("/plan add a cache", SlashCommand("plan", "add a cache")),
        ("/step 2", SlashCommand("step", "2")),
        ("  /undo #3", SlashCommand("undo", "#3")),
        ("/compact", SlashCommand("compact", "")),
        ("/checkpoints\n", SlashCommand("checkpoints", "")),
        ("/etc/hosts is odd", None),
        ("plan this", None),
    ],
)
def test_slash_commands_are_parsed(prompt: str, command: SlashCommand | None) -> None:
    assert parse_command(prompt) == command


def test_item_ids() -> None:
    assert item_id("#2 and then") == ("2", "and then")
    assert item_id("") == ("", "")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{oops", -32700),
        (b"[1, 2]", -32600),
        (b"42", -32600),
        (b'{"jsonrpc": "2.0"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    ],
)
def test_what_is_no_json_rpc_message_gets_an_error_reply(line: bytes, code: int) -> None:
    message, error = checked(line)
    assert message is None and error is not None
    assert error["id"] is None and error["error"]["code"] == code


def test_a_json_rpc_message_passes() -> None:
    message, error = checked(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}')
    assert error is None and message == {"jsonrpc": "2.0", "id": 1, "method": "initialize"}


def test_the_user_config_file_is_read_from_xdg_config_home(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert user_config(env) is None
    (tmp_path / "plansight").mkdir()
    config = tmp_path / "plansight" / "config.json"
    config.write_text(json.dumps({"maxRounds": 7, "autoApprove": {"edits": True}}))
    assert user_config(env) == {"maxRounds": 7, "autoApprove": {"edits": True}}
    config.write_text("{not json")
    assert user_config(env) is None  # logged, the defaults apply


def test_the_acp_front_door_needs_nothing_of_the_lsp_one() -> None:
    from test_layers import PACKAGE, imports_of, part_of

    wrong = [
        f"{path.name} imports {imported}"
        for path in (PACKAGE / "acp").rglob("*.py")
        for imported in imports_of(path)
        if part_of(imported) == "lsp"
    ]
    assert wrong == []


def test_the_prompt_text_holds_embedded_files_and_links() -> None:
    from acp import embedded_text_resource, resource_block, resource_link_block, text_block

    from plansight.acp.texts import prompt_text

    blocks = [
        text_block("Explain this:"),
        resource_block(embedded_text_resource("file:///w/a.py", "print(1)\n")),
        resource_link_block("b.py", "file:///w/b.py"),
    ]
    assert prompt_text(blocks) == (
        'Explain this:\n<context uri="file:///w/a.py">\nprint(1)\n\n</context>\n'
        "[b.py](file:///w/b.py)"
    )


def test_an_image_or_an_empty_prompt_is_refused_with_a_reason() -> None:
    from acp import RequestError, image_block, text_block

    from plansight.acp.texts import prompt_text

    with pytest.raises(RequestError, match="text only"):
        prompt_text([image_block("aGk=", "image/png")])
    with pytest.raises(RequestError, match="empty"):
        prompt_text([text_block("   ")])


def test_a_name_the_model_passes_back_quoted_is_located_at_the_file_itself() -> None:
    # list_files shows "new\nline.txt" as a JSON string; the model passes that form back.
    call = ToolCall("t9", "read_file", {"path": '"new\\nline.txt"'}, "new line")
    (started, *_rest) = event_updates(ROOT, TOOLS, call)
    assert wire(started)["locations"] == [{"path": f"{ROOT}/new\nline.txt", "line": 1}]


# ----- version 4: as editors use it -------------------------------------------------------------


def test_a_later_turns_text_begins_with_a_blank_line_once() -> None:
    apart = TurnText()
    said = [apart("Plan", 1), apart("ned.", 1), apart("Next.", 2), apart("More", 2)]
    assert "".join(said) == "Planned.\n\nNext.More"
    ended = TurnText()  # text that ends a line gets only what makes the blank line
    assert "".join([ended("Done.\n", 1), ended("Then.", 2)]) == "Done.\n\nThen."
    assert "".join([ended("x\n\n", 3), ended("y", 4)]) == "\n\nx\n\ny"
    assert TurnText()("First", 7) == "First"  # nothing before it: nothing added


def test_the_plan_as_a_checklist_has_the_plan_files_item_lines() -> None:
    state = plan(
        ("1", "Read", "completed"),
        ("2", "Edit", "in_progress"),
        ("3", "Test", "pending"),
        ("4", "Skip", "cancelled"),
        ("5", "Broke", "failed"),
    )
    assert plan_checklist(state) == (
        "- [x] 1. Read\n- [~] 2. Edit\n- [ ] 3. Test\n- [-] 4. Skip\n- [!] 5. Broke"
    )
    assert proposed_plan(state, "Fix the bug.").startswith(
        "**Proposed plan**\n\nFix the bug.\n\n- [x] 1. Read"
    )
    assert plan_checklist(plan()) == "The plan has no items."


def test_error_objects_have_no_null_members_and_say_why() -> None:
    assert wire_error({"code": -32602, "message": "Bad", "data": None}) == {
        "code": -32602,
        "message": "Bad",
    }
    invalid = wire_error(
        {
            "code": -32602,
            "message": "Invalid params",
            "data": {"errors": [{"loc": ["sessionId"], "msg": "Field required", "url": None}]},
        }
    )
    assert invalid["message"] == "Invalid params: sessionId: Field required"
    assert "null" not in json.dumps(invalid)
    internal = wire_error({"code": -32603, "message": "Internal error", "data": {"details": "x"}})
    assert "failed on this request (x)" in internal["message"]
    unknown = wire_error({"code": -32601, "message": "Method not found", "data": {"method": "m"}})
    assert unknown["message"].startswith("Method not found: m.")


def test_a_refused_api_key_says_to_set_it() -> None:
    said = str(run_error("authentication_error: invalid x-api-key (HTTP 401)"))
    assert said.startswith("The API key was refused: set ANTHROPIC_API_KEY")
    assert "invalid x-api-key" in said
    assert "wait a little" in str(run_error("overloaded_error: Overloaded (HTTP 529)"))
    assert str(run_error("something else")) == "something else"


def test_an_unknown_item_is_refused_with_the_items_there_are() -> None:
    two = plan(("1", "A", "pending"), ("2", "B", "pending"))
    assert no_such_item("2", two, "step") is None
    assert no_such_item("9", two, "step") == (
        "There is no item #9 in the plan; its items are #1, #2. "
        "Type /step with one of them, e.g. /step 1."
    )
    said = no_such_item("9", plan(), "undo")
    assert said is not None and "the plan has no items yet" in said and "/plan" in said


def test_a_sessions_title_is_its_first_prompts_first_line() -> None:
    assert session_title("\n  Fix the bug\nin app.py") == "Fix the bug"
    long = session_title("x" * 100)
    assert len(long) == 60 and long.endswith("…")


def test_the_mode_is_offered_as_modes_and_as_a_config_option_of_category_mode() -> None:
    option = wire(config_options("plan")[0])
    assert option["category"] == "mode" and option["currentValue"] == "plan"
    assert [o["value"] for o in option["options"]] == ["act", "plan"]
    assert wire(mode_state("plan"))["currentModeId"] == "plan"
    told = [wire(u) for u in mode_changed("act")]
    assert told[0] == {"sessionUpdate": "current_mode_update", "currentModeId": "act"}
    assert told[1]["sessionUpdate"] == "config_option_update"
    assert told[1]["configOptions"][0]["currentValue"] == "act"


def test_usage_update_carries_the_servers_figures_context_and_cost() -> None:
    turn = TurnUsage(Usage(1000, 200, 3000, 0), 200_000, "claude-sonnet-5-5")
    first = wire(usage_update(Spend().update(turn)))
    assert first["used"] == 4200 and first["size"] == 200_000
    # $2 input, $10 output, $0.2 cache read per million tokens.
    assert first["cost"] == {"amount": 0.0046, "currency": "USD"}
    unknown = wire(usage_update(Spend().update(TurnUsage(Usage(1, 1), 1000, "some-other-model"))))
    assert "cost" not in unknown and unknown["used"] == 2
