"""plansight.mcp's pure parts: the four sources in order, `${env:...}`, what is warned about,
trust remembered until the entry changes, tool names, results as tool_result content, the
options; and that a session without servers never loads the SDK. Nothing is started here."""

from __future__ import annotations

import json
from pathlib import Path

from plansight.mcp.config import CLIENT_SOURCE, load_config, user_config_file, with_host_values
from plansight.mcp.tools import tool_name
from plansight.mcp.trust import TrustMemory, named_files


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_the_four_sources_in_order_a_later_name_wins(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(home)}
    user = write(
        home / "plansight" / "mcp.json",
        {"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}}},
    )
    claude = write(
        root / ".mcp.json", {"mcpServers": {"b": {"command": "ws-b"}, "c": {"url": "http://x"}}}
    )
    vscode = write(root / ".vscode" / "mcp.json", {"servers": {"c": {"command": "vs-c"}}})
    config = load_config(root, {"d": {"command": "client-d"}}, env)
    found = {s.name: s for s in config.servers}
    assert [(n, s.command, s.url, s.source, s.trusted) for n, s in found.items()] == [
        ("a", "user-a", None, str(user), True),
        ("b", "ws-b", None, str(claude), False),
        ("c", "vs-c", None, str(vscode), False),
        ("d", "client-d", None, CLIENT_SOURCE, True),
    ]
    assert config.warnings == ()


def test_the_user_file_defaults_to_dot_config() -> None:
    assert user_config_file({}) == Path.home() / ".config" / "plansight" / "mcp.json"


def test_env_references_are_replaced_in_env_headers_and_args(tmp_path: Path) -> None:
    servers = {
        "s": {
            "command": "run",
            "args": ["--token=${env:TOKEN}", "${env:MISSING}x"],
            "env": {"KEY": "${env:TOKEN}"},
            "startupTimeout": 5,
        },
        "h": {
            "url": "https://example.invalid/mcp",
            "headers": {"Authorization": "Bearer ${env:TOKEN}"},
        },
    }
    config = load_config(tmp_path, servers, {"TOKEN": "t0k", "XDG_CONFIG_HOME": str(tmp_path)})
    s, h = config.servers
    assert s.args == ("--token=t0k", "x") and s.env == {"KEY": "t0k"}
    assert s.startup_timeout == 5 and s.tool_timeout == 60
    assert s.cwd == str(tmp_path)  # a stdio server runs in the workspace root
    assert h.headers == {"Authorization": "Bearer t0k"}
    assert any("MISSING" in w for w in config.warnings)


def test_inputs_unknown_keys_and_bad_values_are_warnings(tmp_path: Path) -> None:
    write(
        tmp_path / ".vscode" / "mcp.json",
        {
            "inputs": [{"id": "key", "type": "promptString"}],
            "servers": {
                "ok": {
                    "command": "x",
                    "args": ["${input:key}"],
                    "colour": "blue",
                    "disabled": True,
                },
                "sse": {"type": "sse", "url": "http://x"},
                "neither": {"args": []},
            },
        },
    )
    config = load_config(tmp_path, None, {"XDG_CONFIG_HOME": str(tmp_path / "none")})
    (ok,) = config.servers
    assert ok.disabled and ok.args == ("${input:key}",)
    said = "\n".join(config.warnings)
    for expected in ("'inputs'", "'colour'", "${input:key}", "'sse'", "either 'command'"):
        assert expected in said, expected


def test_a_malformed_file_is_a_warning_naming_it_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{\n  "mcpServers": {\n    "x": {"command": }\n  }\n}\n')
    config = load_config(tmp_path, {"y": {"command": "fine"}}, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert [s.name for s in config.servers] == ["y"]
    (warning,) = config.warnings
    assert warning.startswith(f"{path}:3:") and "not valid JSON" in warning


def test_tool_names_are_safe_and_at_most_64_characters() -> None:
    assert tool_name("my server", "get.thing") == "mcp__my_server__get_thing"
    assert tool_name("everything", "get-sum") == "mcp__everything__get-sum"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__ssss")


def test_trust_and_always_hold_until_the_entry_changes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / ".mcp.json", {"mcpServers": {"s": {"command": "one"}}})
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    (entry,) = load_config(root, None, env).servers
    memory = TrustMemory(tmp_path / "state")
    assert memory.trusted(entry, {}) is None
    memory.trust(entry, {}, ())
    memory.allow_always(entry, "tool")
    again = TrustMemory(tmp_path / "state")  # a new session: read from storage
    assert again.trusted(entry, {}) is not None and again.always_allowed(entry, "tool")
    assert not again.always_allowed(entry, "other")
    write(root / ".mcp.json", {"mcpServers": {"s": {"command": "two"}}})
    (changed,) = load_config(root, None, env).servers
    assert again.trusted(changed, {}) is None and not again.always_allowed(changed, "tool")


def test_a_workspace_entry_gets_a_secret_host_variable_only_once_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    server = {
        "command": "node",
        "args": ["s.js", "--user=${env:USER}"],
        "env": {"K": "${env:ANTHROPIC_API_KEY}", "PLAIN": "x"},
    }
    write(root / ".mcp.json", {"mcpServers": {"s": server}})
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none"), "ANTHROPIC_API_KEY": "sk-canary", "USER": "u"}
    (entry,) = load_config(root, None, env).servers
    assert entry.from_host == ("USER", "ANTHROPIC_API_KEY")
    assert entry.env_names == ("K", "PLAIN")
    assert entry.withheld == ("ANTHROPIC_API_KEY",) and entry.env["K"] == ""
    assert entry.args == ("s.js", "--user=u")  # not secret by name: replaced
    assert with_host_values(entry, ["USER"], env).withheld == ("ANTHROPIC_API_KEY",)
    named = with_host_values(entry, ["ANTHROPIC_API_KEY"], env)
    assert named.withheld == () and named.env["K"] == "sk-canary"
    # The user's own servers are theirs: replaced as written.
    (mine,) = load_config(root, {"s": server}, env).servers
    assert mine.withheld == () and mine.env["K"] == "sk-canary"


def test_trust_covers_the_workspace_files_the_command_line_names(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / "tools" / "server.py", {"v": 1})
    (tmp_path / "outside.py").write_text("x")
    server = {
        "command": "python3",
        "args": ["tools/server.py", f"--extra={tmp_path / 'outside.py'}", "missing.py"],
    }
    write(root / ".mcp.json", {"mcpServers": {"s": server}})
    (entry,) = load_config(root, None, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).servers
    files = named_files(entry, root)
    assert list(files) == [str(root / "tools" / "server.py")]
    memory = TrustMemory(tmp_path / "state")
    memory.trust(entry, files, ())
    assert memory.trusted(entry, named_files(entry, root)) is not None
    write(root / "tools" / "server.py", {"v": 2})
    assert memory.trusted(entry, named_files(entry, root)) is None


def test_a_package_folder_the_command_line_names_is_covered_file_by_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / "pkg" / "package.json", {"bin": "server.js"})
    (root / "pkg" / "server.js").write_text("one")
    write(root / "pkg" / "node_modules" / "dep" / "x.json", {})
    server = {"command": "npx", "args": ["-y", "./pkg"], "cwd": "."}
    write(root / ".mcp.json", {"mcpServers": {"s": server}})
    (entry,) = load_config(root, None, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).servers
    files = named_files(entry, root)
    assert list(files) == [f"{root / 'pkg'}/"]  # the workspace root (the cwd) is not named
    write(root / "pkg" / "node_modules" / "dep" / "x.json", {"installed": True})
    assert named_files(entry, root) == files  # what npm installs there is no change
    (root / "pkg" / "server.js").write_text("two")
    assert named_files(entry, root) != files


def test_an_older_trust_record_without_files_and_from_host_asks_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / ".mcp.json", {"mcpServers": {"s": {"command": "one"}}})
    (entry,) = load_config(root, None, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).servers
    write(tmp_path / "state" / "mcp-trust.json", {"servers": {"s": entry.fingerprint}})
    assert TrustMemory(tmp_path / "state").trusted(entry, {}) is None


def test_the_options_carry_mcp_servers_and_auto_approve_mcp() -> None:
    from plansight.protocol.options import InitOptions

    options = InitOptions.parse(
        {"mcpServers": {"t": {"command": "x"}}, "autoApprove": {"mcp": True}}
    )
    assert options.mcp_servers == {"t": {"command": "x"}} and options.auto_approve_mcp
    bad = InitOptions.parse({"mcpServers": ["no"], "autoApprove": {"mcp": "yes"}})
    assert bad.mcp_servers is None and not bad.auto_approve_mcp
    assert any("mcpServers" in p for p in bad.problems)
    assert any("autoApprove.mcp" in p for p in bad.problems)


def test_a_session_without_mcp_servers_never_imports_the_sdk(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from plansight.session.session import Session\n"
        "from plansight.session.settings import SessionSettings\n"
        f"Session(Path({str(tmp_path)!r}), SessionSettings())\n"
        "print('mcp' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "server"), "XDG_CONFIG_HOME": str(tmp_path / "c")},
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stderr


def test_results_as_tool_result_content() -> None:
    from mcp_types import CallToolResult, ImageContent, TextContent

    from plansight.mcp.results import RESULT_MAX_BYTES, result_content

    def result(*content: object, structured: object = None) -> CallToolResult:
        return CallToolResult(content=list(content), structured_content=structured)  # type: ignore[arg-type]

    text = TextContent(type="text", text="hello")
    assert result_content(result(text, TextContent(type="text", text="world"))) == "hello\nworld"
    # Structured content is added unless the text already says it.
    assert result_content(result(text, structured={"result": "hello"})) == "hello"
    assert (
        result_content(result(TextContent(type="text", text='{"a": 1}'), structured={"a": 1}))
        == '{"a": 1}'
    )
    assert '"b": 2' in str(result_content(result(text, structured={"b": 2})))
    png = ImageContent(type="image", data="iVBORw==", mime_type="image/png")
    blocks = result_content(result(text, png))
    assert blocks == [
        {"type": "text", "text": "hello"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="},
        },
    ]
    svg = ImageContent(type="image", data="PHN2Zz4=", mime_type="image/svg+xml")
    assert "image/svg+xml was left out" in str(result_content(result(svg)))
    huge = ImageContent(type="image", data="A" * 8_000_000, mime_type="image/png")
    assert "MB was left out" in str(result_content(result(huge)))
    cut = str(result_content(result(TextContent(type="text", text="é" * RESULT_MAX_BYTES))))
    assert "output cut at 100 kB" in cut and len(cut.encode()) < RESULT_MAX_BYTES + 200
    assert result_content(result()) == "(the tool returned no output)"
