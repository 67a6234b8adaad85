"""Compaction in a running session: deciding when, asking the model, replacing the conversation.

Before each model request the loop asks `Compactor.before_request`; above ``compactAt ×
contextWindow`` it compacts: old tool results are cleared first, and only if that is not
enough the model is asked for a summary of the conversation before the last round (one request
with the same system prompt and tools, ``tool_choice: none``: the previous request, whose cached
prefix serves it) and the conversation becomes the summarized one. Either way the
conversation is replaced in one step (storage rewrites it atomically) and a `Compacted` event
announces it.

A compaction never leaves the request larger than it was: the smaller of the candidates is
kept only when it gains a real margin (a twentieth of the window; on request, anything not
larger), and a summary is not even asked for when the plan, the scratchpad, the prompts and the
last round, which it keeps, would leave nothing to gain. When nothing can be gained, a
`Compacted` event with ``unchanged`` says so, once until a compaction succeeds again, and the
run goes on. After a compaction (or an attempt that gained nothing) the next comes only once
the conversation has grown again by a real margin: the threshold minus the target (half the
window, at most three quarters of the threshold), or up to halfway from the threshold to the
window, whichever comes first; a compaction down to the target leaves exactly that room.

The window is ``contextWindow`` when given, else the model's ``max_input_tokens`` from the
Models API where the endpoint serves it, else 200,000 tokens.
"""

from __future__ import annotations

import logging
import math
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
# Well under the threshold: half the window, and never more than three quarters of the
# threshold. After a compaction the next waits until the conversation grew by the threshold
# minus this, the room a compaction down to it leaves (a summary usually goes further).
TARGET_SHARE = 0.5
TARGET_OF_THRESHOLD = 0.75
# The least an automatic compaction must gain, as a share of the window: less is not worth
# the rewritten conversation (its cached prefix is lost) nor a summary request.
MIN_GAIN_SHARE = 0.05


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
        # After a compaction (or one that gained nothing): the conversation's first message
        # then, and the size below which the next may not come while that message leads.
        self._quiet: tuple[Message, int] | None = None
        self._told_unchanged = False  # "nothing to gain" was said since the last compaction

    async def window(self, model: ModelClient) -> int:
        if self._window is None:
            facts = await model.facts()
            known = facts.max_input_tokens if facts is not None else None
            self._window = known or DEFAULT_CONTEXT_WINDOW
        return self._window

    async def threshold(self, model: ModelClient) -> int:
        return int(self.settings.compact_at * await self.window(model))

    async def target(self, model: ModelClient) -> int:
        """Well under the threshold: what the room to grow after a compaction is measured
        from."""
        window = await self.window(model)
        return min(
            int(window * TARGET_SHARE), int(await self.threshold(model) * TARGET_OF_THRESHOLD)
        )

    def _quiet_below(self) -> int:
        """The size below which no compaction comes, after the last one (0: none)."""
        if self._quiet is None:
            return 0
        first, size = self._quiet
        messages = self.conversation.messages
        if not messages or messages[0] is not first:
            self._quiet = None  # a new session, a restore, a reset: the rule lapses
            return 0
        return size

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
        if before <= max(await self.threshold(model), self._quiet_below()):
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

        The conversation is replaced only by a smaller one (on request: one not larger);
        otherwise the result's ``strategy`` is None and its sizes are equal.
        Cancelling it (the run's task) leaves the conversation as it was: nothing is replaced
        until the new conversation is complete.
        """
        messages = list(self.conversation.messages)
        overhead = self.overhead(system)
        if before is None:
            before = self.meter.estimate(messages, overhead)
        window = await self.window(model)
        threshold = await self.threshold(model)
        regrow = threshold - await self.target(model)
        # ``before`` may be the API's own count, which the estimates do not match: every
        # candidate is measured as the conversation is, by its estimate scaled to ``before``.
        whole = self.meter.full(messages, overhead)

        def size(candidate: list[Message]) -> int:
            return math.ceil(self.meter.full(candidate, overhead) * before / whole)

        # Automatic compactions must gain a real margin; one on request, anything.
        most = before if summarize else before - max(1, int(window * MIN_GAIN_SHARE))
        best: tuple[list[Message], int, Strategy] | None = None
        cleared = clear_old_tool_results(messages, self.tools.keeps_results)
        if cleared.results:
            notice = clearing_notice(cleared, self.plan.state.rendered, self.scratchpad.content)
            candidate = append_text(cleared.messages, notice)
            cleared_size = size(candidate)
            if cleared_size <= min(threshold, most) and not summarize:
                return self._replace(
                    candidate, cleared_size, "clearToolResults", before, Usage(), regrow, window
                )
            best = (candidate, cleared_size, "clearToolResults")
        usage = Usage()
        summarized = self._summarized(messages, "", current_prompt)
        # What a summary keeps (the prompts, the plan, the scratchpad, the last round) is
        # its least size: when that alone gains nothing, the summary request is not sent.
        least = size(summarized) if summarized is not None else None
        if summarized is not None and least is not None and least > window:
            # As below: a last round that does not fit goes with its results cleared.
            least = size(
                clear_old_tool_results(summarized, self.tools.keeps_results, keep_rounds=0).messages
            )
        # A summary asked for (``summarize``) is sent whenever it can keep within ``most``;
        # otherwise only when it can beat the clearing.
        cap = most if summarize or best is None else min(most, best[1])
        if least is not None and least <= cap:
            # The summary covers the conversation before the last round (which is kept as it
            # was), not cleared: that is the previous request, whose cached prefix serves it.
            earlier, _ = split_last_round(messages)
            summary, usage = await self._summary(model, system, earlier, overhead, window)
            new = self._summarized(messages, summary, current_prompt) or []
            after = size(new)
            if after > window:
                # The last round alone does not fit: its results go too (the model can re-read).
                new = clear_old_tool_results(new, self.tools.keeps_results, keep_rounds=0).messages
                after = size(new)
            if best is None or after <= best[1] or (summarize and after <= most):
                best = (new, after, "summary")
        if best is None or best[1] > most:
            return self._unchanged(before, usage, regrow, window)
        kept, after, strategy = best
        return self._replace(kept, after, strategy, before, usage, regrow, window)

    def _summarized(
        self, messages: list[Message], summary: str, current_prompt: str
    ) -> list[Message] | None:
        """The conversation summarized (None: there is no response to summarize)."""
        if not any(m["role"] == "assistant" for m in messages):
            return None  # only the user's opening message
        return summarized_conversation(
            messages,
            summary=summary,
            current_prompt=current_prompt,
            plan_rendered=self.plan.state.rendered,
            scratchpad=self.scratchpad.content,
        )

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
                # The summary's retries are shown as a run's are: a wait is never silent.
                on_retry=self.events.emit,
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
        after: int,
        strategy: Strategy,
        before: int,
        usage: Usage,
        regrow: int,
        window: int,
    ) -> CompactionResult:
        self.conversation.replace(messages)
        self.meter.reset()  # the next response's usage counts the new conversation
        self._quiet_after(after, regrow, window)
        self._told_unchanged = False
        log.info("compacted (%s): ~%d → ~%d tokens", strategy, before, after)
        self.events.emit(Compacted(before, after, strategy))
        self.events.emit(ConversationChanged(rewritten=True))
        return CompactionResult(before, after, strategy, usage)

    def _unchanged(self, before: int, usage: Usage, regrow: int, window: int) -> CompactionResult:
        """Nothing could be made smaller by a margin: said once, and the run goes on."""
        self._quiet_after(before, regrow, window)
        log.info("nothing to compact: ~%d tokens, the plan and the last round kept", before)
        if not self._told_unchanged:
            self._told_unchanged = True
            self.events.emit(Compacted(before, before, "summary", unchanged=True))
        return CompactionResult(before, before, None, usage)

    def _quiet_after(self, size: int, regrow: int, window: int) -> None:
        """No compaction until the conversation grew by ``regrow`` from ``size``, or came
        halfway from the threshold to the window (where the estimate's error starts to
        matter)."""
        messages = self.conversation.messages
        if messages:
            threshold = int(self.settings.compact_at * window)
            self._quiet = (messages[0], min(threshold + (window - threshold) // 2, size + regrow))
