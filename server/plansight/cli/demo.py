"""`plansight demo`: a recorded session, offline, through the real server, loop, tools and SDK.

The demo copies its project (the `fixtures/hello` files, shipped inside the package as
`recordings/hello_project.json`) into a new temporary folder, or into `--workspace` (which
must be empty or not exist yet), starts `plansight.fakeapi` on 127.0.0.1 in a background
thread serving `recordings/hello_refactor.json`, and runs the same terminal client as
`plansight run` against `plansight lsp` with `ANTHROPIC_BASE_URL` pointing at the fake and a
dummy `ANTHROPIC_API_KEY`. Only the model's answers are recorded: every tool call (reads,
edits, the test command) really runs on the copy.

Reviews: with `--yes`, or when stdin is not a terminal (a demo that waits for an answer
nobody can give is useless), every edit and command is accepted; otherwise you review each
edit and the test command as in `plansight run`. The session is kept in a temporary folder,
never in your own Plansight state.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from plansight.cli.run import error_console, make_console, run_session
from plansight.cli.ui import TerminalUI, terminal_for_questions

if TYPE_CHECKING:
    from plansight.fakeapi import RecordedRequest

RECORDING = "hello_refactor.json"
# A longer session with a context window of a few thousand tokens: the server compacts it.
COMPACTION_RECORDING = "hello_compaction.json"
# Plan mode: the plan is revised once (the recorded user's feedback), then approved and run.
PLAN_RECORDING = "hello_plan.json"
PROJECT = "hello_project.json"
DEFAULT_PROMPT = (
    "Refactor hello.py: add type hints, docstrings and a main guard, then run its tests"
)
DUMMY_API_KEY = "plansight-demo-offline-key"


def load_json(name: str) -> Any:
    """A JSON file shipped in `plansight/recordings/`."""
    data = resources.files("plansight").joinpath("recordings", name).read_text("utf-8")
    return json.loads(data)


def project_files() -> dict[str, str]:
    files = load_json(PROJECT)["files"]
    return {str(name): str(text) for name, text in files.items()}


def check_target(target: Path) -> str | None:
    """Why `target` cannot receive the demo project, or None: it must be new or empty."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        return f"{target} is not an empty folder; choose a new or an empty one."
    return None


def prepare_workspace(target: Path | None) -> Path:
    """Write a fresh copy of the demo project; a new temporary folder when `target` is None."""
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="plansight-demo-")) / "hello"
    elif (problem := check_target(target)) is not None:
        raise ValueError(problem)
    target.mkdir(parents=True, exist_ok=True)
    for name, text in project_files().items():
        (target / name).write_text(text, encoding="utf-8")
    return target.resolve()


def server_env(base_url: str) -> dict[str, str]:
    """Our environment, pointed at the fake API; `python3` is this interpreter first."""
    env = dict(os.environ)
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = DUMMY_API_KEY
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, env.get("PATH", "")) if p)
    return env


@dataclass
class DemoOutcome:
    exit_code: int
    workspace: Path
    # The requests the fake Messages API received (bodies, statuses, usage).
    requests: list[RecordedRequest] = field(default_factory=list)


async def run_demo(
    console: Console,
    workspace: Path | None,
    *,
    accept: bool,
    stdin: IO[str] | None = None,
    recording_name: str = RECORDING,
) -> DemoOutcome:
    """Run the recorded session on a fresh copy of the demo project."""
    recording = load_json(recording_name)
    prompt = str(recording.get("prompt") or DEFAULT_PROMPT)
    # A recording may need options (the compaction demo: a small context window).
    extra = recording.get("initializationOptions")
    extra_options: dict[str, Any] = dict(extra) if isinstance(extra, dict) else {}
    # A plan-mode recording carries the user's answers to its plan reviews.
    run_mode = "plan" if recording.get("mode") == "plan" else "act"
    answers = recording.get("planAnswers")
    plan_answers = (
        [dict(a) for a in answers if isinstance(a, dict)] if isinstance(answers, list) else []
    )
    root = prepare_workspace(workspace)
    prompts = None if accept or stdin is not None else terminal_for_questions(console)
    ui = TerminalUI(console, stdin=stdin, inline_edits=accept, prompts=prompts)
    mode = "demo, recorded model, auto-accept" if accept else "demo, recorded model"
    if run_mode == "plan":
        mode = "plan first, " + mode
    if isinstance(extra_options.get("contextWindow"), int):
        mode += f", context window {extra_options['contextWindow']:,} tokens"
    ui.header(str(root), prompt, mode=mode)
    ui.set_activity("starting the language server")
    ui.start()
    # Imported once the header and the spinner show: with the LSP client's, tenths of a second.
    from plansight.cli.client import ClientOptions
    from plansight.fakeapi import FakeMessagesAPI, Script

    api = FakeMessagesAPI(Script.from_dict(recording))
    try:
        api.start()
        with tempfile.TemporaryDirectory(prefix="plansight-demo-state-") as state:
            options = ClientOptions(
                workspace=root,
                accept_edits=accept,
                approve_commands=accept,
                storage_dir=state,
                env=server_env(api.base_url),
                extra_options=extra_options,
                plan_answers=plan_answers,
            )
            code = await run_session(ui, options, prompt, new_session=True, mode=run_mode)
        requests = api.message_requests
    finally:
        ui.stop()
        api.stop()
    console.print()
    if code != 0:  # cancelled or failed: the project is not what the outro promises
        what = "was cancelled" if code == 130 else "did not finish"
        console.print(
            Text.assemble(
                (f"The demo {what}; its project, as far as it got, is in ", "bold"),
                (str(root), "bold cyan"),
            ),
            soft_wrap=True,
        )
        return DemoOutcome(code, root, requests)
    outro = str(recording.get("outro") or "The refactored project is in ")
    console.print(
        Text.assemble((outro, "bold"), (str(root), "bold cyan")),
        soft_wrap=True,
    )
    console.print(
        Text(f"Try: cd {root} && python3 hello.py Ada && python3 -m unittest -v", style="dim"),
        soft_wrap=True,
    )
    return DemoOutcome(code, root, requests)


def demo_cli(workspace: str | None, yes: bool, compaction: bool = False, plan: bool = False) -> int:
    console = make_console()
    target = Path(workspace).expanduser() if workspace else None
    if target is not None and (problem := check_target(target)) is not None:
        error_console().print(Text(f"plansight demo: {problem}", style="bold red"))
        return 1
    accept = yes or not sys.stdin.isatty()
    try:
        recording = PLAN_RECORDING if plan else COMPACTION_RECORDING if compaction else RECORDING
        outcome = asyncio.run(run_demo(console, target, accept=accept, recording_name=recording))
    except KeyboardInterrupt:
        return 130
    return outcome.exit_code


__all__ = ["DemoOutcome", "demo_cli", "prepare_workspace", "project_files", "run_demo"]
