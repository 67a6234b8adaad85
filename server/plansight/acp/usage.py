"""`usage_update` after each model turn: the context the turn filled (its whole input, cached
or not, and its output) of the model's context window, and the session's cost so far where the
model's list price is known (the price table the eval kit uses too, `plansight.engine.pricing`: one
table, not a copy)."""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import Cost, UsageUpdate

from plansight.engine.events import TurnUsage
from plansight.engine.pricing import list_prices


@dataclass
class Spend:
    """One ACP session's cost so far, in USD; None once a turn's model had no known price."""

    usd: float | None = 0.0

    def update(self, turn: TurnUsage) -> UsageUpdate:
        prices = list_prices(turn.model)
        if prices is None:
            self.usd = None  # a partial sum would understate it: say nothing
        elif self.usd is not None:
            self.usd += prices.cost(turn.usage)
        used = turn.usage.total_input_tokens + turn.usage.output_tokens
        return UsageUpdate(
            session_update="usage_update",
            used=used,
            size=max(turn.context_window, used),
            cost=Cost(amount=round(self.usd, 6), currency="USD") if self.usd is not None else None,
        )
