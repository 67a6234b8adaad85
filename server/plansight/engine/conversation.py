"""The conversation in Messages API form, kept valid for the next request at every step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Message = dict[str, Any]
Block = dict[str, Any]


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def tool_result_block(tool_use_id: str, content: str | list[Block], is_error: bool) -> Block:
    """`content`: text, or content blocks (text and images, an MCP tool's result)."""
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


class Conversation:
    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = messages if messages is not None else []
        # Applied to every block that joins as the user's (prompts, notices, tool results):
        # the session withholds secret values here (workspace/secretvalues.py). Images pass.
        self.withhold: Callable[[list[Block]], list[Block]] | None = None

    def clear(self) -> None:
        self.messages.clear()

    def replace(self, messages: list[Message]) -> None:
        """The whole conversation at once (a compaction); storage rewrites it atomically."""
        self.messages[:] = messages

    def add_user(self, blocks: list[Block]) -> None:
        """Append user content; after a cancelled stream the last message may already be user's,
        and then the blocks join it so roles keep alternating."""
        blocks = [b for b in blocks if not (b["type"] == "text" and not b["text"].strip())]
        if not blocks:
            return
        if self.withhold is not None:
            blocks = self.withhold(blocks)
        if self.messages and self.messages[-1]["role"] == "user":
            last = self.messages[-1]
            if isinstance(last["content"], str):
                last["content"] = [text_block(last["content"])]
            last["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": blocks})

    def add_assistant(self, blocks: list[Block]) -> None:
        """Append the model's content; a paused turn's continuation joins that turn."""
        if not blocks:
            return
        if self.messages and self.messages[-1]["role"] == "assistant":
            last = self.messages[-1]
            if isinstance(last["content"], str):
                last["content"] = [text_block(last["content"])]
            last["content"].extend(blocks)
        else:
            self.messages.append({"role": "assistant", "content": blocks})

    def unanswered_tool_uses(self) -> list[Block]:
        """tool_use blocks of the last assistant message that have no tool_result yet."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return []
        return [b for b in self.messages[-1]["content"] if b["type"] == "tool_use"]

    def repair(self, reason: str) -> None:
        """Answer any dangling tool_use so the next request is valid (after a crash or cancel)."""
        dangling = self.unanswered_tool_uses()
        if dangling:
            self.add_user([tool_result_block(b["id"], reason, True) for b in dangling])
        # An empty trailing user message cannot exist (add_user drops empties); a trailing
        # assistant message without tool_use is a valid end of conversation.
