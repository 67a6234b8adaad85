"""One attempt: a task's project in a fresh temporary folder, the real server, the checks.

The attempt starts `plansight lsp` exactly as the terminal client does (`PlansightClient`: stdio,
`initialize` with the review capabilities) with `autoApprove` for edits and commands (which run
in the sandbox unless `Limits.sandbox` is off: the copy and the attempt's home writable, no
network), its
storage, `HOME` and `TMPDIR` inside the attempt's own temporary folder, and `ANTHROPIC_BASE_URL`
pointing at a `MeteringProxy` in front of the upstream endpoint: the real API (live) or the
fake Messages API serving a recording (replay). The proxy's usage drives the cost limit; the
round limit is the server's `maxRounds`; a wall-clock limit stops an attempt that hangs. Then
the task's checks run on the files the attempt left: that is the verdict, live or replayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansight.cli.client import ClientOptions, PlansightClient, RunOutcome
from plansight.engine.events import Usage
from plansight.engine.pricing import Prices
from plansight.eval.arms import Arm
from plansight.eval.checks import CheckResult, run_checks
from plansight.eval.meter import MeteringProxy
from plansight.eval.plancost import PLAN_TOOL, Attributed, PlanTracker
from plansight.eval.recordings import Recording
from plansight.eval.tasks import Task, copy_tree
from plansight.session.registry import SessionRegistry
from plansight.session.storage import CONVERSATION, SessionStore

REPLAY_API_KEY = "plansight-eval-replay"
DEFAULT_UPSTREAM = "https://api.anthropic.com"
CLOSE_GRACE = 10.0


@dataclass(frozen=True)
class Limits:
    max_rounds: int = 40
    max_cost: float | None = 2.0  # USD per attempt, estimated from list prices
    max_seconds: float = 1800.0  # wall clock per attempt
    # Commands in the sandbox (the server's `sandbox` option, enabled: true): the attempt's
    # copy and its own home writable, nothing else, no network.
    sandbox: bool = True


@dataclass(frozen=True)
class Upstream:
    """Where the model's requests go: a live endpoint, or a recording served by the fake."""

    base_url: str | None = None  # live: None means the SDK's default endpoint
    api_key: str | None = None
    auth_token: str | None = None
    recording: Recording | None = None

    @property
    def replay(self) -> bool:
        return self.recording is not None


@dataclass(frozen=True)
class AttemptSpec:
    task: Task
    arm: Arm
    index: int  # 1-based repeat number
    model: str | None
    upstream: Upstream
    limits: Limits
    prices: Prices | None


@dataclass
class AttemptResult:
    task: str
    arm: str
    index: int
    source: str  # "live" or "replay"
    model: str
    passed: bool
    status: str  # the RunResult status, or "error" when the run never answered
    stopped_by: str  # done, round limit, cost limit, time limit, error, refused, cancelled
    rounds: int
    usage: Usage
    cost: float | None
    seconds: float
    check: CheckResult
    error: str | None = None
    tool_calls: dict[str, int] = field(default_factory=dict)
    reminders: int = 0
    plan_items: int = 0
    # What planning cost (plansight.eval.plancost): the todo calls' attributed tokens, the
    # done gate's refusals, the plan's rewrites, and whether the final plan was all closed.
    todo_tokens: Attributed = field(default_factory=Attributed)
    gate_refusals: int = 0
    plan_rewrites: int = 0
    plan_closed: bool | None = None  # None: there was no plan
    arm_options: dict[str, Any] = field(default_factory=dict)  # the arm's initializationOptions
    tools_offered: list[str] = field(default_factory=list)
    plan_reviews: int = 0  # plan mode: plans submitted (and approved)
    questions: int = 0  # ask_user calls (dismissed: nobody is there to answer)
    text: str = ""  # the model's final answer, or why the run stopped
    recording: dict[str, Any] | None = field(default=None, repr=False)
    conversation: str = field(default="", repr=False)  # the session's JSON Lines log

    @property
    def todo_calls(self) -> int:
        return self.tool_calls.get(PLAN_TOOL, 0)

    @property
    def todo_share(self) -> float:
        """The todo calls' share of all tool calls (0 with none)."""
        calls = sum(self.tool_calls.values())
        return self.todo_calls / calls if calls else 0.0

    def to_wire(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "arm": self.arm,
            "index": self.index,
            "source": self.source,
            "model": self.model,
            "passed": self.passed,
            "status": self.status,
            "stoppedBy": self.stopped_by,
            "rounds": self.rounds,
            "usage": self.usage.to_wire(),
            "costUsd": None if self.cost is None else round(self.cost, 6),
            "seconds": round(self.seconds, 3),
            "checks": self.check.to_wire(),
            "error": self.error,
            "toolCalls": dict(sorted(self.tool_calls.items())),
            "reminders": self.reminders,
            "planItems": self.plan_items,
            "todoCalls": self.todo_calls,
            "todoShare": round(self.todo_share, 4),
            "todoTokens": self.todo_tokens.to_wire(),
            "gateRefusals": self.gate_refusals,
            "planRewrites": self.plan_rewrites,
            "planClosed": self.plan_closed,
            "armOptions": dict(self.arm_options),
            "toolsOffered": self.tools_offered,
            "planReviews": self.plan_reviews,
            "questions": self.questions,
        }


class EvalFrontend:
    """The client's frontend for an unattended attempt: it counts what happens, asks nothing
    (edits and commands are auto-approved, so nothing needs an answer)."""

    def __init__(self) -> None:
        self.tool_calls: Counter[str] = Counter()
        self.reminders = 0
        self.plan = PlanTracker()
        self.plan_reviews = 0
        self.questions = 0
        self.messages: list[str] = []

    def on_todos(self, state: dict[str, Any]) -> None:
        items = state.get("items")
        if isinstance(items, list):
            self.plan.update(items)

    def on_scratchpad(self, content: str) -> None:
        pass

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "toolCall":
            self.tool_calls[str(event.get("name"))] += 1
        elif kind == "reminder":
            self.reminders += 1

    def on_message(self, level: int, message: str) -> None:
        self.messages.append(message)

    def show_edit(self, review: dict[str, Any], path: str) -> None:
        pass

    def show_command(self, request: dict[str, Any]) -> None:
        pass

    def show_plan_review(self, review: dict[str, Any]) -> None:
        self.plan_reviews += 1  # approved as submitted: the client auto-accepts with autoApprove

    def show_edited_plan(self, items: list[dict[str, str]]) -> None:
        pass

    def show_question(self, question: dict[str, Any]) -> None:
        self.questions += 1

    def warn(self, message: str) -> None:
        self.messages.append(message)

    def show_recorded_answer(self, answer: str) -> None:
        pass

    async def edit_text(self, text: str) -> str | None:
        return None

    async def ask(self, question: str) -> str | None:
        return None  # nobody is there: a question to the user is dismissed


def kit_server_command() -> list[str]:
    """`plansight lsp` from the package this kit runs from, not whatever `python -m plansight`
    finds in the attempt's environment (which has no PYTHONPATH, see `server_env`): a checkout
    run with PYTHONPATH, or beside another install, evaluates its own server. The path goes
    into the server process only; the commands it runs get the environment as it is."""
    import plansight

    root = str(Path(plansight.__file__).resolve().parents[1])
    boot = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from plansight.__main__ import main; sys.exit(main())"
    )
    return [sys.executable, "-c", boot, "lsp"]


def server_env(base_url: str, upstream: Upstream, root: Path) -> dict[str, str]:
    """Our environment with the model's endpoint replaced by the meter, and the attempt's own
    home and temporary folder; `python` and `pytest` are this interpreter's."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ANTHROPIC_") and k not in ("PLANSIGHT_MODEL", "PYTHONPATH")
    }
    env["ANTHROPIC_BASE_URL"] = base_url
    if upstream.replay:
        env["ANTHROPIC_API_KEY"] = REPLAY_API_KEY
    else:
        if upstream.api_key:
            env["ANTHROPIC_API_KEY"] = upstream.api_key
        if upstream.auth_token:
            env["ANTHROPIC_AUTH_TOKEN"] = upstream.auth_token
    env["HOME"] = str(root / "home")
    env["TMPDIR"] = str(root / "tmp")
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, env.get("PATH", "")) if p)
    # The projects are plain pytest projects: no plugin of this environment loads into them.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


async def run_attempt(
    spec: AttemptSpec, *, on_usage: Callable[[float], None] | None = None
) -> AttemptResult:
    """Run one attempt and judge it; `on_usage` hears the estimated cost of each answer."""
    with tempfile.TemporaryDirectory(prefix=f"plansight-eval-{spec.task.name}-") as scratch:
        return await _run_in(spec, Path(scratch), on_usage)


async def _run_in(
    spec: AttemptSpec, root: Path, on_usage: Callable[[float], None] | None
) -> AttemptResult:
    task, upstream, limits = spec.task, spec.upstream, spec.limits
    for folder in ("home", "tmp", "state"):
        (root / folder).mkdir()
    workspace = copy_tree(task.project_dir, root / task.name)
    stopped: list[str] = []
    spent = 0.0
    client: PlansightClient | None = None

    def counted(usage: Usage) -> None:
        nonlocal spent
        cost = spec.prices.cost(usage) if spec.prices is not None else 0.0
        spent += cost
        if on_usage is not None:
            on_usage(cost)
        if limits.max_cost is not None and spent > limits.max_cost and not stopped:
            stopped.append("cost limit")
            proxy.hold()  # the cancel below lands a round late: nothing more is spent meanwhile
            if client is not None:
                client.cancel()

    fake = None
    if upstream.recording is not None:
        from plansight.fakeapi import FakeMessagesAPI

        fake = FakeMessagesAPI(upstream.recording.script(), models=upstream.recording.models)
        await fake.start_async()
        target = fake.base_url
    else:
        target = upstream.base_url or DEFAULT_UPSTREAM
    proxy = MeteringProxy(target, on_usage=counted)
    started = time.monotonic()
    outcome: RunOutcome | None = None
    error: str | None = None
    frontend = EvalFrontend()
    try:
        await proxy.start()
        options = ClientOptions(
            workspace=workspace,
            model=spec.model,
            accept_edits=True,
            approve_commands=True,
            storage_dir=str(root / "state"),
            env=server_env(proxy.base_url, upstream, root),
            command=kit_server_command(),
            extra_options={
                "maxRounds": task.max_rounds or limits.max_rounds,
                "sandbox": (
                    {"enabled": True, "writable": [str(root / "home")]}
                    if limits.sandbox
                    else {"enabled": False}
                ),
                **spec.arm.options,
            },
        )
        client = PlansightClient(options, frontend)
        try:
            await client.start()
            outcome = await _run_with_deadline(client, task.prompt, spec.arm.mode, limits, stopped)
        except Exception as err:  # the server did not start, or died: a failed attempt
            error = f"{type(err).__name__}: {err}"
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), CLOSE_GRACE)
            client.kill()
    finally:
        seconds = time.monotonic() - started
        await proxy.stop()
        if fake is not None:
            await fake.stop_async()
    check = await asyncio.to_thread(run_checks, task, workspace)
    log_file = current_session_folder(root / "state") / CONVERSATION
    conversation = (
        log_file.read_text(encoding="utf-8", errors="replace") if log_file.is_file() else ""
    )
    result = outcome.result if outcome is not None else {}
    status = outcome.status if outcome is not None else "error"
    if outcome is not None and outcome.error:
        error = outcome.error
    elif status == "error" and error is None:
        error = str(result.get("error") or result.get("text") or "the run failed")
    usage = proxy.usage
    model = proxy.model or spec.model or "unknown"
    return AttemptResult(
        task=task.name,
        arm=spec.arm.name,
        index=spec.index,
        source="replay" if upstream.replay else "live",
        model=model,
        passed=check.passed,
        status=status,
        stopped_by=stopped[0] if stopped else _stop_reason(status),
        rounds=int(result.get("rounds") or 0),
        usage=usage,
        cost=spec.prices.cost(usage) if spec.prices is not None else None,
        seconds=seconds,
        check=check,
        error=error,
        tool_calls=dict(frontend.tool_calls),
        reminders=frontend.reminders,
        plan_items=frontend.plan.most_items,
        todo_tokens=proxy.plan.attributed,
        gate_refusals=proxy.plan.gate_refusals,
        plan_rewrites=frontend.plan.rewrites,
        plan_closed=frontend.plan.closed,
        arm_options=dict(spec.arm.options),
        tools_offered=proxy.tools,
        plan_reviews=frontend.plan_reviews,
        questions=frontend.questions,
        text=str(result.get("text") or ""),
        recording=None if upstream.replay else proxy.recording(),
        conversation=conversation,
    )


def _stop_reason(status: str) -> str:
    return {"done": "done", "limit": "round limit"}.get(status, status)


async def _run_with_deadline(
    client: PlansightClient, prompt: str, mode: str, limits: Limits, stopped: list[str]
) -> RunOutcome:
    run = asyncio.ensure_future(client.run(prompt, new_session=True, mode=mode))
    done, _ = await asyncio.wait({run}, timeout=limits.max_seconds)
    if not done:
        stopped.append("time limit")
        client.cancel()
        done, _ = await asyncio.wait({run}, timeout=CLOSE_GRACE * 3)
        if not done:
            run.cancel()
            with contextlib.suppress(BaseException):
                await run
            return RunOutcome("error", {}, "the run did not stop after it was cancelled")
    return run.result()


def current_session_folder(storage: Path) -> Path:
    """Where the attempt's session keeps its conversation (protocol version 4: the current
    session's folder, `sessions/<id>/`; the storage folder itself before any session)."""
    registry = SessionRegistry(SessionStore(storage, read_only=True))
    current = registry.current()
    return storage if current is None else registry.folder_of(current)
