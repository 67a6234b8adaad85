"""The nag: after 3 rounds without a plan update the model is reminded, more firmly from 6 and 9.

The cadence is the `reminderAfter` option (`first_after`): reminded after that many quiet
rounds, more firmly from twice and from three times as many (3, 6 and 9 by default).
Only a plan that exists can be updated: while the plan has no items (plan mode before the
model wrote one, a run where it never made one) the rounds are not counted and nothing is said.
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


def quiet_rounds_after(quiet_rounds: int, plan_updated: bool, *, has_plan: bool = True) -> int:
    """Consecutive rounds without an accepted todo call, after one more round (0 at each run's
    start; an update starts the count again). Without a plan (``has_plan`` false after the
    round) there is nothing to update, so the count stays at 0: "Update your todos." is never
    said of an empty plan, and a run that makes its first plan late is not nagged at once."""
    return 0 if plan_updated or not has_plan else quiet_rounds + 1
