"""The standalone fake, `python -m plansight.fakeapi` (`plansight.fakeapi.__main__`): the baseUrl
line, a recording served, `GET /_fake/requests`, a clean exit on SIGTERM.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from fakeapi_support import MODEL, user

from conftest import PATIENCE

ROOT = Path(__file__).resolve().parents[1]


def test_standalone_prints_base_url_and_serves_recorded_requests(tmp_path: Path) -> None:
    recording = tmp_path / "recording.json"
    recording.write_text(
        json.dumps(
            {
                "steps": [
                    {"content": [{"type": "text", "text": "Hello from the recording."}]},
                    {"fault": "http", "status": 529},
                ]
            }
        )
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH")) if p
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "plansight.fakeapi", "--script", str(recording), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE)
        assert ready, "no baseUrl line"
        base_url = json.loads(proc.stdout.readline())["baseUrl"]
        assert base_url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(
            base_url=base_url, api_key="secret", timeout=PATIENCE, max_retries=0
        )
        with client:
            msg = client.messages.create(model=MODEL, max_tokens=8, messages=[user("hi")])
            assert msg.content[0].type == "text"
            assert msg.content[0].text == "Hello from the recording."
            with pytest.raises(anthropic.OverloadedError):
                client.messages.create(model=MODEL, max_tokens=8, messages=[user("again")])
        host, port = base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=PATIENCE)
        conn.request("GET", "/_fake/requests")
        resp = conn.getresponse()
        recorded = json.loads(resp.read())
        conn.close()
        assert resp.status == 200
        assert [r["body"]["messages"][0]["content"] for r in recorded] == ["hi", "again"]
        assert [r["status"] for r in recorded] == [200, 529]
        assert recorded[0]["headers"]["authorization"] == "<redacted>"
        assert recorded[0]["finishedAt"] >= recorded[0]["receivedAt"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 0, stderr


def test_standalone_serves_a_recording_s_conversations_by_their_marker(tmp_path: Path) -> None:
    """`"conversations"` in a recording (parallel workers, scripted for the VS Code e2e test):
    each request is answered from the conversation its opening names, whatever the order."""
    recording = tmp_path / "recording.json"
    reply = {"content": [{"type": "text", "text": "main"}]}
    recording.write_text(
        json.dumps(
            {
                "steps": [reply],
                "conversations": {
                    "item one": [{"content": [{"type": "text", "text": "for one"}]}],
                    "item two": [{"content": [{"type": "text", "text": "for two"}]}],
                },
            }
        )
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH")) if p
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "plansight.fakeapi", "--script", str(recording), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE)
        assert ready, "no baseUrl line"
        base_url = json.loads(proc.stdout.readline())["baseUrl"]
        client = anthropic.Anthropic(
            base_url=base_url, api_key="secret", timeout=PATIENCE, max_retries=0
        )
        with client:
            said = [
                client.messages.create(model=MODEL, max_tokens=8, messages=[user(asked)])
                .content[0]
                .text  # type: ignore[union-attr]
                for asked in ("work on item two", "hello", "work on item one")
            ]
        assert said == ["for two", "main", "for one"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 0, stderr
