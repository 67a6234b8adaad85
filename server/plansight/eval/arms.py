"""The arms of the comparison: the same server, tasks and limits, the parts of planning on or off.

Each arm is the server's initialization options (docs/protocol.md), so that anyone can run an
arm outside the kit:

- `plan`: the todo tool, the reminders and the done gate, as shipped;
- `noreminder`: `reminders: false`: the todo tool and the done gate, no reminders;
- `nogate`: `doneGate: false`: the todo tool and the reminders, no done gate;
- `remind<N>` (`remind1`, `remind6`, ...): `plan` with `reminderAfter: N`, the reminder after
  N rounds without a plan update instead of 3 (to compare cadences in one run);
- `noplan`: the initialization option `planning: false` (docs/protocol.md): no todo tool (nor
  submit_plan), no reminders, no done gate, and the system prompt does not mention a plan;
  everything else (scratchpad, ask_user, the other tools, the prompt otherwise, limits) is the
  same;
- `planmode`: plan mode (`plansight/run` with `mode: "plan"`): the agent researches and plans,
  changing nothing, then submits its plan, which is approved as submitted (the eval's client
  auto-approves, as `plansight run --plan --yes` does), and the same run carries it out in act
  mode. Questions (`ask_user`) are dismissed in every arm: nobody is there to answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Arm:
    name: str
    description: str
    # Added to the initializationOptions the eval sends (autoApprove, model, limits).
    options: Mapping[str, Any] = field(default_factory=dict)
    mode: str = "act"  # plansight/run's mode
    unavailable: str | None = None  # why this arm cannot run on this server yet

    @property
    def reminds(self) -> bool:
        """The arm sends reminders (so a cadence applies to it)."""
        return self.options.get("planning", True) is not False and (
            self.options.get("reminders", True) is not False
        )


ARMS: Mapping[str, Arm] = MappingProxyType(
    {
        "plan": Arm("plan", "todo tool, reminders and done gate, as shipped"),
        "noplan": Arm(
            "noplan",
            "no todo tool, no reminders, no done gate; everything else equal",
            options={"planning": False},
        ),
        "planmode": Arm(
            "planmode",
            "plan mode: research and plan first, the plan approved as submitted, then act",
            mode="plan",
        ),
        "noreminder": Arm(
            "noreminder",
            "todo tool and done gate, no reminders",
            options={"reminders": False},
        ),
        "nogate": Arm(
            "nogate", "todo tool and reminders, no done gate", options={"doneGate": False}
        ),
    }
)
DEFAULT_ARMS = ("plan", "noplan", "planmode")
DEFAULT_REMINDER_AFTER = 3  # the server's default `reminderAfter`
CADENCE_ARM = re.compile(r"remind([1-9][0-9]*)")


def arm_named(name: str) -> Arm | None:
    """The arm of that name, `remind<N>` included; None for no such arm."""
    if (cadence := CADENCE_ARM.fullmatch(name)) is not None:
        after = int(cadence.group(1))
        return Arm(
            name,
            f"todo tool, reminders after {after} quiet rounds (not 3), done gate",
            options={"reminderAfter": after},
        )
    return ARMS.get(name)


def with_cadence(arm: Arm, reminder_after: int) -> Arm:
    """The arm with the reminder after `reminder_after` quiet rounds (`--reminder-after`),
    where it reminds and names no cadence of its own; unchanged at the default."""
    if reminder_after == DEFAULT_REMINDER_AFTER or not arm.reminds:
        return arm
    if "reminderAfter" in arm.options:
        return arm
    return replace(arm, options={**arm.options, "reminderAfter": reminder_after})


def select_arms(names: list[str], reminder_after: int = DEFAULT_REMINDER_AFTER) -> list[Arm]:
    """The arms named, in order, with the cadence `reminder_after` (see `with_cadence`);
    ValueError naming an unknown or unavailable one."""
    arms = []
    for name in dict.fromkeys(names):
        arm = arm_named(name)
        if arm is None:
            raise ValueError(f"unknown arm {name!r}; arms: {', '.join(ARMS)}, remind<N>")
        if arm.unavailable:
            raise ValueError(f"the {name} arm cannot run yet: {arm.unavailable}")
        arms.append(with_cadence(arm, reminder_after))
    if not arms:
        raise ValueError("no arm given")
    return arms
