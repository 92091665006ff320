"""PyInstaller entry point: the `session-studio` console script, frozen.

Kept outside the package so that PyInstaller analyses `session_studio` as an
installed/importable package (run the build from a checkout with `src/` on the
path, or with the project pip-installed).
"""

from __future__ import annotations

import multiprocessing
import sys

from session_studio.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
