"""One server per workspace's session, and a state folder it cannot write, as a user meets them:
real `plansight run` and `plansight lsp` processes, the fake Messages API.

A second server on a workspace whose session another live server holds is refused before it
does anything (never a shared conversation), naming the other; a state folder that cannot be
written refuses the run with one message and no traceback (session/lock.py says why)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply

from acp_harness import acp_agent
from conftest import PATIENCE, wait_until_sync
from lsp_harness import server_env, start_editor

# The first run waits in a command until the test lets it go on (a file appears), so that the
# second run starts while the first is in the middle of its work.
WAIT_FOR_GO = "for i in $(seq 1200); do [ -e go ] && break; sleep 0.1; done; echo went on"


def plansight_run(
    api: FakeMessagesAPI, workspace: Path, state: Path, prompt: str, *before: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *before,
            sys.executable,
            "-m",
            "plansight",
            "run",
            prompt,
            "--yes",
            "--workspace",
            str(workspace),
        ],
        env=client_env(api, state),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def client_env(api: FakeMessagesAPI, state: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_")) and k not in ("FORCE_COLOR", "COLUMNS")
    }
    env["XDG_STATE_HOME"] = str(state)  # never the developer's own stored sessions
    env["ANTHROPIC_BASE_URL"] = api.base_url
    env["ANTHROPIC_API_KEY"] = "test-key"
    return env


def stored_conversation(state: Path) -> list[Any]:
    [log] = (state / "plansight" / "workspaces").glob("*/sessions/*/conversation.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()]


def user_prompts(messages: list[Any]) -> list[str]:
    return [
        block["text"]
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text"
    ]


def test_a_second_run_on_a_busy_workspace_is_refused_naming_the_first(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    fake_api.push(tool_reply("bash", {"command": WAIT_FOR_GO}), text_reply("First run done."))
    first = plansight_run(fake_api, hello_workspace, state, "the first run's prompt")
    try:
        wait_until_sync(lambda: len(fake_api.message_requests) >= 1, "the first run under way")
        second = plansight_run(fake_api, hello_workspace, state, "the second run's prompt")
        out, err = second.communicate(timeout=PATIENCE)
        assert second.returncode == 1, out + err
        said = out + err
        assert "Another Plansight server is using this workspace's session" in said, said
        assert f"plansight-cli, pid {first.pid}" in said, said  # which one: the user can find it
        assert said.count("Another Plansight server") == 1, said  # said once
        assert "Traceback" not in said
        assert len(fake_api.message_requests) == 1  # the second never reached the model

        (hello_workspace / "go").touch()
        first_out, first_err = first.communicate(timeout=PATIENCE)
        assert first.returncode == 0, first_out + first_err
        assert "First run done." in first_out
    finally:
        first.kill()
        first.wait()
    prompts = " ".join(user_prompts(stored_conversation(state)))
    assert "the first run's prompt" in prompts and "the second run's prompt" not in prompts
    assert len(fake_api.message_requests) == 2  # the first run's two rounds, nothing else

    # Once the first has ended, the workspace is free again.
    fake_api.push(text_reply("Third run done."))
    third = plansight_run(fake_api, hello_workspace, state, "the third run's prompt")
    out, err = third.communicate(timeout=PATIENCE)
    assert third.returncode == 0, out + err
    assert "Third run done." in out


def test_the_workspace_is_free_again_once_its_server_is_killed(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    fake_api.push(tool_reply("bash", {"command": WAIT_FOR_GO}))
    first = plansight_run(fake_api, hello_workspace, state, "the first run's prompt")
    try:
        wait_until_sync(lambda: len(fake_api.message_requests) >= 1, "the first run under way")
        holder = _lock_holder(state)  # the server, which the lock file names
        os.kill(holder, 9)  # a crash: the kernel drops the lock with the process
        wait_until_sync(lambda: not _alive(holder), "the first server gone")
    finally:
        first.kill()
        first.wait()
    fake_api.push(text_reply("Second run done."))
    second = plansight_run(fake_api, hello_workspace, state, "the second run's prompt")
    out, err = second.communicate(timeout=PATIENCE)
    assert second.returncode == 0, out + err
    assert "Second run done." in out


def _lock_holder(state: Path) -> int:
    [lock] = (state / "plansight" / "workspaces").glob("*/session.lock")
    return int(json.loads(lock.read_text())["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its parent) holds no lock any more
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # reaped between the two looks
        return False
    return state != "Z"


async def test_a_second_editor_window_is_told_at_once_and_the_first_works_on(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "storage"
    first = await start_editor(hello_workspace, fake_api, storage=storage)
    second = LanguageClient(converter_factory=default_converter)
    try:
        await second.start_io(
            sys.executable,
            "-m",
            "plansight",
            "lsp",
            env=server_env(fake_api),
            cwd=str(hello_workspace),
        )
        uri = hello_workspace.as_uri()
        with pytest.raises(JsonRpcException) as refused:
            await asyncio.wait_for(
                second.initialize_session(
                    types.InitializeParams(
                        capabilities=client_capabilities("visual-studio-code"),
                        root_uri=uri,
                        workspace_folders=[types.WorkspaceFolder(uri=uri, name="hello")],
                        initialization_options={"storageDir": str(storage)},
                        client_info=types.ClientInfo(name="Visual Studio Code"),
                        process_id=os.getpid(),
                    )
                ),
                PATIENCE,
            )
        message = str(refused.value.message)
        assert message.startswith("Another Plansight server is using this workspace's session")
        assert str(storage) in message and "server pid " in message
        # The first window's session is untouched and still serves.
        fake_api.push(text_reply("Still here."))
        result = await first.request("plansight/run", {"prompt": "are you there?"})
        assert result["status"] == "done"
    finally:
        try:  # the refused server leaves as any does: shutdown, exit
            await asyncio.wait_for(second.shutdown_session(), PATIENCE)
        finally:
            await second.stop()
            await first.stop()


# A state folder that cannot be written -------------------------------------------------------


@contextmanager
def unwritable(folder: Path) -> Iterator[list[str]]:
    """`folder` read-only for the command the block runs (the prefix it yields): root writes
    anything, so as root the command runs without the capabilities that let it."""
    folder.chmod(0o555)
    try:
        if os.geteuid() != 0:
            yield []
            return
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv (util-linux) to run root without overriding permissions")
        yield [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    finally:
        folder.chmod(0o755)


def test_a_read_only_state_folder_refuses_the_run_with_one_message(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    fake_api.push(text_reply("A first run, saved."))
    first = plansight_run(fake_api, hello_workspace, state, "the first run's prompt")
    out, err = first.communicate(timeout=PATIENCE)
    assert first.returncode == 0, out + err
    [folder] = (state / "plansight" / "workspaces").iterdir()
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    with unwritable(folder) as prefix:
        second = plansight_run(fake_api, hello_workspace, state, "unsaved prompt", *prefix)
        out, err = second.communicate(timeout=PATIENCE)
    said = out + err
    assert second.returncode == 1, said
    assert "Traceback" not in said and "could not append" not in said, said
    assert said.count(f"cannot save this workspace's session in {folder}") == 1, said
    assert "Permission denied" in said and "XDG_STATE_HOME" in said, said  # why, and a way out
    assert len(fake_api.message_requests) == 1  # nothing ran that could not be saved
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_a_state_folder_that_cannot_be_made_refuses_the_run_too(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    with unwritable(state) as prefix:
        run = plansight_run(fake_api, hello_workspace, state, "unsaved prompt", *prefix)
        out, err = run.communicate(timeout=PATIENCE)
    said = out + err
    assert run.returncode == 1, said
    assert "Traceback" not in said and said.count("cannot save this workspace's session") == 1
    assert not fake_api.message_requests


async def test_a_second_acp_agent_on_the_workspace_is_refused_its_session(
    hello_workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    async with acp_agent(fake_api, hello_workspace, tmp_path) as (first, _):
        kept = await first.new_session(cwd=str(hello_workspace), mcp_servers=[])
        async with acp_agent(fake_api, hello_workspace, tmp_path) as (second, _):
            # A session that waits for the folder (a client shows a prompt's error, not a
            # refused session/new's): its prompts are refused while the first keeps it.
            waiting = await asyncio.wait_for(
                second.new_session(cwd=str(hello_workspace), mcp_servers=[]), PATIENCE
            )
            assert waiting.session_id != kept.session_id
            with pytest.raises(RequestError) as refused:
                await asyncio.wait_for(
                    second.prompt(session_id=waiting.session_id, prompt=[text_block("hi")]),
                    PATIENCE,
                )
        assert "Another Plansight server is using this workspace's session" in str(refused.value)
        assert not fake_api.message_requests  # the second server ran nothing
        fake_api.push(text_reply("Still here."))
        answer = await asyncio.wait_for(
            first.prompt(session_id=kept.session_id, prompt=[text_block("there?")]), PATIENCE
        )
        assert answer.stop_reason == "end_turn"
