"""A work-done progress per run whose message follows the plan ("2/5 · Add docstrings").

A listener of the session's events: begun when a run starts, reported when the plan changes,
ended with the run's status. Its cancel button cancels the run, as `$/cancelRequest` does.
`setup` subscribes it to a session's events and answers the button
(`window/workDoneProgress/cancel`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from plansight.engine.events import Event, PlanChanged, RunFinished, RunStarted
from plansight.plan.plan import TodoState

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from plansight.session.session import Session

log = logging.getLogger(__name__)


def closed(state: TodoState) -> int:
    """Items no longer open: completed, and cancelled (a step dropped is not a step left)."""
    return state.counts["done"]


def progress_message(state: TodoState) -> str:
    """ "2/5 · Add docstrings": closed items of all, and the item in progress."""
    if not state.items:
        return "planning"
    counts = f"{closed(state)}/{state.total}"
    if cancelled := state.counts["cancelled"]:
        counts += f" ({cancelled} cancelled)"
    current = state.in_progress
    return f"{counts} · {current.text}" if current else counts


def progress_percentage(state: TodoState) -> int:
    return round(100 * closed(state) / state.total) if state.total else 0


def setup(server: LanguageServer, session: Session) -> RunProgress:
    """Show `session`'s runs as work-done progress of `server`'s client, from now on."""
    progress = RunProgress(server, lambda: session.plan.state, session.cancel)
    session.events.subscribe(progress)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel_progress(params: types.WorkDoneProgressCancelParams) -> None:
        progress.cancel(params.token)

    return progress


class RunProgress:
    def __init__(
        self,
        server: LanguageServer,
        plan_state: Callable[[], TodoState],
        cancel_run: Callable[[], object],
    ) -> None:
        self.server = server
        self.plan_state = plan_state
        self.cancel_run = cancel_run
        self.token: str | None = None  # the progress shown now
        self._runs = 0  # runs started
        self._ended: tuple[int, str] | None = None  # the last run that ended, and its status
        self._beginning: asyncio.Task[None] | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._runs += 1
            if self._supported():
                self._beginning = asyncio.ensure_future(self._begin(self._runs))
        elif isinstance(event, PlanChanged):
            self._report(event.state)
        elif isinstance(event, RunFinished):
            self._ended = (self._runs, event.result.status)
            self._end(event.result.status)

    def cancel(self, token: int | str) -> bool:
        """The progress's cancel button: cancel the run it shows."""
        if self.token is None or token != self.token:
            return False
        self.cancel_run()
        return True

    def _supported(self) -> bool:
        caps = self.server.client_capabilities
        window = caps.window if caps is not None else None
        return bool(window and window.work_done_progress)

    async def _begin(self, run: int) -> None:
        token = f"plansight-run-{uuid.uuid4().hex[:8]}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as err:  # the client may refuse; the run goes on without progress
            log.warning("client refused work-done progress: %s", err)
            return
        self._end("")  # a progress of an earlier run that never ended
        self.token = token
        state = self.plan_state()
        self.server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="Plansight",
                message=progress_message(state),
                percentage=progress_percentage(state),
                cancellable=True,
            ),
        )
        if self._ended is not None and self._ended[0] == run:
            self._end(self._ended[1])  # the run ended while the client created the progress

    def _report(self, state: TodoState) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.report(
            self.token,
            types.WorkDoneProgressReport(
                message=progress_message(state), percentage=progress_percentage(state)
            ),
        )

    def _end(self, message: str) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.token = None
