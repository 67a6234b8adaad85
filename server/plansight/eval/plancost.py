"""What planning costs in one attempt: the tokens of the `todo` calls, the done gate's refusals,
the plan's size, its rewrites and whether it ended closed.

Two readers, both fed by what passed through the attempt, never by the server's own account:

- `PlanTokens` reads the Messages API traffic (the meter hands it each request body and each
  answer). It attributes tokens to the `todo` calls:
  - output: the output tokens of the answer that made the calls, split over the answer's
    blocks in proportion to their characters (text, thinking, a tool call's input as JSON),
    so an answer that is one `todo` call gives it all its output tokens;
  - input: the tokens of the calls' results in the request that first carries them: that
    request's input tokens (fresh, cache write and cache read together) times the results'
    share of the request body's characters. Later requests read the results again, mostly
    from the cache; that is not counted, so this is the least a result costs.
  It also counts the done gate's refusals: requests whose newest message carries the gate's
  text ("Your plan still has open items"), each distinct message once (a retried request
  resends the same message).
- `PlanTracker` reads the plan as the client is told of it (`plansight/todos`): the largest
  number of items, how often an item's text changed (by item id, one rewrite per change), and
  the final plan's state: all closed (no item pending, in progress or failed: the protocol's
  open statuses), open, or no plan at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plansight.engine.planmode import done_gate_text
from plansight.protocol.names import OPEN_STATUSES

PLAN_TOOL = "todo"
# The first line of the done gate's answer, whatever the open items are.
GATE_OPENING = done_gate_text([]).split("\n", 1)[0]


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _block_chars(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return _chars(block.get("text", ""))
    if kind == "thinking":
        return _chars(block.get("thinking", ""))
    if kind == "tool_use":
        return _chars(block.get("input", {}))
    return _chars(block)


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


@dataclass(frozen=True)
class Attributed:
    """Tokens attributed to the plan tool's calls (fractional: they are shares)."""

    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def to_wire(self) -> dict[str, float]:
        return {
            "inputTokens": round(self.input_tokens, 1),
            "outputTokens": round(self.output_tokens, 1),
        }


class PlanTokens:
    """Fed every request to and answer from `POST /v1/messages`, in order (one server's
    requests are sequential: each answer answers the request before it)."""

    def __init__(self, tool: str = PLAN_TOOL) -> None:
        self.tool = tool
        self.input_tokens = 0.0
        self.output_tokens = 0.0
        self.gate_refusals = 0
        self._pending_share = 0.0  # the plan results' share of the request being answered
        self._last_seen: str | None = None

    @property
    def attributed(self) -> Attributed:
        return Attributed(self.input_tokens, self.output_tokens)

    def request(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except ValueError:
            return
        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list) or not messages:
            return
        newest = messages[-1]
        seen = hashlib.sha256(
            f"{len(messages)}:{json.dumps(newest, sort_keys=True)}".encode()
        ).hexdigest()
        if seen == self._last_seen:
            return  # the same request again (a retry): its results and gate are counted
        self._last_seen = seen
        blocks = _blocks(newest)
        if newest.get("role") == "user" and any(
            b.get("type") == "text" and str(b.get("text", "")).startswith(GATE_OPENING)
            for b in blocks
        ):
            self.gate_refusals += 1
        calls = set()
        if len(messages) >= 2:
            calls = {
                b.get("id")
                for b in _blocks(messages[-2])
                if b.get("type") == "tool_use" and b.get("name") == self.tool
            }
        results = sum(
            _chars(b.get("content", ""))
            for b in blocks
            if b.get("type") == "tool_result" and b.get("tool_use_id") in calls
        )
        self._pending_share = results / max(1, len(body))

    def answer(self, content: list[dict[str, Any]], usage: Mapping[str, Any] | None) -> None:
        """An answer with its usage; one without (an error) leaves the request's share for
        the retry's answer."""
        if not usage:
            return
        counts = {k: v for k, v in usage.items() if isinstance(v, int)}
        read = (
            counts.get("input_tokens", 0)
            + counts.get("cache_creation_input_tokens", 0)
            + counts.get("cache_read_input_tokens", 0)
        )
        self.input_tokens += self._pending_share * read
        self._pending_share = 0.0
        sizes = [(_block_chars(b), b) for b in content if isinstance(b, dict)]
        total = sum(size for size, _ in sizes)
        if total:
            mine = sum(
                size
                for size, b in sizes
                if b.get("type") == "tool_use" and b.get("name") == self.tool
            )
            self.output_tokens += counts.get("output_tokens", 0) * mine / total


class PlanTracker:
    """The plan as `plansight/todos` notifications show it, one state after another."""

    def __init__(self) -> None:
        self.most_items = 0
        self.rewrites = 0
        self._texts: dict[str, str] = {}
        self._statuses: list[str] = []

    def update(self, items: list[Any]) -> None:
        statuses = []
        for item in items:
            if not isinstance(item, dict):
                continue
            key, text = str(item.get("id")), str(item.get("text", ""))
            if key in self._texts and self._texts[key] != text:
                self.rewrites += 1
            self._texts[key] = text
            statuses.append(str(item.get("status")))
        self._statuses = statuses
        self.most_items = max(self.most_items, len(statuses))

    @property
    def closed(self) -> bool | None:
        """True when the final plan has items and none is open; None when there is none."""
        if not self._statuses:
            return None
        return not any(status in OPEN_STATUSES for status in self._statuses)
