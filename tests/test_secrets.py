"""Secret files kept from the model: a scripted model tries every way to reach them, and no
request it is sent, no checkpoint object and no command's output ever holds their bytes."""

from __future__ import annotations

import asyncio
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plansight.engine.hooks import approve_all_commands
from plansight.engine.model import ModelSettings
from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool
from plansight.session.session import Session
from plansight.session.settings import SessionSettings
from plansight.session.storage import SessionStore
from plansight.workspace.sandbox import SandboxOptions, detect
from plansight.workspace.secrets import ProtectedPaths, ProtectOptions

from tool_harness import Documents, Reviewer, call, make_ctx

SECRET = b"sk-live-5ecret-b1ts-XYZ"
KEY = b"-----BEGIN OPENSSH PRIVATE KEY----- k3y-m4t3r14l"


def secret_workspace(root: Path) -> Path:
    (root / ".env").write_bytes(b"API_KEY=" + SECRET + b"\n")
    (root / ".env.example").write_text("API_KEY=changeme\n")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_ed25519").write_bytes(KEY + b"\n")
    (root / "certs").mkdir()
    (root / "certs" / "server.pem").write_bytes(SECRET + b" pem\n")
    (root / "env_link").symlink_to(".env")
    return root


@pytest.fixture
def ws(hello_workspace: Path) -> Path:
    return secret_workspace(hello_workspace)


def session_for(root: Path, api: FakeMessagesAPI, storage: Path, **settings: Any) -> Session:
    return Session(
        root,
        SessionSettings(
            ModelSettings(model="claude-sonnet-5-5", api_key="test-key", base_url=api.base_url),
            **settings,
        ),
        approve=approve_all_commands,
        store=SessionStore(storage),
    )


def tool_results(api: FakeMessagesAPI) -> list[dict[str, Any]]:
    last = api.message_requests[-1].body["messages"]
    return [
        block
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def assert_never_sent(api: FakeMessagesAPI, *secrets: bytes) -> None:
    for request in api.requests:
        for secret in secrets:
            assert secret not in (request.raw_body or b""), f"sent to the model: {secret!r}"


# ----- the rules ---------------------------------------------------------------------------


def test_the_default_patterns_and_plansightignore_decide(tmp_path: Path) -> None:
    (tmp_path / ".plansightignore").write_text(
        "config/prod.yml\nsecrets/\n*.log\n!keep.log\n!.env.development\n"
    )
    rules = ProtectedPaths(tmp_path)
    protected = [
        ".env",
        "app/.env.local",
        "a/b/server.key",
        "x.pem",
        "id_rsa",
        "id_ed25519.pub",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".aws/credentials",
        ".ssh/config",
        "deep/.gnupg/pubring.kbx",
        ".plansightignore",
        "config/prod.yml",
        "secrets/token.txt",
        "x.p12",
        "x.pfx",
        "build.log",
        # Version 4: the workspace's file only adds, its `!` cannot share what defaults protect.
        ".env.development",
    ]
    # The file's `!` still carves an exception out of its own lines.
    shared = [".env.example", ".env.sample", ".env.template", "keep.log", "env.py"]
    assert [p for p in protected if not rules.matches(p)] == []
    assert [p for p in shared if rules.matches(p)] == []
    off = ProtectedPaths(tmp_path, ProtectOptions(defaults=False, extra=("*.sqlite",)))
    assert not off.matches(".env") and off.matches("db.sqlite") and off.matches("secrets/a")
    assert off.matches(".plansightignore")  # always


def test_a_malformed_plansightignore_line_is_a_warning_and_the_rest_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".plansightignore").write_text("private/\nbroken\\\n[z-a]\n!.env.local\n")
    with caplog.at_level(logging.WARNING, logger="plansight"):
        rules = ProtectedPaths(tmp_path)
        assert rules.matches("private/notes.md")
        # The `!` line cannot share what the defaults protect (version 4): it is ignored.
        assert rules.matches(".env.local") and rules.matches(".env")
    said = " ".join(r.getMessage() for r in caplog.records)
    assert ".plansightignore, line 2" in said and ".plansightignore, line 3" in said
    assert ".plansightignore, line 4: '!.env.local' is ignored" in said


NEW_DEFAULTS = [
    ".docker/config.json",
    "deploy/.docker/config.json",
    ".kube/config",
    "ops/.kube/prod.yaml",
    "kubeconfig",
    "cluster/kubeconfig",
    "credentials.json",
    "gcp/credentials.json",
    "service-account.json",
    "service-account-prod.json",
    "release.keystore",
    "android/app/upload.jks",
    ".htpasswd",
    "secrets.yaml",
    "config/secrets.json",
    "secrets.env",
    "prod.tfvars",
    "infra/terraform.tfvars",
    ".terraform/terraform.tfstate",
    "infra/.terraform/providers/x",
]


@pytest.mark.parametrize("path", NEW_DEFAULTS)
def test_the_version_4_defaults_protect(tmp_path: Path, path: str) -> None:
    assert ProtectedPaths(tmp_path).matches(path)
    assert not ProtectedPaths(tmp_path, ProtectOptions(defaults=False)).matches(path)


@pytest.mark.parametrize(
    "path",
    [
        "secrets.example.yaml",
        "config/secrets.example.json",
        ".docker/Dockerfile",
        "docker/config.json",
        "credentials.py",
        "service.json",
        "keystore.md",
        "terraform/main.tf",
    ],
)
def test_the_version_4_defaults_leave_their_neighbours(tmp_path: Path, path: str) -> None:
    assert not ProtectedPaths(tmp_path).matches(path)


def test_plansightignore_only_adds_and_warns_once_per_change(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".plansightignore").write_text("notes/\n!.env\n!*.pem\n!extra.db\n")
    options = ProtectOptions(extra=("*.db",))
    with caplog.at_level(logging.WARNING, logger="plansight"):
        rules = ProtectedPaths(tmp_path, options)
        for _ in range(3):  # questions do not repeat the warning
            assert rules.matches(".env") and rules.matches("a/b.pem")
            assert rules.matches("extra.db") and rules.matches("notes/x")
    said = [r.getMessage() for r in caplog.records if "is ignored" in r.getMessage()]
    assert len(said) == 3, said
    assert "line 2: '!.env'" in said[0] and "line 3: '!*.pem'" in said[1]
    assert "line 4: '!extra.db'" in said[2]
    # Every pattern another tool is given excludes at least as much (no `!` of the file).
    assert "!.env" not in rules.patterns() and "notes/" in rules.patterns()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="plansight"):
        (tmp_path / ".plansightignore").write_text("notes/\n!.env\n")
        assert rules.matches(".env")
        assert rules.matches(".env")
    said = [r.getMessage() for r in caplog.records if "is ignored" in r.getMessage()]
    assert len(said) == 1 and "line 2: '!.env'" in said[0]
    # Only the user's own setting drops the defaults.
    assert not ProtectedPaths(tmp_path, ProtectOptions(defaults=False)).matches(".env")


def test_plansightignore_is_read_again_when_it_changes(tmp_path: Path) -> None:
    rules = ProtectedPaths(tmp_path)
    assert not rules.matches("notes/private.md")
    (tmp_path / ".plansightignore").write_text("notes/\n")
    assert rules.matches("notes/private.md")


# ----- the tools ---------------------------------------------------------------------------


async def test_the_file_tools_refuse_protected_files_by_name_and_by_link(
    tmp_path: Path, ws: Path
) -> None:
    home_ssh = tmp_path / "home" / ".ssh"
    home_ssh.mkdir(parents=True)
    (home_ssh / "id_rsa").write_bytes(KEY)
    (ws / "keys").symlink_to(home_ssh)
    documents = Documents()
    documents.texts[(ws / ".env").resolve()] = "API_KEY=" + SECRET.decode() + "-unsaved\n"
    reviewer = Reviewer()
    ctx = make_ctx(ws, reviewer, documents=documents)
    for path in (".env", "env_link", ".ssh/id_ed25519", "certs/server.pem", "keys/id_rsa"):
        read = await call(ctx, "read_file", path=path)
        assert read.is_error and "protected" in read.content, (path, read.content)
        assert "only the user can share it" in read.content.lower()
        assert SECRET.decode() not in read.content and "k3y" not in read.content
    for path in (".env", "env_link", ".plansightignore", ".ssh/config"):
        wrote = await call(ctx, "write_file", path=path, content="PWNED=1\n")
        assert wrote.is_error and "protected" in wrote.content, path
        edited = await call(ctx, "edit_file", path=path, old_text="API", new_text="X")
        assert edited.is_error and "protected" in edited.content, path
    assert reviewer.proposals == []
    assert (ws / ".env").read_bytes() == b"API_KEY=" + SECRET + b"\n"
    assert not (ws / ".plansightignore").exists()
    shared = await call(ctx, "read_file", path=".env.example")
    assert not shared.is_error and "changeme" in shared.content


async def test_list_files_marks_them_and_grep_leaves_them_out(ws: Path) -> None:
    ctx = make_ctx(ws)
    listed = await call(ctx, "list_files")
    lines = listed.content.splitlines()
    assert ".env (protected)" in lines and ".ssh/id_ed25519 (protected)" in lines
    assert "certs/server.pem (protected)" in lines and ".env.example" in lines
    found = await call(ctx, "grep", pattern="sk-live|API_KEY|k3y")
    assert SECRET.decode() not in found.content and "k3y" not in found.content
    assert found.content.splitlines()[0] == ".env.example:1:API_KEY=changeme"
    # Counted by name: .env, .ssh/id_ed25519, certs/server.pem (the link is no file of its own).
    assert "[3 protected files were not searched" in found.content
    # A .gitignore that re-includes a secret does not let it through.
    (ws / ".gitignore").write_text("!.env\n")
    again = await call(ctx, "grep", pattern="sk-live")
    assert SECRET.decode() not in again.content and again.content.startswith("No matches.")
    named = await call(ctx, "grep", pattern="sk-live", path=".env")
    assert named.is_error and "protected" in named.content


# ----- a whole session ---------------------------------------------------------------------


async def test_no_request_and_no_checkpoint_ever_holds_a_secret(
    ws: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    storage = tmp_path / "state"
    session = session_for(ws, fake_api, storage)
    session.start(watch=False)
    sandboxed = detect().available
    fake_api.push(
        tool("read_file", {"path": ".env"}),
        tool("read_file", {"path": "env_link"}),
        tool("grep", {"pattern": "sk-live"}),
        tool("list_files", {}),
        tool("write_file", {"path": ".env", "content": "X=1\n"}),
        tool("bash", {"command": "cat .env .ssh/id_ed25519 certs/server.pem; echo checked"}),
        tool("write_file", {"path": "notes.txt", "content": "a note\n"}),
        text("Done."),
    )
    result = await session.run("Find the API key")
    assert result.status == "done"
    outcomes = tool_results(fake_api)
    assert [o.get("is_error", False) for o in outcomes[:2]] == [True, True]
    assert all("protected" in o["content"] for o in outcomes[:2])
    if sandboxed:
        assert "checked" in outcomes[5]["content"]
        assert_never_sent(fake_api, SECRET, KEY)
    await session.checkpoints.taken()
    await session.close()
    shadow = str(storage / "checkpoints" / "git")
    batch = ["git", "-C", shadow, "cat-file", "--batch-all-objects", "--batch"]
    done = await asyncio.to_thread(subprocess.run, batch, capture_output=True, check=True)
    objects = done.stdout
    assert b"a note" in objects  # the checkpoints did capture the workspace
    assert SECRET not in objects and KEY not in objects


async def test_a_restore_leaves_a_secret_alone_and_names_it(
    ws: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    from plansight.checkpoints.restore import RestoreRequest

    session = session_for(ws, fake_api, tmp_path / "state", sandbox=SandboxOptions(enabled=False))
    session.start(watch=False)
    fake_api.push(
        tool("bash", {"command": "echo changed > .env && echo more > hello.py"}), text("Done.")
    )
    await session.run("Change things")
    first = (await session.checkpoints.taken())[0]
    restored = await session.checkpoints.restore(RestoreRequest(checkpoint=first.id, force=True))
    assert "hello.py" in restored.restored and ".env" not in restored.restored
    skipped = {s.path: s.reason for s in restored.skipped}
    assert "protected" in skipped.get(".env", ""), restored.skipped
    assert (ws / ".env").read_text() == "changed\n"
    await session.close()


async def test_a_protected_file_renamed_by_a_command_stays_protected(
    ws: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    session = session_for(ws, fake_api, tmp_path / "state", sandbox=SandboxOptions(enabled=False))
    fake_api.push(
        tool("bash", {"command": "mv .env .env.old && mv certs/server.pem certs/old.pem"}),
        tool("read_file", {"path": ".env.old"}),
        tool("read_file", {"path": "certs/old.pem"}),
        text("Done."),
    )
    await session.run("Rename them")
    renamed = tool_results(fake_api)[1:]
    assert all(r.get("is_error") and "protected" in r["content"] for r in renamed), renamed
    assert_never_sent(fake_api, SECRET)
    await session.close()


@pytest.mark.skipif(not detect().available, reason="no sandbox can be made here")
async def test_a_sandboxed_command_cannot_read_a_protected_file(
    ws: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    session = session_for(ws, fake_api, tmp_path / "state")
    fake_api.push(
        tool("bash", {"command": "cat .env; cat env_link; ls -A .ssh | wc -l; cat certs/*.pem"}),
        text("Done."),
    )
    await session.run("Look")
    [out] = tool_results(fake_api)
    assert SECRET.decode() not in out["content"] and "k3y" not in out["content"]
    assert_never_sent(fake_api, SECRET, KEY)
    assert (ws / ".env").read_bytes().startswith(b"API_KEY=")  # hidden, not harmed
    await session.close()
