"""A `PATH` holding a folder the server's user may not enter (`/root/.cargo/bin` after
`sudo -u`): the server, a real `plansight lsp` run as an ordinary user, still answers and runs
commands (workspace/sandbox.py's `tools_in_tmp` skips what it cannot read)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply

from conftest import PATIENCE
from lsp_harness import server_env

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run the server as another user",
)

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def nobody_can_run_plansight() -> None:
    """The checkout must be readable by nobody: a clone under `mktemp -d` (0700, root's) is
    not, and the server then dies at once with "No module named plansight" (seen in a
    fresh-clone run), which says nothing about PATH."""
    probe = subprocess.run(
        [*NOBODY, sys.executable, "-c", "import plansight"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot import plansight from this checkout: {probe.stderr.strip()}")


@pytest.fixture
def folders() -> Iterator[Path]:
    """A home, workspace and storage of nobody's, and a folder nobody may not enter."""
    top = Path(tempfile.mkdtemp(prefix="plansight-path-", dir="/var/tmp"))
    top.chmod(0o755)
    for name in ("home", "workspace", "state"):
        (top / name).mkdir()
        os.chown(top / name, 65534, 65534)
    (top / "locked" / "bin").mkdir(parents=True)
    (top / "locked").chmod(0o700)  # root's only
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.usefixtures("nobody_can_run_plansight")
async def test_a_server_whose_path_holds_a_folder_it_may_not_enter_answers(
    folders: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = folders / "workspace"
    # The locked folder first, as `sudo -u` leaves root's PATH.
    path = f"{folders / 'locked' / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin"
    env = server_env(
        fake_api,
        {
            "PATH": path,
            "HOME": str(folders / "home"),
            "XDG_STATE_HOME": str(folders / "state"),
            "XDG_CONFIG_HOME": str(folders / "home" / ".config"),
        },
    )
    fake_api.push(tool_reply("bash", {"command": "echo ran as $(id -un)"}), text_reply("Done."))
    client = LanguageClient(converter_factory=default_converter)
    await client.start_io(
        *NOBODY, sys.executable, "-m", "plansight", "lsp", env=env, cwd=str(workspace)
    )
    try:
        capabilities = client_capabilities("visual-studio-code")
        capabilities.experimental = {"plansight": {"approveCommand": True}}

        @client.feature("plansight/approveCommand")
        def approve(params: Any) -> dict[str, bool]:
            return {"approved": True}

        await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                initialization_options={"storageDir": str(folders / "state")},
            )
        )
        state = await client.protocol.send_request_async("plansight/state", {})
        assert state is not None
        run = client.protocol.send_request_async("plansight/run", {"prompt": "Run it"})
        await asyncio.wait_for(run, PATIENCE)
        [result] = [
            b
            for m in fake_api.message_requests[-1].body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        assert "ran as nobody" in str(result["content"]), result
    finally:
        # Seen once in a full CI run: the server had gone by the time of the shutdown, and
        # pygls said only "Client has been stopped". Say how it left (its stderr is above).
        server = client._server
        if client.stopped and server is not None:
            pytest.fail(f"the server left before shutdown, exit code {server.returncode}")
        await client.shutdown_session()
