"""Files read and written through the editor (ACP's `fs/read_text_file` / `fs/write_text_file`),
for a client that offers them: reads see its unsaved buffers, and the agent's accepted edits are
written by the editor, so that its undo knows them. `workspace.access.EditorFiles` is the seam;
a client that offers neither gets no document source at all (the workspace reads the disk).

The text last read of each file is kept for the synchronous check a restore makes (`open_text`),
which cannot ask the editor: a buffer the user changed since is then seen at the next read.
"""

from __future__ import annotations

import logging
from pathlib import Path

from acp import Client, RequestError

log = logging.getLogger(__name__)


class ClientFiles:
    """`EditorFiles` over one ACP session's connection."""

    def __init__(self, conn: Client, session_id: str, *, read: bool, write: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        self.can_read = read
        self.can_write = write
        self._last_read: dict[Path, str] = {}

    def open_text(self, path: Path) -> str | None:
        return self._last_read.get(path)

    async def read_text(self, path: Path) -> str | None:
        if not self.can_read:
            return None
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as err:
            # The editor could not say (a file it cannot open): the disk's text is what there is.
            log.info("fs/read_text_file of %s answered an error: %s", path, err)
            self._last_read.pop(path, None)
            return None
        self._last_read[path] = response.content
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self.conn.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except RequestError as err:
            raise OSError(f"the editor refused to write the file: {err}") from err
        self._last_read[path] = text
