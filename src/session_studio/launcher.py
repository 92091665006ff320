"""The console script's entry (``session-studio``, ``python -m session_studio``).

The command line's module imports most of the program before a command can catch anything: a
Ctrl+C in that second printed a Python traceback. Here the import itself is guarded; once it is
done, :func:`session_studio.cli.main` says what an interrupt did (and that nothing was written).
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> int:
    try:
        from .cli import main as run_command_line
    except KeyboardInterrupt:
        sys.stderr.write("session-studio: interrupted (nothing was written)\n")
        return 130
    return run_command_line()
