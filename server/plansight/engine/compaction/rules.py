"""Compaction: a long session kept inside the model's context window, its plan kept verbatim.

Pure functions over the conversation as Messages API dicts (no LSP, no SDK, no I/O):

- `ContextMeter` estimates the next request's size: the last response's usage (input, cache
  read, cache write, output) plus an estimate of what was appended since.
- `clear_old_tool_results` is the first, cheap step: results of tool calls older than the
  last rounds become one-line notes (tool, input, size cleared, "call it again"); every
  tool_use keeps its tool_result, and results of the tools the registry exempts stay.
- `summary_request` and `summarized_conversation` are the second step: the model is asked for
  a summary of the conversation as it is, and the conversation becomes one user message
  holding the session's first prompt, the current run's prompt, the summary, the plan's
  rendered text and the scratchpad verbatim, followed by the last round as it was. Thinking
  blocks of the summarized turns go with them.

Inputs are never modified: each function returns new lists, sharing the messages it keeps.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Message = dict[str, Any]
Block = dict[str, Any]
KeepsResult = Callable[[str], bool]
Strategy = Literal["clearToolResults", "summary"]

# Claude's tokenizer gives about 3.5-4 characters per token for code and JSON; counting
# fewer characters per token overestimates, which is the safe side of a threshold.
CHARS_PER_TOKEN = 3.5
# The most the meter corrects its estimates by (dense text, base64, CJK: about one token per
# character), so that a strange count from a proxy cannot make every request compact.
MAX_SCALE = CHARS_PER_TOKEN
# What an image costs at most: the API scales it to fit 1568 px and about 1.15 megapixels,
# then counts width × height / 750 tokens (so ~1,600), whatever the size of its base64 text.
IMAGE_TOKENS = 1_600
KEEP_ROUNDS = 3
NOTE_PREFIX = "[Result cleared to save context:"
HEADER_OPEN = "<compacted-session>"
_INPUT_CHARS = 160  # of the tool input quoted in a note

SUMMARY_INSTRUCTION = (
    "<compaction-request>The conversation is about to be compacted to fit the context window. "
    "Write a summary of the work so far that lets you carry on without the earlier messages: "
    "what the user asked, what was done, what was learnt (facts about the code, decisions, "
    "dead ends), which files were changed and how, and what is left to do. Be specific: "
    "paths, names, commands, error messages. Do not call tools; answer with the summary only. "
    "Your plan and scratchpad are kept as they are, so do not copy them."
    "</compaction-request>"
)


def estimate_tokens(value: Any) -> int:
    """Tokens a JSON value would take in a request, estimated from its compact JSON; an image
    block (an MCP tool's screenshot) counts as `IMAGE_TOKENS`, not as its base64 text."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if '"type":"image"' not in text:  # (the common case pays one search of the text)
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    images: list[None] = []
    text = json.dumps(_without_image_data(value, images), ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN) + IMAGE_TOKENS * len(images)


def context_parts(system: str, tools: Any, messages: Sequence[Message]) -> dict[str, int]:
    """What a request holds, in estimated tokens (`estimate_tokens`, as the meter counts):
    the system prompt with the tools' definitions, the tool results, and the rest of the
    conversation (prompts, the model's turns, its tool calls). Tool results are counted
    where they lie, block by block: what `/context` shows of a conversation."""
    results = conversation = 0
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            tokens = estimate_tokens(block)
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results += tokens
            else:
                conversation += tokens
    return {
        "systemPrompt": estimate_tokens(system) + estimate_tokens(tools),
        "conversation": conversation,
        "toolResults": results,
    }


def _without_image_data(value: Any, images: list[None]) -> Any:
    """`value` with each image block's source data left out (one entry in `images` each)."""
    if isinstance(value, list):
        return [_without_image_data(item, images) for item in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "image" and isinstance(value.get("source"), dict):
        images.append(None)
        return {**value, "source": {k: v for k, v in value["source"].items() if k != "data"}}
    return {key: _without_image_data(item, images) for key, item in value.items()}


@dataclass
class ContextMeter:
    """How big the next request is, from the API's own count of the last one.

    After each response, `record` the response's input + cache read + cache write + output
    tokens and how many messages they covered (the request's and the reply). `estimate` adds
    what was appended since; it estimates everything when it has no count or the conversation
    was rewritten below it (a compaction, a restore). When the API reports a count above the
    estimate (a "prompt is too long" refusal), `learn` raises ``scale``, by which every later
    estimate is multiplied, so the meter is never again that far below the truth.
    """

    base_tokens: int = 0
    base_messages: int = 0
    scale: float = 1.0

    def record(self, tokens: int, messages: int) -> None:
        self.base_tokens = tokens
        self.base_messages = messages

    def reset(self) -> None:
        self.base_tokens = 0
        self.base_messages = 0

    def full(self, messages: Sequence[Message], overhead: int) -> int:
        """The whole request estimated (``overhead``: the system prompt's and tools' tokens)."""
        estimate = overhead + sum(estimate_tokens(m) for m in messages)
        return math.ceil(estimate * self.scale)

    def estimate(self, messages: Sequence[Message], overhead: int) -> int:
        if self.base_messages == 0 or self.base_messages > len(messages):
            return self.full(messages, overhead)
        added = sum(estimate_tokens(m) for m in messages[self.base_messages :])
        return self.base_tokens + math.ceil(added * self.scale)

    def learn(self, tokens: int, messages: Sequence[Message], overhead: int) -> None:
        """The API counted ``tokens`` for exactly these messages."""
        estimated = overhead + sum(estimate_tokens(m) for m in messages)
        if estimated > 0:
            self.scale = min(MAX_SCALE, max(self.scale, tokens / estimated))
        self.record(tokens, len(messages))


@dataclass(frozen=True)
class Cleared:
    messages: list[Message]
    results: int  # how many tool results became notes
    chars: int  # the characters they held


def _result_text(block: Block) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _is_note(block: Block) -> bool:
    return _result_text(block).startswith(NOTE_PREFIX)


def clearing_note(name: str, tool_input: Any, chars: int) -> str:
    quoted = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    if len(quoted) > _INPUT_CHARS:
        quoted = quoted[: _INPUT_CHARS - 1] + "…"
    return (
        f"{NOTE_PREFIX} {name} {quoted} returned {chars:,} characters. "
        "Call the tool again if you need it.]"
    )


def _tool_uses(messages: Sequence[Message]) -> dict[str, Block]:
    uses: dict[str, Block] = {}
    for message in messages:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    uses[block["id"]] = block
    return uses


def _round_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes of the assistant messages: a round is one response and the tools it called."""
    return [i for i, m in enumerate(messages) if m["role"] == "assistant"]


def clear_old_tool_results(
    messages: Sequence[Message],
    keeps_result: KeepsResult,
    *,
    keep_rounds: int = KEEP_ROUNDS,
) -> Cleared:
    """Results of tool calls older than the last ``keep_rounds`` rounds, as one-line notes.

    A result stays when its tool's results are kept (``keeps_result(name)``: the plan and the
    scratchpad), when it is already a note, or when the note would not be shorter.
    """
    rounds = _round_starts(messages)
    if len(rounds) <= keep_rounds:
        return Cleared(list(messages), 0, 0)
    cutoff = rounds[-keep_rounds] if keep_rounds > 0 else len(messages)
    uses = _tool_uses(messages[:cutoff])
    out = list(messages)
    count = chars = 0
    for index in range(cutoff):
        message = messages[index]
        content = message["content"]
        if message["role"] != "user" or not isinstance(content, list):
            continue
        changed: list[Block] | None = None
        for j, block in enumerate(content):
            if block.get("type") != "tool_result" or _is_note(block):
                continue
            use = uses.get(block.get("tool_use_id", ""))
            if use is None or keeps_result(use["name"]):
                continue
            text = _result_text(block)
            note = clearing_note(use["name"], use.get("input"), len(text))
            if len(note) >= len(text):
                continue
            if changed is None:
                changed = list(content)
            cleared: Block = {"type": "tool_result", "tool_use_id": block["tool_use_id"]}
            cleared["content"] = note
            if block.get("is_error"):
                cleared["is_error"] = True
            changed[j] = cleared
            count += 1
            chars += len(text)
        if changed is not None:
            out[index] = {**message, "content": changed}
    return Cleared(out, count, chars)


def clearing_notice(cleared: Cleared, plan_rendered: str, scratchpad: str) -> str:
    """Told to the model after a clearing: what happened, and its plan and notes as they are."""
    return (
        f"<context-cleared>To keep within the context window, {cleared.results} older tool "
        f"results ({cleared.chars:,} characters) were replaced by notes; call a tool again if "
        "you need its result. Your plan is:\n"
        f"{plan_rendered or '(no plan yet)'}\n"
        f"Your scratchpad:\n{scratchpad or '(empty)'}</context-cleared>"
    )


def append_text(messages: Sequence[Message], text: str) -> list[Message]:
    """A text block after the last user message's blocks (or a new user message)."""
    out = list(messages)
    block = {"type": "text", "text": text}
    if out and out[-1]["role"] == "user":
        content = out[-1]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out[-1] = {**out[-1], "content": [*blocks, block]}
    else:
        out.append({"role": "user", "content": [block]})
    return out


# ---------------------------------------------------------------------------- summary


def _text_of(message: Message) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    for block in content:
        if block.get("type") == "text":
            return str(block["text"])
    return ""


def _between(text: str, start: str, end: str) -> str | None:
    head = text.find(start)
    if head < 0:
        return None
    head += len(start)
    tail = text.find(end, head)
    return None if tail < 0 else text[head:tail]


def first_prompt(messages: Sequence[Message]) -> str:
    """The session's first prompt: the first user text, or the one a compaction kept."""
    if not messages:
        return ""
    text = _text_of(messages[0])
    if text.startswith(HEADER_OPEN):
        kept = _between(text, "<first-prompt>\n", "\n</first-prompt>\n<current-prompt>\n")
        if kept is not None:
            return kept
    return text


def split_last_round(messages: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """(the messages to summarize, the last round: the last response and what followed it)."""
    rounds = _round_starts(messages)
    if not rounds:
        return list(messages), []
    return list(messages[: rounds[-1]]), list(messages[rounds[-1] :])


def summary_request(messages: Sequence[Message]) -> list[Message]:
    """The conversation as it is, then the request for its summary.

    The instruction goes after the last user message's blocks (after its tool results, as the
    API requires), so everything before it is the prefix the last request cached.
    """
    if not messages:
        raise ValueError("nothing to summarize")
    last = messages[-1]
    if last["role"] == "assistant" and any(
        b.get("type") == "tool_use" for b in last["content"] if isinstance(b, dict)
    ):
        raise ValueError("the last response's tool calls have no results yet")
    return append_text(messages, SUMMARY_INSTRUCTION)


def fallback_summary(messages: Sequence[Message]) -> str:
    """What was done, from the tool calls themselves: used when the model gave no summary."""
    lines = []
    for use in _tool_uses(messages).values():
        quoted = json.dumps(use.get("input"), ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {use['name']} {quoted[:_INPUT_CHARS]}")
    if not lines:
        return "(No summary was available; no tools had been called.)"
    kept = lines[-60:]
    skipped = len(lines) - len(kept)
    head = "(No summary was available.) Tool calls made so far"
    head += f" (the last {len(kept)} of {len(lines)}):" if skipped else ":"
    return "\n".join([head, *kept])


def header_text(
    *, first: str, current: str, summary: str, plan_rendered: str, scratchpad: str
) -> str:
    return (
        f"{HEADER_OPEN}\n"
        "This session was compacted to stay within the context window: the messages before "
        "the last round were replaced by the summary below. The plan and the scratchpad are "
        "exactly as they are now.\n"
        f"<first-prompt>\n{first}\n</first-prompt>\n"
        f"<current-prompt>\n{current}\n</current-prompt>\n"
        f"<summary>\n{summary.strip() or '(empty)'}\n</summary>\n"
        f"<plan>\n{plan_rendered or '(no plan yet)'}\n</plan>\n"
        f"<scratchpad>\n{scratchpad or '(empty)'}\n</scratchpad>\n"
        "</compacted-session>"
    )


def summarized_conversation(
    messages: Sequence[Message],
    *,
    summary: str,
    current_prompt: str,
    plan_rendered: str,
    scratchpad: str,
) -> list[Message]:
    """One user message (first prompt, current prompt, summary, plan, scratchpad), then the
    last round as it was."""
    _, last_round = split_last_round(messages)
    header = header_text(
        first=first_prompt(messages),
        current=current_prompt,
        summary=summary,
        plan_rendered=plan_rendered,
        scratchpad=scratchpad,
    )
    return [{"role": "user", "content": [{"type": "text", "text": header}]}, *last_round]
