"""What the fake Messages API's tests share: a model name and a tool, message and block
builders, an SDK client and raw HTTP requests for a fake, and a reader of raw SSE frames."""

from __future__ import annotations

import http.client
import json
from typing import Any

import anthropic

from plansight.fakeapi import FakeMessagesAPI, sign_thinking

from conftest import PATIENCE

MODEL = "claude-fake-1"


TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def user(content: Any) -> Any:
    return {"role": "user", "content": content}


def assistant(content: Any) -> Any:
    return {"role": "assistant", "content": content}


def tool_use(tool_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"path": "a.py"}}


def tool_result(tool_id: str, content: str = "print(1)") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def text(value: str, **extra: Any) -> Any:
    return {"type": "text", "text": value, **extra}


EPHEMERAL = {"type": "ephemeral"}


def client_for(api: FakeMessagesAPI, **kwargs: Any) -> anthropic.AsyncAnthropic:
    options: dict[str, Any] = {"api_key": "test-key", "timeout": 5, "max_retries": 0}
    options.update(kwargs)
    return anthropic.AsyncAnthropic(base_url=api.base_url, **options)


def post(
    api: FakeMessagesAPI,
    body: Any,
    *,
    path: str = "/v1/messages",
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, dict[str, str], bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", api.port, timeout=PATIENCE)
    sent = {"content-type": "application/json", "x-api-key": "test-key"}
    sent.update(headers or {})
    conn.request("POST", path, body=json.dumps(body), headers=sent)
    resp = conn.getresponse()
    data = resp.read()
    result = resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    if own:
        conn.close()
    return result


def sse_frames(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    frames: list[tuple[str, dict[str, Any]]] = []
    for raw in data.decode().split("\n\n"):
        if not raw:
            continue
        lines = raw.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: "), raw
        assert lines[1].startswith("data: "), raw
        payload = json.loads(lines[1][len("data: ") :])
        assert payload["type"] == lines[0][len("event: ") :]
        frames.append((payload["type"], payload))
    return frames


def body_with(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": messages, **extra}


THINKING_ON = {"type": "enabled", "budget_tokens": 1024}


async def raw_events(client: anthropic.AsyncAnthropic, **request: Any) -> list[Any]:
    """The raw SSE events of one streamed request (messages.create(stream=True))."""
    events = []
    stream = await client.messages.create(stream=True, **request)
    async with stream:
        async for event in stream:
            events.append(event)
    return events


def signed(thinking: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": sign_thinking(thinking)}
