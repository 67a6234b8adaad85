"""Compaction in a running session: deciding when, asking the model, replacing the conversation.

Before each model request the loop asks `Compactor.before_request`; above ``compactAt ×
contextWindow`` it compacts: old tool results are cleared first, and only if that is not
enough the model is asked for a summary of the conversation before the last round (one request
with the same system prompt and tools, ``tool_choice: none``: the previous request, whose cached
prefix serves it) and the conversation becomes the summarized one. Either way the
conversation is replaced in one step (storage rewrites it atomically) and a `Compacted` event
announces it. The rules themselves are pure functions in `plansight.engine.compaction.rules`.

The window is ``contextWindow`` when given, else the model's ``max_input_tokens`` from the
Models API where the endpoint serves it, else 200,000 tokens.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from plansight.engine.compaction.rules import (
    ContextMeter,
    Strategy,
    append_text,
    clear_old_tool_results,
    clearing_notice,
    estimate_tokens,
    fallback_summary,
    split_last_round,
    summarized_conversation,
    summary_request,
)
from plansight.engine.conversation import Conversation, Message
from plansight.engine.events import Compacted, ConversationChanged, EventBus, Usage
from plansight.engine.model import ModelClient, ModelError
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_COMPACT_AT = 0.8
NO_TOOLS = {"type": "none"}


@dataclass(frozen=True)
class CompactionSettings:
    context_window: int | None = None  # None: the Models API's max_input_tokens, else 200000
    compact_at: float = DEFAULT_COMPACT_AT


@dataclass(frozen=True)
class CompactionResult:
    before_tokens: int
    after_tokens: int
    strategy: Strategy | None  # None: nothing could be made smaller
    usage: Usage  # what the summary request cost (zero for a clearing)

    def to_wire(self) -> dict[str, int]:
        """`plansight/compact`'s result."""
        return {"beforeTokens": self.before_tokens, "afterTokens": self.after_tokens}


def _ignore(*_: Any) -> None:
    pass


def usage_tokens(usage: Usage) -> int:
    """A response's whole size: its input (cached or not) and its output."""
    return usage.total_input_tokens + usage.output_tokens


class Compactor:
    """The session's compaction: it lives as long as the session, across runs."""

    def __init__(
        self,
        *,
        settings: CompactionSettings,
        conversation: Conversation,
        plan: Plan,
        scratchpad: Scratchpad,
        tools: ToolRegistry,
        events: EventBus,
    ) -> None:
        self.settings = settings
        self.conversation = conversation
        self.plan = plan
        self.scratchpad = scratchpad
        self.tools = tools
        self.events = events
        self.meter = ContextMeter()
        self._window: int | None = settings.context_window

    async def window(self, model: ModelClient) -> int:
        if self._window is None:
            facts = await model.facts()
            known = facts.max_input_tokens if facts is not None else None
            self._window = known or DEFAULT_CONTEXT_WINDOW
        return self._window

    async def threshold(self, model: ModelClient) -> int:
        return int(self.settings.compact_at * await self.window(model))

    def overhead(self, system: str) -> int:
        return estimate_tokens(system) + estimate_tokens(self.tools.definitions())

    def estimate(self, system: str) -> int:
        """The next request's size, as the meter sees it."""
        return self.meter.estimate(self.conversation.messages, self.overhead(system))

    def record(self, usage: Usage) -> None:
        """A response came: the API's count covers the conversation as it now is."""
        self.meter.record(usage_tokens(usage), len(self.conversation.messages))

    def learn(self, reported: int, limit: int | None, system: str) -> None:
        """The API refused the conversation as ``reported`` tokens long, over its ``limit``:
        both are the truth, whatever the estimates and options said."""
        self.meter.learn(reported, self.conversation.messages, self.overhead(system))
        if limit is not None and (self._window is None or limit < self._window):
            self._window = limit

    async def before_request(
        self, model: ModelClient, *, system: str, current_prompt: str
    ) -> CompactionResult | None:
        """Compact when the next request would be above the threshold."""
        before = self.estimate(system)
        if before <= await self.threshold(model):
            return None
        return await self.compact(
            model, system=system, current_prompt=current_prompt, before=before
        )

    async def compact(
        self,
        model: ModelClient,
        *,
        system: str,
        current_prompt: str,
        before: int | None = None,
        summarize: bool = False,
    ) -> CompactionResult:
        """Clear old tool results; summarize when that is not enough (or ``summarize``).

        Cancelling it (the run's task) leaves the conversation as it was: nothing is replaced
        until the new conversation is complete.
        """
        messages = list(self.conversation.messages)
        overhead = self.overhead(system)
        if before is None:
            before = self.meter.estimate(messages, overhead)
        threshold = await self.threshold(model)
        window = await self.window(model)
        cleared = clear_old_tool_results(messages, self.tools.keeps_results)
        candidate = messages
        if cleared.results:
            notice = clearing_notice(cleared, self.plan.state.rendered, self.scratchpad.content)
            candidate = append_text(cleared.messages, notice)
            after = self.meter.full(candidate, overhead)
            if after <= threshold and not summarize:
                return self._replace(candidate, before, after, "clearToolResults", Usage())
        if not any(m["role"] == "assistant" for m in messages):
            # Nothing to summarize: the conversation is only the user's opening message.
            if candidate is not messages:
                after = self.meter.full(candidate, overhead)
                return self._replace(candidate, before, after, "clearToolResults", Usage())
            return CompactionResult(before, before, None, Usage())
        # The summary covers the conversation before the last round (which is kept as it
        # was), not cleared: that is the previous request, whose cached prefix serves it.
        earlier, _ = split_last_round(messages)
        summary, usage = await self._summary(model, system, earlier, overhead, window)
        new = summarized_conversation(
            messages,
            summary=summary,
            current_prompt=current_prompt,
            plan_rendered=self.plan.state.rendered,
            scratchpad=self.scratchpad.content,
        )
        after = self.meter.full(new, overhead)
        if after > window:
            # The last round alone does not fit: its results go too (the model can re-read).
            new = clear_old_tool_results(new, self.tools.keeps_results, keep_rounds=0).messages
            after = self.meter.full(new, overhead)
        return self._replace(new, before, after, "summary", usage)

    async def _summary(
        self,
        model: ModelClient,
        system: str,
        messages: list[Message],
        overhead: int,
        window: int,
    ) -> tuple[str, Usage]:
        request = summary_request(messages)
        if self.meter.full(request, overhead) > window:
            # Even cleared it is too long to summarize: clear the recent results as well.
            shorter = clear_old_tool_results(messages, self.tools.keeps_results, keep_rounds=0)
            request = summary_request(shorter.messages)
        try:
            turn = await model.stream_turn(
                system=system,
                tools=self.tools.definitions(),
                messages=request,
                on_text=_ignore,
                on_tool_input=_ignore,
                tool_choice=NO_TOOLS,
            )
        except ModelError as err:
            if not err.prompt_too_long:
                raise
            log.warning("the summary request was too long (%s); summarizing from the calls", err)
            return fallback_summary(messages), Usage()
        return turn.text.strip() or fallback_summary(messages), turn.usage

    def _replace(
        self,
        messages: list[Message],
        before: int,
        after: int,
        strategy: Strategy,
        usage: Usage,
    ) -> CompactionResult:
        self.conversation.replace(messages)
        self.meter.reset()  # the next response's usage counts the new conversation
        log.info("compacted (%s): ~%d → ~%d tokens", strategy, before, after)
        self.events.emit(Compacted(before, after, strategy))
        self.events.emit(ConversationChanged(rewritten=True))
        return CompactionResult(before, after, strategy, usage)
