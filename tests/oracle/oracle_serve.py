"""Clients of `node pi-oracle.mjs serve` (Python 3.11 standard library only).

A run of pi-oracle.mjs spends most of its CPU importing pi's modules (~1 s on a 2-core box) and
little on a small session; `serve` imports them once and answers `plan`, `context` and `branch`
requests one after another, each exactly as a fresh run would (same JSON, exit code and stderr;
the deterministic ids restart at 1). compare.py and the test suite's `oracle` fixtures use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

# the commands `serve` answers; anything else runs as its own process
SERVED_COMMANDS = frozenset({"plan", "context", "branch"})


@dataclass(frozen=True)
class Answer:
    stdout: bytes  # the command's JSON line (empty when it printed none)
    exit_code: int
    stderr: str


class OracleServer:
    """One `node SCRIPT serve` process; thread-safe (requests are answered one at a time).

    It starts on the first request and again after a timeout or a crash (the request that hit
    either raises), so one bad request never poisons the next.
    """

    def __init__(self, script: str, *, node: str = "node", env: Mapping[str, str] | None = None) -> None:
        self.script = str(script)
        self.node = node
        self.env = dict(os.environ if env is None else env)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def run(self, argv: Sequence[str], *, cwd: str | None = None, timeout: float = 300.0) -> Answer:
        if not argv or argv[0] not in SERVED_COMMANDS:
            raise ValueError(f"serve answers {sorted(SERVED_COMMANDS)}, not {list(argv[:1])}")
        request = json.dumps({"argv": list(argv), "cwd": cwd or os.getcwd()}).encode() + b"\n"
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            timed_out = threading.Event()

            def expire() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(timeout, expire)
            timer.start()
            try:
                proc.stdin.write(request)
                proc.stdin.flush()
                out = proc.stdout.readline()
                status = proc.stdout.readline()
            except (BrokenPipeError, OSError):
                out = status = b""
            finally:
                timer.cancel()
            if not status.endswith(b"\n"):
                why = f"timed out after {timeout:.0f}s" if timed_out.is_set() else "died"
                detail = self._stop()
                raise RuntimeError(f"pi-oracle serve {why}: {detail[-2000:]}")
            fields = json.loads(status)
            return Answer(out.rstrip(b"\n"), int(fields["exitCode"]), str(fields["stderr"]))

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [self.node, self.script, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=self.env,
        )
        return self._proc

    def _stop(self) -> str:
        """End the process (if any) and return what it wrote on stderr outside the requests."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        detail = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            detail = self._stderr.read().decode("utf-8", "replace")
            self._stderr.close()
            self._stderr = None
        return detail


class OracleServerPool:
    """Up to `size` servers of one oracle script, for a thread pool (compare.py --jobs N)."""

    def __init__(self, script: str, *, size: int, node: str = "node", env: Mapping[str, str] | None = None) -> None:
        self._idle: queue.LifoQueue[OracleServer] = queue.LifoQueue()
        for _ in range(max(1, size)):
            self._idle.put(OracleServer(script, node=node, env=env))
        self._all = list(self._idle.queue)

    @contextlib.contextmanager
    def server(self) -> Iterator[OracleServer]:
        server = self._idle.get()
        try:
            yield server
        finally:
            self._idle.put(server)

    def close(self) -> None:
        for server in self._all:
            server.close()
