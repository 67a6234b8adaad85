"""`plansight acp` driven by the Python ACP SDK's client side (acp_harness.py): the core
scenarios of PROTOCOL.md's ACP section, end to end (a real process, the fake Messages API)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi.script import text_reply, tool_reply

from acp_harness import EditorClient, acp_agent, until
from conftest import PATIENCE, Held
from lsp_harness import start_editor

pytestmark = pytest.mark.timeout(120)

PLAN = [
    {"id": "1", "text": "Add type hints", "status": "completed"},
    {"id": "2", "text": "Add docstrings", "status": "in_progress"},
    {"id": "3", "text": "Drop the main guard", "status": "cancelled"},
    {"id": "4", "text": "Port to Rust", "status": "failed"},
]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


async def prompt(conn: Any, session_id: str, text: str) -> str:
    response = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), PATIENCE
    )
    return str(response.stop_reason)


async def new_session(conn: Any, root: Path) -> str:
    response = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), PATIENCE)
    assert [m.id for m in response.modes.available_modes] == ["act", "plan"]
    assert response.modes.current_mode_id == "act"
    return str(response.session_id)


async def test_plan_updates_map_every_status_and_the_reminder_is_a_think_call(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        tool_reply("todo", {"items": PLAN}, text="Planning."),
        tool_reply("list_files", {}),
        tool_reply("list_files", {}),
        tool_reply("list_files", {}),
        text_reply("All done."),
        text_reply("Really done."),
        text_reply("Nothing left."),
        text_reply("Still nothing."),  # the done gate asks again in the next run
    )
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, editor):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "Tidy hello.py") == "end_turn"
        await until(lambda: bool(editor.of("available_commands_update")), "the commands")
        assert await prompt(conn, session_id, "Anything else?") == "end_turn"
    plans = [u["entries"] for u in editor.of("plan") if u["entries"]]
    assert plans[0] == [
        {"content": "Add type hints", "priority": "medium", "status": "completed"},
        {"content": "Add docstrings", "priority": "medium", "status": "in_progress"},
        {"content": "[cancelled] Drop the main guard", "priority": "medium", "status": "completed"},
        {"content": "[failed] Port to Rust", "priority": "medium", "status": "pending"},
    ]
    calls = editor.of("tool_call")
    todo = next(c for c in calls if c["title"].startswith("Update the plan ("))
    assert todo["kind"] == "think" and todo["status"] == "pending"
    listing = next(c for c in calls if c["title"].startswith("List files"))
    assert listing["kind"] == "search"
    finished = [u for u in editor.of("tool_call_update") if u.get("status") == "completed"]
    assert {u["toolCallId"] for u in finished} >= {todo["toolCallId"], listing["toolCallId"]}
    reminders = [c for c in calls if c["title"] == "Plan reminder"]
    assert reminders and reminders[0]["kind"] == "think" and reminders[0]["status"] == "completed"
    assert "Planning." in editor.text()
    # The done gate's answer is a model turn of its own: a message of its own (its messageId),
    # not run on from "All done."; the next prompt's first turn is another message again.
    messages: dict[str, str] = {}
    for chunk in editor.of("agent_message_chunk"):
        key = chunk["messageId"]
        messages[key] = messages.get(key, "") + chunk["content"]["text"]
    said = ["Planning.", "All done.", "Really done.", "Nothing left.", "Still nothing."]
    assert [text.strip() for text in messages.values()] == said
    # And apart in the text itself, for clients that ignore messageId (CodeCompanion.nvim).
    assert "All done.\n\nReally done." in editor.text()
    assert "Really done.Nothing left." in editor.text()  # another prompt: another message
    # The todo call's content is the whole plan, for clients that render no `plan` update.
    todo_end = next(
        u
        for u in editor.of("tool_call_update")
        if u["toolCallId"] == todo["toolCallId"] and u.get("status") == "completed"
    )
    assert todo_end["content"][0]["content"]["text"] == (
        "- [x] 1. Add type hints\n- [~] 2. Add docstrings\n- [-] 3. Drop the main guard\n"
        "- [!] 4. Port to Rust"
    )
    names = [c["name"] for c in editor.of("available_commands_update")[0]["availableCommands"]]
    assert names == ["plan", "step", "undo", "compact", "checkpoints", "parallel"]


async def test_an_edit_allowed_is_written_through_the_editor_and_a_rejection_reaches_the_model(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hello = hello_workspace / "hello.py"
    before = hello.read_text()
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        ),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import os", "new_text": "import re"}
        ),
        text_reply("Done."),
    )
    editor = EditorClient(hello_workspace, answers=["allow_once", "reject_once"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "edit") == "end_turn"
    assert hello.read_text() == before.replace("import sys", "import os")
    assert editor.writes == [str(hello)]  # through fs/write_text_file: the editor's undo works
    assert str(hello) in editor.reads
    diffs = [
        c
        for u in editor.of("tool_call_update")
        for c in u.get("content", [])
        if c["type"] == "diff"
    ]
    assert diffs[0] == {
        "type": "diff",
        "path": str(hello),
        "oldText": before,
        "newText": before.replace("import sys", "import os"),
    }
    assert editor.permissions[0]["options"] == [
        ("allow_once", "Allow", "allow_once"),
        ("allow_always", "Always allow", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
        ("reject_always", "Always reject", "reject_always"),
    ]
    rejected = tool_results(fake_api.bodies[3])[0]
    assert rejected["is_error"] is True
    assert rejected["content"] == "This edit was rejected by the user; hello.py was not changed."
    statuses = [u.get("status") for u in editor.of("tool_call_update")]
    assert "failed" in statuses and "in_progress" in statuses


async def test_commands_allowed_always_are_not_asked_again(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        tool_reply("bash", {"command": "echo first"}),
        tool_reply("bash", {"command": "echo second"}),
        text_reply("Ran both."),
    )
    editor = EditorClient(hello_workspace, answers=["allow_always"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "run") == "end_turn"
    assert len(editor.permissions) == 1
    runs = [c for c in editor.of("tool_call") if c["kind"] == "execute"]
    assert [c["title"] for c in runs] == ["Run echo first", "Run echo second"]
    outputs = [
        c["content"]["text"]
        for u in editor.of("tool_call_update")
        for c in u.get("content", [])
        if c["type"] == "content"
    ]
    assert any("second" in text for text in outputs)  # the command's output in the tool call


async def test_an_unsaved_buffer_is_read_through_fs_read_text_file(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hello = hello_workspace / "hello.py"
    unsaved = hello.read_text() + "# typed, not saved\n"
    fake_api.push(tool_reply("read_file", {"path": "hello.py"}), text_reply("Read it."))
    editor = EditorClient(hello_workspace, buffers={str(hello): unsaved})
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "read") == "end_turn"
    assert "typed, not saved" in tool_results(fake_api.bodies[1])[0]["content"]
    read = next(c for c in editor.of("tool_call") if c["kind"] == "read")
    assert read["locations"] == [{"path": str(hello), "line": 1}]


async def test_cancel_during_a_slow_stream_answers_cancelled_at_once(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(text_reply("word " * 400, chunk_delay=0.05), text_reply("after"))
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, editor):
        session_id = await new_session(conn, hello_workspace)
        turn = asyncio.ensure_future(prompt(conn, session_id, "talk"))
        await until(lambda: "word" in editor.text(), "the stream's first words")
        await conn.cancel(session_id=session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        # The session goes on: the next prompt is answered.
        assert await prompt(conn, session_id, "again") == "end_turn"


async def test_cancel_during_a_pending_permission_does_not_wait_for_the_answer(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(tool_reply("bash", {"command": "touch ran"}), text_reply("never"))
    editor = EditorClient(hello_workspace, answers=[None])  # the user never answers
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        turn = asyncio.ensure_future(prompt(conn, session_id, "run"))
        await until(lambda: bool(editor.permissions), "the permission request")
        await conn.cancel(session_id=session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        for waiting in editor.held:
            waiting.cancel()  # the client's own late answer: ignored
    assert not (hello_workspace / "ran").exists()


async def test_plan_mode_approval_switches_to_act_in_the_same_turn(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Add a docstring", "status": "pending"}]
    fake_api.push(
        tool_reply("todo", {"items": items}),
        tool_reply("submit_plan", {"summary": "One docstring."}),
        tool_reply("bash", {"command": "touch acted"}),
        tool_reply("todo", {"items": [{**items[0], "status": "completed"}]}),
        text_reply("Done."),
    )
    editor = EditorClient(hello_workspace, answers=["approve", "allow_once"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        await conn.set_session_mode(session_id=session_id, mode_id="plan")
        assert await prompt(conn, session_id, "/plan add a docstring") == "end_turn"
    assert editor.permissions[0]["options"] == [
        ("approve", "Approve", "allow_once"),
        ("keep_planning", "Keep planning", "reject_once"),
    ]
    submit = next(c for c in editor.of("tool_call") if c["kind"] == "switch_mode")
    assert editor.permissions[0]["toolCall"]["toolCallId"] == submit["toolCallId"]
    assert editor.of("current_mode_update")[-1]["currentModeId"] == "act"
    assert (hello_workspace / "acted").exists()


async def test_keep_planning_ends_the_turn_and_the_next_prompt_is_the_feedback(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Add a docstring", "status": "pending"}]
    fake_api.push(
        tool_reply("todo", {"items": items}),
        tool_reply("submit_plan", {"summary": "One docstring."}),
        text_reply("Revising."),
        text_reply("Still revising."),  # plan mode asks once to submit
    )
    editor = EditorClient(hello_workspace, answers=["keep_planning"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "/plan add a docstring") == "end_turn"
        assert len(fake_api.bodies) == 2  # the turn ended at the plan
        await prompt(conn, session_id, "Also type hints")
    opening = fake_api.bodies[2]["messages"][-1]["content"]
    texts = " ".join(b["text"] for b in opening if b.get("type") == "text")
    assert "feedback on the plan" in texts and "Also type hints" in texts
    assert "<plan-mode>" in json.dumps(fake_api.bodies[2]["messages"][-1]) or "plan" in texts


async def test_a_session_loads_after_a_restart_replaying_its_turns(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    items = [{"id": "1", "text": "Say hello", "status": "completed"}]
    fake_api.push(tool_reply("todo", {"items": items}), text_reply("Hello there."))
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "Greet me") == "end_turn"
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, editor):
        await asyncio.wait_for(
            conn.load_session(cwd=str(hello_workspace), session_id=session_id, mcp_servers=[]),
            PATIENCE,
        )
        replay = list(editor.updates)  # all of it came before the answer
        with pytest.raises(RequestError, match="Unknown session"):
            await conn.load_session(cwd=str(hello_workspace), session_id="nope", mcp_servers=[])
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds[0] == "user_message_chunk" and replay[0]["content"]["text"] == "Greet me"
    assert "Hello there." in "".join(
        u["content"]["text"] for u in replay if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert any(u["sessionUpdate"] == "tool_call" and u["kind"] == "think" for u in replay)
    assert replay[-1]["sessionUpdate"] == "plan"
    assert replay[-1]["entries"] == [
        {"content": "Say hello", "priority": "medium", "status": "completed"}
    ]


async def test_slash_commands_do_what_their_lsp_twins_do(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
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
        text_reply("Step done."),
        text_reply("Step really done."),  # the done gate of the focused run
    )
    editor = EditorClient(hello_workspace, answers=["allow_always"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "edit") == "end_turn"
        assert "import os" in hello.read_text()
        await prompt(conn, session_id, "/checkpoints")
        assert "Checkpoints, oldest first" in editor.text()
        await prompt(conn, session_id, "/undo 1")
        await until(lambda: hello.read_text() == before, "step 1 undone")
        assert "Undid step #1" in editor.text()
        await prompt(conn, session_id, "/step 1")
        opening = fake_api.bodies[-1]["messages"][-1]
        assert "#1" in json.dumps(opening)
        with pytest.raises(RequestError, match=r"no item|Unknown|unknown"):
            await prompt(conn, session_id, "/step 99")
    # The undo is in the session's history as the language server's restore puts it there
    # (the session writes it, whichever front door asked): VS Code's history shows it.
    [folder] = {p.parents[2] for p in (tmp_path / "state").rglob("sessions/*/history.jsonl")}
    editor_lsp = await start_editor(hello_workspace, None, storage=folder)
    try:
        history = await editor_lsp.request("plansight/history", {"sessionId": session_id})
    finally:
        await editor_lsp.stop()
    afters = [a for run in history["runs"] for a in run.get("after", [])]
    assert [(a["type"], a.get("todoId")) for a in afters] == [("restored", "1")]
    assert "hello.py" in afters[0]["restored"]


async def test_bad_requests_get_clear_errors_and_the_agent_keeps_serving(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hold = Held(text_reply("slow answer"))
    fake_api.push(hold, text_reply("fine"))
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, _):
        # No folder: the agent says to open one, never works in its own cwd.
        with pytest.raises(RequestError, match=r"Open a folder.*absolute"):
            await conn.new_session(cwd="relative/path", mcp_servers=[])
        with pytest.raises(RequestError, match=r"Open a folder.*not an existing folder"):
            await conn.new_session(cwd=str(tmp_path / "missing"), mcp_servers=[])
        with pytest.raises(RequestError, match="Unknown session"):
            await conn.prompt(session_id="nobody", prompt=[text_block("hi")])
        session_id = await new_session(conn, hello_workspace)
        first = asyncio.ensure_future(prompt(conn, session_id, "one"))
        await asyncio.to_thread(hold.asked.wait, PATIENCE)
        with pytest.raises(RequestError, match="already in progress"):
            await conn.prompt(session_id=session_id, prompt=[text_block("two")])
        hold.release()
        assert await first == "end_turn"
        assert await prompt(conn, session_id, "three") == "end_turn"


async def test_ask_user_is_an_elicitation_form_where_the_client_offers_it(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    question = {"question": "Which greeting?", "options": ["Hello", "Hi"]}
    fake_api.push(tool_reply("ask_user", question), text_reply("Using Hi."))
    editor = EditorClient(hello_workspace, form_answers=["Hi"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor, elicitation=True) as (
        conn,
        _,
    ):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "greet") == "end_turn"
    (asked,) = editor.elicited
    assert asked["message"] == "Which greeting?"
    schema = asked["mode"]["requestedSchema"]
    assert schema["properties"]["answer"]["enum"] == ["Hello", "Hi"]
    assert asked["mode"]["toolCallId"] == editor.of("tool_call")[0]["toolCallId"]
    result = tool_results(fake_api.bodies[1])[0]
    assert "The user answered: Hi" in result["content"]


async def test_without_elicitation_the_question_ends_the_turn_and_the_next_prompt_answers(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    question = {"question": "Which greeting?", "options": ["Hello", "Hi"]}
    fake_api.push(tool_reply("ask_user", question), text_reply("Using Hi."))
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, editor):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "greet") == "end_turn"
        assert len(fake_api.bodies) == 1  # the turn ended with the question
        assert editor.text().rstrip().endswith("- Hello\n- Hi")
        assert await prompt(conn, session_id, "Hi, please") == "end_turn"
    opening = json.dumps(fake_api.bodies[1]["messages"][-1])
    assert "answer to your question (Which greeting?)" in opening and "Hi, please" in opening


async def test_without_fs_the_agent_reads_and_writes_the_disk(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    hello = hello_workspace / "hello.py"
    before = hello.read_text()
    fake_api.push(
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply(
            "edit_file", {"path": "hello.py", "old_text": "import sys", "new_text": "import os"}
        ),
        text_reply("Done."),
    )
    editor = EditorClient(hello_workspace, answers=["allow_once"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor, fs=False) as (
        conn,
        _,
    ):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "edit") == "end_turn"
    assert editor.reads == [] and editor.writes == []
    assert hello.read_text() == before.replace("import sys", "import os")


async def test_reject_always_rejects_the_next_command_without_asking(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        tool_reply("bash", {"command": "touch one"}),
        tool_reply("bash", {"command": "touch two"}),
        text_reply("Neither ran."),
    )
    editor = EditorClient(hello_workspace, answers=["reject_always"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "run") == "end_turn"
    assert len(editor.permissions) == 1
    assert not (hello_workspace / "one").exists() and not (hello_workspace / "two").exists()
    second = tool_results(fake_api.bodies[2])[0]
    assert second["is_error"]
    assert second["content"] == "This command was rejected by the user; it was not run."


async def test_no_file_in_the_workspace_sets_the_agents_options(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    """`plansight acp` reads options from the user's `$XDG_CONFIG_HOME/plansight/config.json`
    only: option files a repository brings (or a command writes) asking for auto-approval, a
    model and storage in the workspace are not taken: the command is still asked."""
    hostile = {
        "model": "attacker-model",
        "autoApprove": {"edits": True, "commands": True, "sandboxedCommands": True},
        "sandbox": {"enabled": False},
        "storageDir": str(hello_workspace / "leak"),
    }
    for name in (
        ".plansight/config.json",
        ".config/plansight/config.json",
        "plansight.json",
        "config.json",
    ):
        (hello_workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (hello_workspace / name).write_text(json.dumps(hostile))
    (hello_workspace / ".env").write_text("PLANSIGHT_MODEL=attacker-model\n")
    fake_api.push(tool_reply("bash", {"command": "touch pwned.txt"}), text_reply("Not run."))
    editor = EditorClient(hello_workspace, answers=["reject_once"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "run it") == "end_turn"
    assert len(editor.permissions) == 1  # asked, not auto-approved
    assert not (hello_workspace / "pwned.txt").exists()
    assert not (hello_workspace / "leak").exists()
    assert fake_api.bodies and all(b["model"] != "attacker-model" for b in fake_api.bodies)


async def test_the_mode_as_a_config_option_usage_and_the_title_reach_the_python_client(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    fake_api.push(
        tool_reply("todo", {"items": PLAN[:1]}),
        text_reply("Planned."),
        text_reply("Still planned."),
    )
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (conn, editor):
        created = await asyncio.wait_for(
            conn.new_session(cwd=str(hello_workspace), mcp_servers=[]), PATIENCE
        )
        [option] = created.config_options
        assert option.category == "mode" and option.current_value == "act"
        session_id = created.session_id
        changed = await asyncio.wait_for(
            conn.set_config_option(config_id="mode", session_id=session_id, value="plan"),
            PATIENCE,
        )
        assert changed.config_options[0].current_value == "plan"
        await until(lambda: bool(editor.of("current_mode_update")), "the modes told")
        assert editor.of("current_mode_update")[0]["currentModeId"] == "plan"
        assert await prompt(conn, session_id, "Plan the tidy-up\nof hello.py") == "end_turn"
        # One usage_update a model turn, with the cost at claude-sonnet-5-5's list price.
        usage = editor.of("usage_update")
        assert len(usage) == len(fake_api.bodies) and usage[-1]["cost"]["currency"] == "USD"
        assert editor.of("session_info_update") == [
            {"sessionUpdate": "session_info_update", "title": "Plan the tidy-up"}
        ]


async def test_a_second_proposal_shows_what_changed_since_the_one_the_user_saw(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    # Issue 30: the user's next prompt is the feedback, and the next approval's content shows
    # the new plan beside the one the user saw.
    items = [{"id": "1", "text": "Add a docstring", "status": "pending"}]
    both = [*items, {"id": "2", "text": "Add type hints", "status": "pending"}]
    fake_api.push(
        tool_reply("todo", {"items": items}),
        tool_reply("submit_plan", {"summary": "One docstring."}),
        tool_reply("todo", {"items": both}),
        tool_reply("submit_plan", {"summary": "Docstring and hints."}),
        text_reply("Planned."),
    )
    editor = EditorClient(hello_workspace, answers=["keep_planning", "keep_planning"])
    async with acp_agent(fake_api, hello_workspace, tmp_path, client=editor) as (conn, _):
        session_id = await new_session(conn, hello_workspace)
        assert await prompt(conn, session_id, "/plan add a docstring") == "end_turn"
        await prompt(conn, session_id, "Also type hints")
    first, second = (p["toolCall"]["content"][0]["content"]["text"] for p in editor.permissions)
    assert "What changed" not in first
    assert second == (
        "**Proposed plan**\n\nDocstring and hints.\n\n- [ ] 1. Add a docstring\n"
        "- [ ] 2. Add type hints\n\n"
        "What changed since the proposal you saw:\n- added #2: Add type hints"
    )
    # The feedback reached the model as the next prompt.
    opening = fake_api.bodies[2]["messages"][-1]["content"]
    assert "Also type hints" in " ".join(b["text"] for b in opening if b.get("type") == "text")
