"""A Status enum used everywhere instead of bare strings; the JSON format is unchanged."""

import ast
import enum
import json

import pytest

NAMES = {"OPEN": "open", "IN_PROGRESS": "in_progress", "CLOSED": "closed"}
MODULES = ["tickets/models.py", "tickets/workflow.py", "tickets/store.py", "tickets/report.py"]


def status_enum(project):
    return project.module("tickets.status").Status


def test_status_enum(project):
    status = status_enum(project)
    assert issubclass(status, enum.Enum)
    assert {member.name: member.value for member in status} == NAMES


@pytest.mark.parametrize("path", MODULES)
def test_no_bare_status_strings(project, path):
    for node in ast.walk(project.syntax(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert node.value not in NAMES.values(), f"{path} still uses {node.value!r}"


def test_tickets_hold_status_members(project, tmp_path):
    status = status_enum(project)
    models = project.module("tickets.models")
    workflow = project.module("tickets.workflow")
    ticket = models.Ticket(7, "write docs")
    assert ticket.status is status.OPEN and not ticket.is_done
    assert workflow.start(ticket).status is status.IN_PROGRESS
    workflow.close(ticket)
    with pytest.raises(ValueError):
        workflow.close(ticket)  # closed -> closed is not a move
    ticket = models.Ticket(8, "x", status.CLOSED)
    assert ticket.is_done
    with pytest.raises(ValueError):
        workflow.start(ticket)
    assert workflow.reopen(ticket).status is status.OPEN


def test_json_format_is_unchanged(project, tmp_path):
    status = status_enum(project)
    models = project.module("tickets.models")
    store = project.module("tickets.store")
    path = tmp_path / "tickets.json"
    tickets = [models.Ticket(1, "a"), models.Ticket(2, "b", status.IN_PROGRESS)]
    store.save(path, tickets)
    assert json.loads(path.read_text(encoding="utf-8")) == [
        {"id": 1, "title": "a", "status": "open"},
        {"id": 2, "title": "b", "status": "in_progress"},
    ]
    path.write_text(
        '[{"id": 3, "title": "c", "status": "closed"}, {"id": 4, "title": "d", "status": "open"}]',
        encoding="utf-8",
    )
    loaded = store.load(path)
    assert [t.status for t in loaded] == [status.CLOSED, status.OPEN]
    path.write_text('[{"id": 5, "title": "e", "status": "lost"}]', encoding="utf-8")
    with pytest.raises(ValueError):
        store.load(path)


def test_report_is_unchanged(project):
    status = status_enum(project)
    models = project.module("tickets.models")
    report = project.module("tickets.report")
    tickets = [
        models.Ticket(1, "a", status.CLOSED),
        models.Ticket(2, "b"),
        models.Ticket(3, "c", status.IN_PROGRESS),
        models.Ticket(4, "d"),
    ]
    assert report.summary(tickets) == "open: 2\nin_progress: 1\nclosed: 1\nto do: b, c, d"
    assert report.summary([]) == "open: 0\nin_progress: 0\nclosed: 0\nto do: nothing"


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3
