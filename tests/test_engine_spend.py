"""engine/spend.py: the figures a status line shows, computed once for every front door."""

from __future__ import annotations

from plansight.engine.events import TurnUsage, Usage
from plansight.engine.spend import Spend
from plansight.protocol.names import event_payload


def test_the_context_is_the_turns_whole_input_and_output_of_the_window() -> None:
    report = Spend().update(TurnUsage(Usage(1000, 200, 3000, 500), 200_000, "claude-sonnet-5-5"))
    assert report.context_used == 4700 and report.context_window == 200_000
    # A window smaller than what the turn used (a wrong option) never gives more than 100%.
    small = Spend().update(TurnUsage(Usage(900, 200), 1000, "claude-sonnet-5-5"))
    assert small.context_window == 1100


def test_the_cost_adds_up_over_the_sessions_turns_at_list_price() -> None:
    spend = Spend()
    turn = TurnUsage(Usage(1000, 200, 3000, 0), 200_000, "claude-sonnet-5-5")
    # $2 input, $10 output, $0.2 cache read per million tokens.
    assert spend.update(turn).cost_usd == 0.0046
    assert spend.update(turn).cost_usd == 0.0092


def test_an_unpriced_model_leaves_the_cost_unsaid_from_then_on() -> None:
    spend = Spend()
    spend.update(TurnUsage(Usage(1000, 200), 200_000, "claude-sonnet-5-5"))
    assert spend.update(TurnUsage(Usage(1, 1), 1000, "some-other-model")).cost_usd is None
    assert spend.update(TurnUsage(Usage(1, 1), 1000, "claude-sonnet-5-5")).cost_usd is None


def test_the_usage_event_on_the_wire() -> None:
    report = Spend().update(TurnUsage(Usage(1000, 200, 3000, 0), 200_000, "claude-sonnet-5-5"))
    assert event_payload(report) == {
        "type": "usage",
        "model": "claude-sonnet-5-5",
        "contextUsed": 4200,
        "contextWindow": 200_000,
        "usage": {
            "inputTokens": 1000,
            "outputTokens": 200,
            "cacheReadInputTokens": 3000,
            "cacheCreationInputTokens": 0,
            "totalInputTokens": 4000,
        },
        "costUsd": 0.0046,
    }
    unknown = Spend().update(TurnUsage(Usage(1, 1), 1000, "x"))
    assert "costUsd" not in (event_payload(unknown) or {})
