"""What a paint of the session tree asks per visible row (issue 11: 40–100 ms per screenful)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QTreeView

from session_studio.core import Session
from session_studio.ui.main_window import stylesheet
from session_studio.ui.roles import Roles
from session_studio.ui.theme import apply_theme
from session_studio.ui.tree_model import LAST_CHAIN, BranchDelegate, SessionTreeModel

from .pi16_sample import write_pi16_session

#: the roles only the delegate asks for (Qt's own drawing never does)
DELEGATE_ROLES = frozenset({int(Roles.CUT_MARK), int(Roles.HEAD), LAST_CHAIN})


class CountingModel(SessionTreeModel):
    """Counts the data() calls for the delegate's roles."""

    asked = 0

    def data(self, index: Any, role: int = 0) -> Any:
        if role in DELEGATE_ROLES:
            self.asked += 1
        return super().data(index, role)


def test_the_delegate_reads_row_marks_from_the_model_not_through_data(
    qtbot: Any, branching_session: Path
) -> None:
    """The cut mark and branch connectors of a painted row are model lookups, not data() round trips
    through Qt (several per cell)."""
    s = Session.open(branching_session)
    model = CountingModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    some = next(iter(model.outline.group_of))
    model.set_marks({some: "cut"})
    tree = QTreeView()
    qtbot.addWidget(tree)
    tree.setItemDelegate(BranchDelegate(tree))
    tree.setModel(model)
    tree.resize(900, 600)
    tree.show()
    QApplication.processEvents()
    model.asked = 0
    painted = tree.viewport().grab()
    assert not painted.isNull() and model.index_of(some).isValid()
    assert model.asked == 0
    assert model.data(model.index_of(some), Roles.CUT_MARK) == "cut" and model.asked == 1


class AllRolesCountingModel(SessionTreeModel):
    """Counts every data() call."""

    asked = 0

    def data(self, index: Any, role: int = 0) -> Any:
        self.asked += 1
        return super().data(index, role)


def _themed(theme: str) -> QApplication:
    """The application in ``theme`` with the window's style sheet (tests reset it to light)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, theme)
    app.setStyleSheet(stylesheet())
    return app


def _marked_model(session: Path, marks: list[str]) -> tuple[SessionTreeModel, list[int]]:
    """A model of the session's tree with ``marks`` on its first rows ("" leaves a row unmarked);
    the marked rows' records."""
    s = Session.open(session)
    model = SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    some = list(model.outline.group_of)[: len(marks)]
    model.set_marks({rec: mark for rec, mark in zip(some, marks, strict=True) if mark})
    return model, some


def _tree(qtbot: Any, model: SessionTreeModel, tree: QTreeView | None = None) -> QTreeView:
    tree = tree if tree is not None else QTreeView()
    qtbot.addWidget(tree)
    tree.setUniformRowHeights(True)
    tree.setIconSize(QSize(16, 16))
    tree.setItemDelegate(BranchDelegate(tree))
    tree.setModel(model)
    tree.resize(700, 500)
    tree.setColumnWidth(0, 300)  # narrow: previews are elided
    tree.show()
    tree.expandAll()
    QApplication.processEvents()
    return tree


def test_a_screenful_of_unselected_rows_is_painted_without_data_calls(
    qtbot: Any, branching_session: Path
) -> None:
    """Qt's delegate asks data() seven times per painted cell (each a round trip into Python); the
    entry and time cells of plain rows are drawn from one model call instead."""
    s = Session.open(branching_session)
    model = AllRolesCountingModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    tree = _tree(qtbot, model)
    shown = tree.viewport().rect()
    rows = sum(1 for i in model.outline.group_of if tree.visualRect(model.index_of(i)).intersects(shown))
    assert rows > 5
    model.asked = 0
    assert not tree.viewport().grab().isNull()
    assert model.asked < rows  # Qt's way: about 7 per cell, 21 per row


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_direct_drawing_looks_exactly_like_qts_style(
    qtbot: Any, branching_session: Path, theme: str
) -> None:
    """The cells drawn by the delegate itself are pixel for pixel what Qt's style draws (marks,
    active-path bold, muted rows, icons, elided previews, a selected row), in both themes."""
    app = _themed(theme)
    try:
        model, some = _marked_model(branching_session, ["cut", "summarised", "turn_start", "prefix", ""])
        tree = _tree(qtbot, model)
        tree.setCurrentIndex(model.index_of(some[4]))
        QApplication.processEvents()
        images = {}
        for direct in (False, True):
            BranchDelegate.direct_style = direct
            images[direct] = tree.viewport().grab().toImage()
        assert images[True] == images[False]
    finally:
        BranchDelegate.direct_style = True
        apply_theme(app, "light")
        app.setStyleSheet("")


def test_another_paths_marks_repaint_without_comparing_every_entry(branching_session: Path) -> None:
    """Issue 11: marks of another plan (pi appended, another leaf) were compared entry by entry with
    the old ones, both maps whole: ~80 ms of the GUI thread on a 100k-entry session. Long maps with
    no cheap difference (not a PlanMarks of the same path) repaint the view instead."""
    s = Session.open(branching_session)
    model = SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    some = next(iter(model.outline.group_of))
    model.set_marks({some: "cut"})  # the first marks since the reset: a repaint, as always
    repaints: list[int] = []
    changed: list[Any] = []
    model.repaint_requested.connect(lambda: repaints.append(1))
    model.dataChanged.connect(lambda *a: changed.append(a))

    class Counting(dict):  # type: ignore[type-arg]
        looked = 0

        def get(self, key: Any, default: Any = None) -> Any:
            Counting.looked += 1
            return super().get(key, default)

    model.set_marks({some: "valid"})  # short: the changed row, by dataChanged
    assert changed and not repaints
    big = Counting({i: "valid" for i in range(100_000, 100_000 + 4096)})
    model.set_marks(big)
    assert repaints == [1] and Counting.looked == 0


def test_a_paint_of_the_tree_holds_back_the_workers(
    qtbot: Any, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: every row the window's tree paints is painted as foreground work (core.priority),
    so a worker re-planning the session waits at its next step instead of taking the GIL between the
    paint's calls into Python; once painted, workers go on."""
    from session_studio.core import priority
    from session_studio.ui.tree_model import SessionTreeView

    held: list[bool] = []
    real_paint = BranchDelegate.paint

    def paint(self: BranchDelegate, *a: Any) -> None:
        held.append(not priority._idle.is_set())
        real_paint(self, *a)

    monkeypatch.setattr(BranchDelegate, "paint", paint)
    s = Session.open(branching_session)
    model = SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    tree = _tree(qtbot, model, SessionTreeView())
    held.clear()
    tree.viewport().repaint()
    assert held and all(held)
    assert priority._idle.is_set()


FIRST_PAINT_ENUMS = """
import enum, sys
from PySide6.QtWidgets import QApplication, QTreeView
app = QApplication([])
from session_studio.core import Session
from session_studio.ui.tree_model import BranchDelegate, SessionTreeModel

made = []
create = enum.EnumType.__new__
def recording(metacls, cls, bases, classdict, **kw):
    made_enum = create(metacls, cls, bases, classdict, **kw)
    made.append((made_enum.__qualname__, len(made_enum.__members__)))
    return made_enum
enum.EnumType.__new__ = recording

s = Session.open(sys.argv[1])
model = SessionTreeModel()
model.set_session(s, s.path_indices(s.leaf_index()))
view = QTreeView()
view.setItemDelegate(BranchDelegate(view))
view.setModel(model)
view.resize(600, 400)
view.expandAll()
view.grab()
print(repr(made))
"""


def test_the_first_paint_of_a_session_makes_no_big_enum(branching_session: Path) -> None:
    """PySide makes a Qt enum's Python class the first time it is needed; the first brush made from a
    colour needed QGradient.Preset's (169 members, 45–115 ms of the GUI thread in the first paint of
    a session). The module that paints makes them when it is imported (a fresh process: this one
    has made them already)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, "-c", FIRST_PAINT_ENUMS, str(branching_session)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    ).stdout
    made = ast.literal_eval(out.strip().splitlines()[-1])
    assert [m for m in made if m[1] >= 50] == []


def test_the_drawing_follows_a_theme_switch(qtbot: Any, branching_session: Path) -> None:
    """The delegate keeps the text colour per palette and the cut-point marks' pens per theme:
    after a switch from light to dark the same delegate draws what Qt's style draws in the dark
    theme, and the marks in the dark theme's colours."""
    from session_studio.ui.theme import current_theme

    app = _themed("light")
    try:
        model, some = _marked_model(branching_session, ["cut", "turn_start", "valid"])
        tree = _tree(qtbot, model)
        QApplication.processEvents()
        light = tree.viewport().grab().toImage()  # the delegate's colours made in the light theme
        apply_theme(app, "dark")
        app.setStyleSheet(stylesheet())
        QApplication.processEvents()
        dark = tree.viewport().grab().toImage()
        BranchDelegate.direct_style = False
        assert dark == tree.viewport().grab().toImage()
        assert dark != light
        th = current_theme()
        for rec, colour in ((some[0], th.cut), (some[1], th.turn_start), (some[2], th.valid_cut)):
            cell = tree.visualRect(model.index_of(rec, 1))
            assert dark.pixelColor(cell.left() + 6, cell.center().y() + 1).name() == colour.name(), rec
    finally:
        BranchDelegate.direct_style = True
        apply_theme(app, "light")
        app.setStyleSheet("")


def _fresh_and_kept(model: SessionTreeModel) -> tuple[list[Any], list[Any]]:
    """Every row's cell styles and look, made afresh and as a paint gets them (kept from the
    paints before when nothing they come from changed)."""
    recs = [r for r in range(len(model.session.records)) if r in model.outline.group_of]  # type: ignore[union-attr]
    fresh = [(model._cell_style(r, c), model._row_look(r)) for r in recs for c in range(3)]
    model.begin_paint()
    try:
        kept = [(model.cell_style(r, c), model.row_look(r)) for r in recs for c in range(3)]
    finally:
        model.end_paint()
    return fresh, kept


def _append_label(path: Path, target: str, label: str) -> None:
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    entry = {
        "type": "label",
        "id": "feedbeef",
        "parentId": last["id"],
        "timestamp": "2025-01-01T12:00:00.000Z",
        "targetId": target,
        "label": label,
    }
    with path.open("ab") as fh:
        fh.write(orjson.dumps(entry) + b"\n")


@pytest.mark.parametrize("change", ["marks", "theme", "another branch", "edits", "pi appended a label"])
def test_cell_styles_kept_between_paints_follow_every_change(
    qtbot: Any, tmp_path: Path, branching_session: Path, change: str
) -> None:
    """Issue 11: a paint uses the cell styles of the paints before it (a screenful of them was ~20%
    of a paint). Whatever changes what a row shows (the plan's marks, the theme, the active branch,
    the context edits seen from the path, an entry pi appended: here a label) is painted at once:
    the styles a paint gets are the ones made afresh, and the change did change some of them."""
    if change == "another branch":  # no context edits: only the outline changes
        path = tmp_path / "s.jsonl"
        path.write_bytes(branching_session.read_bytes())
    else:
        path = write_pi16_session(tmp_path / "s.jsonl")
    s = Session.open(path)
    model = SessionTreeModel()
    leaf_path = s.path_indices(s.leaf_index())
    model.set_session(s, leaf_path)
    app = _themed("light")
    try:
        some = list(model.outline.group_of)[:3]
        model.set_marks({some[0]: "cut", some[1]: "valid"})
        before, kept = _fresh_and_kept(model)
        assert kept == before  # and now kept for the next paints
        if change == "marks":
            model.set_marks({some[1]: "cut", some[2]: "invalid"})
        elif change == "theme":
            apply_theme(app, "dark")
        elif change == "another branch":
            edits, o = model.edits, model.outline
            other = next(i for i in o.group_of if i not in o.active)
            model.rebuild(s.path_indices(other))
            assert model.edits is edits
        elif change == "edits":
            assert model.edits.applied  # the sample's edits, seen from its leaf
            model._find_edits(leaf_path[:3])  # a path before them: none apply
        else:
            _append_label(path, s.records[some[2]].id, "checked here")
            assert s.refresh()
        after, kept = _fresh_and_kept(model)
        assert kept == after
        assert after != before
    finally:
        apply_theme(app, "light")
        app.setStyleSheet("")


def test_the_window_tree_paints_what_pi_appended_to_a_row_it_painted_before(
    qtbot: Any, tmp_path: Path
) -> None:
    """The same through the window's view: a painted row whose label pi appends shows it on the next
    paint, pixel for pixel what a paint without kept styles draws."""
    from session_studio.ui.tree_model import SessionTreeView

    path = write_pi16_session(tmp_path / "s.jsonl")
    s = Session.open(path)
    model = SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    tree = _tree(qtbot, model, SessionTreeView())
    target = next(iter(model.outline.group_of))
    before = tree.viewport().grab().toImage()
    _append_label(path, s.records[target].id, "checked here")
    assert s.refresh()
    kept = tree.viewport().grab().toImage()
    model._kept_from = None  # no styles kept: all made afresh
    fresh = tree.viewport().grab().toImage()
    assert kept == fresh != before


def _nested(path: Path, levels: int) -> Path:
    """A session whose side branch forks again at every step, ``levels`` deep."""
    from .conftest import write_session

    spec: list[Any] = [("user", 20), ("assistant", 20)]
    parent = "e0001"
    for _ in range(levels):
        k = len(spec)
        message = {"role": "user", "content": f"try {k}", "timestamp": 1}
        spec.append({"type": "message", "parentId": parent, "message": message})
        spec.append({"type": "message", "parentId": parent, "message": {**message, "content": f"or {k}"}})
        parent = f"e{k:04d}"
    spec.append(
        {
            "type": "message",
            "parentId": "e0001",
            "message": {"role": "user", "content": "leaf", "timestamp": 1},
        }
    )
    return write_session(path, spec)


def test_a_deep_tree_is_indented_less(qtbot: Any, window: Any, tmp_path: Path) -> None:
    """At 16 px a level, branches nested ten deep left the Entry column a few letters. The levels
    take at most 40 % of the view's width; a shallow tree keeps 16 px."""
    window.open_path(str(_nested(tmp_path / "deep.jsonl", 30)))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    tree = window.tree
    depth = tree.model().outline.max_depth
    assert depth >= 30
    qtbot.waitUntil(lambda: tree.indentation() < 16)
    assert tree.indentation() * (depth + 1) <= tree.viewport().width() * 0.4 or tree.indentation() == 4
    window.open_path(str(_nested(tmp_path / "shallow.jsonl", 2)))
    qtbot.waitUntil(lambda: window.doc.path.endswith("shallow.jsonl") and window.doc.state is not None)
    qtbot.waitUntil(lambda: tree.indentation() == 16)
