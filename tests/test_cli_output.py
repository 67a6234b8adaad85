"""What `plansight run` says, as a user reads it from a real process: errors in words (no
JSON-RPC code), the variable and the URL to check after an API error, a long prompt's echo kept
short, a file that is not a folder called a file, and exit codes that `run --help`, docs/terminal.md
and the process agree on."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from plansight.fakeapi import FakeMessagesAPI, HttpError, text_reply

from conftest import FIXTURES

README = FIXTURES.parent / "docs" / "terminal.md"


def env_for(tmp_path: Path, base_url: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PLANSIGHT_")) and k not in ("FORCE_COLOR", "COLUMNS")
    }
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
        env["ANTHROPIC_API_KEY"] = "test-key"
    return env


def run(
    tmp_path: Path, base_url: str | None, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansight", "run", *args],
        env=env_for(tmp_path, base_url),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_a_refused_request_is_said_in_words_without_its_json_rpc_code(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    done = run(
        tmp_path, fake_api.base_url, "Go on", "--step", "99", "--workspace", str(hello_workspace)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "#99" in done.stdout
    assert not re.search(r"\(-?32\d{3}\)", done.stdout + done.stderr), done.stdout


def test_a_refused_key_names_the_variable_and_the_url(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    fake_api.push(HttpError(401, "authentication_error", "invalid x-api-key"))
    done = run(tmp_path, fake_api.base_url, "Hi", "--yes", "--workspace", str(hello_workspace))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"The model API at {fake_api.base_url} refused the key: check ANTHROPIC_API_KEY."
        in done.stdout
    ), done.stdout


def test_an_unreachable_endpoint_names_the_url_and_its_variable(
    tmp_path: Path, hello_workspace: Path
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    done = run(tmp_path, url, "Hi", "--yes", "--workspace", str(hello_workspace))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Could not connect to {url} (ANTHROPIC_BASE_URL)" in done.stdout, done.stdout


def test_a_long_prompt_is_echoed_as_its_first_line_and_its_size(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    fake_api.push(text_reply("Read it."))
    prompt = "Review this log please\n" + "line of the log\n" * 6000  # about 100 kB
    done = run(tmp_path, fake_api.base_url, prompt, "--yes", "--workspace", str(hello_workspace))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "› Review this log please … (96 kB, 6,001 lines)" in done.stdout
    assert "line of the log" not in done.stdout and len(done.stdout) < 2000
    # The model got it whole.
    assert fake_api.bodies[0]["messages"][0]["content"][-1]["text"].count("line of the log") == 6000


def test_a_workspace_that_is_a_file_is_called_a_file_on_stderr(tmp_path: Path) -> None:
    target = tmp_path / "hello.py"
    target.write_text("print('hi')\n")
    done = run(tmp_path, "http://127.0.0.1:9", "Hi", "--workspace", str(target))
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"{target} is a file, not a folder" in done.stderr
    assert "no such folder" not in done.stderr


def test_the_exit_codes_in_run_help_and_the_readme_agree_and_hold(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    helped = subprocess.run(
        [sys.executable, "-m", "plansight", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(tmp_path, None) | {"COLUMNS": "100"},
    )
    said = re.search(r"Exit codes: .*?\(Ctrl-C\)\.", " ".join(helped.stdout.split()))
    assert said is not None, helped.stdout
    assert said.group() in " ".join(README.read_text().split())
    assert said.group() == (
        "Exit codes: 0 done; 1 an error, the round limit, the model's refusal, or a run that "
        "could not start (no such folder, no API key); 2 a wrong command line; 130 cancelled "
        "(Ctrl-C)."
    )
    # And they hold: done, an error, a round limit, no such folder, a wrong command line.
    fake_api.push(text_reply("Done."))
    assert (
        run(
            tmp_path, fake_api.base_url, "Hi", "--yes", "--workspace", str(hello_workspace)
        ).returncode
        == 0
    )
    fake_api.push(HttpError(400, message="prompt is too long"))
    assert (
        run(
            tmp_path, fake_api.base_url, "Hi", "--yes", "--workspace", str(hello_workspace)
        ).returncode
        == 1
    )
    missing = str(tmp_path / "missing")
    assert run(tmp_path, fake_api.base_url, "Hi", "--workspace", missing).returncode == 1
    assert run(tmp_path, fake_api.base_url, "--no-such-flag").returncode == 2


def test_with_stdout_a_file_two_model_turns_are_two_paragraphs(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    # Plan mode asks a model that ends its turn without a plan to submit one: a second turn,
    # its text right after the first's, with nothing printed between.
    fake_api.push(
        text_reply("I read the code first\nand planned.", chunk_delay=0.001),
        text_reply("\nThe plan waits for you.", chunk_delay=0.001),
    )
    done = run(
        tmp_path, fake_api.base_url, "Plan it", "--plan", "--workspace", str(hello_workspace)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # One blank line between the turns (the later turn's own leading newline is not added to
    # it), and each turn's lines as the model wrote them.
    assert "I read the code first\nand planned.\n\nThe plan waits for you.\n" in done.stdout, (
        done.stdout
    )


def test_the_instructions_line_says_sizes_and_what_was_cut() -> None:
    from plansight.cli.render import instructions_line

    assert instructions_line([]) is None
    line = instructions_line([{"path": "AGENTS.md", "bytes": 40960, "cut": 8192}])
    assert line is not None
    assert line.plain == (
        "project instructions: AGENTS.md (40.0 kB, 8.0 kB of it left out (limit 32 kB))"
    )


def test_output_format_json_and_stream_json_put_only_json_on_stdout(
    tmp_path: Path, fake_api: FakeMessagesAPI, hello_workspace: Path
) -> None:
    from plansight.fakeapi import tool_reply

    plan = {"items": [{"id": "1", "text": "Rename", "status": "completed"}]}
    for form, old, new in (("json", "name", "who"), ("stream-json", "who", "name")):
        edit = {
            "path": "hello.py",
            "old_text": f"def greet({old}):",
            "new_text": f"def greet({new}):",
        }
        fake_api.push(
            tool_reply("todo", plan),
            tool_reply("read_file", {"path": "hello.py"}),
            tool_reply("edit_file", edit),
            text_reply("Renamed \x1b[31mit\x1b[0m."),
        )
        done = run(
            tmp_path,
            fake_api.base_url,
            "Rename",
            "--yes",
            "--new-session",
            "--workspace",
            str(hello_workspace),
            "--output-format",
            form,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "\x1b" not in done.stdout  # escaped in the JSON, never raw
        objects = [json.loads(line) for line in done.stdout.splitlines()]
        final = objects[-1]
        if form == "json":
            assert len(objects) == 1
        else:
            assert final["type"] == "result"
            types = [o["type"] for o in objects]
            assert {"runStarted", "toolCall", "toolResult", "textDelta", "plan"} <= set(types)
            assert types.index("toolCall") < types.index("toolResult") < types.index("result")
        assert final["status"] == "done"
        assert final["result"] == "Renamed \x1b[31mit\x1b[0m."
        assert final["filesChanged"] == ["hello.py"]
        assert final["plan"]["items"][0]["text"] == "Rename"
        assert final["usage"]["outputTokens"] > 0
        # The cost is the server's (its `usage` event), where the model's price is known.
        assert isinstance(final["costUsd"], float) and final["costUsd"] > 0, final
        if form == "stream-json":
            usages = [o for o in objects if o["type"] == "usage"]
            assert final["costUsd"] == usages[-1]["costUsd"]
        assert "Renamed" in done.stderr  # what a person reads is on stderr
