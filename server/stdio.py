"""stdin and stdout read and written on the event loop, for the SDK's stdio transport.

The SDK reads each request line and writes and flushes each answer through
``anyio.wrap_file``: three hand-offs to a worker thread per call, a good part
of a cached answer's time. When both standard streams are pipes or sockets
(how MCP clients start a server), :func:`event_loop_stdio` gives the SDK
streams backed by the loop's own pipe transports instead: no threads, and
answers larger than the pipe's buffer are written as the client reads them.
Speed layer ``stdio`` (``KB_PLAIN_PATHS``): the cached floor went from 2.02 to
1.43 ms (interleaved A/B, 400 cached calls each); the plain path is the SDK's
own stdio transport (``VendorKnowledgeServer.run_stdio_async``).

As the SDK does with its own streams, descriptors 0 and 1 are pointed away
from the wire while it serves (0 at the null device, 1 at stderr), so that a
library printing to stdout cannot corrupt a message; they are restored after.
Anything else (a terminal, a regular file, another event loop than asyncio)
gets ``(None, None)``: the SDK's thread-based streams.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

# A request is one JSON line; anything longer is refused, not buffered without end.
MAX_LINE_BYTES = 64 * 1024 * 1024


class PipeLines:
    """The lines of a pipe, as ``async for line in stdin`` reads an AsyncFile."""

    def __init__(self, reader: asyncio.StreamReader, max_line_bytes: int) -> None:
        self._reader = reader
        self._max = max_line_bytes

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            line = exc.partial  # the end: a last line without a newline, or nothing
        except asyncio.LimitOverrunError as exc:
            await self._skip_line(exc.consumed)
            # not JSON: the SDK answers it with a parse error and reads on
            return f"<a line of over {self._max} bytes was discarded>\n"
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def _skip_line(self, buffered: int) -> None:
        """Drop an overlong line, through its newline, ``buffered`` bytes at a time."""
        while True:
            await self._reader.readexactly(buffered)
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                buffered = exc.consumed
            except asyncio.IncompleteReadError:
                return


class PipeWriter:
    """``write`` and ``flush`` of an AsyncFile, over a pipe transport."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()  # waits only while the client is behind


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def event_loop_stdio(
    max_line_bytes: int = MAX_LINE_BYTES,
) -> AsyncIterator[tuple[PipeLines | None, PipeWriter | None]]:
    """Streams for ``mcp.server.stdio.stdio_server(stdin, stdout)``, or (None, None)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another event loop (anyio on trio)
        loop = None
    if loop is None or not _is_pipe_or_socket(0) or not _is_pipe_or_socket(1):
        yield None, None
        return
    sys.stdout.flush()
    # the wire moves to private descriptors (saved: to restore it after)
    saved = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=max_line_bytes, loop=loop)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(wire_in, "rb", 0)
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), os.fdopen(wire_out, "wb", 0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    try:
        yield PipeLines(reader, max_line_bytes), PipeWriter(writer)
    finally:
        with suppress(Exception):
            await writer.drain()
        read_transport.close()
        write_transport.close()
        for fd, wire in zip((0, 1), saved, strict=True):
            with suppress(OSError):
                os.dup2(wire, fd)
                os.set_blocking(fd, True)  # the transports made the pipes non-blocking
            os.close(wire)
