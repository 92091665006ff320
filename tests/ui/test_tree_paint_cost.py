"""What a paint of the session tree asks per visible row (issue 11: 40–100 ms per screenful)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QTreeView

from session_studio.core import Session
from session_studio.ui.roles import Roles
from session_studio.ui.tree_model import LAST_CHAIN, BranchDelegate, SessionTreeModel

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
