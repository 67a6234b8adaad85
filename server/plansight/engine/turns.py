"""What the agent loop does after each step: a pure decision, no I/O, no model, no events.

The loop (`plansight.engine.loop.AgentLoop`) runs rounds: `round_limit` says whether it may ask
the model again; after the model's turn, `decide` reads the turn (`TurnFacts`) and the loop's
state (`LoopState`) and says what follows; when that is `RunTools`, `after_tools` says what
follows the round's tools (`ToolsFacts`). A decision is one of

- `Continue`: ask the model again, after a user message (the round's tool results, if its
  tools ran, the pending notices when `notices`, then `texts`); in the loop's state `state`;
- `RunTools`: run the turn's complete tool calls, in the loop's state `state`;
- `Finish`: end the run with `status` and `text`.

Applying it (the conversation, the notices, the events) is the loop's part. The texts the
model reads when the loop steps in (a cut answer, a cut tool call) live here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from plansight.engine.events import RunStatus
from plansight.engine.model import TRUNCATED, ModelTurn
from plansight.engine.reminders import (
    FIRST_REMINDER_AFTER,
    ReminderText,
    quiet_rounds_after,
    reminder_for,
)

MAX_CONTINUATIONS = 3  # a text answer cut by max_tokens is continued at most this often in a row
CONTINUE_TEXT = (
    "<output-cut>Your answer was cut off at the output token limit. Continue exactly where it "
    "stopped, without repeating what you already wrote.</output-cut>"
)
REFUSED_TEXT = "The model declined to respond."


def cut_tool_text(names: Sequence[str]) -> str:
    calls = ", ".join(names)
    return (
        f"<output-cut>Your response was cut off at the output token limit while you were "
        f"writing a call to {calls}; that call was not run. Continue in smaller steps: split "
        "large content over several calls (for example write a file in parts, or make several "
        "smaller edits).</output-cut>"
    )


@dataclass(frozen=True)
class TurnFacts:
    """What the model's turn was, as far as what follows depends on it."""

    stop_reason: str | None
    text: str = ""  # the turn's text
    tool_uses: tuple[str, ...] = ()  # its complete tool calls, by name
    cut_tools: tuple[str, ...] = ()  # calls cut short by max_tokens (not run), by name
    explanation: str = ""  # a refusal's explanation, when the API gave one
    # What the run answers a model that ends its turn (the done gate, or in plan mode the
    # request to submit), None: nothing. The loop asks the run only when the turn `ends_turn`
    # and plan features are on, since asking uses the answer up (once per run).
    nudge: str | None = None

    @classmethod
    def of(cls, turn: ModelTurn) -> TurnFacts:
        details = turn.stop_details or {}
        explanation = details.get("explanation")
        return cls(
            stop_reason=turn.stop_reason,
            text=turn.text,
            tool_uses=tuple(use["name"] for use in turn.tool_uses),
            cut_tools=tuple(turn.cut_tools),
            explanation=explanation if isinstance(explanation, str) else "",
        )

    @property
    def refused(self) -> bool:
        return self.stop_reason == "refusal"

    @property
    def paused(self) -> bool:
        return self.stop_reason == "pause_turn"

    @property
    def truncated(self) -> bool:
        return self.stop_reason in TRUNCATED

    @property
    def ends_turn(self) -> bool:
        """The model ended its turn: it asks for nothing more, and nothing of it was cut."""
        return not (
            self.refused or self.paused or self.truncated or self.tool_uses or self.cut_tools
        )


@dataclass(frozen=True)
class Nudges:
    """Which of the harness's plan nudges are on (with plan features): the reminders, after
    how many quiet rounds (`reminders`, `reminderAfter`), and the done gate (`doneGate`).
    The parts `plansight eval` separates; plan mode's request to submit is no done gate."""

    reminders: bool = True
    reminder_after: int = FIRST_REMINDER_AFTER
    done_gate: bool = True


@dataclass(frozen=True)
class LoopState:
    """What one run's loop carries from round to round."""

    max_rounds: int
    # False (the `planning: false` option): no plan tools, so neither reminders nor the gate.
    plan_features: bool = True
    nudges: Nudges = field(default_factory=Nudges)
    rounds: int = 0  # model requests made, the one in progress included
    cuts: int = 0  # text answers cut by max_tokens in a row
    answer: str = ""  # the answer's text over the turns it took so far (paused, cut)
    quiet_rounds: int = 0  # rounds of tools in a row without a plan update (the reminders)

    def next_round(self) -> LoopState:
        return replace(self, rounds=self.rounds + 1)


@dataclass(frozen=True)
class ToolsFacts:
    """What the round's tools did, as far as what follows depends on it."""

    ended: str | None = None  # a tool ended the run (the user cancelled the plan): its text
    plan_updated: bool = False  # a call updated the plan (the reminders count from 0 again)
    has_plan: bool = True  # the plan has items after the round (none: nothing to remind of)


@dataclass(frozen=True)
class Continue:
    """Ask the model again. First a user message: the tool results (if tools ran), the pending
    notices (when `notices`), then `texts`; none at all when there is nothing to say."""

    state: LoopState
    texts: tuple[str, ...] = ()
    notices: bool = True
    reminder: ReminderText | None = None  # the nag among `texts`, announced as an event


@dataclass(frozen=True)
class RunTools:
    """Run the turn's complete tool calls; then `after_tools` says what follows."""

    state: LoopState


@dataclass(frozen=True)
class Finish:
    """End the run: its status and text (the tool results of the round, if any, are kept)."""

    status: RunStatus
    text: str


Decision = Continue | RunTools | Finish


def round_limit(state: LoopState) -> Finish | None:
    """The end of a run that used up its rounds, checked before each request."""
    if state.rounds >= state.max_rounds:
        return Finish("limit", f"Stopped after {state.rounds} rounds (the round limit).")
    return None


def decide(turn: TurnFacts, state: LoopState) -> Decision:
    """What follows the model's turn."""
    if turn.refused:
        # The loop keeps no refused turn: continuing it gets refused again.
        return Finish("refused", turn.text or turn.explanation or REFUSED_TEXT)
    answer = state.answer + turn.text
    if turn.paused:
        # The paused turn goes back as it is (its cuts go on counting), and the model goes on.
        return Continue(replace(state, answer=answer), notices=False)
    if turn.truncated and not turn.tool_uses and not turn.cut_tools:
        cuts = state.cuts + 1
        if cuts > MAX_CONTINUATIONS:
            cut_note = f"[The answer was cut off at the output token limit {cuts} times in a row.]"
            return Finish("limit", f"{answer.rstrip()}\n\n{cut_note}")
        return Continue(replace(state, cuts=cuts, answer=answer), texts=(CONTINUE_TEXT,))
    # From here on the answer starts again with the next turn.
    state = replace(state, cuts=0, answer="")
    if turn.tool_uses:
        return RunTools(state)
    if turn.cut_tools:
        return Continue(state, texts=(cut_tool_text(turn.cut_tools),))
    if state.plan_features and turn.nudge is not None:
        return Continue(state, texts=(turn.nudge,))
    return Finish("done", answer)


def after_tools(turn: TurnFacts, tools: ToolsFacts, state: LoopState) -> Continue | Finish:
    """What follows the tools of `turn` (decided `RunTools` in `state`)."""
    if tools.ended is not None:
        # Its results are kept, and the model reads them with the next run's prompt.
        return Finish("done", tools.ended)
    texts = [cut_tool_text(turn.cut_tools)] if turn.cut_tools else []
    reminder = None
    if state.plan_features and state.nudges.reminders:
        quiet = quiet_rounds_after(state.quiet_rounds, tools.plan_updated, has_plan=tools.has_plan)
        reminder = reminder_for(quiet, state.nudges.reminder_after)
        state = replace(state, quiet_rounds=quiet)
    if reminder is not None:
        texts.append(reminder.text)
    return Continue(state, texts=tuple(texts), reminder=reminder)
