"""``python bench/whatif_server.py``: Plansight's server with changes the benchmarks recommend,
emulated by patching it at start-up, so that their gain can be measured before anyone writes
them. Evidence only: this is not how the changes should be made (see bench/RESULTS.md).

Environment switches (any non-empty value):

* ``WHATIF_NO_STORE``: no session storage at all, the upper bound of taking storage writes off
  the round (write-behind, one append per round instead of two whole rewrites);
* ``WHATIF_NO_DELTA``: no ``toolInputDelta`` notifications (no client reads them);
* ``WHATIF_RAW_STREAM``: ``messages.create(stream=True)`` with the events handled by hand,
  instead of ``messages.stream()`` (text, tool_use and usage only: enough for the benchmarks).
"""

from __future__ import annotations

import json
import os
from typing import Any


def _no_store() -> None:
    from plansight import storage

    def save(self: storage.SessionStore, part: str, value: Any) -> None:
        return None

    storage.SessionStore.save = save  # type: ignore[method-assign]


def _no_delta() -> None:
    from plansight.events import Event
    from plansight.lsp import payloads, server

    original = payloads.event_payload

    def event_payload(event: Event) -> dict[str, Any] | None:
        return None if event.type == "toolInputDelta" else original(event)

    server.event_payload = event_payload  # type: ignore[attr-defined]


def _raw_stream() -> None:
    from plansight import model

    async def stream_turn(
        self: model.ModelClient,
        *,
        system: str,
        tools: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        on_text: model.TextListener,
        on_tool_input: model.ToolInputListener,
    ) -> model.ModelTurn:
        system_blocks, request_messages = model.with_cache_breakpoints(system, messages)
        stream: Any = await self._client.messages.create(
            model=self.model,
            max_tokens=self.settings.max_tokens,
            system=system_blocks,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
            messages=request_messages,  # type: ignore[arg-type]
            stream=True,
        )
        blocks: list[dict[str, Any]] = []
        partial: dict[int, list[str]] = {}
        usage: Any = None
        stop: str | None = None
        async for event in stream:
            kind = event.type
            if kind == "message_start":
                usage = event.message.usage
            elif kind == "content_block_start":
                block = event.content_block
                if block.type == "text":
                    blocks.append({"type": "text", "text": ""})
                elif block.type == "tool_use":
                    blocks.append(
                        {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                    )
                    partial[event.index] = []
                else:
                    blocks.append(block.model_dump(exclude_none=True))
            elif kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    blocks[event.index]["text"] += delta.text
                    on_text(delta.text)
                elif delta.type == "input_json_delta" and delta.partial_json:
                    partial[event.index].append(delta.partial_json)
                    tool = blocks[event.index]
                    on_tool_input(tool["id"], tool["name"], delta.partial_json)
            elif kind == "content_block_stop" and event.index in partial:
                raw = "".join(partial.pop(event.index))
                blocks[event.index]["input"] = json.loads(raw) if raw else {}
            elif kind == "message_delta":
                stop = event.delta.stop_reason
                usage.output_tokens = event.usage.output_tokens
        content = [b for b in blocks if not (b["type"] == "text" and not b["text"])]
        return model.ModelTurn(content=content, stop_reason=stop, usage=model._usage(usage))

    model.ModelClient.stream_turn = stream_turn  # type: ignore[method-assign]


def main() -> None:
    if os.environ.get("WHATIF_NO_STORE"):
        _no_store()
    if os.environ.get("WHATIF_NO_DELTA"):
        _no_delta()
    if os.environ.get("WHATIF_RAW_STREAM"):
        _raw_stream()
    from plansight.__main__ import main as plansight_main

    plansight_main(["lsp"])


if __name__ == "__main__":
    main()
