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
import sys
import time

from window_bench import ms_stats, open_loaded_window, session_path, timed, wait_until


def main(argv: list[str]) -> int:
    path = session_path(argv, "ui_timeline.py")
    win, _ = open_loaded_window(path, "ui_timeline.py")
    from session_studio.core.plan import PathPlanner, PlanParams
    from session_studio.core.timeline import build_timeline
    from session_studio.ui.timeline import SegmentPlanners

    def wait(cond: object) -> None:
        wait_until(cond, "ui_timeline.py")  # type: ignore[arg-type]

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
            return timed(chart.repaint)

        paint_samples = [paint(True) for _ in range(20)]
        repaint_samples = [paint(False) for _ in range(20)]
        lay = chart.current_layout()
        assert lay is not None
        mid_y = lay.area.top + lay.area.height / 2
        hover = [
            timed(lambda k=k, a=lay.area, y=mid_y: chart.describe_at(a.left + a.width * k / 49, y))
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

            slider.append(timed(step))
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
            "paint_ms": ms_stats(paint_samples),
            "repaint_ms": ms_stats(repaint_samples),
            "hover_ms": ms_stats(hover),
            "slider_ms": ms_stats(slider),
        }
    print(json.dumps(out, indent=2))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
