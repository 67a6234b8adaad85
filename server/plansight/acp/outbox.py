"""The updates of one ACP session on their way out: `Outbox` sends them in the order the engine
made them (a tool call's whole output comes with its `ToolResult` event, `output`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from acp import Client
from acp.meta import CLIENT_METHODS
from acp.schema import SessionNotification
from acp.utils import serialize_params

from plansight.acp.updates import Update

log = logging.getLogger(__name__)

SESSION_UPDATE = CLIENT_METHODS["session_update"]


class Outbox:
    """The session's updates, sent in the order they were made.

    With a transport that writes at once (`write`: stdio.py), an update is written while the
    event that made it is handled, as the language server notifies: the plan reaches the editor
    before the engine goes on (saving it, the next request). Otherwise (another transport) the
    updates queue and one task sends them in order.
    """

    def __init__(
        self, conn: Client, session_id: str, write: Callable[[dict[str, Any]], None] | None
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self._write = write
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    def put(self, update: Update) -> None:
        if self._write is not None:
            params = serialize_params(
                SessionNotification(session_id=self.session_id, update=update)
            )
            try:
                self._write({"jsonrpc": "2.0", "method": SESSION_UPDATE, "params": params})
            except Exception:
                log.exception("could not send a session update")
            return
        self._queue.put_nowait(update)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.get_running_loop().create_task(self._send_all())

    async def send(self, update: Update) -> None:
        """`update`, and everything before it, sent."""
        self.put(update)
        await self.flush()

    async def flush(self) -> None:
        await self._queue.join()

    async def _send_all(self) -> None:
        while not self._queue.empty():
            update = self._queue.get_nowait()
            try:
                await self.conn.session_update(session_id=self.session_id, update=update)
            except Exception:
                log.exception("could not send a session update")
            finally:
                self._queue.task_done()
