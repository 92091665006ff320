"""`python -m session_studio.core.scan_worker PATH START FD`: index a file from byte START on and
send the record table through the pipe FD (Session.open's second process where it cannot fork)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from .session import _scan_worker


def main(argv: list[str]) -> int:
    path, start, fd = argv
    _scan_worker(path, int(start), None, Connection(int(fd), readable=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
