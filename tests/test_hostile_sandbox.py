"""A hostile repository against the command sandbox (issue 27), through `plansight run --yes`
(a real server, the scripted fake Messages API issuing the commands): what an attacker gets
is read on the disk, in every request body the fake received, and at channels the test opens.

Everything the sandbox should keep out of reach lies outside /tmp (the sandbox's /tmp is
private anyway, so a secret under /tmp would prove nothing): the home folder, the workspace
and the "outside" folders are made under /var/tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from plansight.workspace.sandbox import detect

from conftest import PATIENCE

pytestmark = pytest.mark.skipif(
    not detect().available, reason="no sandbox can be made here (bubblewrap)"
)


@dataclass
class Host:
    """The user's machine as the test lays it out: all of it outside /tmp."""

    top: Path
    home: Path
    config: Path  # XDG_CONFIG_HOME
    runtime: Path  # XDG_RUNTIME_DIR
    workspace: Path
    outside: Path  # a folder of the user's that no command may write

    def canary(self, what: str) -> str:
        return f"CANARY-{what}-{uuid.uuid4().hex}"


@pytest.fixture
def host() -> Iterator[Host]:
    top = Path(tempfile.mkdtemp(prefix="plansight-hostile-", dir="/var/tmp"))
    found = Host(
        top,
        home=top / "home",
        config=top / "home" / ".config",
        runtime=top / "runtime",
        workspace=top / "workspace",
        outside=top / "outside",
    )
    for folder in (found.config, found.runtime, found.workspace, found.outside):
        folder.mkdir(parents=True)
    (found.workspace / "README.md").write_text("A repository from somewhere.\n")
    yield found
    shutil.rmtree(top, ignore_errors=True)


@dataclass
class Run:
    results: list[str]  # each command's tool result, as the model was sent it
    sent: str  # every request body the fake received, as one text


def run_commands(
    api: FakeMessagesAPI,
    host: Host,
    *commands: str,
    env: dict[str, str] | None = None,
) -> Run:
    """`plansight run --yes` whose model runs `commands` with the bash tool, one per turn."""
    api.push(*(tool_reply("bash", {"command": c}) for c in commands), text_reply("Done."))
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_")) and k not in ("FORCE_COLOR", "COLUMNS")
    }
    base.update(
        HOME=str(host.home),
        XDG_CONFIG_HOME=str(host.config),
        XDG_STATE_HOME=str(host.top / "state"),
        XDG_RUNTIME_DIR=str(host.runtime),
        ANTHROPIC_BASE_URL=api.base_url,
        ANTHROPIC_API_KEY="test-key",
        **(env or {}),
    )
    argv = [sys.executable, "-m", "plansight", "run", "Run them", "--yes"]
    done = subprocess.run(
        [*argv, "--workspace", str(host.workspace)],
        env=base,
        capture_output=True,
        text=True,
        timeout=PATIENCE * 4,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = api.message_requests[-1].body["messages"]
    results = [
        block["content"] if isinstance(block["content"], str) else json.dumps(block["content"])
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == len(commands), results
    for result in results:
        assert "[ran in a sandbox" in result, result
    sent = "\n".join(json.dumps(r.body) for r in api.message_requests)
    return Run(results, sent)


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_a_git_file_pointing_outside_makes_nothing_there_writable(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    # `.git` as a linked worktree's: `gitdir:` a folder outside, whose `commondir` is `/`.
    git_dir = host.outside / "repo.git"
    git_dir.mkdir()
    (git_dir / "commondir").write_text("/\n")
    (host.workspace / ".git").write_text(f"gitdir: {git_dir}\n")
    mcp = host.config / "plansight" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text('{"mcpServers": {}}\n')
    run = run_commands(
        fake_api,
        host,
        f"echo pwned > {git_dir}/escaped; echo pwned > {host.outside}/escaped; "
        f"echo pwned > {host.home}/escaped; echo pwned > {mcp}; echo pwned > .git",
    )
    assert "Read-only file system" in run.results[0]
    assert not (git_dir / "escaped").exists()
    assert not (host.outside / "escaped").exists()
    assert not (host.home / "escaped").exists()
    assert mcp.read_text() == '{"mcpServers": {}}\n'
    assert (host.workspace / ".git").read_text() == f"gitdir: {git_dir}\n"


def test_control_files_stay_as_they_were_while_git_add_and_commit_work(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    ws = host.workspace
    git("init", "-q", cwd=ws)
    git("add", "README.md", cwd=ws)
    git("commit", "-qm", "first", cwd=ws)
    config = (ws / ".git" / "config").read_text()
    (ws / ".idea").mkdir()
    (ws / ".idea" / "workspace.xml").write_text("<project/>\n")
    run = run_commands(
        fake_api,
        host,
        # Absent ones: a command may not create them.
        "mkdir -p .vscode && echo '{\"evil\": 1}' > .vscode/settings.json",
        "echo '!.env' > .plansightignore; echo '{\"mcpServers\": {}}' > .mcp.json; "
        "echo 'export X=1' > .envrc",
        # Present ones: a command may not change or replace them.
        "echo '<evil/>' > .idea/workspace.xml; rm -rf .idea; mv .idea idea2",
        "umount .git/config; umount -l .vscode; "
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config; "
        "mkdir -p .git/hooks; echo 'touch pwned' > .git/hooks/pre-commit; "
        "echo x > .git/info/attributes; echo / > .git/commondir",
        # ... while git's own data stays writable (`git add -A`: the placeholders are no
        # files git would add).
        "echo new > new.txt && git add -A && "
        "git -c user.name=T -c user.email=t@example.com commit -qm second && echo committed",
    )
    for absent in (".vscode", ".plansightignore", ".mcp.json", ".envrc"):
        assert not os.path.lexists(ws / absent), absent
    assert (ws / ".idea" / "workspace.xml").read_text() == "<project/>\n"
    assert not (ws / "idea2").exists()
    assert (ws / ".git" / "config").read_text() == config
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".git" / "info" / "attributes").exists()
    assert not os.path.lexists(ws / ".git" / "commondir")
    assert "committed" in run.results[4], run.results[4]
    assert git("log", "--format=%s", cwd=ws).split() == ["second", "first"]
    committed = git("show", "--name-only", "--format=", "HEAD", cwd=ws).split()
    assert sorted(committed) == [".idea/workspace.xml", "new.txt"]  # no placeholder


def test_a_protected_link_to_a_file_outside_gives_nothing_of_it(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    canary = host.canary("link")
    target = host.outside / "production.settings"
    target.write_text(f"DB_PASSWORD={canary}\n")
    (host.workspace / ".env").symlink_to(target)
    run = run_commands(fake_api, host, f"cat .env; cat {target}; cp .env copy.txt")
    assert canary not in run.sent
    assert canary not in (
        (host.workspace / "copy.txt").read_text() if (host.workspace / "copy.txt").exists() else ""
    )
    assert target.read_text() == f"DB_PASSWORD={canary}\n"


def test_protected_files_in_ignored_folders_are_unreadable(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    canaries = []
    for folder in ("node_modules/some-package", ".venv/lib", "src/__pycache__"):
        (host.workspace / folder).mkdir(parents=True)
        canaries.append(host.canary(folder.replace("/", "-")))
        (host.workspace / folder / ".env").write_text(f"API_TOKEN={canaries[-1]}\n")
    (host.workspace / "node_modules" / "some-package" / "index.js").write_text("// code\n")
    run = run_commands(
        fake_api, host, "cat node_modules/some-package/.env .venv/lib/.env src/__pycache__/.env"
    )
    for canary in canaries:
        assert canary not in run.sent


def _listener(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    server.setblocking(False)
    return server


def _got_anything(server: socket.socket) -> bytes | None:
    """What reached the listener (None: nobody connected). The command has ended by now, so
    a connection it made is in the backlog already."""
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return None
    with conn:
        conn.setblocking(False)
        try:
            return conn.recv(1 << 16)
        except BlockingIOError:
            return b""


def test_host_unix_sockets_get_no_byte(fake_api: FakeMessagesAPI, host: Host) -> None:
    run_folder = Path(tempfile.mkdtemp(prefix="plansight-hostile-", dir="/run"))
    (host.home / ".docker" / "run").mkdir(parents=True)
    paths = [
        host.home / "agent.sock",
        host.home / ".docker" / "run" / "docker.sock",
        host.runtime / "bus",
        run_folder / "daemon.sock",
    ]
    servers = [_listener(p) for p in paths]
    try:
        send = (
            "import socket,sys\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        s = socket.socket(socket.AF_UNIX); s.connect(p); s.sendall(b'CANARY')\n"
            "        print('reached', p)\n"
            "    except OSError as e:\n"
            "        print('refused', p, e)\n"
        )
        (host.workspace / "send.py").write_text(send)
        run = run_commands(fake_api, host, "python3 send.py " + " ".join(str(p) for p in paths))
        assert "reached" not in run.results[0], run.results[0]
        for path, server in zip(paths, servers, strict=True):
            assert _got_anything(server) is None, path
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(run_folder, ignore_errors=True)


def test_a_host_fifo_gets_no_byte(fake_api: FakeMessagesAPI, host: Host) -> None:
    fifo = host.home / "commands.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a host process reading it
    try:
        run_commands(fake_api, host, f"echo CANARY-fifo > {fifo}")
        try:
            got = os.read(reader, 1 << 16)
        except BlockingIOError:
            got = b""
        assert b"CANARY" not in got
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    finally:
        os.close(reader)


def test_host_system_v_ipc_is_out_of_sight(fake_api: FakeMessagesAPI, host: Host) -> None:
    made = subprocess.run(
        ["ipcmk", "-M", "4096"], capture_output=True, text=True, check=True
    ).stdout
    shmid = made.split()[-1]
    try:
        run = run_commands(fake_api, host, "ipcs -m")
        ids = [line.split()[1] for line in run.results[0].splitlines() if line.startswith("0x")]
        assert shmid not in ids, run.results[0]
        # (and the host does show it: the check can fail)
        listed = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
        assert any(line.split()[1:2] == [shmid] for line in listed.splitlines())
    finally:
        subprocess.run(["ipcrm", "-m", shmid], check=False)


def test_secret_variables_are_not_in_commands_environment(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    names = {
        "GITHUB_PAT": host.canary("pat"),
        "X_AUTH_HEADER": host.canary("auth"),
        "SENTRY_DSN": f"https://{host.canary('dsn')}@o1.ingest.sentry.io/1",
        "MY_PRIVATE_THING": host.canary("private"),
        "DB_PASSWD": host.canary("passwd"),
        "DATABASE_URL": f"postgres://app:{host.canary('url')}@db.example.com/app",
        "CACHE": f"redis://:{host.canary('redis')}@cache:6379/0",
    }
    run = run_commands(fake_api, host, "env", env={**names, "PLAIN_SETTING": "visible-value"})
    for name, value in names.items():
        assert value not in run.sent, name
        assert f"{name}=" not in run.results[0], name
    assert "PLAIN_SETTING=visible-value" in run.results[0]


CREDENTIALS = (
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".gnupg/private-keys-v1.d/key",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".kube/config",
    ".config/gcloud/credentials.db",
    ".config/gh/hosts.yml",
    ".config/plansight/config.json",
)


def test_the_users_credentials_are_unreadable(fake_api: FakeMessagesAPI, host: Host) -> None:
    canaries = {}
    for name in CREDENTIALS:
        path = host.home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        canaries[name] = host.canary(name.replace("/", "-"))
        path.write_text(f"secret {canaries[name]}\n")
    run = run_commands(
        fake_api,
        host,
        "cat " + " ".join(f"$HOME/{name}" for name in CREDENTIALS) + "; ls -la $HOME/.ssh",
    )
    for name, canary in canaries.items():
        assert canary not in run.sent, name


def test_plansights_mcp_configuration_is_unreadable_and_unwritable(
    fake_api: FakeMessagesAPI, host: Host
) -> None:
    canary = host.canary("mcp")
    mcp = host.config / "plansight" / "mcp.json"
    mcp.parent.mkdir()
    text = json.dumps({"mcpServers": {}, "note": canary}) + "\n"
    mcp.write_text(text)
    run = run_commands(
        fake_api,
        host,
        "cat $XDG_CONFIG_HOME/plansight/mcp.json",
        'echo \'{"mcpServers": {"evil": {"command": "sh"}}}\' > '
        "$XDG_CONFIG_HOME/plansight/mcp.json; touch $XDG_CONFIG_HOME/plansight/new.json",
    )
    assert canary not in run.sent
    assert mcp.read_text() == text
    assert sorted(os.listdir(mcp.parent)) == ["mcp.json"]
