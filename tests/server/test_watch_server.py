"""``python -m server --watch PATH``: a real server process runs a real watcher
process beside itself; a saved note reaches the tool answers without a reload, a
watcher that dies is started again, none is left behind, and over stdio nothing
but the protocol reaches stdout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from extraction.rebuild.pipeline import Rebuilder
from server.auth import KeyStore
from sql.database import Database
from tests.fixtures import REPO
from tests.fixtures.corpus import GLOBEX, write_corpus
from tests.fixtures.server import free_port, mcp_session

pytestmark = pytest.mark.slow


class Lines:
    """A process's stderr, read as it comes."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 300, after: int = 0) -> int:
        """The index of the first line from ``after`` on that holds ``text``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, line in enumerate(self.lines[after:], after):
                if text in line:
                    return i
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} in the server log: {''.join(self.lines)[-3000:]}")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        log = "".join(self.lines)
        assert "Traceback" not in log, log
        return log


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture()
def corpus(db: Database, embedder: Any, extractor: Any, tmp_path: Path) -> Path:
    notes = write_corpus(tmp_path / "notes")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(notes)
    return notes


def server_env(db: Database, tmp_path: Path, key: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"}
    env |= {"DATABASE_URL": db.conninfo, "KB_API_KEYS_FILE": str(tmp_path / "keys.json")}
    return env | ({"BMCIS_API_KEY": key} if key else {})


def watcher_of(server: subprocess.Popen[str]) -> psutil.Process | None:
    children = [
        p for p in psutil.Process(server.pid).children() if "watch" in " ".join(p.cmdline())
    ]
    return children[0] if children else None


@pytest.fixture()
def http_server(db: Database, corpus: Path, tmp_path: Path) -> Iterator[tuple[Lines, str, str]]:
    key = KeyStore(db).create("watch-tests")
    port = free_port()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "server", "--transport", "streamable-http"),
            *("--port", str(port), "--watch", str(corpus)),
        ],
        cwd=REPO,
        env=server_env(db, tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(proc)
    try:
        lines.wait_for("watch: watching")
        yield lines, f"http://127.0.0.1:{port}/mcp", key
    finally:
        lines.stop()


def search_finds(url: str, key: str, query: str, needle: str) -> bool:
    async def main() -> bool:
        async with mcp_session(url, key) as client:
            result = await client.call_tool(
                "semantic_search", {"query": query, "response_mode": "full", "top_k": 5}
            )
        content = result.structured_content or {}
        return any(needle in str(r) for r in content.get("results", []))

    return anyio.run(main)


def vendor_shows(url: str, key: str, vendor: str, entity: str) -> bool:
    async def main() -> bool:
        async with mcp_session(url, key) as client:
            result = await client.call_tool(
                "find_vendor_info", {"vendor_name": vendor, "response_mode": "full"}
            )
        content = result.structured_content or {}
        entities = (content.get("results") or {}).get("entities", [])
        return any(entity in str(e.get("name", "")) for e in entities)

    return anyio.run(main)


def test_a_saved_note_reaches_the_tools_and_a_dead_watcher_is_started_again(
    http_server: tuple[Lines, str, str], corpus: Path
) -> None:
    lines, url, key = http_server
    server = lines.proc
    note = corpus / "vendors/Globex/overview.md"
    note.write_text(GLOBEX + "\nGlobex partners with Zentrovax Corporation.\n", "utf-8")
    wait_until(lambda: search_finds(url, key, "Zentrovax partnership", "Zentrovax"), "search")
    assert vendor_shows(url, key, "Globex", "Zentrovax")
    lines.wait_for("overview.md")  # the watcher's batch line is in the server log

    # the watcher killed outright: the server starts another, which catches up
    first = watcher_of(server)
    assert first is not None and first.nice() == 10  # below the server's priority
    mark = len(lines.lines)
    first.send_signal(signal.SIGKILL)
    lines.wait_for("starting it again", after=mark)
    note.write_text(GLOBEX + "\nGlobex acquired Quillbrook Systems.\n", "utf-8")
    wait_until(lambda: search_finds(url, key, "Quillbrook acquisition", "Quillbrook"), "search")
    second = watcher_of(server)
    assert second is not None and second.pid != first.pid

    lines.stop()
    wait_until(lambda: not second.is_running() or second.status() == "zombie", "the watcher end")


def test_a_server_killed_outright_leaves_no_watcher_behind(
    http_server: tuple[Lines, str, str],
) -> None:
    lines, _, _ = http_server
    child = watcher_of(lines.proc)
    assert child is not None
    lines.proc.send_signal(signal.SIGKILL)
    lines.proc.wait(timeout=30)
    wait_until(lambda: not child.is_running() or child.status() == "zombie", "the watcher end")


def test_over_stdio_the_watcher_never_writes_to_stdout(
    db: Database, corpus: Path, tmp_path: Path
) -> None:
    key = KeyStore(db).create("watch-stdio")
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--watch", str(corpus)],
        cwd=REPO,
        env=server_env(db, tmp_path, key),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(proc)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        lines.wait_for("watch: watching")
        note = corpus / "vendors/Globex/overview.md"
        note.write_text(GLOBEX + "\nGlobex opened an office in Lisbon.\n", "utf-8")
        lines.wait_for("overview.md")  # the batch line, in the log on stderr
        assert proc.stdin is not None
        proc.stdin.close()  # the client goes: the stdio server ends
        proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        lines.stop()
    assert out == [], "something other than the protocol reached stdout"


def test_watch_must_name_a_folder(db: Database, tmp_path: Path) -> None:
    KeyStore(db).create("watch-usage")
    proc = subprocess.run(
        [sys.executable, "-m", "server", "--watch", str(tmp_path / "nothing")],
        cwd=REPO,
        env=server_env(db, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and "not a folder of notes" in proc.stderr
