"""server.stdio: stdin and stdout on the event loop, in a real child process
with real pipes (the server's own stdio sessions are in test_server_transports)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fixtures import REPO

# "big"; prints stray output while serving and a last line after.
CHILD = """
import asyncio, os, sys
from server.stdio import event_loop_stdio

async def main():
    async with event_loop_stdio(max_line_bytes=int(sys.argv[1])) as (stdin, stdout):
        if stdin is None:
            sys.stderr.write("threads\\n")
        else:
            print("stray print", flush=True)
            os.write(1, b"stray fd write\\n")
            async for line in stdin:
                answer = "x" * 1_000_000 + "\\n" if line == "big\\n" else line.upper()
                await stdout.write(answer)
                await stdout.flush()
    os.write(1, b"after\\n")

asyncio.run(main())
"""


@contextmanager
def _child(limit: int = 1024, stdin: int = subprocess.PIPE) -> Iterator[subprocess.Popen[bytes]]:
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(limit)],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    ) as proc:
        try:
            yield proc
        finally:
            proc.kill()  # a failed test leaves no child behind


def _talk(data: bytes, limit: int = 1024) -> tuple[str, str]:
    with _child(limit) as proc:
        out, err = proc.communicate(data, timeout=60)
        assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


def test_lines_in_and_out_and_stray_output_kept_off_the_wire() -> None:
    out, err = _talk(b"abc\n\xc3\xa9t\xc3\xa9\nlast without newline")
    # the wire holds the answers only; fd 1 is the wire again after serving
    assert out == "ABC\nÉTÉ\nLAST WITHOUT NEWLINEafter\n"
    assert "stray print" in err and "stray fd write" in err


@pytest.mark.parametrize("length", [100, 5_000, 300_000])
def test_an_overlong_line_is_refused_and_reading_goes_on(length: int) -> None:
    out, _ = _talk(b"a" * length + b"\nnext\n", limit=64)
    assert out.splitlines() == [
        "<A LINE OF OVER 64 BYTES WAS DISCARDED>",
        "NEXT",
        "after",
    ]


def test_an_answer_larger_than_the_pipe_reaches_a_slow_reader_whole() -> None:
    with _child() as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b"big\nsmall\n")
        proc.stdin.flush()
        time.sleep(0.5)  # the child's writes wait for the reader: the pipe holds 64 KiB
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        proc.stdin.close()
        rest, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err.decode()
    assert first == b"x" * 1_000_000 + b"\n"
    assert second == b"SMALL\n"
    assert rest == b"after\n"


def test_stdin_that_is_no_pipe_keeps_the_sdk_streams(tmp_path: Path) -> None:
    requests = tmp_path / "in.txt"
    requests.write_text("abc\n")
    with requests.open("rb") as stdin, _child(stdin=stdin.fileno()) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert err.decode() == "threads\n"
    assert out.decode() == "after\n"
