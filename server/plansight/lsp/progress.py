"""A work-done progress per run whose message follows the plan ("2/5 · Add docstrings")."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

from plansight.plan import TodoState

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


def progress_message(state: TodoState) -> str:
    if not state.items:
        return "planning"
    counts = f"{state.completed}/{state.total}"
    current = state.in_progress
    return f"{counts} · {current.text}" if current else counts


def progress_percentage(state: TodoState) -> int:
    return round(100 * state.completed / state.total) if state.total else 0


class RunProgress:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.token: str | None = None

    def _supported(self) -> bool:
        caps = self.server.client_capabilities
        window = caps.window if caps is not None else None
        return bool(window and window.work_done_progress)

    async def begin(self, state: TodoState) -> None:
        if not self._supported():
            return
        token = f"plansight-run-{uuid.uuid4().hex[:8]}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as err:  # the client may refuse; the run goes on without progress
            log.warning("client refused work-done progress: %s", err)
            return
        self.token = token
        self.server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="Plansight",
                message=progress_message(state),
                percentage=progress_percentage(state),
                cancellable=True,
            ),
        )

    def report(self, state: TodoState) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.report(
            self.token,
            types.WorkDoneProgressReport(
                message=progress_message(state), percentage=progress_percentage(state)
            ),
        )

    def end(self, message: str) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.token = None
