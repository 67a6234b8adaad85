"""The server-sent events of a streamed reply, in the real API's order and chunking.

``message_start`` (the message without content, usage with the input tokens),
``content_block_start``, ``ping`` (inside the first block, as the real API sends it),
``content_block_delta`` (``text_delta`` a few words at a time, ``input_json_delta`` with the
JSON in chunks and an empty first one, ``thinking_delta`` then ``signature_delta``),
``content_block_stop``, ..., ``message_delta`` (stop reason, usage), ``message_stop``.
`cut_frames` gives the frames of a stream that breaks after some blocks (or halfway through
the next one). Pure: messages and usage come in, frames come out; `encode` gives the bytes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Frame", "cut_frames", "encode", "reply_frames"]

# (event name, payload, is a delta frame)
Frame = tuple[str, dict[str, Any], bool]


def encode(frame: Frame) -> bytes:
    name, payload, _ = frame
    return f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def _split_text(text: str, words_per_chunk: int = 3) -> list[str]:
    pieces = re.findall(r"\S+\s*|\s+", text)
    return [
        "".join(pieces[i : i + words_per_chunk]) for i in range(0, len(pieces), words_per_chunk)
    ]


def _split_json(text: str) -> list[str]:
    size = max(8, min(64, math.ceil(len(text) / 4)))
    return [""] + [text[i : i + size] for i in range(0, len(text), size)]


def _start_frame(index: int, block: dict[str, Any]) -> Frame:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return ("content_block_start", payload, False)


def _ping() -> Frame:
    return ("ping", {"type": "ping"}, False)


def block_frames(index: int, block: dict[str, Any], *, cut: bool = False) -> list[Frame]:
    """The frames of one content block; ``cut``: a tool call cut short by max_tokens (half of
    its input JSON, then the block ends, as the real API streams it)."""
    kind = block.get("type")
    frames: list[Frame] = []

    def delta(payload: dict[str, Any]) -> None:
        frames.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": payload},
                True,
            )
        )

    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        frames.append(_start_frame(index, start))
        for chunk in _split_text(block["text"]):
            delta({"type": "text_delta", "text": chunk})
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        frames.append(_start_frame(index, start))
        encoded = json.dumps(block["input"], ensure_ascii=False)
        if cut:
            # Any proper prefix of an object's JSON is not valid JSON.
            encoded = encoded[: max(1, len(encoded) // 2)]
        for chunk in _split_json(encoded):
            delta({"type": "input_json_delta", "partial_json": chunk})
    elif kind == "thinking":
        frames.append(_start_frame(index, {"type": "thinking", "thinking": "", "signature": ""}))
        for chunk in _split_text(block["thinking"]):
            delta({"type": "thinking_delta", "thinking": chunk})
        delta({"type": "signature_delta", "signature": block.get("signature", "")})
    else:
        frames.append(_start_frame(index, block))
    frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
    return frames


def _frame_groups(
    start: dict[str, Any], content: list[dict[str, Any]], *, cut: bool = False
) -> list[list[Frame]]:
    """``message_start``, then one group per block (the ping inside the first)."""
    groups: list[list[Frame]] = [
        [("message_start", {"type": "message_start", "message": start}, False)]
    ]
    last = len(content) - 1
    for index, block in enumerate(content):
        groups.append(block_frames(index, block, cut=cut and index == last))
    if len(groups) > 1:
        groups[1].insert(1, _ping())
    else:
        groups[0].append(_ping())
    return groups


def reply_frames(
    start: dict[str, Any],
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: dict[str, int],
    *,
    cut: bool = False,
    details: Mapping[str, Any] | None = None,
) -> list[Frame]:
    """A whole reply: ``start`` is the message ``message_start`` carries (no content yet)."""
    frames = [f for group in _frame_groups(start, content, cut=cut) for f in group]
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    if details is not None:
        delta["stop_details"] = dict(details)
    frames.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": usage},
            False,
        )
    )
    frames.append(("message_stop", {"type": "message_stop"}, False))
    return frames


def cut_frames(
    start: dict[str, Any],
    content: list[dict[str, Any]],
    after_blocks: int,
    partial: bool,
) -> list[Frame]:
    """A reply broken off after ``after_blocks`` complete blocks (``partial``: and the first
    half of the next one's deltas)."""
    groups = _frame_groups(start, content)
    frames = [f for group in groups[: after_blocks + 1] for f in group]
    if partial and after_blocks + 1 < len(groups):
        nxt = groups[after_blocks + 1]
        deltas = [f for f in nxt if f[2]]
        head = [f for f in nxt if not f[2] and f[0] != "content_block_stop"]
        frames.extend(head + deltas[: max(1, len(deltas) // 2)])
    return frames
