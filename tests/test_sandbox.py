"""Commands in the bubblewrap sandbox, through a session whose scripted model (the fake Messages
API) asks for them: what a command could write, see, start and reach, checked on disk, in
/proc and on a TCP server of the test's own."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.hooks import SandboxDescription, approve_all_commands
from plansight.engine.model import ModelSettings
from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore
from plansight.workspace.sandbox import (
    SANDBOX_NOTE,
    CommandSandbox,
    SandboxOptions,
    command_env,
    detect,
)
from plansight.workspace.secrets import ProtectedPaths, ProtectOptions

from conftest import wait_until

pytestmark = pytest.mark.skipif(
    not detect().available, reason="no sandbox can be made here (bubblewrap)"
)


def session_for(
    root: Path,
    api: FakeMessagesAPI,
    sandbox: SandboxOptions | None = None,
    storage: Path | None = None,
) -> Session:
    settings = SessionSettings(
        ModelSettings(model="claude-sonnet-5-5", api_key="test-key", base_url=api.base_url),
        sandbox=sandbox or SandboxOptions(),
    )
    return Session(
        root,
        settings,
        approve=approve_all_commands,
        store=SessionStore(storage) if storage is not None else None,
    )


def results(api: FakeMessagesAPI) -> list[dict[str, Any]]:
    """Every tool result the model was sent, in order."""
    last = api.message_requests[-1].body["messages"]
    return [
        block
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


async def run_commands(session: Session, api: FakeMessagesAPI, *commands: str) -> list[str]:
    api.push(*(tool("bash", {"command": c}) for c in commands), text("Done."))
    result = await session.run("Run them")
    assert result.status == "done", result
    return [r["content"] for r in results(api)]


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (which the sandbox replaces anyway)."""
    folder = Path(tempfile.mkdtemp(prefix="plansight-sandbox-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_command_writes_only_the_workspace_and_says_it_ran_sandboxed(
    hello_workspace: Path, fake_api: FakeMessagesAPI, outside: Path
) -> None:
    # The repository is the user's (a command may not create one: .git is a control file).
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(hello_workspace)], check=True)
    session = session_for(hello_workspace, fake_api)
    escape = outside / "escaped.txt"
    [wrote, committed, tmp] = await run_commands(
        session,
        fake_api,
        f"echo inside > made.txt; echo out > {escape}",
        "git add made.txt && "
        "git -c user.name=T -c user.email=t@example.com commit -qm first && echo committed",
        "echo private > /tmp/mine && echo $TMPDIR",
    )
    assert (hello_workspace / "made.txt").read_text() == "inside\n"
    assert not escape.exists()
    assert "Read-only file system" in wrote
    lines = wrote.splitlines()
    assert lines[-1] == "[exit code 1]"
    assert lines[-2].startswith(SANDBOX_NOTE) and "sandbox" in lines[-2]
    assert "no network" in lines[-2]
    assert "committed" in committed
    log = await asyncio.to_thread(
        subprocess.run,
        ["git", "-C", str(hello_workspace), "log", "--format=%s"],
        capture_output=True,
        text=True,
    )
    assert log.stdout.strip() == "first"
    # The command's /tmp was its own: empty before, gone after.
    assert tmp.splitlines()[0] == "/tmp"
    assert not Path("/tmp/mine").exists()
    await session.close()


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline.split(b"\0"):
            found.append(int(entry))
    return found


async def test_nothing_a_sandboxed_command_starts_outlives_it(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    marker = f"300.{uuid.uuid4().int % 10**9}"  # `sleep 300.N`: findable in /proc
    session = session_for(hello_workspace, fake_api)
    [started] = await run_commands(
        session, fake_api, f"setsid sleep {marker} > /dev/null 2>&1 & echo started"
    )
    assert started.startswith("started")
    await wait_until(lambda: not _processes_with(marker), "the sandbox's processes ended", 10)
    await session.close()

    # The same command without the sandbox leaves its sleep behind (so the check above can
    # fail): end it here.
    plain = session_for(hello_workspace, fake_api, SandboxOptions(enabled=False))
    fake_api.reset()
    await run_commands(plain, fake_api, f"setsid sleep {marker} > /dev/null 2>&1 & echo started")
    try:
        # (The sleep may still be starting as the command's result comes back.)
        await wait_until(lambda: bool(_processes_with(marker)), "an unsandboxed sleep lives on")
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, 9)
    await plain.close()


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


async def test_the_network_is_unreachable_unless_allowed(
    hello_workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    listener = Listener()
    try:
        connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener.port} && echo connected"
        cut_off = session_for(hello_workspace, fake_api)
        [refused] = await run_commands(cut_off, fake_api, connect)
        assert "connected" not in refused.splitlines()[0]
        assert listener.accepted == 0
        await cut_off.close()

        fake_api.reset()
        allowed = session_for(hello_workspace, fake_api, SandboxOptions(network=True))
        [reached] = await run_commands(allowed, fake_api, connect)
        assert reached.startswith("connected")
        assert "with network access" in reached.splitlines()[-2]
        await wait_until(lambda: listener.accepted == 1, "the connection was accepted")
        await allowed.close()
    finally:
        listener.close()


async def test_plansight_storage_is_hidden_from_commands(
    hello_workspace: Path, fake_api: FakeMessagesAPI, outside: Path
) -> None:
    storage = outside / "state"
    session = session_for(hello_workspace, fake_api, storage=storage)
    session.start(watch=False)
    await wait_until(lambda: (storage / "checkpoints" / "git").is_dir(), "checkpoints opened")
    before = sorted(p.relative_to(storage) for p in storage.rglob("*"))
    assert before
    [listed, _planted] = await run_commands(
        session,
        fake_api,
        f"ls -A {storage} | wc -l",
        f"echo x > {storage}/planted && ls {storage}",
    )
    assert listed.splitlines()[0].strip() == "0"
    assert not (storage / "planted").exists()
    await session.close()


async def test_writable_paths_are_writable_and_a_missing_one_is_a_warning(
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    outside: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    extra = outside / "cache"
    extra.mkdir()
    missing = outside / "not-there"
    with caplog.at_level(logging.WARNING, logger="plansight"):
        session = session_for(
            hello_workspace, fake_api, SandboxOptions(writable=(str(extra), str(missing)))
        )
    assert any(
        str(missing) in r.getMessage() and "does not exist" in r.getMessage()
        for r in caplog.records
    )
    [done] = await run_commands(session, fake_api, f"echo kept > {extra}/file && echo ok")
    assert (extra / "file").read_text() == "kept\n"
    assert str(extra) in done.splitlines()[-2]
    await session.close()


async def test_no_command_sees_a_secret_variable(
    hello_workspace: Path, fake_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "anthropic-auth-1")
    monkeypatch.setenv("MY_API_KEY", "value-of-key-2")
    monkeypatch.setenv("github_token", "value-of-token-3")
    monkeypatch.setenv("DB_PASSWORD", "value-of-password-4")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "value-of-secret-5")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "value-of-credential-6")
    monkeypatch.setenv("PLANSIGHT_HARMLESS", "still-here")
    for options in (SandboxOptions(), SandboxOptions(enabled=False)):
        fake_api.reset()
        session = session_for(hello_workspace, fake_api, options)
        [env] = await run_commands(session, fake_api, "env")
        assert "still-here" in env
        for leaked in ("anthropic-auth-1", "value-of-", "ANTHROPIC_", "test-key"):
            assert leaked not in env, (options, leaked)
        await session.close()


async def test_enabled_true_refuses_commands_where_no_sandbox_can_be_made(
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", str(no_bwrap_path(tmp_path)))
    session = session_for(hello_workspace, fake_api, SandboxOptions(enabled=True))
    fake_api.push(tool("bash", {"command": "touch ran.txt"}), text("Done."))
    await session.run("Run it")
    [refused] = results(fake_api)
    assert refused["is_error"] is True
    assert "bubblewrap" in refused["content"] and "apt-get install bubblewrap" in refused["content"]
    assert not (hello_workspace / "ran.txt").exists()
    await session.close()


async def test_auto_runs_unsandboxed_where_no_sandbox_can_be_made_and_says_so_once(
    hello_workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("PATH", str(no_bwrap_path(tmp_path)))
    session = session_for(hello_workspace, fake_api)
    with caplog.at_level(logging.WARNING, logger="plansight"):
        outputs = await run_commands(session, fake_api, "touch ran.txt", "echo again")
    assert (hello_workspace / "ran.txt").exists()
    assert all(SANDBOX_NOTE not in out for out in outputs)
    warnings = [r.getMessage() for r in caplog.records if "without a sandbox" in r.getMessage()]
    assert len(warnings) == 1 and "bubblewrap" in warnings[0]
    await session.close()


def no_bwrap_path(tmp_path: Path) -> Path:
    """A PATH folder with what the tools need (git, rg) and no bwrap."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    for name in ("git", "rg", "env", "touch", "cat", "ls"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    assert shutil.which("bwrap", path=str(folder)) is None
    return folder


async def test_git_commit_works_in_a_linked_worktree_whose_git_folder_the_user_made_writable(
    tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """The `.git` file alone makes nothing writable (tests/test_hostile_sandbox.py); the
    user's `sandbox.writable` naming the repository's git folder does."""
    main, linked = tmp_path / "main", tmp_path / "linked"
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    for args in (
        ["init", "-q", str(main)],
        ["-C", str(main), "commit", "-q", "--allow-empty", "-m", "root"],
        ["-C", str(main), "worktree", "add", "-q", str(linked)],
    ):
        await asyncio.to_thread(subprocess.run, [*git, *args], check=True, capture_output=True)
    session = session_for(linked, fake_api, SandboxOptions(writable=(str(main / ".git"),)))
    [done] = await run_commands(
        session,
        fake_api,
        "echo x > f.txt && git add f.txt && "
        "git -c user.name=T -c user.email=t@example.com commit -qm second && echo committed",
    )
    assert "committed" in done, done
    log = await asyncio.to_thread(
        subprocess.run,
        ["git", "-C", str(linked), "log", "--format=%s"],
        capture_output=True,
        text=True,
    )
    assert log.stdout.split() == ["second", "root"]
    await session.close()


async def test_a_tool_folder_on_path_under_tmp_stays_usable_and_the_rest_of_tmp_is_private(
    tmp_path: Path, fake_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkout under /tmp (as a CI runner may have it) keeps its tools: a PATH folder there is
    # shown read-only in the command's private /tmp; anything else of the host's /tmp is not.
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    greet = tools / "greet-from-tmp"
    greet.write_text("#!/bin/sh\necho hello from a tool in /tmp\n")
    greet.chmod(0o755)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("host tmp")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    session = session_for(workspace, fake_api)
    try:
        ran, hidden, written = await run_commands(
            session,
            fake_api,
            "greet-from-tmp",
            f"cat {elsewhere}",
            f"echo x > {tools}/new-file",
        )
    finally:
        await session.close()
    assert "hello from a tool in /tmp" in ran and ran.rstrip().endswith("[exit code 0]")
    assert "host tmp" not in hidden and "No such file" in hidden
    assert "Read-only file system" in written and not (tools / "new-file").exists()


# The argv and the environment, unit by unit (the hostile cases through real runs are in
# tests/test_hostile_sandbox.py).


def _mounts(argv: list[str], flag: str) -> list[str]:
    """The destinations of every `flag` mount (`--bind`, `--ro-bind`, `--tmpfs`)."""
    found = []
    for at, word in enumerate(argv[: argv.index("--")]):
        if word == flag:
            found.append(argv[at + (1 if flag == "--tmpfs" else 2)])
    return found


def test_a_git_file_adds_nothing_writable_and_is_itself_read_only(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.git"
    elsewhere.mkdir()
    (elsewhere / "commondir").write_text("/\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").write_text(f"gitdir: {elsewhere}\n")
    sandbox = CommandSandbox(root)
    argv = sandbox.argv(["true"])
    assert _mounts(argv, "--bind") == [str(root.resolve())]
    assert str(root.resolve() / ".git") in _mounts(argv, "--ro-bind")
    assert sandbox.description() == SandboxDescription(False, (str(root.resolve()),))
    assert "--unshare-ipc" in argv


def test_a_git_folder_keeps_its_data_writable_and_its_configuration_read_only(
    tmp_path: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".git" / "modules" / "lib").mkdir(parents=True)
    (tmp_path / ".git" / "modules" / "lib" / "config").write_text("[core]\n")
    root = tmp_path.resolve()
    sandbox = CommandSandbox(
        root, protected=ProtectedPaths(root, ProtectOptions(control=("*.cfg",)))
    )
    (root / "build.cfg").write_text("x\n")
    argv = sandbox.argv(["true"])
    read_only = _mounts(argv, "--ro-bind")
    for name in ("config", "hooks", "info", "modules/lib/config"):
        assert str(root / ".git" / name) in read_only, name
    for name in ("objects", "refs", "logs", "index", "HEAD"):
        assert not any(p.startswith(str(root / ".git" / name)) for p in read_only), name
    assert str(root / ".git") not in read_only
    assert str(root / "build.cfg") in read_only  # protect.control
    # The absent ones are placeholders, gone again once the command has ended.
    # (Folders for files' names too: git lists no empty folder, so `git add -A` still works.)
    assert {str(root / ".vscode"), str(root / ".mcp.json")} <= set(_mounts(argv, "--tmpfs"))
    (root / ".vscode").mkdir()  # as bwrap makes them
    (root / ".mcp.json").mkdir()
    sandbox.finished()
    assert not (root / ".vscode").exists() and not (root / ".mcp.json").exists()


def test_placeholders_stay_while_another_command_uses_them(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    sandbox = CommandSandbox(root)
    sandbox.argv(["true"])
    sandbox.argv(["true"])
    (root / ".vscode").mkdir()
    (root / ".idea").mkdir()
    sandbox.finished()
    assert (root / ".vscode").is_dir() and (root / ".idea").is_dir()
    (root / ".idea" / "kept.xml").write_text("written by the user meanwhile\n")
    sandbox.finished()
    assert not (root / ".vscode").exists()
    assert (root / ".idea" / "kept.xml").read_text() == "written by the user meanwhile\n"


def test_host_socket_folders_are_emptied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        argv = CommandSandbox(tmp_path).argv(["true"])
        tmpfs = _mounts(argv, "--tmpfs")
        assert "/run" in tmpfs and str(runtime) in tmpfs
    finally:
        runtime.rmdir()


@pytest.mark.parametrize(
    ("name", "value", "kept"),
    [
        ("GITHUB_PAT", "x", False),
        ("SENTRY_DSN", "x", False),
        ("X_AUTH_HEADER", "x", False),
        ("MY_PRIVATE_THING", "x", False),
        ("DB_PASSWD", "x", False),
        ("DATABASE_URL", "postgres://u:pw@h/db", False),
        ("CACHE", "redis://:pw@cache:6379", False),
        ("HOMEPAGE", "https://example.com/a:b@c", True),  # no password before a host
        ("UPSTREAM", "https://user@example.com/", True),
        ("PATTERN", "keep", True),
    ],
)
def test_command_env_drops_secret_names_and_password_urls(
    name: str, value: str, kept: bool
) -> None:
    assert (name in command_env({name: value})) is kept
