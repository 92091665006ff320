"""What one paint of the session tree costs the GUI thread, in the real window (offscreen).

    python benchmarks/ui_paint.py [SESSION.jsonl] [--repeat N]

Without an argument the huge session at /tmp/huge/huge-s1-000-v3.jsonl is used (see
window_bench.py). The session is opened and planned as in the window, then the tree's viewport is
repainted synchronously, going forward from the first row: the same rows again (the delegate's
caches warm), after a scroll of three rows (three new rows), and after a page (every row new: their
previews read and laid out for the first time). Prints JSON: each kind's median and max, wall and
GUI-thread CPU (``cpu_*``), in ms, and how many rows a paint shows. A paint is the window's most
frequent long GUI-thread step (scrolling, paging, each jump); ``ui_open.py`` measures the stalls
it is part of. Last, the rows at the leaf painted with the cell styles kept from the paint before
and made afresh, alternating (``same_rows_styles_kept_ms`` / ``..._made_afresh_ms``).
"""

from __future__ import annotations

import json
import sys

from window_bench import ms_stats, open_loaded_window, session_path, timed


def main(argv: list[str]) -> int:
    argv = list(argv)
    repeat = 40
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        del argv[i : i + 2]
    path = session_path(argv, "ui_paint.py")
    win, _ = open_loaded_window(path, "ui_paint.py")
    tree = win.tree
    viewport = tree.viewport()
    bar = tree.verticalScrollBar()
    bar.setValue(0)
    page = max(1, bar.pageStep())
    same, scrolled, paged = [], [], []
    for _ in range(repeat):  # forward through the tree: each scroll and page shows rows not shown yet
        same.append(timed(viewport.repaint))
        bar.setValue(bar.value() + 3)
        scrolled.append(timed(viewport.repaint))
        if bar.value() + page > bar.maximum():
            bar.setValue(0)  # a small session: round again (its rows' caches are warm then)
        else:
            bar.setValue(bar.value() + page)
        paged.append(timed(viewport.repaint))
    # the same rows again with no cell styles kept between paints (SessionTreeModel.begin_paint),
    # alternating with kept ones: what keeping them saves, measured in this run
    # at the leaf: entry rows (the top of a big tree is rows of blocks, styled apart)
    model = win.tree_model
    tree.scrollTo(model.index_of(win.doc.state.path[-1]))
    kept, unkept = [], []
    for _ in range(repeat):
        kept.append(timed(viewport.repaint))
        model._kept_from = None  # the next paint makes every style afresh
        unkept.append(timed(viewport.repaint))
        model._kept_from = None
        viewport.repaint()  # kept again for the next round
    rows = 0
    index = tree.indexAt(viewport.rect().topLeft())
    while index.isValid() and tree.visualRect(index).top() < viewport.height():
        rows += 1
        index = tree.indexBelow(index)
    out = {
        "file": str(path),
        "bytes": path.stat().st_size,
        "paints_each": repeat,
        "rows_per_paint": rows,
        "same_rows_ms": ms_stats(same),
        "after_scrolling_3_rows_ms": ms_stats(scrolled),
        "after_a_page_ms": ms_stats(paged),
        "same_rows_styles_kept_ms": ms_stats(kept),
        "same_rows_styles_made_afresh_ms": ms_stats(unkept),
    }
    print(json.dumps(out, indent=2))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
