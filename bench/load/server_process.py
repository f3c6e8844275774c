"""The server under load: ``python -m server --transport streamable-http`` in a subprocess
on 127.0.0.1, its stderr kept in a file and searched for tracebacks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import REPO


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``python -m server --transport streamable-http`` on 127.0.0.1, stderr to a file."""

    def __init__(self, env: dict[str, str], log_path: Path, *, startup_s: float = 180.0) -> None:
        self.port = _free_port()
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
                "--transport",
                "streamable-http",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.stop_offset: int | None = None
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError(
                    "the server exited at start-up: " + log_path.read_text(errors="replace")[-2000:]
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the server did not listen on port {self.port} in {startup_s:.0f} s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self._log.flush()
        self.stop_offset = self.log_path.stat().st_size
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()

    def problems(self) -> dict[str, Any]:
        """Tracebacks in the server's stderr (each as its last line), and how many other
        lines it wrote; those after ``stop()`` began are counted apart."""
        text = self.log_path.read_text(errors="replace")
        cut = self.stop_offset if self.stop_offset is not None else len(text)
        return {
            "log": str(self.log_path),
            "log_lines": len(text.splitlines()),
            "tracebacks": _tracebacks(text[:cut]),
            "tracebacks_at_shutdown": _tracebacks(text[cut:]),
        }


def _tracebacks(text: str) -> list[str]:
    """The exception line ending each ``Traceback`` block of a log."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Traceback (most recent call last)"):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1].isspace()):
                j += 1
            found.append(lines[j].strip() if j < len(lines) else "(truncated)")
    return found
