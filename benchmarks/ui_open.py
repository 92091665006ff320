"""Open a huge session in the real window (offscreen) and measure what the user waits for.

    python benchmarks/ui_open.py [SESSION.jsonl]

Without an argument a huge session is generated (gen_sessions.py --seed 5 --size huge, ~20 s) or the
copy at /tmp/huge/huge-s5-000-v3.jsonl is used. Prints JSON: time to the first tree rows (the head
of a big file is shown while the rest is indexed), time to fully loaded (planned, nothing running),
peak RSS, the longest GUI-thread stall while loading (a 10 ms QTimer measures how late it fires),
and the longest stall of each interaction once loaded: scrolling to the end, jumping to the last
row (End), to the leaf, moving the keepRecentTokens slider, jumping to the cut it moved to.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
DEFAULT = Path("/tmp/huge/huge-s5-000-v3.jsonl")


def session_path(argv: list[str]) -> Path:
    args = [a for a in argv if a != "--file"]  # `ui_open.py FILE` or `ui_open.py --file FILE`
    if args:
        path = Path(args[0])
        if not path.is_file():
            raise SystemExit(f"ui_open.py: no such session file: {path}")
        return path
    if DEFAULT.exists():
        return DEFAULT
    out = DEFAULT.parent
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/oracle/gen_sessions.py"),
            "--seed",
            "5",
            "--count",
            "1",
            "--size",
            "huge",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return DEFAULT


def main(argv: list[str]) -> int:
    path = session_path(argv)
    tmp = tempfile.mkdtemp(prefix="ss-bench-")
    os.environ["SESSION_STUDIO_CONFIG_DIR"] = tmp
    os.environ["SESSION_STUDIO_STATE_DIR"] = tmp
    os.environ.setdefault("PI_CODING_AGENT_DIR", tmp)
    from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.theme import apply_theme

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, "light")
    app.setStyleSheet(stylesheet())
    win = MainWindow(AppSettings(Path(tmp) / "s.ini"), sessions_root=tmp)
    win.resize(1600, 1000)
    win.show()
    QCoreApplication.processEvents()

    stall = {"max_ms": 0.0, "ticks": 0}
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        late = now - last[0] - 10
        last[0] = now
        stall["ticks"] += 1
        stall["max_ms"] = max(stall["max_ms"], float(late))

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()

    indexed: list[float] = []
    win.doc.loaded.connect(lambda _res: indexed.append(time.perf_counter() - t0))
    partial: list[float] = []
    win.doc.partial_loaded.connect(lambda _h: partial.append(time.perf_counter() - t0))
    t0 = time.perf_counter()
    last[0] = clock.elapsed()
    win.open_path(str(path))
    first_rows = loaded = None
    deadline = t0 + 600
    while time.perf_counter() < deadline:
        QCoreApplication.processEvents()
        now = time.perf_counter() - t0
        if first_rows is None and win.tree_model.rowCount() > 0:
            first_rows = now
        if (
            (win.doc.state is not None and win.doc.preparation is not None)
            or (win.doc.state is not None and win.doc.state.nothing_to_compact)
        ) and not win.runner.busy:
            loaded = now
            break
        time.sleep(0.002)
    load_stall = stall["max_ms"]

    def measure(action: object, settle_s: float = 0.3) -> float:
        """The longest the GUI thread was blocked by ``action`` and what it set off (ms)."""
        stall["max_ms"] = 0.0
        QCoreApplication.processEvents()
        stall["max_ms"] = 0.0
        last[0] = clock.elapsed()
        t = time.perf_counter()
        action()  # type: ignore[operator]
        win.tree.viewport().repaint()
        longest = (time.perf_counter() - t) * 1000
        end = time.perf_counter() + settle_s
        while time.perf_counter() < end or win.runner.busy:
            t = time.perf_counter()
            QCoreApplication.processEvents()
            longest = max(longest, (time.perf_counter() - t) * 1000)
            time.sleep(0.002)
        return round(max(longest, stall["max_ms"]), 1)

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    def key(k: Qt.Key) -> None:
        win.tree.setFocus()
        QTest.keyClick(win.tree, k)

    def slider(v: int) -> None:
        win.planner.keep.slider.setValue(v)

    interactions: dict[str, float] = {}
    cut_moved = None
    if loaded is not None:
        interactions["scroll_to_top"] = measure(win.tree.scrollToTop)
        interactions["scroll_to_end"] = measure(win.tree.scrollToBottom)
        interactions["jump_to_first_row_home"] = measure(lambda: key(Qt.Key.Key_Home))
        interactions["jump_to_last_row_end"] = measure(lambda: key(Qt.Key.Key_End))
        interactions["jump_to_leaf"] = measure(win.a_leaf.trigger)
        before = win.doc.state.first_kept_record if win.doc.state else None
        worst = 0.0
        for v in (30000, 60000, 120000, 200000, 20000, 400000):
            worst = max(worst, measure(lambda v=v: slider(v), 0.15))
        interactions["keep_slider_max_of_6_moves"] = worst
        after = win.doc.state.first_kept_record if win.doc.state else None
        cut_moved = before != after
        interactions["jump_to_cut"] = measure(win.a_goto_cut.trigger)
        interactions["jump_to_leaf_again"] = measure(win.a_leaf.trigger)
    timer.stop()
    s = win.doc.session
    out = {
        "file": str(path),
        "bytes": path.stat().st_size,
        "entries": len(s.records) if s else None,
        "first_rows_s": round(first_rows, 3) if first_rows is not None else None,
        "head_shown_s": round(partial[0], 3) if partial else None,
        "fully_loaded_s": round(loaded, 3) if loaded is not None else None,
        "file_indexed_s": round(indexed[0], 3) if indexed else None,
        "first_rows_before_whole_file_indexed": bool(
            indexed and first_rows is not None and first_rows < indexed[0]
        ),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "longest_gui_stall_while_loading_ms": round(load_stall, 1),
        "longest_gui_stall_ms_by_interaction": interactions,
        "slider_moved_the_cut": cut_moved,
        "top_level_rows": win.tree_model.rowCount(),
        "timer_ticks": stall["ticks"],
    }
    print(json.dumps(out, indent=2))
    win.close()
    return 0 if loaded is not None else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
