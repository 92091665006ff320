"""The side-by-side view of pi 0.80.2's and pi 1.6.0's plans of the open session (for teaching).

The document plans with the file's profile only; the controller builds the other profile's
:class:`~session_studio.core.plan.PathPlanner` of the same path in the compute pool (once per loaded
path: live reloads and writes make a new one) and then plans both sides on every settings change,
which is a binary search each. What the sides show and which rules explain their differences is
:func:`session_studio.core.profile_compare.compare_plans`; this module only renders it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.profile_compare import PathFacts, ProfileComparison, ProfileSide, compare_plans

from .document import SessionDocument
from .tasks import Operation, TaskRunner
from .theme import current_theme

__all__ = ["ComparedPlanners", "ProfileCompareController", "ProfileCompareView", "plan_both_profiles"]

#: the tab's title (the menu action and the planner's button name it the same way)
TAB_TITLE = "pi versions"
_LINK = "entry:"
#: a path position in the core's sentences ("#12")
_POSITION = re.compile(r"#(\d+)")


#: the #positions are links for the keyboard too: Tab reaches each, Return follows it
_LINKS = Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard


@dataclass(frozen=True)
class ComparedPlanners:
    """Both profiles' planners of the path the document plans (``base`` is the document's own)."""

    base: PathPlanner
    old: PathPlanner  # pi 0.80.2
    new: PathPlanner  # pi 1.6.0
    facts: PathFacts


def plan_both_profiles(base: PathPlanner) -> ComparedPlanners:
    """The other profile's planner of ``base``'s path and leaf, and the facts both need (off the GUI
    thread: this reads the whole path once)."""
    other = PROFILE_1_6_0 if base.profile is PROFILE_0_80_2 else PROFILE_0_80_2
    twin = PathPlanner(base.session, base.leaf_index, profile=other)
    old, new = (base, twin) if base.profile is PROFILE_0_80_2 else (twin, base)
    return ComparedPlanners(base, old, new, PathFacts.of(old, new))


def _switched(pair: ComparedPlanners, base: PathPlanner) -> ComparedPlanners | None:
    """``pair`` with ``base`` as the document's planner when both plan the very same path (the user
    switched the pi version: nothing to plan again), else None."""
    for mine in (pair.old, pair.new):
        if mine is base:
            return ComparedPlanners(base, pair.old, pair.new, pair.facts)
    same = pair.old if base.profile is PROFILE_0_80_2 else pair.new
    if same.session is base.session and same.leaf_index == base.leaf_index and same.path == base.path:
        old, new = (base, pair.new) if base.profile is PROFILE_0_80_2 else (pair.old, base)
        return ComparedPlanners(base, old, new, pair.facts)
    return None


class ProfileCompareView(QWidget):
    """Both plans in one table (a column per pi), the rules that make them differ below."""

    #: the user clicked a cut or turn start: select this record in the tree
    entry_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.intro = QLabel(
            "How <b>pi 0.80.2</b> and <b>pi 1.6.0</b> would compact this session with the same settings "
            "(the planner's keepRecentTokens, reserveTokens and context window; pi's automatic cut). "
            "Rows that differ are highlighted; the rules that make them differ are listed below. "
            "Click a cut or any #position to select that entry in the tree."
        )
        self.intro.setWordWrap(True)
        self.intro.setProperty("muted", True)
        self.table = QLabel()
        self.table.setTextFormat(Qt.TextFormat.RichText)
        self.table.setWordWrap(True)
        self.table.setAccessibleName("Both pis' plans")
        self.table.setTextInteractionFlags(_LINKS)
        self.table.linkActivated.connect(self._on_link)
        self.rules = QLabel()
        self.rules.setTextFormat(Qt.TextFormat.RichText)
        self.rules.setWordWrap(True)
        self.rules.setAccessibleName("Rules that make them differ")
        self.rules.setTextInteractionFlags(_LINKS)
        self.rules.linkActivated.connect(self._on_link)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(10, 10, 10, 10)
        lay.setSpacing(10)
        lay.addWidget(self.intro)
        lay.addWidget(self.table)
        lay.addWidget(self.rules)
        lay.addStretch(1)
        scroll = QScrollArea()
        # no Tab stop of its own (it drew no focus; Tab went on to its controls one press later)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.comparison: ProfileComparison | None = None
        self.set_message("No session.")

    def set_message(self, text: str) -> None:
        """No comparison to show (no session, or the other pi's plan is being made)."""
        self.comparison = None
        self.table.setText(f"<i>{html.escape(text)}</i>")
        self.rules.clear()

    def set_comparison(
        self, c: ProfileComparison, read_as: str | None = None, path: Sequence[int] = ()
    ) -> None:
        """Show ``c``; ``read_as`` is the version the window plans this file with (marked). Every path
        position (#12) becomes a link that selects the entry (``path``: record of each position)."""
        self.comparison = c
        th = current_theme()
        hi = th.warn_bg.name()
        grid = th.grid.name()
        muted = th.muted.name()

        def linked(text: str) -> str:
            def link(m: re.Match[str]) -> str:
                k = int(m.group(1))
                return f"<a href='{_LINK}{path[k]}'>#{k}</a>" if k < len(path) else m.group(0)

            return _POSITION.sub(link, html.escape(text))

        def head(side: ProfileSide) -> str:
            mark = (
                f"<br><span style='color:{muted}; font-weight:normal'>this file is read as it</span>"
                if side.version == read_as
                else ""
            )
            return f"<th align='left' width='42%'>pi {html.escape(side.version)}{mark}</th>"

        rows = []
        for f in c.facts:
            bg = f" style='background:{hi}'" if f.differs else ""
            rows.append(
                f"<tr{bg}><td style='color:{muted}'>{html.escape(f.name)}</td>"
                f"<td>{linked(f.old)}</td><td>{linked(f.new)}</td></tr>"
            )
        errors = [f"pi {s.version}: {html.escape(s.error)}" for s in (c.old, c.new) if s.error]
        unknown = {s.tokens_unknown_reason for s in (c.old, c.new) if s.tokens_unknown_reason}
        notes = [*errors, *(linked(u) for u in sorted(unknown))]
        if not c.automatic:
            notes.append("Your manual cut is not compared: it may not be a cut point under the other pi.")
        self.table.setText(
            f"<table cellspacing='0' cellpadding='5' width='100%' style='border:1px solid {grid}'>"
            f"<tr><th></th>{head(c.old)}{head(c.new)}</tr>{''.join(rows)}</table>"
            + "".join(f"<p style='color:{muted}'>{n}</p>" for n in notes)
        )
        if not c.differs:
            self.rules.setText("<b>Both pis plan the same</b> for this session and these settings.")
            return
        items = []
        for r in c.rules:
            rule = f"<b>{html.escape(r.rule)}</b> · " if r.rule else ""
            items.append(f"<p>{rule}<b>{html.escape(r.title)}</b><br>{linked(r.text)}</p>")
        self.rules.setText("<h4 style='margin:0'>Why they differ (spec §10)</h4>" + "".join(items))

    def _on_link(self, href: str) -> None:
        if href.startswith(_LINK):
            self.entry_clicked.emit(int(href[len(_LINK) :]))


class ProfileCompareController(QObject):
    """Keeps the view in step with the document while the view is shown: the other profile's
    planner is made in the compute pool; every plan change (sliders, live reload) re-plans both."""

    def __init__(self, doc: SessionDocument, runner: TaskRunner, view: ProfileCompareView) -> None:
        super().__init__(view)
        self.doc = doc
        self.runner = runner
        self.view = view
        self.active = False
        self.planners: ComparedPlanners | None = None
        self._op: Operation | None = None
        self._op_base: PathPlanner | None = None
        doc.plan_changed.connect(lambda _st: self.update())
        doc.recovery_changed.connect(lambda _st: self.update())
        doc.after_changed.connect(lambda _st: self.update())  # a summary generated or edited: its size
        doc.closed.connect(self._on_closed)
        doc.loading.connect(lambda _path: self._on_closed("Loading…"))

    def set_active(self, active: bool) -> None:
        """Plan only while the view is shown (a 100k-entry path costs a second to plan under 1.6.0)."""
        self.active = active
        if active:
            self.update()

    def _on_closed(self, message: str = "No session.") -> None:
        self._cancel()
        self.planners = None
        self.view.set_message(message)

    def _cancel(self) -> None:
        if self._op is not None:
            self._op.cancel()
        self._op = None
        self._op_base = None

    def update(self) -> None:
        if not self.active:
            return
        doc = self.doc
        res = doc.loaded_state
        if res is None:
            self.view.set_message("No session.")
            return
        base = res.planner
        pair = self.planners
        if pair is not None and pair.base is not base:
            pair = self.planners = _switched(pair, base)
        if pair is None:
            self._start(base)
            return
        # the summary's size as the planner counts it: the generated (or typed) one, else none and
        # the sides say they count a stand-in (they kept the stand-in after a generation)
        summary = doc.state.params.summary_tokens if doc.state is not None else None
        params = PlanParams(
            doc.keep,
            doc.reserve,
            doc.window,
            summary_tokens=summary,
            auto_compaction=res.auto_compaction,
            model_max_tokens=res.model_max_tokens,
        )
        old = pair.old.plan(params, window_known=doc.window_known)
        new = pair.new.plan(params, window_known=doc.window_known)
        # pi 1.6.0's recovery, as the planner shows it, where the window reads the file as 1.6.0
        recovery = doc.recovery if doc.state is not None and doc.state.profile is new.profile else None
        c = compare_plans(old, new, pair.facts, recovery)
        if doc.manual_cut is not None:
            c = ProfileComparison(c.old, c.new, c.facts, c.rules, automatic=False)
        self.view.set_comparison(
            c, res.profile.profile.version if res.profile is not None else None, pair.new.path
        )

    def _start(self, base: PathPlanner) -> None:
        if self._op_base is base:
            return  # already planning this path
        self._cancel()
        other = PROFILE_1_6_0 if base.profile is PROFILE_0_80_2 else PROFILE_0_80_2
        self.view.set_message(f"Planning the path as pi {other.version} would…")
        op = self.runner.op(plan_both_profiles, base)
        op.on_success(self._on_planned).on_failure(self._on_failed)
        self._op = op
        self._op_base = base
        op.start()

    def _on_planned(self, pair: ComparedPlanners) -> None:
        self._op = None
        self._op_base = None
        self.planners = pair
        self.update()  # plans both now, or starts again if the document moved on meanwhile

    def _on_failed(self, exc: BaseException, _tb: str) -> None:
        self._op = None
        self._op_base = None
        self.view.set_message(f"Could not plan the other pi's side: {exc}")
