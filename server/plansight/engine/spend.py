"""A session's spend, computed once below every front door: after each model turn, the context
the turn filled (its whole input, cached or not, and its output) of the model's context window,
and the cost so far where the model's list price is known (`plansight.engine.pricing`, the one
price table). The language server sends it as the `usage` event, ACP as `usage_update`."""

from __future__ import annotations

from dataclasses import dataclass

from plansight.engine.events import TurnUsage, UsageReport
from plansight.engine.pricing import list_prices


@dataclass
class Spend:
    """The cost so far, in USD; None once a turn's model had no known price (a partial sum
    would understate it: nothing is said)."""

    usd: float | None = 0.0

    def update(self, turn: TurnUsage) -> UsageReport:
        prices = list_prices(turn.model)
        if prices is None:
            self.usd = None
        elif self.usd is not None:
            self.usd += prices.cost(turn.usage)
        used = turn.usage.total_input_tokens + turn.usage.output_tokens
        return UsageReport(
            model=turn.model,
            context_used=used,
            context_window=max(turn.context_window, used),
            usage=turn.usage,
            cost_usd=round(self.usd, 6) if self.usd is not None else None,
            parts=turn.parts,
        )
