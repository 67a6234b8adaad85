"""How the server meets its client on stdio, and how it leaves.

- Reading: `framing.read_messages`, in a thread of the server's pool.
- Writing: `ClientOutput`, which writes each message whole and alone, and goes quiet once the
  client is gone (after `exit`, or when the pipe is closed): what is sent then is dropped,
  instead of an error being logged and reported to a client that cannot hear it (which fails
  again, and again).
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
import selectors
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any, BinaryIO, Protocol

from pygls.protocol import JsonRPCProtocol

from plansight.lsp.framing import read_messages

log = logging.getLogger(__name__)

# The most a cancelled run gets to wind down before the server leaves anyway (a command whose
# process group ignores SIGTERM is killed within the tool's own grace, well inside this).
EXIT_GRACE = 10.0
SIGNAL_EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Leave(Protocol):
    """Called to end serving, with the exit code (`client_gone`: nothing more can be sent)."""

    def __call__(self, code: int, *, client_gone: bool = False) -> None: ...


class Served(Protocol):
    """What serving needs of the server: its protocol and thread pool, where to hear that it
    should leave (`exit_requested`, set while it is served), and how it stops."""

    exit_requested: Leave

    @property
    def protocol(self) -> JsonRPCProtocol: ...

    @property
    def thread_pool(self) -> ThreadPoolExecutor: ...

    async def stop(self) -> None: ...


class ClientOutput:
    """pygls's writer for stdout: every message written whole and alone, then flushed; silent
    once the client is gone.

    Messages go to the unbuffered file (stdout already is one with `PYTHONUNBUFFERED=1`, which
    the VS Code client sets), whose `write` is a single write(2): on a pipe, that may take only
    part of a large message and say how much, or take nothing and return None (a full
    non-blocking pipe). The rest is written here: dropped, it would leave the client waiting
    forever for the bytes its Content-Length promised. Messages are also sent from other
    threads (log records): a lock keeps one message's bytes from landing inside another's.
    """

    def __init__(self, stream: BinaryIO) -> None:
        # Past the buffer, if any: a BufferedWriter on a non-blocking pipe raises once its
        # buffer fills, after taking an unknown part of the message. Nothing else writes here.
        raw = getattr(stream, "raw", None)
        if raw is not None:
            stream.flush()
        self.stream: BinaryIO = raw if raw is not None else stream
        self.closed = False
        self.lost = asyncio.Event()  # set when a write finds the client gone
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop that waits on `lost` (a write from another thread sets it through it)."""
        self._loop = loop

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            try:
                write_all(self.stream, data)
                self.stream.flush()
                return
            except (OSError, ValueError) as err:  # a closed pipe, a closed file
                self.closed = True
                error = err
        # Outside the lock: the log record may itself be sent to the client (and dropped).
        log.info("the client is gone (%s); nothing more is sent", error)
        self._set_lost()

    def close(self) -> None:
        self.closed = True

    def _set_lost(self) -> None:
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or loop is running:
            self.lost.set()
        else:
            with suppress(RuntimeError):  # the loop has closed: nobody waits any more
                loop.call_soon_threadsafe(self.lost.set)


def write_all(stream: BinaryIO, data: bytes) -> None:
    """Write all of `data`, however many calls that takes (see `ClientOutput`)."""
    view = memoryview(data)
    while view:
        written: int | None = stream.write(view)  # FileIO: None when nothing fits
        if written is None:  # a full non-blocking pipe: wait until the client reads
            with selectors.DefaultSelector() as selector:
                selector.register(stream, selectors.EVENT_WRITE)
                selector.select()
            continue
        view = view[written:]


def serve_stdio(server: Served, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve the client until it leaves or a signal comes; the process's exit code."""
    return asyncio.run(_serve(server, stdin, ClientOutput(stdout)))


async def _serve(server: Served, stdin: BinaryIO, output: ClientOutput) -> int:
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
    output.attach(loop)
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
