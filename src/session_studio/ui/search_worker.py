"""The search text of a big session, built by other processes (no Qt here).

Building it means parsing every entry of the file again and making its preview: seconds of pure
Python on a 100 MB session, a minute on a 1 GB one. Run in a worker thread of the window, that
work took the GIL in turns with the GUI thread, and every paint of the tree then waited for it,
hundreds of times per screenful (a stall of several hundred ms while the session was loading).
Here fresh interpreters do it, two where there are two cores (each over half of the records: the
window is idle by then, and the texts of the 1 GB session come in half the time):

    python -m session_studio.ui.search_worker PATH DEV INO [SPILL_FD]

Each reads the offsets and lengths of its records' lines from stdin (two ``array("q")`` byte
strings) and packs the texts of each ``BATCH_RECORDS`` records into one batch (see
:mod:`search_texts`). With ``SPILL_FD`` (a temporary file the window made and passed on) it writes
each batch there and sends only where it lies ``(pos, blob size, offsets size, count)``, so the
texts never enter the window's memory; without it, it sends the batch itself ``(blob, offsets)``.
``None`` ends the stream. The window's thread only waits on the pipes meanwhile (no GIL).

Only files whose texts come straight from their lines are given to it: no v1 migration patches,
no entries that live only in memory, values not kept (a small file is done in the thread
quicker than an interpreter starts). Anything that goes wrong (the file replaced, a line no longer
there or no longer JSON, a worker killed) makes :func:`build_search_texts` return None, and the
caller builds the texts in its thread as before, with that path's own handling of each case.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from array import array
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from session_studio.core.allocator import tune_allocator
from session_studio.core.index_cache import cache_root
from session_studio.core.priority import can_start_helpers, run_behind
from session_studio.core.reader import parse_line
from session_studio.core.session import Session

from .outline import preview_text
from .search_texts import BATCH_RECORDS, SearchTexts, SpillFile, packed_batch, spilled_batch, text_batch

__all__ = ["WORKER_MIN_RECORDS", "build_search_texts", "worker_can_build", "worker_ranges"]

#: sessions with fewer records are searched from texts built in the thread (an interpreter start,
#: ~0.2 s, is more than their whole build)
WORKER_MIN_RECORDS = 20_000
#: how often a wait for the worker's next batch looks whether it was cancelled (seconds)
CANCEL_POLL_S = 0.1


def worker_can_build(session: Session, min_records: int | None = None) -> bool:
    """Whether the records' search texts follow from their lines in the file alone (and there are
    ``min_records``, default WORKER_MIN_RECORDS, or more)."""
    t = session.records
    return (
        len(t) >= (WORKER_MIN_RECORDS if min_records is None else min_records)
        and t.values is None
        and not t.patches
        and not t.virtual_values
        and session.fingerprint is not None
        and can_start_helpers()
    )


def build_search_texts(
    session: Session,
    min_records: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SearchTexts | None:
    """The search texts of all of ``session``'s records, built by worker processes (two, each over
    half of the records, where there are two cores); None when the session is not one for the
    workers or one of them did not finish (build them here then), or when ``cancelled()`` turned
    true meanwhile (the workers are stopped: the build takes ~20 s of a core on 1 GB).
    ``progress(records done, records)`` is called as the batches come."""
    if not worker_can_build(session, min_records):
        return None
    count = len(session.records)
    ranges = worker_ranges(count, _usable_cores())
    workers: list[_Worker] = []
    try:
        for _range in ranges:  # all of them start before any is sent its records (it waits to read)
            worker = _Worker.start(session)
            if worker is None:
                return None
            workers.append(worker)
        for worker, (lo, hi) in zip(workers, ranges, strict=True):
            worker.send_records(session, lo, hi)
        waiting = {w.recv: w for w in workers}
        while waiting:
            if cancelled is not None and cancelled():
                return None
            # a batch takes a while: look at cancelled() meanwhile
            for conn in wait(list(waiting), CANCEL_POLL_S):
                worker = waiting[conn]  # type: ignore[index]
                if not worker.receive():
                    del waiting[worker.recv]
                elif progress is not None:
                    progress(sum(w.done for w in workers), count)
    except (OSError, EOFError, ValueError):
        return None
    finally:
        for worker in workers:
            worker.stop()
    texts = SearchTexts(itertools.chain.from_iterable(w.batches for w in workers))
    return texts if len(texts) == count else None


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_ranges(count: int, cores: int) -> list[tuple[int, int]]:
    """The records [lo, hi) each worker builds: one range, or two (on two cores or more, from twice
    WORKER_MIN_RECORDS on) split at a multiple of BATCH_RECORDS, so that only the last batch of all
    is not full (SearchTexts.extended adds to it)."""
    if cores < 2 or count < 2 * WORKER_MIN_RECORDS:
        return [(0, count)]
    split = (count // 2 // BATCH_RECORDS) * BATCH_RECORDS
    return [(0, split), (split, count)]


class _Worker:
    """One worker process, the pipes to it and the batches it sent so far."""

    def __init__(
        self, child: subprocess.Popen[bytes], send: Connection, recv: Connection, spill: SpillFile | None
    ) -> None:
        self.child, self.send, self.recv, self.spill = child, send, recv, spill
        self.batches: list[Any] = []
        self.done = 0  # records in the batches

    @classmethod
    def start(cls, session: Session) -> _Worker | None:
        """A worker for ``session``'s file, waiting for its records (send_records); None when none
        can be started."""
        fp = session.fingerprint
        assert fp is not None
        cmd = [
            sys.executable,
            "-m",
            "session_studio.ui.search_worker",
            session.path,
            str(fp.dev),
            str(fp.ino),
        ]
        spill = SpillFile.create(cache_root())  # None: the texts come over the pipe, into memory
        if spill is not None:
            cmd.append(str(spill.fd))
        try:
            child = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(spill.fd,) if spill is not None else (),
            )
        except OSError:
            return None
        run_behind(child.pid)
        assert child.stdin is not None and child.stdout is not None
        # the connections own copies of the pipe ends: each closes its own
        send = Connection(os.dup(child.stdin.fileno()), readable=False)
        recv = Connection(os.dup(child.stdout.fileno()), writable=False)
        return cls(child, send, recv, spill)

    def send_records(self, session: Session, lo: int, hi: int) -> None:
        """Tell the worker to build the texts of records [lo, hi): where their lines are."""
        t = session.records
        for column in (t.offsets, t.lengths):
            # a copy, made holding the GIL: the pipe write lets it go until the worker has read it
            # all, and an array whose buffer is exported cannot grow (pi appending meanwhile: the
            # GUI thread extends these columns); one column at a time, half of it with two workers
            self.send.send_bytes(column[lo:hi])

    def receive(self) -> bool:
        """Take the next batch the worker sent; False once it said it is done."""
        got = self.recv.recv()
        if got is None:
            return False
        if self.spill is not None:
            self.batches.append(spilled_batch(self.spill, *got))
        else:
            blob, offsets = got
            self.batches.append(packed_batch(blob, offsets))
        self.done += len(self.batches[-1])
        return True

    def stop(self) -> None:
        self.child.kill()  # done already, or stuck: it holds nothing of the user's
        self.child.wait()
        for end in (self.send, self.recv, self.child.stdin, self.child.stdout):
            if end is not None:
                end.close()


def _texts_of_lines(
    path: str, dev: int, ino: int, offsets: array[int], lengths: array[int], out: Any, spill_fd: int | None
) -> None:
    """Send (or write to ``spill_fd`` and say where) the packed texts of the lines at ``offsets``, a
    batch at a time."""
    at = 0
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if (st.st_dev, st.st_ino) != (dev, ino):
            raise OSError("the file was replaced")
        for lo in range(0, len(offsets), BATCH_RECORDS):
            hi = min(lo + BATCH_RECORDS, len(offsets))
            start = offsets[lo]
            end = max(offsets[i] + lengths[i] for i in range(lo, hi))
            if any(offsets[i] < start for i in range(lo, hi)):
                raise ValueError("records out of file order")
            fh.seek(start)
            data = fh.read(end - start)
            if len(data) != end - start:
                raise OSError("a line is no longer there")
            texts = []
            for i in range(lo, hi):
                a = offsets[i] - start
                value, _kind, _message = parse_line(data[a : a + lengths[i]])
                if value is None:
                    raise ValueError(f"the line at byte {offsets[i]} is no longer JSON")
                texts.append(preview_text(value).lower())
            batch = text_batch(texts)
            offsets_bytes = batch.offsets.tobytes()
            if spill_fd is None:
                out.send((batch.blob, offsets_bytes))
                continue
            _write_all(spill_fd, batch.blob + offsets_bytes, at)
            out.send((at, len(batch.blob), len(offsets_bytes), len(batch)))
            at += len(batch.blob) + len(offsets_bytes)
    out.send(None)


def _write_all(fd: int, data: bytes, pos: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, pos)
        view, pos = view[n:], pos + n


def main(argv: list[str]) -> int:
    path, dev, ino, *spill = argv
    tune_allocator()
    inp = Connection(sys.stdin.fileno(), writable=False)
    out = Connection(sys.stdout.fileno(), readable=False)
    offsets = array("q", inp.recv_bytes())
    lengths = array("q", inp.recv_bytes())
    try:
        _texts_of_lines(path, int(dev), int(ino), offsets, lengths, out, int(spill[0]) if spill else None)
    except (OSError, ValueError):
        return 1  # the window builds the texts itself (see build_search_texts)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
