"""The nag made visible: at most one plan-reminder diagnostic, on what the agent last touched.

A listener of the session's events (`setup` subscribes it): a `Reminder` shows it, a
`ReminderCleared` clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from plansight.engine.events import Event, Location, Reminder, ReminderCleared
from plansight.lsp.editor import path_uri

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from plansight.session.session import Session

SOURCE = "plansight"
CODE = "plan-reminder"

Publish = Callable[[types.PublishDiagnosticsParams], None]


def setup(server: LanguageServer, session: Session) -> ReminderDiagnostics:
    """Show `session`'s reminders as diagnostics of `server`'s client, from now on."""

    def open_document() -> str | None:
        # Where a reminder goes when the agent has touched no file yet: an open document.
        return next(iter(server.workspace.text_documents), None)

    diagnostics = ReminderDiagnostics(
        session.root, server.text_document_publish_diagnostics, path_uri, open_document
    )
    session.events.subscribe(diagnostics)
    return diagnostics


def reminder_diagnostic(reminder: Reminder, location: Location | None) -> types.Diagnostic:
    """One position at the start of the line the agent last touched (the first of the range it
    last read or edited): shown on that line only, and opening it from a problems list puts
    the cursor there without selecting anything a keystroke would replace."""
    line = location.start_line if location else 0
    at = types.Position(line, 0)
    return types.Diagnostic(
        range=types.Range(at, at),
        message=(
            f"Plansight: the agent's plan has gone {reminder.rounds} rounds without an update, "
            "so the agent was reminded to update it. This is about the agent's plan, not about "
            "this code (it marks what the agent last worked on)."
        ),
        severity=(
            types.DiagnosticSeverity.Information
            if reminder.level <= 1
            else types.DiagnosticSeverity.Warning
        ),
        source=SOURCE,
        code=CODE,
    )


class ReminderDiagnostics:
    def __init__(
        self,
        root: Path,
        publish: Publish,
        uri_of: Callable[[Path], str],
        fallback_uri: Callable[[], str | None],
    ) -> None:
        self.root = root
        self.publish = publish
        self.uri_of = uri_of
        self.fallback_uri = fallback_uri  # where it goes when the agent touched no file yet
        self.current_uri: str | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, Reminder):
            self.show(event)
        elif isinstance(event, ReminderCleared):
            self.clear()

    def show(self, reminder: Reminder) -> None:
        location = reminder.location
        uri = self.uri_of(self.root / location.path) if location else self.fallback_uri()
        if uri is None:
            return
        if self.current_uri is not None and self.current_uri != uri:
            self.clear()
        self.current_uri = uri
        diagnostic = reminder_diagnostic(reminder, location if location else None)
        self.publish(types.PublishDiagnosticsParams(uri=uri, diagnostics=[diagnostic]))

    def clear(self) -> None:
        if self.current_uri is None:
            return
        self.publish(types.PublishDiagnosticsParams(uri=self.current_uri, diagnostics=[]))
        self.current_uri = None
