"""`plansight/models`: the models the Models API lists, for a client's model picker, through
the real server over stdio (the fake API serves `GET /v1/models` as the real one does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from plansight.fakeapi import FakeMessagesAPI, model_info

from lsp_harness import start_editor


async def test_the_models_the_api_lists_with_the_one_in_use(tmp_path: Path) -> None:
    # More than one page of the API's (20 a page by default): every one is listed.
    models = [
        model_info(f"claude-test-{n:02d}", display_name=f"Claude Test {n}", adaptive=n % 2 == 0)
        for n in range(23)
    ]
    (tmp_path / "ws").mkdir()
    with FakeMessagesAPI([], models=models) as api:
        editor = await start_editor(
            tmp_path / "ws",
            api,
            storage=tmp_path / "state",
            init_options={"model": "claude-test-03"},
        )
        try:
            listed = await editor.request("plansight/models", {})
        finally:
            await editor.stop()
    assert listed["current"] == "claude-test-03"
    assert [m["id"] for m in listed["models"]] == [m["id"] for m in models]
    assert listed["models"][1] == {
        "id": "claude-test-01",
        "displayName": "Claude Test 1",
        "createdAt": "2026-01-01T00:00:00+00:00",
        "thinking": True,
    }


async def test_an_endpoint_without_the_models_api_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with FakeMessagesAPI([]) as api:  # no models given: the fake answers 404, as such an endpoint
        editor = await start_editor(tmp_path / "ws", api, storage=tmp_path / "state")
        try:
            with pytest.raises(JsonRpcException) as raised:
                await editor.request("plansight/models", {})
        finally:
            await editor.stop()
    assert "The Models API did not answer" in str(raised.value)
    assert "Not found: GET /v1/models" in str(raised.value)
