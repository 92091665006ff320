"""The window's hot paths on a 100k-entry session, in one run (issue 7's "Done when").

    python benchmarks/ui_plan.py [SESSION.jsonl]

Without an argument the huge session at /tmp/huge/huge-s1-000-v3.jsonl is used (generate it once:
``python tests/oracle/gen_sessions.py --seed 1 --count 1 --size huge --out /tmp/huge``).
Prints JSON:

- ``slider_step_to_plan_shown_ms``: a keepRecentTokens step (the debounce flushed) until the new
  plan is on screen (document re-plan, then the event loop paints what changed: planner panel,
  token bar, the tree rows whose marks changed); median and max over 20 steps. Target: median
  ≤ 16 ms.
- ``token_bar_paint_cut_on_metadata_ms``: one token-bar relayout + paint with a manual cut whose
  first kept entry is a metadata entry (pi's backward scan); median of 20. Target ≤ 8 ms.
- ``search``: a word typed into the tree's search box, letter by letter: the longest GUI-thread
  stall (a 5 ms heartbeat QTimer measures how late it fires; target ≤ 100 ms) and the time until
  the results are shown (target ≤ 1 s), cold (first search: the text index is built) and warm.
"""

from __future__ import annotations

import json
import sys
import time

from window_bench import ms_stats, open_loaded_window, session_path, timed


def main(argv: list[str]) -> int:
    path = session_path(argv, "ui_plan.py")
    win, loaded_s = open_loaded_window(path, "ui_plan.py")
    from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer
    from PySide6.QtTest import QTest

    from session_studio.ui.token_bar import TokenBar

    doc, bar = win.doc, win.findChild(TokenBar)

    def settle() -> None:
        for _ in range(3):
            QCoreApplication.processEvents()

    # 1. slider step → new plan shown
    steps: list[tuple[float, float]] = []
    keeps = [20000 + 7000 * k for k in range(20)]

    def step(v: int) -> None:
        win.planner.keep.slider.setValue(v)
        win.planner.flush_params()  # what the debounce timer does once the slider rests
        QCoreApplication.processEvents()  # paints what the new plan changed (bar, panel, tree rows)
        QCoreApplication.processEvents()

    for v in keeps:
        settle()
        steps.append(timed(lambda v=v: step(v)))
    # 2. token-bar paint with the cut on a metadata entry
    pl = doc.loaded_state.planner if doc.loaded_state else None
    meta_cut = None
    if pl is not None and pl.plan_ is not None:
        recs = doc.session.records if doc.session else []
        for pos in reversed(pl.plan_.planner.cut_points):
            if pos > 0 and recs[pl.path[pos - 1]].type not in ("message", "compaction"):
                meta_cut = pos
                break
    paints: list[tuple[float, float]] = []
    if meta_cut is not None:
        doc.set_manual_cut(pl.path[meta_cut])  # type: ignore[union-attr]
        settle()
        fk = doc.state.cut.first_kept_index if doc.state and doc.state.cut else None
        first_kept_type = doc.session.records[pl.path[fk]].type if fk is not None and doc.session else None  # type: ignore[union-attr]

        def paint() -> None:
            bar.set_state(doc.state)
            bar.repaint()

        paints.extend(timed(paint) for _ in range(20))
    else:
        first_kept_type = None
    doc.clear_manual_cut()
    settle()

    # 3. search typed into the tree, with a heartbeat measuring GUI-thread stalls
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]
    worst = [0.0]

    def beat() -> None:
        now = clock.elapsed()
        worst[0] = max(worst[0], float(now - last[0] - 5))
        last[0] = now

    heart = QTimer()
    heart.setInterval(5)
    heart.timeout.connect(beat)

    def type_word(word: str) -> dict[str, float]:
        win.search.clear()
        QCoreApplication.processEvents()
        while win.runner.busy:
            QCoreApplication.processEvents()
            time.sleep(0.002)
        worst[0] = 0.0
        last[0] = clock.elapsed()
        heart.start()
        t = time.perf_counter()
        for ch in word:
            QTest.keyClick(win.search, ch)
            end = time.perf_counter() + 0.08  # a typist's pace
            while time.perf_counter() < end:
                QCoreApplication.processEvents()
                time.sleep(0.002)
        typed = time.perf_counter()
        while time.perf_counter() - typed < 60:
            QCoreApplication.processEvents()
            if win.tree_model.query == word.lower() and not win.runner.busy:
                break
            time.sleep(0.002)
        shown = time.perf_counter()
        heart.stop()
        return {
            "longest_gui_stall_ms": round(worst[0], 1),
            "results_after_last_key_s": round(shown - typed, 3),
            "typing_to_results_s": round(shown - t, 3),
            "rows": len(win.tree_model.outline),
        }

    cold = type_word("compaction")
    warm = type_word("readme")

    out = {
        "file": str(path),
        "entries": len(doc.session.records) if doc.session else None,
        "loaded_s": round(loaded_s, 1),
        "slider_step_to_plan_shown_ms": ms_stats(steps),
        "token_bar_paint_cut_on_metadata_ms": ms_stats(paints),
        "cut_first_kept_type": first_kept_type,
        "search_cold": cold,
        "search_warm": warm,
    }
    print(json.dumps(out, indent=2))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
