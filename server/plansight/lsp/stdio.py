"""How the server meets its client on stdio, and how it leaves.

- Reading: `framing.read_messages`, in a thread of the server's pool.
- Writing: `ClientOutput`, which goes quiet once the client is gone (after `exit`, or when the
  pipe is closed): what is sent then is dropped, instead of an error being logged and reported
  to a client that cannot hear it (which fails again, and again).
- Leaving, on `exit`, at the end of input, or on SIGINT / SIGTERM (Ctrl-C in a terminal): the
  run in progress is cancelled (its commands' process groups killed, the conversation kept
  valid and saved), the model's connections closed, and the exit code returned at once; the
  caller then ends the process without waiting for the thread still blocked reading stdin.
  A second signal ends the process at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any, BinaryIO

from plansight.lsp.framing import read_messages

if TYPE_CHECKING:
    from plansight.lsp.server import PlansightServer

log = logging.getLogger(__name__)

# The most a cancelled run gets to wind down before the server leaves anyway (a command whose
# process group ignores SIGTERM is killed within the tool's own grace, well inside this).
EXIT_GRACE = 10.0
SIGNAL_EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


class ClientOutput:
    """pygls's writer for stdout: every message flushed whole; silent once the client is gone."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.closed = False
        self.lost = asyncio.Event()  # set when a write finds the client gone

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError) as err:  # a closed pipe, a closed file
            self.closed = True
            log.info("the client is gone (%s); nothing more is sent", err)
            self.lost.set()

    def close(self) -> None:
        self.closed = True


def serve_stdio(server: PlansightServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve the client until it leaves or a signal comes; the process's exit code."""
    return asyncio.run(_serve(server, stdin, ClientOutput(stdout)))


async def _serve(server: PlansightServer, stdin: BinaryIO, output: ClientOutput) -> int:
    loop = asyncio.get_running_loop()
    leaving: asyncio.Future[int] = loop.create_future()

    def leave(code: int, *, client_gone: bool = False) -> None:
        if client_gone:
            output.close()
        if not leaving.done():
            leaving.set_result(code)

    def on_signal(signum: signal.Signals) -> None:
        code = SIGNAL_EXIT_CODES[signum]
        if leaving.done():  # the second one: no more waiting
            with suppress(OSError, ValueError):
                sys.stderr.flush()
            os._exit(code)
        log.info("%s: stopping", signum.name)
        leave(code)

    server.exit_requested = leave
    server.protocol.set_writer(output)
    for signum in SIGNAL_EXIT_CODES:
        loop.add_signal_handler(signum, on_signal, signum)
    stop_reading = threading.Event()
    reading = asyncio.create_task(
        read_messages(stdin, server.protocol, stop_reading, server.thread_pool)
    )
    lost = asyncio.create_task(output.lost.wait())
    waits: set[asyncio.Future[Any]] = {reading, leaving, lost}
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if leaving.done():
        code = leaving.result()
    elif reading.done() and not reading.cancelled() and reading.exception() is not None:
        log.error("reading from the client failed", exc_info=reading.exception())
        code = 1
    else:
        code = 0  # the end of input, or the client closed its end of stdout
    stop_reading.set()
    for task in (reading, lost):
        task.cancel()
    try:
        await asyncio.wait_for(server.stop(), EXIT_GRACE)
    except TimeoutError:
        log.warning("the run did not stop within %g s; leaving anyway", EXIT_GRACE)
    except Exception:
        log.exception("stopping the server failed")
    output.close()
    return code
