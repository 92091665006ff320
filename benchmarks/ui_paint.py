"""What one paint of the session tree costs the GUI thread, in the real window (offscreen).

    python benchmarks/ui_paint.py [SESSION.jsonl] [--repeat N] [--smoke]

Opens the session as the window does, waits until it is planned, and repaints the tree's viewport
synchronously, timing the GUI thread's CPU for each paint: the same rows again (the delegate's
caches warm), after a scroll of three rows (three new rows), and after a page (every row new: their
previews read and laid out for the first time), going forward from the first row. Prints JSON: each kind's median, quartile and
minimum in ms, and how many rows a paint shows. A paint is the window's most frequent long
GUI-thread step (scrolling, paging, each jump); ``ui_open.py`` measures the stalls it is part of.
Without an argument the 12 MB prefix of the huge session is used if present
(``/tmp/mid/mid12.jsonl``), else a medium session is generated.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
DEFAULT = Path("/tmp/mid/mid12.jsonl")


def session_path(args: list[str], tmp: str) -> Path:
    if args:
        return Path(args[0])
    if DEFAULT.exists():
        return DEFAULT
    import subprocess

    out = Path(tmp) / "generated"
    subprocess.run(
        [sys.executable, str(ROOT / "tests/oracle/gen_sessions.py"), "--seed", "5", "--count", "1"]
        + ["--size", "medium", "--out", str(out), "--quiet"],
        check=True,
    )
    return next(out.glob("*.jsonl"))


def figures(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p25_ms": round(ordered[len(ordered) // 4], 2),
        "min_ms": round(ordered[0], 2),
        "paints": len(ordered),
    }


def main(argv: list[str]) -> int:
    argv = list(argv)
    smoke = "--smoke" in argv
    argv = [a for a in argv if a != "--smoke"]
    repeat = 3 if smoke else 40
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        del argv[i : i + 2]
    tmp = tempfile.mkdtemp(prefix="ss-paint-")
    for name in ("CONFIG", "STATE", "CACHE"):
        os.environ[f"SESSION_STUDIO_{name}_DIR"] = tmp
    os.environ.setdefault("PI_CODING_AGENT_DIR", tmp)
    path = session_path(argv, tmp)

    from session_studio.core.allocator import tune_allocator
    from session_studio.ui.import_check import forget_source_reads

    tune_allocator()
    forget_source_reads()
    from PySide6.QtCore import QCoreApplication
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
    win.open_path(str(path))
    deadline = time.perf_counter() + 600
    while time.perf_counter() < deadline:
        QCoreApplication.processEvents()
        if win.doc.state is not None and not win.runner.busy:
            break
        time.sleep(0.005)
    else:
        raise SystemExit("ui_paint.py: the session did not load in 10 minutes")
    settle = time.perf_counter() + (0.05 if smoke else 0.5)
    while time.perf_counter() < settle:
        QCoreApplication.processEvents()
        time.sleep(0.005)

    tree = win.tree
    viewport = tree.viewport()
    bar = tree.verticalScrollBar()
    bar.setValue(0)
    QCoreApplication.processEvents()

    def paint() -> float:
        t = time.thread_time()
        viewport.repaint()
        return (time.thread_time() - t) * 1000

    same, scrolled, paged = [], [], []
    page = max(1, bar.pageStep())
    for _ in range(repeat):  # forward through the tree: each scroll and page shows rows not shown yet
        same.append(paint())
        bar.setValue(bar.value() + 3)
        scrolled.append(paint())
        if bar.value() + page > bar.maximum():
            bar.setValue(0)  # a small session: round again (its rows' caches are warm then)
        else:
            bar.setValue(bar.value() + page)
        paged.append(paint())
    rows = 0
    index = tree.indexAt(viewport.rect().topLeft())
    while index.isValid() and tree.visualRect(index).top() < viewport.height():
        rows += 1
        index = tree.indexBelow(index)
    out = {
        "file": str(path),
        "bytes": path.stat().st_size,
        "rows_per_paint": rows,
        "same_rows": figures(same),
        "after_scrolling_3_rows": figures(scrolled),
        "after_a_page": figures(paged),
    }
    print(json.dumps(out, indent=2))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
