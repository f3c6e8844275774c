"""The notes watcher beside the server (``python -m server --watch PATH``).

For a single-machine desktop setup the server follows the notes folder itself: it
runs ``python -m extraction watch PATH`` as a child process, started once the
server's state is ready, restarted when it ends unexpectedly (after 1, 2, 4 ... 60
s), and stopped with the server. Being a process of its own, at a lower CPU
priority (nice 10), it cannot stall a tool call; its output goes to the server log
line by line and never to stdout, which over stdio belongs to the protocol. Each
batch it applies is a build like any other: the server, its replicas and the
explorer learn of it through the build notification (:mod:`server.builds`).

The child stops by itself when the server is gone (``--parent-pid``), so a server
killed outright leaves no watcher behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger("server.watch")


class WatchProcess:
    """``python -m extraction watch PATH`` supervised in a thread."""

    def __init__(
        self,
        path: Path,
        *,
        nice: int = 10,
        first_backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        steady_s: float = 60.0,
    ) -> None:
        """``steady_s``: a child that ran this long before it ended is restarted
        after ``first_backoff_s`` again, not after the last backoff doubled."""
        self.path = path
        self.nice = nice
        self.first_backoff_s = first_backoff_s
        self.max_backoff_s = max_backoff_s
        self.steady_s = steady_s
        self.starts = 0
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="notes-watcher", daemon=True)

    @property
    def pid(self) -> int | None:
        """The running child's process id."""
        with self._lock:
            proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 15.0) -> None:
        """End the child (SIGTERM: a batch in progress is rolled back and applied by
        the next start; SIGKILL after ``timeout_s``) and stop restarting it."""
        self._stopping.set()
        with self._lock:
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout_s)

    def _command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "extraction",
            "watch",
            str(self.path),
            "--parent-pid",
            str(os.getpid()),
        ]

    def _supervise(self) -> None:
        backoff = self.first_backoff_s
        while not self._stopping.is_set():
            began = time.monotonic()
            with self._lock:
                if self._stopping.is_set():
                    return
                try:
                    proc = subprocess.Popen(
                        self._command(),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                        errors="replace",
                    )
                except OSError as exc:
                    log.error("cannot start the notes watcher: %s", exc)
                    proc = None
                else:
                    self._proc = proc
                    self.starts += 1
            if proc is not None:
                with contextlib.suppress(OSError):  # tool calls first, the watcher after
                    os.setpriority(os.PRIO_PROCESS, proc.pid, self.nice)
                log.info("notes watcher started on %s (pid %d)", self.path, proc.pid)
                assert proc.stdout is not None
                with proc.stdout:
                    for line in proc.stdout:
                        log.info("watch: %s", line.rstrip())
                code = proc.wait()
                if self._stopping.is_set():
                    return
                if time.monotonic() - began >= self.steady_s:
                    backoff = self.first_backoff_s
                log.warning(
                    "the notes watcher ended (exit %s); starting it again in %.0f s", code, backoff
                )
            if self._stopping.wait(backoff):
                return
            backoff = min(backoff * 2, self.max_backoff_s)
