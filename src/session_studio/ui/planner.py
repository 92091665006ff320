"""The planner panel: keepRecentTokens / reserveTokens / context window, the cut and the quirks."""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.explain import (
    AUTO_COMPACTION_OFF,
    RecoveryCut,
    overflow_text,
    summarised_span_text,
    threshold_check_text,
    tokens_unknown_text,
    window_exceeded_text,
)
from session_studio.core.plan import PlanState, Quirk
from session_studio.core.profile import PIN_SETTINGS, ProfileChoice

from .actions import omit_attempt_reason
from .text_lines import unbroken_options
from .theme import current_theme

__all__ = ["PlannerPanel", "TokenSlider"]


class TokenSlider(QWidget):
    """A slider + spin box pair (tokens)."""

    value_changed = Signal(int)

    def __init__(self, maximum: int, step: int = 500, parent: QWidget | None = None, name: str = "") -> None:
        super().__init__(parent)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.spin = QSpinBox()
        # a screen reader names both by the setting (the form's label names only this container)
        self.slider.setAccessibleName(name)
        self.spin.setAccessibleName(name)
        self.spin.setGroupSeparatorShown(True)
        self.spin.setMaximum(10_000_000)
        self.spin.setSingleStep(step)
        self.spin.setFixedWidth(96)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.slider.setSingleStep(step)
        self.slider.setPageStep(step * 10)
        self.set_maximum(maximum)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.slider.valueChanged.connect(self._from_slider)
        self.spin.valueChanged.connect(self._from_spin)

    def set_maximum(self, m: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setMaximum(max(1, m))
        self.slider.blockSignals(False)

    def value(self) -> int:
        return self.spin.value()

    def set_value(self, v: int) -> None:
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.spin.setSpecialValueText("")  # a real value, 0 included, is shown as itself
        self.spin.setValue(v)
        self.slider.setValue(min(v, self.slider.maximum()))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def clear(self) -> None:
        """No value to show (no plan yet): "—", not a 0 that reads like a setting."""
        _show_no_value(self.spin)
        self.slider.blockSignals(True)
        self.slider.setValue(0)
        self.slider.blockSignals(False)

    def _from_slider(self, v: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(v)
        self.spin.blockSignals(False)
        self.value_changed.emit(v)

    def _from_spin(self, v: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(min(v, self.slider.maximum()))
        self.slider.blockSignals(False)
        self.value_changed.emit(v)


def _show_no_value(spin: QSpinBox) -> None:
    """``spin`` shows "—" (its minimum with a special text) without telling anyone."""
    spin.blockSignals(True)
    spin.setSpecialValueText("—")
    spin.setValue(spin.minimum())
    spin.blockSignals(False)


#: under pi 1.6.0's overflow line: the command that writes the recovery's first step
OMIT_ATTEMPT_HINT = "Session ▸ Omit failed attempt appends the context edits pi appends first."

#: a slider step re-plans after the values stayed this long (a drag sends one value per pixel)
PARAMS_DEBOUNCE_MS = 30


def _fmt(n: float) -> str:
    return f"{n:,.0f}"


class PlannerPanel(QWidget):
    params_changed = Signal(object, object, object)  # keep, reserve, window (None = unchanged)
    auto_cut_requested = Signal()
    preview_requested = Signal()
    commit_requested = Signal()
    #: the user switched the pi version for this file ("auto" or a version)
    profile_requested = Signal(str)
    #: show both pis' plans side by side
    compare_requested = Signal()
    #: the pi for every file without pi 1.6.0 entries ("auto": the one installed here, else the newest)
    plain_default_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keep = TokenSlider(200000, name="keepRecentTokens")
        self.reserve = TokenSlider(100000, 256, name="reserveTokens")
        self.window_spin = QSpinBox()
        self.window_spin.setAccessibleName("Context window")
        self.window_spin.setRange(0, 10_000_000)
        self.window_spin.setSingleStep(1000)
        self.window_spin.setGroupSeparatorShown(True)
        self.window_spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.window_spin.setFixedWidth(110)
        self.window_note = QLabel()
        self.window_note.setProperty("muted", True)
        self.source_note = QLabel()
        self.source_note.setWordWrap(True)
        self.source_note.setTextFormat(Qt.TextFormat.PlainText)  # names a settings file: plain, never markup
        self.source_note.setProperty("muted", True)

        params = QGroupBox("Compaction settings")
        form = QFormLayout(params)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.addRow("keepRecentTokens", self.keep)
        form.addRow("reserveTokens", self.reserve)
        wrow = QHBoxLayout()
        wrow.addWidget(self.window_spin)
        wrow.addWidget(self.window_note, 1)
        form.addRow("Context window", wrow)
        form.addRow(self.source_note)  # the whole width: narrow, it wrapped into five lines
        self.profile_combo = QComboBox()
        self.profile_combo.setAccessibleName("pi version")  # else its current item names it
        for setting in PIN_SETTINGS:
            self.profile_combo.addItem("auto (detect)" if setting == "auto" else f"pi {setting}", setting)
        self.profile_combo.setToolTip(
            "Which pi's rules the plan follows. auto: a 1.6.0 shape in the file means 1.6.0, "
            "else your setting (default: the pi installed here, else the newest)"
        )
        self.profile_note = QLabel()
        self.profile_note.setWordWrap(True)
        self.profile_note.setProperty("muted", True)
        self.compare_button = QPushButton("Compare pi versions")
        self.compare_button.setToolTip(
            "Show pi 0.80.2's and pi 1.6.0's plans of this session side by side, with the rules that make "
            "them differ (Ctrl+Shift+V)"
        )
        self.compare_button.clicked.connect(self.compare_requested)
        form.addRow("pi version", self.profile_combo)
        form.addRow(self.profile_note)
        # the preference for plain files had no control in the window (only the settings file)
        self.plain_default_button = QPushButton()
        self.plain_default_button.setVisible(False)
        self.plain_default_button.clicked.connect(
            lambda: self.plain_default_requested.emit(self.plain_default_button.property("setting"))
        )
        prow = QHBoxLayout()
        prow.addWidget(self.plain_default_button)
        prow.addStretch(1)
        form.addRow("", prow)
        crow = QHBoxLayout()
        crow.addWidget(self.compare_button)
        crow.addStretch(1)
        form.addRow("", crow)
        self.profile_combo.activated.connect(
            lambda k: self.profile_requested.emit(str(self.profile_combo.itemData(k)))
        )
        self._pi = "pi"  # "pi 1.6.0" once a profile is known: every "pi would…" names it
        #: what an empty quirk box says (the box lists the cut's rules only, under pi 1.6.0)
        self._no_quirks = "None for this plan."
        #: (theme, quirks) the quirk box shows now
        self._shown_quirks: tuple[str, tuple[Quirk, ...]] | None = None

        self.cut_title = QLabel()
        self.cut_title.setWordWrap(True)
        self.cut_title.setTextFormat(Qt.TextFormat.RichText)
        self.cut_details = QLabel()
        self.cut_details.setWordWrap(True)
        self.cut_details.setTextFormat(Qt.TextFormat.RichText)
        self.auto_button = QPushButton("Use automatic cut")
        self.auto_button.setToolTip("Forget the manual cut and let pi's algorithm choose")
        self.preview_button = QPushButton("Preview summary…")
        self.commit_button = QPushButton("Commit compaction")
        self.commit_button.setToolTip("Append the CompactionEntry to the session file (Ctrl+Return)")
        cut = QGroupBox("Cut")
        cl = QVBoxLayout(cut)
        cl.addWidget(self.cut_title)
        cl.addWidget(self.cut_details)
        hint = QLabel(
            "Click any entry on the path in the tree or the bar, then “Cut here” "
            "(or double-click) to choose the cut by hand."
        )
        hint.setWordWrap(True)
        hint.setProperty("muted", True)
        cl.addWidget(hint)
        br = QHBoxLayout()
        br.addWidget(self.auto_button)
        br.addStretch(1)
        cl.addLayout(br)

        self.quirk_box = QGroupBox("pi quirks and rules that apply")
        self.quirk_layout = QVBoxLayout(self.quirk_box)
        self.quirk_layout.setSpacing(6)

        actions = QHBoxLayout()
        actions.addWidget(self.preview_button)
        actions.addStretch(1)
        actions.addWidget(self.commit_button)

        # the settings, the cut and the rules scroll when the panel is short (the context timeline
        # shown, a small screen): squeezed, their wrapped texts were cut off mid-line; the
        # Preview and Commit buttons stay in view below them
        body = QWidget()
        body_lay = QVBoxLayout(body)
        body_lay.setContentsMargins(0, 0, 0, 0)
        body_lay.addWidget(params)
        body_lay.addWidget(cut)
        body_lay.addWidget(self.quirk_box)
        body_lay.addStretch(1)
        self.body_scroll = QScrollArea()
        # no Tab stop of its own (it drew no focus; Tab went on to its controls one press later)
        self.body_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.body_scroll.setWidgetResizable(True)
        self.body_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.body_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body_scroll.setWidget(body)
        self._body = body
        self.body_scroll.viewport().setAutoFillBackground(False)  # the window's colour, as before
        body.setAutoFillBackground(False)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self._layout = lay
        lay.addWidget(self.body_scroll, 1)
        lay.addLayout(actions)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)

        # a dragged slider sends a value per pixel: re-plan once the values settle for a moment
        self._pending: list[int | None] = [None, None, None]
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(PARAMS_DEBOUNCE_MS)
        self._debounce.timeout.connect(self.flush_params)
        self.keep.value_changed.connect(lambda v: self._queue(0, v))
        self.reserve.value_changed.connect(lambda v: self._queue(1, v))
        self.window_spin.valueChanged.connect(lambda v: self._queue(2, v))
        self.auto_button.clicked.connect(self.auto_cut_requested)
        self.preview_button.clicked.connect(self.preview_requested)
        self.commit_button.clicked.connect(self.commit_requested)
        self.set_state(None)

    def minimumSizeHint(self) -> QSize:
        """At least the scrolled body's own minimum width and the scroll bar beside it: the body's
        horizontal scroll bar is off, so in a narrower panel its right edge was cut off (the
        spin boxes, "default", the ends of the notes)."""
        hint = super().minimumSizeHint()
        margins = self._layout.contentsMargins()
        need = (
            self._body.minimumSizeHint().width()
            + self.body_scroll.verticalScrollBar().sizeHint().width()
            + margins.left()
            + margins.right()
        )
        return QSize(max(hint.width(), need), hint.height())

    def _queue(self, which: int, value: int) -> None:
        self._pending[which] = value
        self._debounce.start()

    def flush_params(self) -> None:
        """Send the values changed since the last plan (the debounce timer calls this)."""
        self._debounce.stop()
        keep, reserve, window = self._pending
        self._pending = [None, None, None]
        if keep is not None or reserve is not None or window is not None:
            self.params_changed.emit(keep, reserve, window)

    def _offer_plain_default(self, pin: str, plain: str) -> None:
        """A pi chosen for this file can become the preference for every plain file; a preference
        can go back to following the pi installed here."""
        button = self.plain_default_button
        if pin in PIN_SETTINGS and pin != "auto" and pin != plain:
            button.setText(f"Use pi {pin} for every plain file")
            button.setToolTip(
                f"Read every file without pi 1.6.0 entries as pi {pin} (auto); a file with them is "
                "read as pi 1.6.0 whatever this says"
            )
            button.setProperty("setting", pin)
            button.setVisible(True)
        elif pin == "auto" and plain in PIN_SETTINGS and plain != "auto":
            button.setText("Plain files: follow the installed pi")
            button.setToolTip(
                f"Your preference reads files without pi 1.6.0 entries as pi {plain}; follow the pi "
                "installed on this machine instead (else the newest)"
            )
            button.setProperty("setting", "auto")
            button.setVisible(True)
        else:
            button.setVisible(False)

    def set_source(self, text: str) -> None:
        self.source_note.setText(unbroken_options(f"Defaults: {text}"))

    def set_profile(self, choice: ProfileChoice | None, pin: str = "auto", plain: str = "auto") -> None:
        """Show which pi the plan follows and why; `pin` is the switch's position for this file,
        ``plain`` the user's preference for files without pi 1.6.0 entries."""
        k = self.profile_combo.findData(pin if pin in PIN_SETTINGS else "auto")
        self.profile_combo.blockSignals(True)
        self.profile_combo.setCurrentIndex(max(k, 0))
        self.profile_combo.blockSignals(False)
        self._offer_plain_default(pin, plain)
        if choice is None:
            self._pi = "pi"
            self.profile_note.clear()
            self.quirk_box.setTitle("pi quirks and rules that apply")
            self._say_when_no_quirks("None for this plan.")
            return
        v = choice.profile.version
        self._pi = f"pi {v}"
        self.profile_note.setText(f"Read as <b>pi {html.escape(v)}</b>: {html.escape(choice.reason)}")
        # pi 1.6.0's box shows the rules that move this cut (core.plan's quirks); what else makes its
        # plan differ from 0.80.2's (token counting, system messages, context edits) is in the
        # comparison: the box said "rules that differ: none" beside a comparison listing three
        if choice.profile.projection:
            self.quirk_box.setTitle(f"pi {v} cut rules that apply")
            # the box lists the rules that move a cut once found (27, 30, the metadata split); the
            # ones that decide what is a cut point and what counts (25, 26) shape every 1.6.0 cut,
            # and the comparison says where they part from 0.80.2 (m6: "None" beside a cut they moved)
            self._say_when_no_quirks(
                "Rules 27 and 30 do not move this cut. Where 1.6.0's cut points and counting "
                "(rules 25, 26) part from pi 0.80.2: Compare pi versions."
            )
        else:
            self.quirk_box.setTitle(f"pi {v} quirks that apply")
            self._say_when_no_quirks("None for this plan.")

    def _say_when_no_quirks(self, text: str) -> None:
        if text != self._no_quirks:
            self._no_quirks = text
            self._shown_quirks = None  # the empty box is made again with the new text

    def set_state(self, st: PlanState | None, waiting: str = "", recovery: RecoveryCut | None = None) -> None:
        """Show the plan ``st``; without one, ``waiting`` says why there is none yet (a file being
        read) instead of "No session". ``recovery``: what pi 1.6.0's overflow recovery compaction
        does (SessionDocument.recovery), where its check would omit the failed attempt."""
        enabled = st is not None
        for w in (self.keep, self.reserve, self.window_spin, self.preview_button, self.compare_button):
            w.setEnabled(enabled)
        if st is None:
            # while a file loads there are no settings yet (pi's come with the file's folder)
            self.keep.clear()
            self.reserve.clear()
            _show_no_value(self.window_spin)
            self.window_note.clear()
            self.cut_title.setText(f"<i>{html.escape(waiting)}</i>" if waiting else "<i>No session</i>")
            self.cut_details.clear()
            self.auto_button.setEnabled(False)
            self._set_quirks([])
            return
        th = current_theme()
        self.keep.set_maximum(max(st.window, 1000))
        self.reserve.set_maximum(max(st.window // 2, 1000))
        self.keep.set_value(st.keep)
        self.reserve.set_value(st.reserve)
        self.window_spin.blockSignals(True)
        self.window_spin.setSpecialValueText("")
        self.window_spin.setValue(st.window)
        self.window_spin.blockSignals(False)
        self.window_note.setText("model" if st.window_known else "default")
        self.window_note.setToolTip(
            "From the session's model" if st.window_known else "Unknown model: pi's default window"
        )
        self.auto_button.setEnabled(st.manual)
        if st.error:
            self.cut_title.setText(f"<b style='color:{th.cut.name()}'>Cannot plan</b>")
            self.cut_details.setText(html.escape(st.error))
        elif st.cut is None or st.plan is None:
            self.cut_title.setText("<i>Nothing to plan</i>")
            self.cut_details.clear()
        else:
            c = st.cut
            recs = st.plan.planner.path
            fk = c.first_kept_index
            who = "—"
            if fk < len(recs):
                r = recs[fk]
                who = str(r.role) if r.type == "message" else str(r.type)
            kind = "Manual" if st.manual else "Automatic"
            col = th.cut.name()
            self.cut_title.setText(
                f"<b>{kind} cut</b> at <b style='color:{col}'>path #{fk}</b> ({html.escape(who)})"
                + (f" · <b style='color:{th.turn_start.name()}'>split turn</b>" if c.is_split_turn else "")
            )
            kept_t = st.kept_tokens
            unknown = tokens_unknown_text(st)
            over = (
                None
                if unknown is not None or st.tokens is None
                else window_exceeded_text(
                    st.context_tokens, st.tokens.usage_tokens, st.window, st.params.auto_compaction
                )
            )
            summarised = summarised_span_text(st)
            overflow = overflow_text(st, recovery)  # pi's overflow case comes before the threshold
            lines = [
                f"Summarise path {summarised}" if summarised is not None else "No history part",
                (
                    f"Turn prefix #{c.turn_start_index}…#{fk - 1}"
                    if c.is_split_turn and c.turn_start_index < fk
                    else ""
                ),
                f"Keep #{fk}…#{len(st.path) - 1} · ≈{_fmt(kept_t)} tokens",
                html.escape(unknown) if unknown is not None else "",
                html.escape(overflow[:1].upper() + overflow[1:]) if overflow is not None else "",
                (
                    f"<i>{OMIT_ATTEMPT_HINT}</i>"
                    if overflow is not None and omit_attempt_reason(st) is None
                    else ""
                ),
                self._automatic_line(st),
                html.escape(over) if over is not None else "",
            ]
            if st.nothing_to_compact:
                lines.append(f"<b style='color:{col}'>Nothing to compact</b> with this cut")
            self.cut_details.setText("<br>".join(x for x in lines if x))
        self._set_quirks(st.quirks)

    def _automatic_line(self, st: PlanState) -> str:
        """Whether pi compacts this context by itself: over the threshold, and pi's settings let it."""
        said = threshold_check_text(st)  # what pi's own check weighs (§9), in the core's words
        line = html.escape(said[:1].upper() + said[1:]) + ": "
        if not st.params.auto_compaction:
            return line + f"{self._pi} would not compact automatically: {AUTO_COMPACTION_OFF}"
        by = " by the threshold alone" if st.overflow is not None else ""  # the overflow line says the rest
        return line + f"{self._pi} {'would' if st.should_compact else 'would not'} compact automatically{by}"

    def _quirk_labels(self) -> list[QWidget | None]:
        """The widgets now in the quirk box, in order (``None`` for a non-widget item)."""
        items = (self.quirk_layout.itemAt(k) for k in range(self.quirk_layout.count()))
        return [item.widget() if item is not None else None for item in items]

    def _set_quirks(self, quirks: list[Quirk]) -> None:
        shown = (current_theme().name, tuple(quirks))
        if shown == self._shown_quirks and self.quirk_layout.count():
            return  # same quirks as the last plan: no new labels, no relayout of the window
        previous = self._shown_quirks
        self._shown_quirks = shown
        labels = self._quirk_labels()
        if (
            quirks
            and previous is not None
            and previous[0] == shown[0]
            and [q.code for q in previous[1]] == [q.code for q in quirks]
        ):
            quirk_labels = [lab for lab in labels if isinstance(lab, QLabel)]
            if len(quirk_labels) == len(labels):
                # the same quirks with other numbers (a slider step): new text in the same labels
                for lab, q in zip(quirk_labels, quirks, strict=True):
                    lab.setText(_quirk_html(q))
                return
        while self.quirk_layout.count():
            item = self.quirk_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if not quirks:
            lab = QLabel(self._no_quirks)
            lab.setWordWrap(True)
            lab.setProperty("muted", True)
            self.quirk_layout.addWidget(lab)
            return
        for q in quirks:
            lab = QLabel(_quirk_html(q))
            lab.setTextFormat(Qt.TextFormat.RichText)
            lab.setWordWrap(True)
            lab.setObjectName("quirk")
            lab.setAccessibleName(q.title)
            self.quirk_layout.addWidget(lab)


def _quirk_html(q: Quirk) -> str:
    th = current_theme()
    ref = (
        f"<br><span style='font-size:small; color:{th.muted.name()}'>spec §{html.escape(q.spec)}</span>"
        if q.spec
        else ""
    )
    return f"<b>{html.escape(q.title)}</b><br>{html.escape(q.text)}{ref}"
