import json

import pytest

from tickets import store, workflow
from tickets.models import Ticket
from tickets.report import summary
from tickets.status import Status


def test_workflow():
    ticket = Ticket(1, "fix it")
    workflow.start(ticket)
    assert ticket.status is Status.IN_PROGRESS
    workflow.close(ticket)
    assert ticket.is_done
    with pytest.raises(ValueError):
        workflow.start(ticket)


def test_store_round_trip(tmp_path):
    path = tmp_path / "t.json"
    store.save(path, [Ticket(1, "a"), Ticket(2, "b", Status.CLOSED)])
    assert json.loads(path.read_text())[1] == {"id": 2, "title": "b", "status": "closed"}
    assert [t.status for t in store.load(path)] == [Status.OPEN, Status.CLOSED]


def test_summary():
    tickets = [Ticket(1, "a"), Ticket(2, "b", Status.CLOSED), Ticket(3, "c", Status.IN_PROGRESS)]
    assert summary(tickets) == "open: 1\nin_progress: 1\nclosed: 1\nto do: a, c"
