"""The nag: after 3 rounds without a plan update the model is reminded, more firmly from 6 and 9.

The cadence is the `reminderAfter` option (`first_after`): reminded after that many quiet
rounds, more firmly from twice and from three times as many (3, 6 and 9 by default).
"""

from __future__ import annotations

from dataclasses import dataclass

FIRST_REMINDER_AFTER = 3
STRONGER_AFTER = 6
STRONGEST_AFTER = 9


@dataclass(frozen=True)
class ReminderText:
    text: str
    level: int  # 1, 2 or 3
    rounds: int


def reminder_for(
    rounds_without_plan: int, first_after: int = FIRST_REMINDER_AFTER
) -> ReminderText | None:
    """The reminder to append after a round, or None when the plan is fresh enough."""
    n = rounds_without_plan
    first_after = max(1, first_after)
    if n < first_after:
        return None
    if n < first_after * STRONGER_AFTER // FIRST_REMINDER_AFTER:
        return ReminderText("<reminder>Update your todos.</reminder>", 1, n)
    if n < first_after * STRONGEST_AFTER // FIRST_REMINDER_AFTER:
        return ReminderText(
            "<reminder>Update your todos. You have gone "
            f"{n} rounds without touching your plan: mark what is done as completed and set "
            "the item you are working on to in_progress.</reminder>",
            2,
            n,
        )
    return ReminderText(
        f"<reminder>Update your todos now. {n} rounds have passed without a plan update. "
        "Call the todo tool before anything else: record what is completed, what is in "
        "progress, and cancel or fail items you have abandoned.</reminder>",
        3,
        n,
    )


def quiet_rounds_after(quiet_rounds: int, plan_updated: bool) -> int:
    """Consecutive rounds without an accepted todo call, after one more round (0 at each run's
    start; an update starts the count again)."""
    return 0 if plan_updated else quiet_rounds + 1
