"""Real token counts answered by a helper process that holds the tokenizer.

The tokenizer costs a process ~67 MB (its vocabularies, built at load and mapped from the wheel)
and counts in C calls that hold the GIL (~3 MB/s). In the window both are paid where they hurt:
the memory for as long as the window is open, even with no session, and the GIL in turns with
the GUI thread, whose paints wait for it while a big path is counted. Here a second interpreter
holds the tokenizer and counts; the window only sends texts and waits on a pipe (no GIL), and the
helper exits when nobody asked for a while, giving its memory back. It is started again, in the
same way, by the next count.

    python -m session_studio.core.count_worker [IDLE_SECONDS]

A request is ``(encoding, texts)`` (pickled, through stdin), the answer ``("ok", counts)``,
``("unavailable", sentence)`` when the tokenizer cannot load here, or ``("error", text)``. The
counts are exactly :func:`.tokenizer.load_counter`'s: the helper runs that very function. A text
longer than MAX_EXACT_CHARS is sent as its head only and extrapolated here, as load_counter does
(a 50 MB tool output is never copied through the pipe).

Where no interpreter can be started (a frozen app, not POSIX) :func:`text_counter` counts in this
process instead, and so does a counter whose process fails to start (a sandbox without exec).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from .allocator import tune_allocator
from .priority import can_start_helpers, run_behind
from .tokenizer import MAX_EXACT_CHARS, TokenizerUnavailableError, extrapolated, load_counter

__all__ = [
    "IDLE_EXIT_S",
    "CannotStartError",
    "CountWorker",
    "RemoteCounter",
    "shared_count_worker",
    "text_counter",
]

#: the helper exits after this many seconds without a request (its ~70 MB go back to the system)
IDLE_EXIT_S = 120.0
#: how long close() waits for a request under way before it kills the helper
CLOSE_WAIT_S = 2.0


class CannotStartError(OSError):
    """The helper process cannot be started here."""


class RemoteCounter:
    """``text → tokens`` for one encoding, counted by a :class:`CountWorker`; ``many`` counts a
    batch in one round trip (see :func:`.tokenizer.counts_of`)."""

    def __init__(self, worker: CountWorker, encoding: str) -> None:
        self.worker = worker
        self.encoding = encoding

    def __call__(self, text: str) -> int:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[int]:
        heads = [t if len(t) <= MAX_EXACT_CHARS else t[:MAX_EXACT_CHARS] for t in texts]
        try:
            got = self.worker.count(self.encoding, heads)
        except CannotStartError:  # no process can be started here (a sandbox): count in this one
            count = load_counter(self.encoding)
            return [count(t) for t in texts]
        return [
            n if len(t) <= MAX_EXACT_CHARS else extrapolated(n, len(t))
            for n, t in zip(got, texts, strict=True)
        ]


class CountWorker:
    """The helper process, started on the first request and again by the first one after it
    exited idle. Thread-safe: requests from several threads take turns."""

    def __init__(self, argv: Sequence[str] | None = None, idle_exit_s: float = IDLE_EXIT_S) -> None:
        self.argv = list(argv) if argv is not None else [sys.executable, "-m", __name__]
        self.idle_exit_s = idle_exit_s
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        #: how many processes were started (tests and the benchmark read it)
        self.started = 0
        self._closed = False
        #: why no process could be started (then none is tried again: every batch would fork for nothing)
        self._cannot_start: str | None = None

    def counter(self, encoding: str) -> RemoteCounter:
        return RemoteCounter(self, encoding)

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None and child.poll() is None else None

    def count(self, encoding: str, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` (each at most MAX_EXACT_CHARS long) with ``encoding``."""
        if not texts:
            return []
        with self._lock:
            for attempt in (1, 2):
                send, recv = self._connect()
                try:
                    send.send((encoding, list(texts)))
                    reply = recv.recv()
                except (OSError, EOFError):
                    # it exited idle just as we asked, or was killed: once more with a new one
                    self._stop()
                    if attempt == 2:
                        raise TokenizerUnavailableError(
                            "real token counts unavailable: the counting process stopped"
                        ) from None
                    continue
                kind, value = reply
                if kind == "ok":
                    counts: list[int] = value
                    return counts
                if kind == "unavailable":
                    raise TokenizerUnavailableError(value)
                raise RuntimeError(f"the counting process failed: {value}")
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the helper for good (at exit): a later request says counts are unavailable. A
        request under way is not waited for long: its process is killed, and it fails."""
        self._closed = True
        if self._lock.acquire(timeout=CLOSE_WAIT_S):
            try:
                self._stop()
            finally:
                self._lock.release()
            return
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()  # the request's recv() ends; its thread finds the worker closed

    def _connect(self) -> tuple[Connection, Connection]:
        if self._closed:
            raise TokenizerUnavailableError("real token counts unavailable: the counting process was stopped")
        if self._child is not None and self._child.poll() is not None:
            self._stop()  # exited idle since the last request
        if self._cannot_start is not None:
            raise CannotStartError(self._cannot_start)
        if self._send is None or self._recv is None:
            try:
                child = subprocess.Popen(
                    [*self.argv, str(self.idle_exit_s)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as e:
                self._cannot_start = str(e)
                raise CannotStartError(self._cannot_start) from e
            run_behind(child.pid)
            assert child.stdin is not None and child.stdout is not None
            # the connections own copies of the pipe ends; the Popen's are closed here
            self._send = Connection(os.dup(child.stdin.fileno()), readable=False)
            self._recv = Connection(os.dup(child.stdout.fileno()), writable=False)
            child.stdin.close()
            child.stdout.close()
            self._child = child
            self.started += 1
        return self._send, self._recv

    def _stop(self) -> None:
        for end in (self._send, self._recv):
            if end is not None:
                with contextlib.suppress(OSError):
                    end.close()
        self._send = self._recv = None
        child, self._child = self._child, None
        if child is not None:
            if child.poll() is None:
                child.kill()
            child.wait()


_shared: CountWorker | None = None
_shared_lock = threading.Lock()


def shared_count_worker() -> CountWorker:
    """This process's helper (one for every encoding and every caller), stopped at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = CountWorker()
            atexit.register(_shared.close)
        return _shared


def text_counter(encoding: str) -> Callable[[str], int]:
    """The counter the window uses: the helper's, or this process's where no helper can start."""
    if can_start_helpers():
        return shared_count_worker().counter(encoding)
    return load_counter(encoding)


# --------------------------------------------------------------------------- the helper's side


def serve(recv: Connection, send: Connection, idle_exit_s: float) -> None:
    """Answer requests until the pipe closes or none came for ``idle_exit_s`` seconds. A
    tokenizer is loaded by the first request for its encoding (the process is started by a
    request: loading one in advance would only load one that may not be asked for)."""
    while recv.poll(idle_exit_s):
        try:
            encoding, texts = recv.recv()
        except EOFError:
            return
        reply: tuple[str, Any]
        try:
            count = load_counter(encoding)
            reply = ("ok", [count(t) for t in texts])
        except TokenizerUnavailableError as e:
            reply = ("unavailable", str(e))
        except Exception as e:  # a panic of the tokenizer on some text: said, not a dead pipe
            reply = ("error", f"{type(e).__name__}: {e}")
        send.send(reply)


def main(argv: list[str]) -> int:
    idle = float(argv[0]) if argv else IDLE_EXIT_S
    tune_allocator()
    recv = Connection(os.dup(sys.stdin.fileno()), writable=False)
    send = Connection(os.dup(sys.stdout.fileno()), readable=False)
    with contextlib.suppress(BrokenPipeError, EOFError, KeyboardInterrupt):
        serve(recv, send, idle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
