"""The shared HTTP/1.1 transport (`plansight.httpserve`), through real sockets on 127.0.0.1:
request lines and bodies as clients send them, keep-alive, what closes a connection, a client
that goes away mid-stream, stopping with connections open, the loop in a thread."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from plansight.httpserve import (
    CloseConnection,
    HttpServer,
    LoopThread,
    Request,
    Responder,
    reason_phrase,
)

from conftest import PATIENCE, wait_until


@dataclass
class Echo:
    """A handler that answers each request with its method, target and body, and keeps them."""

    seen: list[Request] = field(default_factory=list)

    async def __call__(self, request: Request, out: Responder) -> bool:
        self.seen.append(request)
        body = f"{request.method} {request.target} ".encode() + request.body
        await out.send(200, [("content-type", "text/plain")], body)
        return True


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes


async def read_response(reader: asyncio.StreamReader) -> Response:
    """One HTTP/1.1 response (Content-Length or chunked), read as a client would."""
    line = await reader.readline()
    assert line, "the connection closed before a response"
    _, status, reason = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: dict[str, str] = {}
    while (raw := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while size := int((await reader.readline()).strip(), 16):
            body += await reader.readexactly(size)
            assert await reader.readexactly(2) == b"\r\n"
        assert await reader.readline() == b"\r\n"
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Response(int(status), reason, headers, body)


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """The server closed the connection (the next read is the end of the stream)."""
    return await asyncio.wait_for(reader.read(1), PATIENCE) == b""


Serve = Callable[..., Awaitable[HttpServer]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    started: list[HttpServer] = []

    async def start(
        handler: Callable[[Request, Responder], Awaitable[bool]], **kw: int
    ) -> HttpServer:
        server = HttpServer(handler, **kw)
        await server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        await server.stop()


async def connect(server: HttpServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", server.port)


async def test_a_malformed_request_line_is_a_400_and_closes_the_connection(serve: Serve) -> None:
    echo = Echo()
    server = await serve(echo)
    for line in (b"GET /only-two-parts\r\n", b"GET / SPDY/3\r\n", b"G E T / HTTP/1.1\r\n"):
        reader, writer = await connect(server)
        writer.write(line + b"\r\n")
        response = await read_response(reader)
        assert response.status == 400 and response.body == b"bad request line"
        assert response.headers["connection"] == "close"
        assert await closed_by_server(reader)
        writer.close()
    assert echo.seen == []


async def test_bodies_by_content_length_and_chunked_with_extensions_and_trailers(
    serve: Serve,
) -> None:
    echo = Echo()
    server = await serve(echo)
    reader, writer = await connect(server)
    writer.write(b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
    first = await read_response(reader)
    writer.write(
        b"POST /b?q=1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4;ext=1\r\nwiki\r\n6\r\npedia \r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    second = await read_response(reader)
    writer.close()
    assert (first.status, first.body) == (200, b"POST /a hello")
    assert first.headers["content-length"] == str(len(first.body))
    assert second.body == b"POST /b?q=1 wikipedia "
    assert echo.seen[1].path == "/b" and echo.seen[1].target == "/b?q=1"
    assert echo.seen[0].arrived_at <= echo.seen[0].received_at


async def test_keep_alive_serves_requests_in_order_on_one_connection(serve: Serve) -> None:
    echo = Echo()
    server = await serve(echo)
    reader, writer = await connect(server)
    writer.write(b"GET /1 HTTP/1.1\r\n\r\n")
    one = await read_response(reader)
    # two more in one write (pipelined): answered in order
    writer.write(b"GET /2 HTTP/1.1\r\n\r\nPOST /3 HTTP/1.1\r\nContent-Length: 1\r\n\r\nz")
    two, three = await read_response(reader), await read_response(reader)
    other_reader, other_writer = await connect(server)
    other_writer.write(b"GET /4 HTTP/1.1\r\n\r\n")
    four = await read_response(other_reader)
    writer.close()
    other_writer.close()
    assert [r.body for r in (one, two, three, four)] == [
        b"GET /1 ",
        b"GET /2 ",
        b"POST /3 z",
        b"GET /4 ",
    ]
    assert all(r.headers["connection"] == "keep-alive" for r in (one, two, three, four))
    assert [r.connection for r in echo.seen] == [1, 1, 1, 2]
    assert server.connections == 2
    server.restart_connection_count()
    third_reader, third_writer = await connect(server)
    third_writer.write(b"GET /5 HTTP/1.1\r\n\r\n")
    await read_response(third_reader)
    third_writer.close()
    assert echo.seen[-1].connection == 1


async def test_connection_close_and_http_1_0_end_the_connection_after_the_answer(
    serve: Serve,
) -> None:
    echo = Echo()
    server = await serve(echo)
    for head in (
        b"GET /x HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /x HTTP/1.0\r\n\r\n",
    ):
        reader, writer = await connect(server)
        writer.write(head)
        response = await read_response(reader)
        assert response.status == 200 and response.headers["connection"] == "close"
        assert await closed_by_server(reader)
        writer.close()
    reader, writer = await connect(server)
    writer.write(b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /y HTTP/1.0\r\n\r\n")
    kept, last = await read_response(reader), await read_response(reader)
    assert kept.headers["connection"] == "keep-alive" and last.body == b"GET /y "
    assert await closed_by_server(reader)
    writer.close()


async def test_headers_keep_their_spelling_and_repeats_are_joined(serve: Serve) -> None:
    echo = Echo()
    server = await serve(echo)
    reader, writer = await connect(server)
    writer.write(b"GET / HTTP/1.1\r\nX-Api-Key: k\r\nAccept: a\r\naccept: b\r\n\r\n")
    await read_response(reader)
    writer.close()
    request = echo.seen[0]
    assert request.raw_headers == (("X-Api-Key", "k"), ("Accept", "a"), ("accept", "b"))
    assert request.headers == {"x-api-key": "k", "accept": "a, b"}


async def test_expect_100_continue_gets_the_interim_answer_before_the_body(
    serve: Serve,
) -> None:
    echo = Echo()
    server = await serve(echo)
    reader, writer = await connect(server)
    writer.write(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PATIENCE)
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    writer.write(b"ok")
    response = await read_response(reader)
    writer.close()
    assert response.body == b"POST / ok"


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"POST / HTTP/1.1\r\nContent-Length: five\r\n\r\n", b"bad content-length"),
        (b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", b"bad content-length"),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", b"bad chunk size"),
    ],
)
async def test_a_body_that_is_not_http_is_a_400_and_closes(
    serve: Serve, head: bytes, why: bytes
) -> None:
    echo = Echo()
    server = await serve(echo)
    reader, writer = await connect(server)
    writer.write(head)
    response = await read_response(reader)
    assert response.status == 400 and response.body == why
    assert await closed_by_server(reader)
    writer.close()
    assert echo.seen == []


async def test_a_body_over_the_limit_closes_the_connection_unanswered(serve: Serve) -> None:
    echo = Echo()
    server = await serve(echo, max_body=10)
    for head in (
        b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n",
    ):
        reader, writer = await connect(server)
        writer.write(head)
        assert await closed_by_server(reader)
        writer.close()
    assert echo.seen == []


async def test_a_handler_closes_with_close_connection_or_by_failing(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(request: Request, out: Responder) -> bool:
        if request.path == "/close":
            raise CloseConnection
        if request.path == "/fail":
            raise RuntimeError("the handler broke")
        await out.send(204)
        return request.path != "/last"

    server = await serve(handler)
    with caplog.at_level(logging.WARNING, logger="plansight.httpserve"):
        for path, logged in (("/close", False), ("/fail", True), ("/last", False)):
            reader, writer = await connect(server)
            writer.write(f"GET {path} HTTP/1.1\r\n\r\n".encode())
            if path == "/last":
                assert (await read_response(reader)).status == 204
            assert await closed_by_server(reader)
            writer.close()
            errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
            assert bool(errors) == logged, path
            if logged:
                assert "the handler broke" in caplog.text
            caplog.clear()


async def test_a_stream_goes_out_chunk_by_chunk_with_its_status_and_reason(serve: Serve) -> None:
    async def handler(request: Request, out: Responder) -> bool:
        await out.start_stream(529, [("content-type", "text/event-stream")])
        await out.send_chunk(b"one ")
        await out.send_chunk(b"")  # nothing: not the end of the body
        await out.send_chunk(b"two", last=True)
        return True

    server = await serve(handler)
    reader, writer = await connect(server)
    writer.write(b"GET / HTTP/1.1\r\n\r\n")
    response = await read_response(reader)
    writer.close()
    assert (response.status, response.reason) == (529, "Overloaded")
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.body == b"one two"
    assert reason_phrase(404) == "Not Found" and reason_phrase(599) == "Error"


async def test_a_client_that_leaves_mid_stream_ends_its_connection_quietly(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    broke: list[BaseException] = []

    async def handler(request: Request, out: Responder) -> bool:
        if request.path == "/plain":
            await out.send(200, body=b"still serving")
            return True
        await out.start_stream(200)
        try:
            while True:  # until the client is gone
                await out.send_chunk(b"x" * 4096)
                await asyncio.sleep(0.001)
        except ConnectionError as exc:
            broke.append(exc)
            raise

    server = await serve(handler)
    with caplog.at_level(logging.WARNING, logger="plansight.httpserve"):
        reader, writer = await connect(server)
        writer.write(b"GET /stream HTTP/1.1\r\n\r\n")
        await read_head_and_some(reader)
        sock = writer.get_extra_info("socket")
        # An abortive close (RST): the server's next writes fail at once.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        await wait_until(lambda: bool(broke), "the handler saw the client leave")
        reader, writer = await connect(server)
        writer.write(b"GET /plain HTTP/1.1\r\n\r\n")
        assert (await read_response(reader)).body == b"still serving"
        writer.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def read_head_and_some(reader: asyncio.StreamReader) -> None:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PATIENCE)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert await asyncio.wait_for(reader.readexactly(100), PATIENCE)


async def test_stop_closes_idle_and_busy_connections(serve: Serve) -> None:
    entered = asyncio.Event()

    async def handler(request: Request, out: Responder) -> bool:
        if request.path == "/wait":
            entered.set()
            await asyncio.Event().wait()  # only stop() ends this
        await out.send(200)
        return True

    server = await serve(handler)
    idle_reader, idle_writer = await connect(server)
    idle_writer.write(b"GET / HTTP/1.1\r\n\r\n")
    await read_response(idle_reader)
    busy_reader, busy_writer = await connect(server)
    busy_writer.write(b"GET /wait HTTP/1.1\r\n\r\n")
    await asyncio.wait_for(entered.wait(), PATIENCE)
    await asyncio.wait_for(server.stop(), PATIENCE)
    assert not server.running
    assert await closed_by_server(idle_reader) and await closed_by_server(busy_reader)
    idle_writer.close()
    busy_writer.close()
    with pytest.raises(OSError):
        await connect(server)


def test_a_loop_thread_serves_until_stopped_and_raises_a_failed_start() -> None:
    server = HttpServer(Echo())
    thread = LoopThread(server.start, server.stop, name="test-http")
    thread.start()
    try:
        assert thread.alive and server.running
        with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
            sock.sendall(b"GET /t HTTP/1.1\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and data.endswith(b"GET /t ")
    finally:
        thread.stop()
    assert not thread.alive and not server.running

    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    taken = HttpServer(Echo(), port=blocker.getsockname()[1])
    failing = LoopThread(taken.start, taken.stop, name="test-http-taken")
    try:
        with pytest.raises(OSError):
            failing.start()
        assert not failing.alive
    finally:
        blocker.close()
