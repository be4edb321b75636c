"""A lean Redis connection for hot paths: one connection, commands pipelined (the replies come
back in order and settle a queue of futures, parsed by hiredis in bulk), writes coalesced once per
event-loop turn. Each process has one, behind its RedisLayer (kit/redis/layer.py), which runs
every script and hot command on it; blocking reads, scans and the like use redis-py. A broken
connection fails what is in flight with redis.exceptions.ConnectionError (callers answer
UNAVAILABLE) and the next call reconnects.

Also the RESP reading and writing the gateway's pub/sub connection shares.

Why not redis-py's asyncio client here: it gives each concurrent call a pooled connection of its
own (a write and a read each), where this sends a turn's calls in one write and parses the replies
in bulk. 200 tasks each making one EVALSHA at a time (the move path's commits): 3.2 µs of CPU a
call against redis-py's 65 µs, 12x the calls a second (`python -m tools.bench_redis_client`, load
~4 on 2 shared cores; medians of 3 alternated rounds).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any, cast
from urllib.parse import parse_qs, quote, unquote, urlparse

import hiredis
from hiredis import pack_command
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from kit.tasks import spawn


class RespError(Exception):
    pass


async def read_reply(reader: asyncio.StreamReader) -> Any:
    line = await reader.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("redis closed the connection")
    kind, body = line[:1], line[1:-2]
    if kind == b"*":
        count = int(body)
        if count < 0:
            return None
        return [await read_reply(reader) for _ in range(count)]
    if kind == b"$":
        size = int(body)
        if size < 0:
            return None
        data = await reader.readexactly(size + 2)
        return data[:-2]
    if kind == b":":
        return int(body)
    if kind == b"+":
        return body
    if kind == b"-":
        return RespError(body.decode(errors="replace"))
    raise ConnectionError(f"unexpected reply from redis: {line[:20]!r}")


def reply_parser() -> hiredis.Reader:
    """hiredis's C parser, replies as read_reply gives them (bytes, int, None, lists; an error
    reply is a RespError value). `gets()` returns False until a whole reply is buffered."""
    return hiredis.Reader(replyError=RespError)


PARSE_ERRORS = (hiredis.ProtocolError,)
READ_SIZE = 1 << 16


def command(*parts: str | bytes | int | float) -> bytes:
    """One command in RESP. hiredis's C packer (~2.3 us for a commit's 25 arguments against ~6 us
    in Python, and the gateway packs ~20 calls a move) makes the same bytes for str, bytes, int
    and float; what it refuses (bool, int subclasses such as IntEnum, bytearray) takes the Python
    path, so every argument keeps the bytes it always had."""
    try:
        packed: bytes = pack_command(cast(Any, parts))  # its stub types a 1-tuple
        return packed
    except TypeError:
        return _command(parts)


def _command(parts: tuple[Any, ...]) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        if isinstance(part, bytes):
            data = part
        elif isinstance(part, str):
            data = part.encode()
        else:
            data = repr(part).encode() if isinstance(part, float) else str(part).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


async def open_redis(url: str, *, select_db: bool) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect, authenticate and (for data connections) select the URL's database."""
    parsed = urlparse(url)
    if parsed.scheme == "unix":
        reader, writer = await asyncio.open_unix_connection(parsed.path)
    else:
        context = ssl.create_default_context() if parsed.scheme == "rediss" else None
        reader, writer = await asyncio.open_connection(parsed.hostname or "127.0.0.1", parsed.port or 6379, ssl=context)
    try:
        if parsed.password:
            password = unquote(parsed.password)
            args = ["AUTH", unquote(parsed.username), password] if parsed.username else ["AUTH", password]
            writer.write(command(*args))
            reply = await read_reply(reader)
            if isinstance(reply, RespError):
                raise ConnectionError(f"redis refused AUTH: {reply}")
        if parsed.scheme == "unix":
            db = parse_qs(parsed.query).get("db", ["0"])[0]
        else:
            db = (parsed.path or "/").strip("/") or "0"
        if select_db and db != "0":
            writer.write(command("SELECT", db))
            reply = await read_reply(reader)
            if isinstance(reply, RespError):
                raise ConnectionError(f"redis refused SELECT {db}: {reply}")
    except BaseException:
        writer.close()
        raise
    return reader, writer


def url_of(redis: Any) -> str:
    """The URL of a redis-py client's connections (host, port, database, credentials, or a unix
    socket), so a RedisPipe reaches the same server."""
    kwargs = redis.connection_pool.connection_kwargs
    db = kwargs.get("db", 0) or 0
    user = kwargs.get("username") or ""
    password = kwargs.get("password") or ""
    auth = f"{quote(user)}:{quote(password)}@" if password else ""
    if kwargs.get("path"):
        return f"unix://{auth}{kwargs['path']}?db={db}"
    scheme = "rediss" if kwargs.get("ssl") or "ssl_keyfile" in kwargs else "redis"
    return f"{scheme}://{auth}{kwargs.get('host', '127.0.0.1')}:{kwargs.get('port', 6379)}/{db}"


class RedisPipe:
    def __init__(self, url: str, *, timeout_s: float = 5.0) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._writer: asyncio.StreamWriter | None = None
        # The connection's loop, kept while it is open: asyncio.get_running_loop() costs a getpid
        # syscall on each call, and send() runs several times a move in every process.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reader_task: asyncio.Task[None] | None = None
        # In flight, oldest first (replies come in order): each call's future and its deadline.
        self._pending: deque[tuple[asyncio.Future[Any], float]] = deque()
        # One timer per connection watches the oldest call's deadline (replies come in order, so
        # when it is answered in time the next one is the one to watch), instead of a timer per
        # call: a call then costs no timer to arm and cancel.
        self._watchdog: asyncio.TimerHandle | None = None
        self._buffer: list[bytes] = []
        self._flush_scheduled = False
        self._connecting = asyncio.Lock()
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        self._drop(RedisConnectionError("closed"))

    async def _connect(self) -> asyncio.StreamWriter:
        async with self._connecting:
            if self._writer is not None:
                return self._writer
            if self._closed:
                raise RedisConnectionError("closed")
            try:
                reader, writer = await asyncio.wait_for(open_redis(self.url, select_db=True), self.timeout_s)
            except (OSError, ConnectionError, TimeoutError) as error:
                raise RedisConnectionError(f"cannot reach redis: {type(error).__name__}") from None
            self._writer = writer
            self._loop = asyncio.get_running_loop()
            # A reader that fails for a bug fails the commands waiting on it, as a lost connection
            # would, instead of leaving them unanswered; its supervisor logs it.
            self._reader_task = spawn(
                self._read(reader, writer), "redis reader", on_failure=lambda _: self._lost(writer)
            )
            return writer

    def _lost(self, writer: asyncio.StreamWriter) -> None:
        if self._writer is writer:
            self._drop(RedisConnectionError("redis connection lost"))

    def _drop(self, error: Exception) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        if self._reader_task is not None and self._reader_task is not asyncio.current_task():
            self._reader_task.cancel()
        self._reader_task = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._buffer.clear()
        pending, self._pending = self._pending, deque()
        for future, _ in pending:
            if not future.done():
                future.set_exception(error)

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        parser = reply_parser()
        pending = self._pending
        try:
            while True:
                data = await reader.read(READ_SIZE)
                if not data:
                    raise ConnectionError("redis closed the connection")
                parser.feed(data)
                # Every reply already here settles its future without another await.
                while (reply := parser.gets()) is not False:
                    future = pending.popleft()[0]
                    if not future.done():
                        future.set_result(reply)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError, *PARSE_ERRORS):
            if self._writer is writer:
                self._drop(RedisConnectionError("redis connection lost"))

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._writer is not None and self._buffer:
            self._writer.write(b"".join(self._buffer))
            self._buffer.clear()

    async def call(self, *parts: str | bytes | int | float) -> Any:
        future = self.send(*parts)
        if future is None:
            await self._connect()
            future = self.send(*parts)
            assert future is not None
        reply = await future
        if isinstance(reply, RespError):
            raise ResponseError(str(reply))
        return reply

    def send(self, *parts: str | bytes | int | float) -> asyncio.Future[Any] | None:
        """call() without waiting, for a caller with several commands in flight in one task: the
        future of the raw reply (a RespError value for an error reply), or None while there is no
        connection (call() makes one)."""
        writer = self._writer
        if writer is None:
            return None
        loop = self._loop
        assert loop is not None  # set with the writer
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((future, loop.time() + self.timeout_s))
        self._buffer.append(command(*parts))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        if self._watchdog is None:
            self._watchdog = loop.call_later(self.timeout_s, self._watch, writer)
        return future

    async def many(self, commands: list[tuple[str | bytes | int | float, ...]]) -> list[Any]:
        """Several commands in one write; their replies in order (ResponseError for the first
        error reply). The futures are awaited in order in this task, not a task per command
        through gather: one connection answers in order, and the gateway sends ~20 commands a
        game this way."""
        futures = self._send_all(commands)
        if futures is None:
            await self._connect()
            futures = self._send_all(commands)
            assert futures is not None
        try:
            replies = [await future for future in futures]
        except BaseException:
            # A lost connection fails them all with one error, raised here once; cancelled, the
            # replies still to come are dropped (the reader skips a future already done).
            for future in futures:
                if not future.done():
                    future.cancel()
                elif not future.cancelled():
                    future.exception()
            raise
        for reply in replies:
            if isinstance(reply, RespError):
                raise ResponseError(str(reply))
        return replies

    def _send_all(self, commands: list[tuple[str | bytes | int | float, ...]]) -> list[asyncio.Future[Any]] | None:
        """send() for each command, or None while there is no connection (nothing sent: no await
        in between, so the connection cannot go away after the first)."""
        futures = []
        for parts in commands:
            future = self.send(*parts)
            if future is None:
                return None
            futures.append(future)
        return futures

    def _watch(self, writer: asyncio.StreamWriter) -> None:
        """The oldest call in flight past its deadline: the pipeline is out of step (a reply that
        never came), so every call in flight fails and the next call opens a fresh connection."""
        self._watchdog = None
        loop = self._loop
        if self._writer is not writer or not self._pending or loop is None:
            return
        deadline = self._pending[0][1]
        if deadline > loop.time():
            self._watchdog = loop.call_at(deadline, self._watch, writer)
            return
        self._drop(RedisTimeoutError("redis did not answer in time"))


Command = tuple[str | bytes | int | float, ...]
