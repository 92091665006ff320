"""What the window benchmarks (ui_plan.py, ui_timeline.py, ui_paint.py) share: the real window opened on a
session and loaded, waiting on its event loop, and timing samples (wall and GUI-thread CPU).

Imported by the scripts as a sibling module (they run as ``python benchmarks/NAME.py``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
#: the 100k-entry session (``python tests/oracle/gen_sessions.py --seed 1 --count 1 --size huge --out /tmp/huge``)
DEFAULT = Path("/tmp/huge/huge-s1-000-v3.jsonl")


def session_path(argv: list[str], script: str) -> Path:
    path = Path(argv[0]) if argv else DEFAULT
    if not path.is_file():
        raise SystemExit(f"{script}: no session file {path} (see the module docstring)")
    return path


def wait_until(cond: Callable[[], object], script: str, limit: float = 900) -> None:
    """Run the event loop until `cond()` holds (SystemExit after `limit` seconds)."""
    from PySide6.QtCore import QCoreApplication

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        QCoreApplication.processEvents()
        if cond():
            return
        time.sleep(0.005)
    raise SystemExit(f"{script}: timed out")


def open_loaded_window(path: Path, script: str) -> tuple[Any, float]:
    """The main window (1600×1000, light theme, settings in a temp dir) with `path` loaded and
    planned, and the seconds that took."""
    tmp = tempfile.mkdtemp(prefix="ss-bench-")
    os.environ["SESSION_STUDIO_CONFIG_DIR"] = tmp
    os.environ["SESSION_STUDIO_STATE_DIR"] = tmp
    os.environ.setdefault("PI_CODING_AGENT_DIR", tmp)
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.theme import apply_theme

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, "light")  # type: ignore[arg-type]
    app.setStyleSheet(stylesheet())  # type: ignore[union-attr]
    win = MainWindow(AppSettings(Path(tmp) / "s.ini"), sessions_root=tmp)
    win.resize(1600, 1000)
    win.show()
    t0 = time.perf_counter()
    win.open_path(str(path))
    wait_until(lambda: win.doc.state is not None and not win.runner.busy and not win.doc.preparing, script)
    return win, time.perf_counter() - t0


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU of this thread) seconds of one call."""
    t, c = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - t, time.thread_time() - c


def ms_stats(samples: list[tuple[float, float]]) -> dict[str, float | None]:
    """Median and max of (wall, CPU of this thread) samples, in ms; on a loaded machine the CPU
    time is what the code costs, the wall time what the user waited. None without samples."""
    if not samples:
        return {"median": None, "max": None, "cpu_median": None, "cpu_max": None}
    wall = [w for w, _ in samples]
    cpu = [c for _, c in samples]
    return {
        "median": round(statistics.median(wall) * 1000, 2),
        "max": round(max(wall) * 1000, 2),
        "cpu_median": round(statistics.median(cpu) * 1000, 2),
        "cpu_max": round(max(cpu) * 1000, 2),
    }
