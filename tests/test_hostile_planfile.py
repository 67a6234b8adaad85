"""Plan files are control files: a command the model runs cannot write, replace or remove
them (through `plansight run --yes`, a real server, a real sandbox and the scripted fake
Messages API), in the default folder and in a `plansDirectory` the user chose. What the
attacker gets is read on the disk: the plan file as the server wrote it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.workspace.sandbox import detect

from conftest import PATIENCE

pytestmark = pytest.mark.skipif(
    not detect().available, reason="no sandbox can be made here (bubblewrap)"
)

PLAN = {"items": [{"id": "1", "text": "Greet", "status": "in_progress"}]}
ATTACK = (
    'for f in {folder}/*.md; do echo "- [x] 1. pwned" > "$f"; done; '
    "rm -f {folder}/*.md; mv {folder} moved; "
    "echo '- [x] 1. planted' > {folder}/planted-0000.md; ls {folder}"
)


@pytest.fixture
def top() -> Iterator[Path]:
    # Outside /tmp: the sandbox's /tmp is its own.
    made = Path(tempfile.mkdtemp(prefix="plansight-planfile-", dir="/var/tmp"))
    (made / "workspace").mkdir()
    (made / "workspace" / "README.md").write_text("A repository.\n")
    (made / "config" / "plansight").mkdir(parents=True)
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.mark.parametrize("folder", [".plansight/plans", "docs/plans"])
def test_a_command_cannot_change_the_plan_file(
    fake_api: FakeMessagesAPI, top: Path, folder: str
) -> None:
    ws = top / "workspace"
    (top / "config" / "plansight" / "config.json").write_text(
        json.dumps({"plansDirectory": folder})
    )
    fake_api.push(
        tool_reply("todo", PLAN),
        tool_reply("bash", {"command": ATTACK.format(folder=folder)}),
        text_reply("Done."),
        text_reply("Greeting stays open."),  # the done gate's answer
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_", "XDG_"))
        and k not in ("FORCE_COLOR", "COLUMNS")
    }
    env.update(
        HOME=str(top),
        XDG_CONFIG_HOME=str(top / "config"),
        XDG_STATE_HOME=str(top / "state"),
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ANTHROPIC_API_KEY="test-key",
    )
    done = subprocess.run(
        [sys.executable, "-m", "plansight", "run", "Greet", "--yes", "--workspace", str(ws)],
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE * 4,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [plan_file] = list((ws / folder).glob("*.md"))
    assert plan_file.name.startswith("greet-")
    text = plan_file.read_text()
    assert "- [~] 1. Greet\n" in text and "pwned" not in text and "planted" not in text
    # (`mv` may leave a copy beside it: reading the plan is allowed, and the copy is nothing
    # the server reads.)
    last = fake_api.message_requests[2].body["messages"][-1]["content"]
    [result] = [b for b in last if b["type"] == "tool_result"]
    assert "[ran in a sandbox" in json.dumps(result), done.stdout
    # The terminal showed where the plan file is.
    assert str(plan_file.relative_to(ws)) in done.stdout + done.stderr
