"""`python -m session_studio.core.scan_worker PATH START END FD`: index a file from byte START to END
(empty: to its end) and send the record table through the pipe FD (Session.open's scan processes
where it cannot fork)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from .allocator import tune_allocator
from .session import _scan_worker


def main(argv: list[str]) -> int:
    path, start, end, fd = argv
    tune_allocator()
    _scan_worker(path, int(start), int(end) if end else None, Connection(int(fd), readable=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
