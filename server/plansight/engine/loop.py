"""The agent loop: model round, tools, reminders, done gate; reported as events, no LSP here.

Each round is request → decide → apply: the model's turn is kept in the conversation, the pure
`plansight.engine.turns.decide` says what follows it (continue with a user message, run the
tools, finish), and the loop applies that: the messages, the notices, the events.

The run's mode and focus (`ctx.run`, a `plansight.engine.planmode.RunState`) decide what follows the
prompt in its first message, what the model hears when it ends its turn (the done gate, or in
plan mode the request to submit), and whether the run ends after a round's tools (a tool that
ends it: the user cancelled the plan).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field, replace

from plansight.engine.compaction.compactor import Compactor
from plansight.engine.compaction.rules import context_parts
from plansight.engine.conversation import (
    Block,
    Conversation,
    Message,
    text_block,
    tool_result_block,
)
from plansight.engine.events import (
    ConversationChanged,
    EventBus,
    Reminder,
    ReminderCleared,
    RunFinished,
    RunResult,
    RunStarted,
    RunStatus,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolInputDelta,
    ToolResult,
    TurnUsage,
    Usage,
)
from plansight.engine.model import THINKING_TYPES, ModelClient, ModelError, ModelTurn
from plansight.engine.planmode import ENDED_TEXT
from plansight.engine.turns import (
    CONTINUE_TEXT,
    MAX_CONTINUATIONS,
    Continue,
    Finish,
    LoopState,
    Nudges,
    RunTools,
    ToolsFacts,
    TurnFacts,
    after_tools,
    decide,
    round_limit,
)
from plansight.tools.context import ToolContext
from plansight.tools.registry import PreviewStream, ToolRegistry
from plansight.tools.user import drop_proposal

# CONTINUE_TEXT and MAX_CONTINUATIONS live with the decisions; named here as before.
__all__ = ["CANCELLED_TOOL", "CONTINUE_TEXT", "MAX_CONTINUATIONS", "AgentLoop", "Notices"]

log = logging.getLogger(__name__)

CANCELLED_TOOL = "Cancelled by the user before this tool call finished."
# What follows the prompt of a run the user stopped (version 4): the next run's prompt joins
# the same user message, and without this the model would take both as live instructions.
INTERRUPTED_TEXT = (
    "<interrupted>The user stopped the request above before it was done. It is not an "
    "instruction to carry out now: do only what the user asks next (they may ask for it "
    "again).{seen}</interrupted>"
)


def interrupted_text(seen: str) -> str:
    """The note on a stopped run's prompt, quoting what the user saw of the model's reply."""
    shown = f" What the user saw of your reply before the stop: {json.dumps(seen)}" if seen else ""
    return INTERRUPTED_TEXT.format(seen=shown)


@dataclass
class Notices:
    """Things the model must hear at its next turn, added after the tool results."""

    changed_files: set[str] = field(default_factory=set)  # by someone else than the agent
    plan_edited: bool = False  # the user changed the plan since the model last saw it
    restores: list[str] = field(default_factory=list)  # what the user's restores put back
    # Items the user and the model both changed (a plan file saved against an older version):
    # the user's kept, and the model told so with the edited plan.
    plan_conflicts: list[str] = field(default_factory=list)
    scratchpad_edited: bool = False  # the user changed the scratchpad (the plan file)

    def clear(self) -> None:
        self.changed_files.clear()
        self.plan_edited = False
        self.restores.clear()
        self.plan_conflicts.clear()
        self.scratchpad_edited = False

    def drain(self, ctx: ToolContext) -> list[Block]:
        blocks: list[Block] = []
        if self.plan_edited:
            self.plan_edited = False
            ctx.plan.model_saw_plan()
            both = ", ".join(f"#{i}" for i in self.plan_conflicts)
            self.plan_conflicts.clear()
            kept = (
                f"\nYou and the user both changed {both}; the user's version was kept."
                if both
                else ""
            )
            blocks.append(
                text_block(
                    "<plan-update>The user edited your plan. It is now:\n"
                    f"{ctx.plan.state.rendered}{kept}\nWork from this plan.</plan-update>"
                )
            )
        if self.scratchpad_edited:
            self.scratchpad_edited = False
            blocks.append(
                text_block(
                    "<scratchpad-update>The user edited your scratchpad. It is now:\n"
                    f"{ctx.scratchpad.content}</scratchpad-update>"
                )
            )
        if self.restores:
            said = "\n".join(self.restores)
            self.restores.clear()
            blocks.append(text_block(f"<files-restored>{said}</files-restored>"))
        if self.changed_files:
            paths = ", ".join(sorted(self.changed_files))
            self.changed_files.clear()
            blocks.append(
                text_block(
                    f"<files-changed>Changed outside the agent since your last turn: {paths}. "
                    "Read them again before editing them.</files-changed>"
                )
            )
        return blocks


class AgentLoop:
    def __init__(
        self,
        *,
        model: ModelClient,
        tools: ToolRegistry,
        ctx: ToolContext,
        conversation: Conversation,
        notices: Notices,
        system_prompt: str,
        max_rounds: int,
        events: EventBus,
        compactor: Compactor,
        plan_features: bool = True,
        nudges: Nudges | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`prepare`: awaited as each run starts, before its prompt joins the conversation (the
        session fixes the run's MCP tools there); a cancel then ends the run with no round."""
        self.model = model
        self.tools = tools
        self.ctx = ctx
        self.conversation = conversation
        self.notices = notices
        self.system_prompt = system_prompt
        self.max_rounds = max_rounds
        self.events = events
        self.compactor = compactor
        # False (the `planning: false` option): no plan tools are offered, so the harness
        # neither reminds nor gates. (Not plan mode: that is the run's mode, `ctx.run`.)
        self.plan_features = plan_features
        self.nudges = nudges or Nudges()  # which reminders and gate (the eval's arms)
        self.prepare = prepare
        self.prompt = ""  # the running (or last) run's prompt, for the compactions' summaries

    async def run(self, prompt: str) -> RunResult:
        """Run until the model is done, the round limit, an API error; cancel via the task."""
        run = self.ctx.run
        self.events.emit(RunStarted(prompt, run.mode, run.focus.id if run.focus else None))
        usage = Usage()
        state = LoopState(
            max_rounds=self.max_rounds, plan_features=self.plan_features, nudges=self.nudges
        )
        self._reminding = False
        self._turn = 0  # the run's model requests so far: the `turn` of its text
        self._streamed: list[str] = []  # the text of the turn being streamed, as the user saw it
        opening_added = False
        try:
            if self.prepare is not None:
                await self.prepare()
            self.prompt = prompt
            opening = self._open(prompt)
            opening_added = True
            while (limit := round_limit(state)) is None:
                state = state.next_round()
                plan_updates_before = self.ctx.plan.model_updates
                try:
                    turn = await self._request(usage)
                except ModelError as err:
                    rounds = state.rounds if err.sent else state.rounds - 1  # unsent: no round
                    return await self._finish(
                        "error", f"The model API failed: {err}", rounds, usage, error=str(err)
                    )
                usage.add(turn.usage)
                window = await self.compactor.window(self.model)
                parts = context_parts(
                    self.system_prompt, self.tools.definitions(), self.conversation.messages
                )
                self.events.emit(TurnUsage(turn.usage, window, self.model.model, parts))
                facts = TurnFacts.of(turn)
                if facts.refused:
                    self._forget(opening)
                else:
                    self._add_assistant(turn)
                decision = decide(self._with_nudge(facts), state)
                results: list[Block] = []
                if isinstance(decision, RunTools):
                    results = await self._run_tools(turn.tool_uses)
                    updated = self.ctx.plan.model_updates != plan_updates_before
                    ran = ToolsFacts(
                        ended=self.ctx.run.ended,
                        plan_updated=updated,
                        has_plan=bool(self.ctx.plan.state.items),
                    )
                    decision = after_tools(facts, ran, decision.state)
                if isinstance(decision, Finish):
                    if results:
                        self._add_user(results)  # a tool ended the run: the results are kept
                    return await self._finish(decision.status, decision.text, state.rounds, usage)
                state = decision.state
                self._reply(results, decision)
            return await self._finish(limit.status, limit.text, state.rounds, usage)
        except asyncio.CancelledError:
            self.conversation.repair(CANCELLED_TOOL)
            if opening_added:
                self._add_user([text_block(interrupted_text("".join(self._streamed).strip()))])
            drop_proposal(self.ctx)  # a plan the user never approved is not the plan
            self._changed()
            self._clear_reminder()
            await self._finish(
                "cancelled", "The run was cancelled.", state.rounds, usage, patience=0.5
            )
            raise
        except Exception as err:
            # A bug: keep the conversation valid and tell the listeners, then let it propagate.
            log.exception("the run failed unexpectedly")
            self.conversation.repair(f"The run stopped on an internal error: {err!r}")
            self._changed()
            await self._finish(
                "error",
                "Plansight failed internally (see its log).",
                state.rounds,
                usage,
                error=f"internal error: {err!r}",
            )
            raise

    def _open(self, prompt: str) -> Message | None:
        """Add the run's opening message: the prompt, what the run's mode and focus say (plan
        mode, the focused item), the notices. Returns it, or None when it joined a trailing
        user message; a compaction keeps the last round's messages as the same objects."""
        self.conversation.repair(CANCELLED_TOOL)
        messages = self.conversation.messages
        opened_at = len(messages)
        run_texts = [text_block(text) for text in self.ctx.run.opening(self.ctx.plan.state)]
        self._add_user([text_block(prompt), *run_texts, *self.notices.drain(self.ctx)])
        return messages[-1] if len(messages) > opened_at else None

    def _forget(self, opening: Message | None) -> None:
        """A refused turn is not kept: continuing it gets refused again, so the next run starts
        from before it (and without this run's prompt, if no round of this run was answered)."""
        messages = self.conversation.messages
        if opening is not None and messages and messages[-1] is opening:
            messages.pop()
            self._changed()

    def _add_assistant(self, turn: ModelTurn) -> None:
        content = turn.content
        if turn.truncated and all(b["type"] in THINKING_TYPES for b in content):
            # Cut before it said or called anything: nothing to keep but the thinking.
            content = []
        self.conversation.add_assistant(content)
        self.compactor.record(turn.usage)
        self._changed()

    def _with_nudge(self, facts: TurnFacts) -> TurnFacts:
        """The turn with what the run answers its end: the done gate, or in plan mode the
        request to submit. Asked only when the turn ended (with plan features on), since
        asking uses the answer up (once per run)."""
        if not (facts.ends_turn and self.plan_features):
            return facts
        if not (self.nudges.done_gate or self.ctx.run.planning):
            return facts  # `doneGate: false`: an act-mode run ends when the model ends it
        return replace(facts, nudge=self.ctx.run.end_of_turn(self.ctx.plan.state))

    def _reply(self, results: list[Block], decision: Continue) -> None:
        """The user message before the next request: tool_result blocks first (the API
        rejects anything before them), the notices, then the decision's texts."""
        notices = self.notices.drain(self.ctx) if decision.notices else []
        blocks = [*results, *notices, *(text_block(text) for text in decision.texts)]
        if blocks:
            self._add_user(blocks)
        reminder = decision.reminder
        if reminder is not None:
            self._reminding = True
            self.events.emit(
                Reminder(reminder.text, reminder.level, reminder.rounds, self.ctx.last_location)
            )

    def _add_user(self, blocks: list[Block]) -> None:
        self.conversation.add_user(blocks)
        self._changed()

    async def _request(self, usage: Usage) -> ModelTurn:
        """One model request, compacted first when it would be too big; a "prompt is too
        long" refusal compacts (using the API's own count) and retries once."""
        compacted = await self.compactor.before_request(
            self.model, system=self.system_prompt, current_prompt=self.prompt
        )
        if compacted is not None:
            usage.add(compacted.usage)
        try:
            return await self._model_round()
        except ModelError as err:
            if err.prompt_tokens is None:
                raise
            log.warning("the API refused the prompt as too long: %s", err)
            self.compactor.learn(err.prompt_tokens, err.prompt_limit, self.system_prompt)
            compacted = await self.compactor.compact(
                self.model,
                system=self.system_prompt,
                current_prompt=self.prompt,
                before=err.prompt_tokens,
            )
            usage.add(compacted.usage)
            if compacted.strategy is None:
                raise
            try:
                return await self._model_round()
            except ModelError as again:
                if again.prompt_tokens is not None:
                    # Remembered, so that the next run compacts before it sends anything.
                    self.compactor.learn(
                        again.prompt_tokens, again.prompt_limit, self.system_prompt
                    )
                raise

    async def _model_round(self) -> ModelTurn:
        self._turn += 1
        turn = self._turn

        streamed = self._streamed = []

        def on_text(text: str) -> None:
            streamed.append(text)
            self.events.emit(TextDelta(text, turn))

        previews: dict[str, PreviewStream | None] = {}

        def on_tool_input(tool_id: str, name: str, partial: str) -> None:
            self.events.emit(ToolInputDelta(tool_id, name, partial))
            if tool_id not in previews:
                # Only the calls of tools with a preview pay for gathering their input.
                previews[tool_id] = self.tools.preview_stream(self.ctx, name)
            stream = previews[tool_id]
            if stream is not None:
                stream.feed(partial)

        def on_thinking(text: str) -> None:
            self.events.emit(ThinkingDelta(text))

        answered = await self.model.stream_turn(
            system=self.system_prompt,
            tools=self.tools.definitions(),
            messages=self.conversation.messages,
            on_text=on_text,
            on_tool_input=on_tool_input,
            on_thinking=on_thinking,
            on_retry=self.events.emit,
        )
        self._streamed = []  # the turn joins the conversation whole
        return answered

    async def _run_tools(self, tool_uses: list[Block]) -> list[Block]:
        results: list[Block] = []
        try:
            for use in tool_uses:
                if self.ctx.run.ended is not None:
                    results.append(tool_result_block(use["id"], ENDED_TEXT, True))
                    continue
                tool_input = use.get("input")
                self.events.emit(
                    ToolCall(
                        use["id"],
                        use["name"],
                        tool_input
                        if isinstance(tool_input, dict)
                        else {"_raw": json.dumps(tool_input)},
                        self.tools.input_summary(use["name"], tool_input),
                    )
                )
                plan_updates_before = self.ctx.plan.model_updates
                self.ctx.call_id = use["id"]  # what the hooks' requests name
                try:
                    outcome = await self.tools.call(self.ctx, use["name"], tool_input)
                finally:
                    self.ctx.call_id = None
                if self.ctx.plan.model_updates != plan_updates_before:
                    self._clear_reminder()  # at once, not after the round's other tools
                results.append(tool_result_block(use["id"], outcome.content, outcome.is_error))
                self.events.emit(
                    ToolResult(
                        use["id"],
                        use["name"],
                        outcome.is_error,
                        self.tools.summary(use["name"], outcome),
                        outcome.text,
                    )
                )
        except asyncio.CancelledError:
            # Keep the results we have; the rest are answered as cancelled.
            done = {block["tool_use_id"] for block in results}
            for use in tool_uses:
                if use["id"] not in done:
                    results.append(tool_result_block(use["id"], CANCELLED_TOOL, True))
            self.conversation.add_user(results)
            raise
        return results

    def _clear_reminder(self) -> None:
        if self._reminding:
            self._reminding = False
            self.events.emit(ReminderCleared())

    def _changed(self) -> None:
        self.events.emit(ConversationChanged())

    async def _finish(
        self,
        status: RunStatus,
        text: str,
        rounds: int,
        usage: Usage,
        error: str | None = None,
        *,
        patience: float | None = None,
    ) -> RunResult:
        """The run's last event. What the run's tools changed is recorded first (checkpoints
        taken in the background are announced as they are done), so that `runFinished` is the
        run's last word; `patience` bounds that wait (a cancelled run ends within a second)."""
        self._clear_reminder()  # a reminder is only visible while its run lasts
        with suppress(TimeoutError):
            await asyncio.wait_for(self.ctx.changes.settled(), patience)
        result = RunResult(status=status, text=text, rounds=rounds, usage=usage, error=error)
        self.events.emit(RunFinished(result))
        return result
