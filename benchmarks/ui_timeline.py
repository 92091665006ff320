"""The context timeline on a 100k-entry session: build, paint, hover, slider, reload (issue 10 §1).

    python benchmarks/ui_timeline.py [SESSION.jsonl]

Without an argument the huge session at /tmp/huge/huge-s1-000-v3.jsonl is used (generate it once:
``python tests/oracle/gen_sessions.py --seed 1 --count 1 --size huge --out /tmp/huge``).
The real window is opened, the timeline shown (View → Context timeline) and, per pi profile,
measured; prints JSON (wall time and, ``cpu_*``, the CPU time of the GUI thread: on a shared,
loaded machine the second is what the code costs):

- ``build_s``: the history built from scratch (a worker; one planner per compaction segment).
- ``rebuild_after_append_s``: built again for a new planner of the same file (what live reload
  does: the earlier segments' planners are kept, only the last segment is planned again).
- ``paint_ms``: one paint of the chart at the window's size, layout included (the layout is
  remade: the worst case, a resize or a new plan); median and max of 20. Target < 16 ms.
- ``repaint_ms``: one paint with the layout kept (hover, selection); median of 20.
- ``hover_ms``: a hit test + tooltip text at 50 x positions; median and max.
- ``slider_ms``: ``Timeline.with_plan`` for a new PlanState + relayout + paint; median of 20.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
DEFAULT = Path("/tmp/huge/huge-s1-000-v3.jsonl")


def _ms(samples: list[tuple[float, float]]) -> dict[str, float]:
    """Median and max of (wall, CPU of this thread) samples, in ms; on a loaded machine the CPU
    time is what the code costs, the wall time what the user waited."""
    wall = [w for w, _ in samples]
    cpu = [c for _, c in samples]
    return {
        "median": round(statistics.median(wall) * 1000, 2),
        "max": round(max(wall) * 1000, 2),
        "cpu_median": round(statistics.median(cpu) * 1000, 2),
        "cpu_max": round(max(cpu) * 1000, 2),
    }


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    t, c = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - t, time.thread_time() - c


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    if not path.is_file():
        raise SystemExit(f"ui_timeline.py: no session file {path} (see the module docstring)")
    tmp = tempfile.mkdtemp(prefix="ss-bench-")
    os.environ["SESSION_STUDIO_CONFIG_DIR"] = tmp
    os.environ["SESSION_STUDIO_STATE_DIR"] = tmp
    os.environ.setdefault("PI_CODING_AGENT_DIR", tmp)
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from session_studio.core.plan import PathPlanner, PlanParams
    from session_studio.core.timeline import build_timeline
    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.theme import apply_theme
    from session_studio.ui.timeline import SegmentPlanners

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, "light")
    app.setStyleSheet(stylesheet())
    win = MainWindow(AppSettings(Path(tmp) / "s.ini"), sessions_root=tmp)
    win.resize(1600, 1000)
    win.show()

    def wait(cond: object, limit: float = 900) -> None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < limit:
            QCoreApplication.processEvents()
            if cond():  # type: ignore[operator]
                return
            time.sleep(0.005)
        raise SystemExit("ui_timeline.py: timed out")

    win.open_path(str(path))
    wait(lambda: win.doc.state is not None and not win.runner.busy and not win.doc.preparing)
    doc, panel = win.doc, win.timeline
    chart = panel.chart
    out: dict[str, object] = {"file": str(path), "entries": len(doc.session.records)}
    win.a_timeline.setChecked(True)
    wait(lambda: panel.history is not None)
    for version in ("0.80.2", "1.6.0"):
        doc.set_profile(pin=version)
        wait(lambda v=version: doc.state is not None and doc.state.profile.version == v)
        planner = doc.loaded_state.planner
        state = doc.state
        t, c = time.perf_counter(), time.thread_time()
        tl = build_timeline(planner, state)
        build_s, build_cpu_s = time.perf_counter() - t, time.thread_time() - c
        cache = SegmentPlanners()
        build_timeline(planner, state, segment_planner=cache.factory(planner))
        fresh = PathPlanner(planner.session, planner.leaf_index, profile=planner.profile)
        t, c = time.perf_counter(), time.thread_time()
        build_timeline(fresh, state, segment_planner=cache.factory(fresh))
        rebuild_s, rebuild_cpu_s = time.perf_counter() - t, time.thread_time() - c
        wait(
            lambda tl=tl: (
                panel.history is not None
                and chart.timeline is not None
                and chart.timeline.profile == tl.profile
            )
        )

        def paint(relayout: bool) -> tuple[float, float]:
            if relayout:
                chart._layout = None
            return _timed(chart.repaint)

        paint_samples = [paint(True) for _ in range(20)]
        repaint_samples = [paint(False) for _ in range(20)]
        lay = chart.current_layout()
        assert lay is not None
        mid_y = lay.area.top + lay.area.height / 2
        hover = [
            _timed(lambda k=k, a=lay.area, y=mid_y: chart.describe_at(a.left + a.width * k / 49, y))
            for k in range(50)
        ]
        slider = []
        for k in range(20):
            st = panel.built_for.plan(
                PlanParams(keep_recent_tokens=20000 + 3000 * k, reserve_tokens=16384 + 500 * k)
            )

            def step(st: object = st) -> None:
                panel.follow_plan(st)  # type: ignore[arg-type]
                chart.repaint()

            slider.append(_timed(step))
        out[version] = {
            "path_entries": tl.path_length,
            "points": len(tl),
            "usage_points": tl.usage_count(),
            "compactions": len(tl.drops),
            "markers": len(tl.markers),
            "build_s": round(build_s, 3),
            "build_cpu_s": round(build_cpu_s, 3),
            "rebuild_after_append_s": round(rebuild_s, 3),
            "rebuild_after_append_cpu_s": round(rebuild_cpu_s, 3),
            "chart_px": [chart.width(), chart.height()],
            "paint_ms": _ms(paint_samples),
            "repaint_ms": _ms(repaint_samples),
            "hover_ms": _ms(hover),
            "slider_ms": _ms(slider),
        }
    print(json.dumps(out, indent=2))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
