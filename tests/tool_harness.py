"""What the tool tests share: a workspace with links out of it, an editor, a user at the review,
and calls through the registry exactly as the agent makes them."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from plansight.engine.events import EventBus
from plansight.engine.hooks import EditDecision, EditProposal, approve_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import ToolOutcome, default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REGISTRY = default_tools()

# Paths that lead out of the workspace once `make_links` has run (OUTSIDE_ABS: see escape_path).
ESCAPES = [
    "../outside/secret.txt",
    "OUTSIDE_ABS",
    "/etc/passwd",
    "file_link",
    "dir_link/secret.txt",
    "dir_link",
    "loop_a",
    "dangling",
]


class Documents:
    """An editor holding some documents open (path → text)."""

    def __init__(self) -> None:
        self.texts: dict[Path, str] = {}

    def open_text(self, path: Path) -> str | None:
        return self.texts.get(path)


class Reviewer:
    """A user at the review: answers with `decide` and remembers every proposal."""

    def __init__(self, decide: Callable[[EditProposal], Awaitable[EditDecision]] | None = None):
        self.proposals: list[EditProposal] = []
        self.decide = decide

    async def __call__(self, proposal: EditProposal) -> EditDecision:
        self.proposals.append(proposal)
        if self.decide is not None:
            return await self.decide(proposal)
        return EditDecision(accepted=True)


def tools_workspace(tmp_path: Path) -> Path:
    """A copy of fixtures/workspace_tools, next to a folder outside it holding a secret."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace_tools", root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    return root


def make_links(root: Path) -> Path:
    """Symbolic links from the workspace to the folder outside it; returns that folder."""
    outside = root.parent / "outside"
    (root / "file_link").symlink_to(outside / "secret.txt")
    (root / "dir_link").symlink_to(outside)
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "dangling").symlink_to(outside / "missing.txt")
    return outside


def escape_path(path: str, outside: Path) -> str:
    return str(outside / "secret.txt") if path == "OUTSIDE_ABS" else path


# Each path tool's input aimed at a path.
ESCAPE_INPUTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "read_file": lambda target: {"path": target},
    "write_file": lambda target: {"path": target, "content": "pwned\n"},
    "edit_file": lambda target: {"path": target, "old_text": "SECRET", "new_text": "pwned"},
    "list_files": lambda target: {"path": target},
    "grep": lambda target: {"pattern": "SECRET|root", "path": target},
}


async def assert_escape_refused(root: Path, tool: str, path: str) -> None:
    """`tool` aimed at one of ESCAPES is refused, shows nothing outside and changes nothing."""
    outside = make_links(root)
    target = escape_path(path, outside)
    reviewer = Reviewer()
    ctx = make_ctx(root, reviewer)
    if tool in ("write_file", "edit_file"):
        # Even after a read attempt, nothing outside may be written.
        await call(ctx, "read_file", path=target)
    outcome = await call(ctx, tool, **ESCAPE_INPUTS[tool](target))
    assert outcome.is_error, outcome.content
    assert "outside the workspace" in outcome.content or "symbolic link loop" in outcome.content
    assert "SECRET" not in outcome.content
    assert "root:" not in outcome.content
    assert (outside / "secret.txt").read_text() == "SECRET\n"
    assert not (outside / "missing.txt").exists()
    assert reviewer.proposals == []


def make_ctx(
    root: Path,
    review: Any = None,
    approve: Any = approve_all_commands,
    documents: Documents | None = None,
) -> ToolContext:
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=Workspace(root, documents),
        review=review or Reviewer(),
        approve=approve,
        events=EventBus(),
    )


async def call(ctx: ToolContext, name: str, **tool_input: Any) -> ToolOutcome:
    return await REGISTRY.call(ctx, name, tool_input)
