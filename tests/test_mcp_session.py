"""MCP tools in a session: real servers nobody here wrote (mcp-server-time, server-everything)
and our fault server, through the real SDK, against the fake Messages API. Asserts on what the
API received (the tools, their schemas, the results), on what the user was asked, and on the
servers' status."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.compaction.rules import estimate_tokens
from plansight.engine.events import Event, RunFinished, RunStarted
from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.mcp.results import RESULT_MAX_BYTES
from plansight.session.session import Session

from conftest import wait_until
from mcp_support import (
    Answers,
    everything_server,
    fault_server,
    mcp_session,
    offered_tools,
    time_server,
    tool_results,
)

pytestmark = pytest.mark.slow


async def started(session: Session) -> Session:
    session.start(watch=False)
    return session


def status(session: Session, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in session.mcp.to_wire()["servers"] if s["name"] == name)
    return found


async def until_ready(session: Session, name: str) -> None:
    await wait_until(lambda: status(session, name)["status"] == "ready", f"{name} ready")


async def test_a_real_servers_tools_are_offered_prefixed_and_its_call_approved(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = Answers()
    session = await started(
        mcp_session(hello_workspace, fake_api, {"time": time_server()}, answers=answers)
    )
    try:
        fake_api.push(
            tool("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}), text("Done.")
        )
        result = await session.run("What time is it in Tokyo?")
        assert result.status == "done"
        first, second = fake_api.bodies
        offered = offered_tools(first)
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(offered)
        schema = offered["mcp__time__get_current_time"]["input_schema"]
        assert schema["type"] == "object" and "timezone" in schema["properties"]
        assert "time" in offered["mcp__time__get_current_time"]["description"].lower()
        # The user was asked, with the server's own name of the tool and the input.
        assert [(r.server, r.tool, r.input) for r in answers.tool_requests] == [
            ("time", "get_current_time", {"timezone": "Asia/Tokyo"})
        ]
        (answer,) = tool_results(second)
        assert "Asia/Tokyo" in answer["content"] and not answer.get("is_error")
        assert status(session, "time")["status"] == "ready"
        assert "get_current_time" in status(session, "time")["tools"]
    finally:
        await session.close()


async def test_images_structured_content_and_errors_of_server_everything(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = Answers()
    session = await started(
        mcp_session(hello_workspace, fake_api, {"everything": everything_server()}, answers=answers)
    )
    try:
        fake_api.push(
            tool("mcp__everything__get-tiny-image", {}),
            tool("mcp__everything__get-structured-content", {"location": "New York"}),
            tool("mcp__everything__get-sum", {"a": "not a number", "b": 2}),
            tool("mcp__everything__echo", {"message": "hello there"}),
            text("Done."),
        )
        result = await session.run("Show me what you can do")
        assert result.status == "done", result
        bodies = fake_api.bodies
        # Every request was accepted as the real API would (image blocks inside tool_result).
        assert all(r.status == 200 for r in fake_api.message_requests)
        (image,) = tool_results(bodies[1])
        kinds = [block["type"] for block in image["content"]]
        assert "image" in kinds
        picture = next(b for b in image["content"] if b["type"] == "image")
        assert picture["source"]["type"] == "base64"
        assert picture["source"]["media_type"] == "image/png" and picture["source"]["data"]
        (structured,) = tool_results(bodies[2])
        text_of = structured["content"]
        assert isinstance(text_of, str) and "temperature" in text_of
        (failed,) = tool_results(bodies[3])
        assert failed.get("is_error") is True
        (echoed,) = tool_results(bodies[4])
        assert "hello there" in echoed["content"] and not echoed.get("is_error")
    finally:
        await session.close()


async def test_a_denied_call_is_an_error_result_with_the_users_feedback(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = Answers(allow_tools=False)
    answers.feedback = "Not the clock, please."
    session = await started(
        mcp_session(hello_workspace, fake_api, {"time": time_server()}, answers=answers)
    )
    try:
        fake_api.push(tool("mcp__time__get_current_time", {"timezone": "UTC"}), text("OK."))
        await session.run("Time?")
        (denied,) = tool_results(fake_api.bodies[1])
        assert denied["is_error"] is True
        assert "denied" in denied["content"] and "Not the clock, please." in denied["content"]
    finally:
        await session.close()


async def test_always_and_auto_approve_skip_the_question(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    from plansight.session.storage import SessionStore

    answers = Answers()
    answers.always = True
    servers = {
        "time": time_server(),
        "faults": fault_server(autoApprove=["echo"]),
    }
    store = SessionStore(tmp_path / "state")
    session = await started(
        mcp_session(hello_workspace, fake_api, servers, answers=answers, store=store)
    )
    try:
        fake_api.push(
            tool("mcp__time__get_current_time", {"timezone": "UTC"}),
            tool("mcp__time__get_current_time", {"timezone": "UTC"}),
            tool("mcp__faults__echo", {"text": "no question"}),
            text("OK."),
        )
        await session.run("Time twice, then echo")
        # Asked once (the answer said always), never for the autoApprove tool.
        assert [(r.server, r.tool) for r in answers.tool_requests] == [("time", "get_current_time")]
        assert "no question" in tool_results(fake_api.bodies[3])[0]["content"]
    finally:
        await session.close()
    # Remembered for the workspace: a new session does not ask either.
    fake_api.reset()
    again = Answers()
    session = await started(
        mcp_session(hello_workspace, fake_api, servers, answers=again, store=store)
    )
    try:
        fake_api.push(tool("mcp__time__get_current_time", {"timezone": "UTC"}), text("OK."))
        await session.run("Time again")
        assert again.tool_requests == []
        assert not tool_results(fake_api.bodies[1])[0].get("is_error")
    finally:
        await session.close()


async def test_200_tools_are_deferred_behind_search_and_call(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await started(
        mcp_session(hello_workspace, fake_api, {"many": fault_server("--tools", "200")})
    )
    try:
        fake_api.push(
            tool("mcp_search", {"query": "number 117"}),
            tool("mcp_call", {"server": "many", "tool": "tool_117", "arguments": {"value": "x"}}),
            text("Done."),
        )
        await session.run("Use tool 117")
        first = fake_api.bodies[0]
        offered = offered_tools(first)
        assert "mcp_search" in offered and "mcp_call" in offered
        assert not any(name.startswith("mcp__") for name in offered)
        mcp_cost = estimate_tokens([offered["mcp_search"], offered["mcp_call"]])
        assert mcp_cost < 3000, mcp_cost
        (found,) = tool_results(fake_api.bodies[1])
        assert "tool_117" in found["content"] and "input schema" in found["content"]
        (called,) = tool_results(fake_api.bodies[2])
        assert called["content"] == "tool 117: x"
    finally:
        await session.close()


async def test_a_call_past_its_tool_timeout_is_cancelled_and_an_error(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"slow": fault_server(toolTimeout=1, autoApprove=["sleep"])}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        fake_api.push(tool("mcp__slow__sleep", {"seconds": 30}), text("OK."))
        began = time.monotonic()
        await session.run("Sleep")
        assert time.monotonic() - began < 20  # the toolTimeout, not the call's 30 s
        (timed_out,) = tool_results(fake_api.bodies[1])
        assert timed_out["is_error"] is True and "cancelled" in timed_out["content"]
    finally:
        await session.close()


async def test_a_server_that_exits_is_an_error_naming_it_then_restarted_once(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "starts.txt"
    servers = {"crashy": fault_server("--marker", str(marker), autoApprove=["exit_now", "echo"])}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        fake_api.push(
            tool("mcp__crashy__exit_now", {}),
            tool("mcp__crashy__echo", {"text": "back again"}),
            text("OK."),
        )
        await session.run("Crash, then echo")
        (gone,) = tool_results(fake_api.bodies[1])
        assert gone["is_error"] is True and "crashy" in gone["content"]
        (back,) = tool_results(fake_api.bodies[2])
        assert back["content"] == "back again"
        assert len(marker.read_text().splitlines()) == 2  # started, and restarted once
        # An exit found in one run: the next run still offers its tools, and its call restarts it.
        fake_api.push(tool("mcp__crashy__exit_now", {}), text("Gone."))
        await session.run("Crash again")
        assert status(session, "crashy")["status"] == "error"
        fake_api.push(tool("mcp__crashy__echo", {"text": "and back"}), text("OK."))
        await session.run("Echo")
        assert "mcp__crashy__echo" in offered_tools(fake_api.bodies[-1])
        assert tool_results(fake_api.bodies[-1])[0]["content"] == "and back"
        assert len(marker.read_text().splitlines()) == 3
    finally:
        await session.close()


def told_statuses(session: Session, name: str) -> list[dict[str, Any]]:
    """Each status of that server as the editor is told it (the `mcp` event), in order."""
    told: list[dict[str, Any]] = []

    def heard(statuses: Any) -> None:
        told.extend(s.to_wire() for s in statuses if s.name == name)

    session.mcp.subscribe(heard)
    return told


async def test_a_server_killed_while_idle_is_shown_exited_and_its_next_call_restarts_it(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "starts.txt"
    entry = fault_server(
        "--marker", str(marker), "--stderr", "idle server here", autoApprove=["echo"]
    )
    session = await started(mcp_session(hello_workspace, fake_api, {"idle": entry}))
    told = told_statuses(session, "idle")
    try:
        await until_ready(session, "idle")
        pid = int(marker.read_text().split()[1])
        os.kill(pid, signal.SIGKILL)
        # Shown at once, with no run and no call to find it out.
        await wait_until(lambda: any(s["status"] == "error" for s in told), "the exit shown")
        (shown,) = [s for s in told if s["status"] == "error"]
        assert shown["error"].startswith("exited: ")
        assert "restarted at its next call" in shown["error"]
        assert "idle server here" in shown["error"]  # the end of its stderr
        assert status(session, "idle") == shown
        assert fake_api.message_requests == []
        # The next run still offers its tools, and the call restarts it.
        fake_api.push(tool("mcp__idle__echo", {"text": "back again"}), text("OK."))
        result = await session.run("Echo")
        assert result.status == "done"
        assert "mcp__idle__echo" in offered_tools(fake_api.bodies[0])
        (back,) = tool_results(fake_api.bodies[1])
        assert back["content"] == "back again" and not back.get("is_error")
        assert len(marker.read_text().splitlines()) == 2  # started, and restarted once
        assert status(session, "idle")["status"] == "ready"
    finally:
        await session.close()


async def test_closing_a_session_is_no_exit_of_its_servers(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "starts.txt"
    session = await started(
        mcp_session(hello_workspace, fake_api, {"calm": fault_server("--marker", str(marker))})
    )
    told = told_statuses(session, "calm")
    await until_ready(session, "calm")
    pid = int(marker.read_text().split()[1])
    await session.close()

    def ended() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not yet reaped) ended too
            return stat.read().split()[2] == "Z"

    await wait_until(ended, "the server's process ended")
    assert [s["status"] for s in told] == ["ready"]
    assert status(session, "calm")["status"] == "ready"


async def test_a_large_result_is_cut_at_100_kb_with_a_note(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"big": fault_server(autoApprove=["big"])}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        fake_api.push(tool("mcp__big__big", {"kilobytes": 500}), text("OK."))
        await session.run("Big")
        (cut,) = tool_results(fake_api.bodies[1])
        content = cut["content"]
        assert len(content.encode()) < RESULT_MAX_BYTES + 300
        assert "output cut at 100 kB" in content
    finally:
        await session.close()


async def test_a_slow_server_does_not_hold_the_run_and_joins_the_next(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"late": fault_server("--start-delay", "4", startupTimeout=1)}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        assert status(session, "late")["status"] == "starting"
        fake_api.push(text("First."))
        began = time.monotonic()
        await session.run("One")
        assert time.monotonic() - began < 4
        assert not any(n.startswith("mcp__") for n in offered_tools(fake_api.bodies[0]))
        await until_ready(session, "late")
        fake_api.push(text("Second."))
        await session.run("Two")
        assert "mcp__late__echo" in offered_tools(fake_api.bodies[1])
    finally:
        await session.close()


async def test_a_run_cancelled_while_a_server_is_still_starting_ends_cancelled_and_unsent(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"late": fault_server("--start-delay", "60", startupTimeout=60)}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    events: list[Event] = []
    session.events.subscribe(events.append)
    try:
        run = asyncio.ensure_future(session.run("Wait for me"))
        await wait_until(lambda: any(isinstance(e, RunStarted) for e in events), "the run begun")
        assert status(session, "late")["status"] == "starting"
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        (finished,) = [e for e in events if isinstance(e, RunFinished)]
        assert (finished.result.status, finished.result.rounds) == ("cancelled", 0)
        assert fake_api.message_requests == []  # nothing was sent while it waited
        assert session.conversation.messages == []  # nor kept: the prompt never joined it
        assert not session.running
    finally:
        await session.close()


async def test_a_changed_tool_list_is_honoured_at_the_next_run(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"grow": fault_server(autoApprove=["add_tool"])}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        fake_api.push(tool("mcp__grow__add_tool", {"name": "fresh"}), text("Added."))
        await session.run("Add a tool")
        # Fixed within the run: the second request of the run offers the same tools.
        assert offered_tools(fake_api.bodies[0]) == offered_tools(fake_api.bodies[1])
        assert "mcp__grow__fresh" not in offered_tools(fake_api.bodies[1])
        fake_api.push(text("Next."))
        await session.run("Next run")
        assert "mcp__grow__fresh" in offered_tools(fake_api.bodies[2])
    finally:
        await session.close()


async def test_a_workspace_server_never_starts_without_trust(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    (hello_workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {marker}"]}}})
    )
    answers = Answers(trust=False)
    session = await started(mcp_session(hello_workspace, fake_api, answers=answers))
    try:
        await wait_until(lambda: answers.trust_requests, "the trust question")
        (asked,) = answers.trust_requests
        assert (asked.name, asked.command, asked.args) == ("evil", "sh", ("-c", f"touch {marker}"))
        assert asked.source == str(hello_workspace / ".mcp.json")
        fake_api.push(text("Nothing."))
        await session.run("Hello")
        assert status(session, "evil")["status"] == "untrusted"
        await asyncio.sleep(0)  # (nothing to wait for: it was never started)
        assert not marker.exists()
    finally:
        await session.close()
    assert not marker.exists()


async def test_trust_is_remembered_until_the_entry_changes(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    from plansight.session.storage import SessionStore

    # In the workspace: a server from a workspace file runs sandboxed, with a /tmp of its own.
    marker = hello_workspace / "starts.txt"
    config = hello_workspace / ".mcp.json"
    # Named by its environment: a file its command line names is covered by the trust, and
    # the marker changes at each start.
    entry = fault_server(env={"FAULT_SERVER_MARKER": str(marker)})
    config.write_text(json.dumps({"mcpServers": {"local": entry}}))
    store = SessionStore(tmp_path / "state")

    async def session_with(answers: Answers) -> Session:
        return await started(mcp_session(hello_workspace, fake_api, answers=answers, store=store))

    first = Answers(trust=True)
    session = await session_with(first)
    await until_ready(session, "local")
    await session.close()
    assert len(first.trust_requests) == 1

    second = Answers(trust=False)
    session = await session_with(second)
    await until_ready(session, "local")  # trusted before: started without asking
    await session.close()
    assert second.trust_requests == []

    entry["args"].append("--tools")
    entry["args"].append("1")
    config.write_text(json.dumps({"mcpServers": {"local": entry}}))
    third = Answers(trust=False)
    session = await session_with(third)
    await wait_until(lambda: third.trust_requests, "asked again about the changed entry")
    assert status(session, "local")["status"] == "untrusted"
    await session.close()
    assert len(marker.read_text().splitlines()) == 2


async def test_a_trusted_workspace_server_runs_sandboxed_and_a_users_server_does_not(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    # The marker records the pid each server sees for itself: 2 inside the sandbox's own
    # process namespace (bwrap is 1), the host's pid outside it.
    inside = hello_workspace / "inside.txt"
    outside = tmp_path / "outside.txt"
    (hello_workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"local": fault_server("--marker", str(inside))}})
    )
    session = await started(
        mcp_session(
            hello_workspace,
            fake_api,
            {"mine": fault_server("--marker", str(outside))},
            answers=Answers(trust=True),
        )
    )
    try:
        await until_ready(session, "local")
        await until_ready(session, "mine")
    finally:
        await session.close()
    (sandboxed,) = inside.read_text().split()[1:]
    (free,) = outside.read_text().split()[1:]
    assert int(sandboxed) <= 3, "the workspace's server runs in a process namespace of its own"
    assert int(free) > 3 and int(free) != os.getpid()


async def test_a_cancelled_run_stops_the_mcp_call_within_a_second(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    servers = {"slow": fault_server(autoApprove=["sleep", "echo"])}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    try:
        await until_ready(session, "slow")
        fake_api.push(tool("mcp__slow__sleep", {"seconds": 60}))
        calls: list[Any] = []
        session.events.subscribe(lambda e: calls.append(e) if e.type == "toolCall" else None)
        run = asyncio.create_task(session.run("Sleep a minute"))
        await wait_until(lambda: calls, "the MCP call began")
        began = time.monotonic()
        session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert time.monotonic() - began < 30  # the cancel, not the call's 60 s
        # The conversation stays valid and the server still answers the next run's call.
        fake_api.push(tool("mcp__slow__echo", {"text": "still here"}), text("OK."))
        await session.run("Echo")
        assert tool_results(fake_api.bodies[-1])[0]["content"] == "still here"
    finally:
        await session.close()


async def test_a_streamable_http_server_with_headers(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    import socket

    from mcp_support import EVERYTHING, node

    everything_server()  # installed, or the test fails saying how to install it
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        node(),
        str(EVERYTHING),
        "streamableHttp",
        env={"PATH": "/usr/bin:/bin", "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:

        async def listening() -> bool:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                return False
            writer.close()
            return True

        await wait_until(listening, "server-everything listening over HTTP")
        servers = {
            "web": {
                "url": f"http://127.0.0.1:{port}/mcp",
                "headers": {"X-Test": "${env:HOME}"},
                "autoApprove": ["get-sum"],
            }
        }
        session = await started(mcp_session(hello_workspace, fake_api, servers))
        try:
            await until_ready(session, "web")
            fake_api.push(tool("mcp__web__get-sum", {"a": 2, "b": 3}), text("Five."))
            await session.run("Add")
            (summed,) = tool_results(fake_api.bodies[1])
            assert "5" in summed["content"] and not summed.get("is_error")
        finally:
            await session.close()
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


async def test_closing_while_a_server_starts_is_quick_and_leaves_no_process(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    import os

    marker = tmp_path / "starts.txt"
    servers = {"late": fault_server("--marker", str(marker), "--start-delay", "60")}
    session = await started(mcp_session(hello_workspace, fake_api, servers))
    await wait_until(lambda: marker.exists() and marker.read_text(), "the server's process began")
    pid = int(marker.read_text().split()[1])
    began = time.monotonic()
    await session.close()
    assert time.monotonic() - began < 30  # not the server's 60 s start

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie (exited, not yet reaped by anyone) is gone too.
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] == "Z"

    await wait_until(gone, "the server's process ended")
