"""lsp/diagnostics.py: at most one plan-reminder diagnostic, where the agent last worked."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from plansight.engine.events import Location, Reminder, ReminderCleared
from plansight.lsp.diagnostics import CODE, SOURCE, ReminderDiagnostics, reminder_diagnostic

ROOT = Path("/work/project")


def reminder(level: int = 1, path: str | None = "src/app.py", line: int = 7) -> Reminder:
    location = Location(path, line, line + 3) if path is not None else None
    return Reminder("<reminder>Update your todos.</reminder>", level, 3 * level, location)


class Client:
    """What the editor was sent, and an open document to fall back on."""

    def __init__(self, open_uri: str | None = None) -> None:
        self.published: list[tuple[str, list[types.Diagnostic]]] = []
        self.open_uri = open_uri

    def publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.append((params.uri, list(params.diagnostics)))

    def diagnostics(self) -> ReminderDiagnostics:
        return ReminderDiagnostics(
            ROOT, self.publish, lambda path: path.as_uri(), lambda: self.open_uri
        )


def test_the_diagnostic_is_a_point_at_the_start_of_the_line_last_touched() -> None:
    shown = reminder_diagnostic(reminder(line=7), Location("src/app.py", 7, 10))
    assert shown.range == types.Range(types.Position(7, 0), types.Position(7, 0))
    assert (shown.source, shown.code) == (SOURCE, CODE)
    assert "3 rounds without an update" in shown.message
    assert "not about this code" in shown.message
    assert shown.severity == types.DiagnosticSeverity.Information


def test_a_louder_reminder_is_a_warning() -> None:
    assert reminder_diagnostic(reminder(level=2), None).severity == types.DiagnosticSeverity.Warning


def test_a_reminder_shows_on_the_file_and_a_clear_removes_it() -> None:
    client = Client()
    diagnostics = client.diagnostics()
    diagnostics(reminder())
    diagnostics(ReminderCleared())
    uri = (ROOT / "src/app.py").as_uri()
    assert [(u, len(d)) for u, d in client.published] == [(uri, 1), (uri, 0)]
    diagnostics(ReminderCleared())  # nothing shown: nothing to clear
    assert len(client.published) == 2


def test_a_reminder_on_another_file_moves_there_leaving_none_behind() -> None:
    client = Client()
    diagnostics = client.diagnostics()
    diagnostics(reminder(path="a.py"))
    diagnostics(reminder(path="b.py", level=2))
    a, b = (ROOT / "a.py").as_uri(), (ROOT / "b.py").as_uri()
    assert [(u, len(d)) for u, d in client.published] == [(a, 1), (a, 0), (b, 1)]


def test_without_a_file_touched_it_goes_to_an_open_document_or_nowhere() -> None:
    nowhere = Client(open_uri=None)
    nowhere.diagnostics()(reminder(path=None))
    assert nowhere.published == []
    somewhere = Client(open_uri="file:///work/project/README.md")
    somewhere.diagnostics()(reminder(path=None))
    [(uri, [shown])] = somewhere.published
    assert uri == "file:///work/project/README.md" and shown.range.start.line == 0
