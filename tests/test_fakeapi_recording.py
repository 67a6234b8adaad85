"""What the fake records of each request (`plansight.fakeapi.recording`): the times and the
turnaround between answers; what a reset forgets and what it keeps.
"""

from __future__ import annotations

import json

import pytest

from fakeapi_support import MODEL, client_for, post, user
from plansight.fakeapi import FakeMessagesAPI, text_reply

from conftest import PATIENCE


async def test_timing_records_and_turnaround() -> None:
    with FakeMessagesAPI([text_reply("a"), text_reply("b"), text_reply("c")]) as api:
        async with client_for(api) as client:
            for _ in range(3):
                async with client.messages.stream(
                    model=MODEL, max_tokens=8, messages=[user("x")]
                ) as stream:
                    await stream.get_final_message()
        done = api.wait_for_requests(3, timeout=PATIENCE)
    for rec in done:
        assert rec.finished_at is not None and rec.first_byte_at is not None
        assert rec.arrived_at <= rec.received_at <= rec.first_byte_at <= rec.finished_at
    gaps = api.turnaround_times()
    assert len(gaps) == 2 and all(0 <= g < PATIENCE for g in gaps)
    assert api.received_at == [r.received_at for r in done]


def test_reset_forgets_the_records_and_numbers_connections_from_one_again() -> None:
    body = {"model": MODEL, "max_tokens": 8, "messages": [user("x")]}
    with FakeMessagesAPI([text_reply("a")]) as api:
        post(api, body)
        post(api, body)
        assert [r.connection for r in api.requests] == [1, 2] and api.connections == 2
        api.reset()
        assert api.requests == [] and api.connections == 0 and api.steps_remaining == 0
        api.push(text_reply("b"))
        status, _, data = post(api, body)
        assert status == 200 and json.loads(data)["content"][0]["text"] == "b"
        (again,) = api.wait_for_requests(1, timeout=PATIENCE)
        with pytest.raises(TimeoutError, match="1 of 2 requests"):
            api.wait_for_requests(2, timeout=0)
    assert again.connection == 1
    assert again.request_id == "req_fake_00000003", "ids stay unique across a reset"
