"""The arms of the comparison: the same server, tasks and limits, planning on or off.

- `plan`: the todo tool, the reminders and the done gate, as shipped;
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

from collections.abc import Mapping
from dataclasses import dataclass, field
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
    }
)
DEFAULT_ARMS = ("plan", "noplan", "planmode")


def select_arms(names: list[str]) -> list[Arm]:
    """The arms named, in order; ValueError naming an unknown or unavailable one."""
    arms = []
    for name in dict.fromkeys(names):
        arm = ARMS.get(name)
        if arm is None:
            raise ValueError(f"unknown arm {name!r}; arms: {', '.join(ARMS)}")
        if arm.unavailable:
            raise ValueError(f"the {name} arm cannot run yet: {arm.unavailable}")
        arms.append(arm)
    if not arms:
        raise ValueError("no arm given")
    return arms
