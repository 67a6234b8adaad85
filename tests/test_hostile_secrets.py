"""Secret values never reach the model (PROTOCOL.md version 4), through the real language
server and the scripted fake Messages API: a repository that committed its `.env` (fresh random
canaries each run: a secret-named value, a 40-character token, a private key's body, a staged
token), copies of it under `node_modules/` (one under a name nobody protects), a hardlink to
it under another name, and the
server's own API key smuggled into a workspace file. The model reads them every way it can; an
attacker who sees what the model sees (every request body the fake received), what the editor
was told (`toolResult` events) or what was stored (`plansight/history`, the storage folder)
finds none of them, nor their base64 forms."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply

from acp_harness import EditorClient, acp_agent
from conftest import FIXTURES, PATIENCE
from lsp_harness import start_editor
from mcp_support import fault_server

WITHHELD_ENV = "[withheld: a secret from .env]"
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}")


def canary(size: int) -> str:
    """Random letters and digits: found nowhere unless copied."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(size))


class Canaries:
    def __init__(self) -> None:
        self.password = canary(10)  # secret-named: withheld from 6 characters
        self.token = canary(40)  # no secret name: withheld as a long random value
        self.key_lines = [canary(64) for _ in range(3)]  # a private key's body
        self.staged = canary(24)  # in the index only, seen by `git diff --cached`
        self.api_key = "sk-ant-canary-" + canary(32)  # the server's own key

    def committed_env(self) -> str:
        key = "\n".join(self.key_lines)
        return (
            "DEBUG=true\n"
            f"DB_PASSWORD={self.password}\n"
            f"WEBHOOK={self.token}\n"
            f'SIGNING_KEY="-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----"\n'
        )

    def staged_env(self) -> str:
        return self.committed_env() + f"STAGED_TOKEN={self.staged}\n"

    def all(self) -> list[str]:
        return [self.password, self.token, *self.key_lines, self.staged, self.api_key]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def canaries() -> Canaries:
    return Canaries()


@pytest.fixture
def hostile(tmp_path: Path, canaries: Canaries) -> Path:
    root = tmp_path / "hostile"
    shutil.copytree(FIXTURES / "hostile-secrets", root)
    git(root, "init", "-q")
    (root / ".env").write_text(canaries.committed_env())
    git(root, "add", "-A", "-f")
    git(root, "commit", "-q", "-m", "settings")
    (root / ".env").write_text(canaries.staged_env())
    git(root, "add", "-f", ".env")
    copy = root / "node_modules" / "x" / ".env"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(root / ".env", copy)
    # A copy under a name nobody protects: the sandbox hides `node_modules/x/.env` from commands
    # (a protected file in an ignored folder), but it cannot know this one; its values are known
    # from the protected files, so they are withheld.
    shutil.copyfile(root / ".env", copy.with_name("settings.txt"))
    os.link(root / ".env", root / "notes.txt")  # the same file under a name nobody protects
    (root / "smuggled.sh").write_text(f"X={canaries.api_key}\n")
    return root


SCRIPTED = [
    ("bash", {"command": "git show HEAD:.env"}),
    ("bash", {"command": "git diff --cached"}),
    ("bash", {"command": "cat node_modules/x/settings.txt"}),
    ("bash", {"command": "base64 node_modules/x/settings.txt; git show HEAD:.env | base64"}),
    ("bash", {"command": "git show HEAD:.env | base64 -w0"}),
    ("read_file", {"path": "notes.txt"}),
    ("grep", {"pattern": "TOKEN"}),
    ("bash", {"command": ". ./smuggled.sh && echo $X && cat smuggled.sh"}),
]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def leaks(text: str, canaries: list[str]) -> list[str]:
    """The canaries `text` gives away: as they are, or inside base64 (any alignment, either
    alphabet, over line breaks), decoded here independently of the code under test."""
    found = [value for value in canaries if value in text]
    joined = re.sub(r"\s+", "", text)
    for run in BASE64_RUN.findall(joined):
        standard = run.replace("-", "+").replace("_", "/")
        for start in range(4):
            chunk = standard[start:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            try:
                decoded = base64.b64decode(chunk)
            except ValueError:
                continue
            found += [value for value in canaries if value.encode() in decoded]
    return sorted(set(found))


async def test_no_secret_value_reaches_the_model_the_events_or_the_history(
    hostile: Path, canaries: Canaries, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    fake_api.push(*(tool_reply(name, tool_input) for name, tool_input in SCRIPTED))
    fake_api.push(text_reply("Read everything."))
    editor = await start_editor(
        hostile, fake_api, storage=storage, env={"ANTHROPIC_API_KEY": canaries.api_key}
    )
    try:
        result = await editor.request("plansight/run", {"prompt": "Show me the settings"})
        history = await editor.request("plansight/history", {})
    finally:
        await editor.stop()
    assert result["status"] == "done"
    assert len(fake_api.message_requests) == len(SCRIPTED) + 1

    watched = canaries.all()
    for request in fake_api.message_requests:
        assert leaks(request.raw_body.decode(), watched) == []
        assert leaks("\n".join(strings(request.body)), watched) == []
    results = [e for e in editor.recorder.events if e["type"] == "toolResult"]
    assert len(results) == len(SCRIPTED)
    for event in results:
        assert leaks(json.dumps(event), watched) == [], event["summary"]
        assert leaks("\n".join(strings(event)), watched) == []
    assert leaks("\n".join(strings(history)), watched) == []
    for stored in storage.rglob("*"):
        if stored.is_file():
            assert leaks(stored.read_bytes().decode(errors="replace"), watched) == [], stored

    # Not vacuous: the commands printed the secrets, and the model saw where they were.
    outputs = [result_text(block) for block in last_results(fake_api)]
    committed, staged, copied = outputs[0], outputs[1], outputs[2]
    assert f"DB_PASSWORD={WITHHELD_ENV}" in committed and f"WEBHOOK={WITHHELD_ENV}" in committed
    assert f"+STAGED_TOKEN={WITHHELD_ENV}" in staged
    assert f"WEBHOOK={WITHHELD_ENV}" in copied and "DEBUG=true" in copied
    assert all("withheld: a secret from" in text for text in outputs[:7])
    assert "[withheld: a secret from the server's environment ($ANTHROPIC_API_KEY)]" in outputs[7]


async def test_acp_tool_content_and_an_editor_buffer_carry_no_secret_value(
    hostile: Path, canaries: Canaries, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    # The editor's unsaved buffer of an unprotected file holds a pasted secret value.
    app = hostile / "app.py"
    editor = EditorClient(
        hostile,
        answers=["allow_always"],
        buffers={str(app): app.read_text() + f"# pasted: {canaries.token}\n"},
    )
    fake_api.push(
        tool_reply("bash", {"command": "git show HEAD:.env"}),
        tool_reply("read_file", {"path": "app.py"}),
        tool_reply("read_file", {"path": "notes.txt"}),
        text_reply("Done."),
    )
    env = {"ANTHROPIC_API_KEY": canaries.api_key}
    async with acp_agent(fake_api, hostile, tmp_path, client=editor, env=env) as (conn, _):
        session = await asyncio.wait_for(
            conn.new_session(cwd=str(hostile), mcp_servers=[]), PATIENCE
        )
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("Show it")]), PATIENCE
        )
    assert str(response.stop_reason) == "end_turn"
    watched = canaries.all()
    assert leaks(json.dumps(editor.updates), watched) == []
    for request in fake_api.message_requests:
        assert leaks(request.raw_body.decode(), watched) == []
    contents = [
        c["content"]["text"]
        for u in editor.of("tool_call_update")
        for c in u.get("content", [])
        if c["type"] == "content"
    ]
    assert any(f"DB_PASSWORD={WITHHELD_ENV}" in text for text in contents)
    # The buffer was read (through fs/read_text_file), its pasted value withheld.
    assert f"# pasted: {WITHHELD_ENV}" in result_text(last_results(fake_api)[1])


async def test_an_mcp_result_carries_no_secret_value(
    hostile: Path, canaries: Canaries, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    # A server the user configured runs outside the sandbox: it can read .env itself.
    fake_api.push(
        tool_reply("mcp__faults__read_text", {"path": str(hostile / ".env")}),
        text_reply("Read it."),
    )
    editor = await start_editor(
        hostile,
        fake_api,
        storage=tmp_path / "state",
        init_options={"mcpServers": {"faults": fault_server()}, "autoApprove": {"mcp": True}},
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "ANTHROPIC_API_KEY": canaries.api_key},
    )
    try:
        result = await editor.request("plansight/run", {"prompt": "Read the settings"})
    finally:
        await editor.stop()
    assert result["status"] == "done"
    watched = canaries.all()
    for request in fake_api.message_requests:
        assert leaks(request.raw_body.decode(), watched) == []
    assert leaks(json.dumps(editor.recorder.events), watched) == []
    (answer,) = last_results(fake_api)
    assert not answer.get("is_error"), answer
    assert f"DB_PASSWORD={WITHHELD_ENV}" in result_text(answer)


def last_results(api: FakeMessagesAPI) -> list[dict[str, Any]]:
    """Each tool's result, in the order the model got them."""
    blocks: list[dict[str, Any]] = []
    for request in api.message_requests[1:]:
        last = request.body["messages"][-1]["content"]
        blocks += [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
    return blocks


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content)
