"""Logs go to stderr, and warnings and errors also to the editor's output (window/logMessage)."""

from __future__ import annotations

import logging
import threading

from lsprotocol import types
from pygls.lsp.server import LanguageServer

LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class LogMessageHandler(logging.Handler):
    def __init__(self, server: LanguageServer, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self.server = server
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        # Sending can itself log (pygls logs write errors): never recurse.
        if getattr(self._local, "busy", False) or not record.name.startswith("plansight"):
            return
        self._local.busy = True
        try:
            kind = LEVELS.get(record.levelno, types.MessageType.Log)
            self.server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:
            pass  # the stderr handler still has the record
        finally:
            self._local.busy = False
