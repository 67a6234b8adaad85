"""What the fake records of each request (`plansight.fakeapi.recording`): the times and the
turnaround between answers.
"""

from __future__ import annotations

from fakeapi_support import MODEL, client_for, user
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
