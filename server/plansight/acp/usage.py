"""`usage_update` after each model turn: the figures `plansight.engine.spend` computes for every
front door (the context the turn filled of the model's window, the session's cost so far where
the model's list price is known), in ACP's form."""

from __future__ import annotations

from acp.schema import Cost, UsageUpdate

from plansight.engine.events import UsageReport


def usage_update(report: UsageReport) -> UsageUpdate:
    return UsageUpdate(
        session_update="usage_update",
        used=report.context_used,
        size=report.context_window,
        cost=Cost(amount=report.cost_usd, currency="USD") if report.cost_usd is not None else None,
    )
