"""Compare summaries: candidate summaries of the same plan side by side, each with its provider,
custom instructions, streamed text (editable), what it kept and the context after it.

Widgets only: the panes say what the user asks (generate, cancel, commit, remove) and show what
they are given; :mod:`summary_comparison` runs the generations and the commit. What a candidate
kept is computed in core (:func:`session_studio.core.summary_sections.analyze_summary`) and
rendered here by :func:`kept_html`.
"""

from __future__ import annotations

import html
import string
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QResizeEvent, QTextCursor, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.summary_sections import FileListKept, SummaryKept

from .pane_keys import KeySplitter
from .plain import break_long_lines
from .preview import (
    CHARS4_TIP,
    MAX_VIEW_CHARS,
    PROVIDERS,
    SUMMARY_EDIT_DEBOUNCE_MS,
    ContextPair,
    after_title,
    name_pi_default,
    titled_column,
)
from .shortcuts import chain_tab_order, focusable, return_clicks_buttons
from .theme import current_theme

if TYPE_CHECKING:
    from .errors import Failure

__all__ = ["CandidatePane", "CompareView", "kept_html", "kept_summary_line"]

#: a pane narrower than this cannot show a summary line; more panes than fit scroll sideways (two
#: fit in the centre pane of a 1440-pixel window)
PANE_MIN_WIDTH = 240
#: a pane's height when the panes stand one under the other (too narrow for them side by side):
#: its summary, the sections it kept and the After context each a few lines tall
PANE_STACKED_HEIGHT = 520
#: room for the scroll area's vertical bar, so that side by side never needs one sideways
_SCROLLBAR_ROOM = 20

_MARKS = {"present": "✓", "empty": "○", "missing": "✗"}


def _files_line(kept: FileListKept, label: str) -> str:
    n = len(kept.expected)
    if kept.written is None and not n:
        return f"<div>✓ {label}: none to list</div>"
    if kept.written is None:
        return (
            f"<div style='color:{_bad()}'>✗ {label}: the &lt;{kept.tag}&gt; block is gone ({n} files)</div>"
        )
    if kept.intact:
        return f"<div>✓ {label}: all {n} files</div>"
    parts = []
    if kept.missing:
        parts.append("missing " + ", ".join(html.escape(f) for f in kept.missing[:6]))
        if len(kept.missing) > 6:
            parts[-1] += f" … (+{len(kept.missing) - 6})"
    if kept.extra:
        parts.append("not in the plan " + ", ".join(html.escape(f) for f in kept.extra[:6]))
    return f"<div style='color:{_bad()}'>✗ {label}: " + "; ".join(parts) + "</div>"


def _bad() -> str:
    return current_theme().cut.name()


def kept_html(kept: SummaryKept) -> str:
    """What a summary kept, one line per requested heading and file list (✓ present, ○ empty, ✗ missing)."""
    th = current_theme()
    rows = []
    for s in kept.sections:
        indent = "&nbsp;&nbsp;&nbsp;" if s.heading.startswith("###") else ""
        title = html.escape(s.heading.lstrip("#").strip())
        if s.status == "present":
            rows.append(
                f"<div>{indent}✓ {title} <span style='color:{th.muted.name()}'>({s.items})</span></div>"
            )
        elif s.status == "empty":
            rows.append(f"<div style='color:{th.muted.name()}'>{indent}○ {title}: empty</div>")
        else:
            rows.append(f"<div style='color:{_bad()}'>{indent}✗ {title}: missing</div>")
    rows.append(_files_line(kept.read_files, "read files"))
    rows.append(_files_line(kept.modified_files, "modified files"))
    return "".join(rows)


def kept_summary_line(kept: SummaryKept) -> str:
    """One short line: requested sections with content, empty, missing; the file lists."""
    n = len(kept.sections)
    present = sum(1 for s in kept.sections if s.status == "present")
    line = f"{present}/{n} sections"
    if kept.empty_sections:
        line += f" · {len(kept.empty_sections)} empty"
    if kept.missing_sections:
        line += f" · {len(kept.missing_sections)} missing"
    files_ok = kept.read_files.intact and kept.modified_files.intact
    return line + (" · file lists ✓" if files_ok else " · file lists ✗")


class _PaneStream(QObject):
    part = Signal(int, str)  # request index, text delta (a split turn streams two requests)


class CandidatePane(QFrame):
    """One candidate: provider, custom instructions, Generate/Cancel/Commit, the text and its views."""

    generate_requested = Signal()
    cancel_requested = Signal()
    commit_requested = Signal()
    remove_requested = Signal()
    settings_requested = Signal()
    #: debounced: the text changed by the user (the views follow once typing pauses)
    edited = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.setObjectName("candidatePane")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(PANE_MIN_WIDTH)
        self.stream = _PaneStream()
        #: a generation is streaming into this pane
        self.running = False
        #: the custom provider of this candidate (the Custom provider dialog's values)
        self.custom_values: dict[str, str] | None = None

        self.title = QLabel(f"<b>Candidate {html.escape(name)}</b>")
        self.provider = QComboBox()
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
        # a pane is narrow: the chosen summariser's whole name ("pi's default model (provider/model)")
        # is in the tooltip when the box cuts it short
        self.provider.currentTextChanged.connect(self.provider.setToolTip)
        self.provider.setToolTip(self.provider.currentText())
        self.provider.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.provider.setMinimumContentsLength(8)
        self.provider.setAccessibleName(f"Provider of candidate {name}")
        self.settings_button = QPushButton("Custom provider…")  # the dialog's name everywhere
        self.settings_button.setToolTip(
            "This candidate's custom provider: API, base URL, model, key variable"
        )
        self.remove_button = QPushButton("Remove")
        self.instructions = QLineEdit()
        self.instructions.setPlaceholderText("Custom instructions, like pi's /compact <instructions>")
        self.instructions.setToolTip(
            "Added to the summary request as “Additional focus”, exactly as pi's /compact <text> does; "
            "empty: pi's default prompt for this profile"
        )
        self.instructions.setAccessibleName(f"Custom instructions of candidate {name}")
        self.generate_button = QPushButton("Generate")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.commit_button = QPushButton("Commit this one")
        self.commit_button.setEnabled(False)
        self.commit_button.setToolTip("Generate this candidate first")
        self.status = QLabel("Not generated yet")
        self.status.setWordWrap(True)
        self.status.setProperty("muted", True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # failures quote servers and sessions
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.failure_label = QLabel()
        self.failure_label.setObjectName("candidateFailure")
        self.failure_label.setWordWrap(True)
        self.failure_label.setTextFormat(Qt.TextFormat.PlainText)
        self.failure_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.failure_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.failure_label.hide()
        self.summary = QPlainTextEdit()
        # Tab moves on (a summary is Markdown, indented with spaces): tabbing through the pane
        # silently edited the summary
        self.summary.setTabChangesFocus(True)
        self.summary.setPlaceholderText("The candidate appears here as it is generated; you can edit it.")
        self.summary.setAccessibleName(f"Summary of candidate {name}")
        self.kept_title = QLabel("<b>What it kept</b>")
        self.kept_title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.kept = QTextBrowser()
        self.kept.setAccessibleName("What this candidate kept")
        self.kept.setOpenLinks(False)
        self.kept.setPlaceholderText("The sections pi's prompt asks for and the file lists, once generated")
        self.after_title = QLabel("<b>After</b>")
        self.after_title.setToolTip(CHARS4_TIP)  # the heading the Preview's After pane has (after_title)
        self.after_title.setWordWrap(True)
        self.after_title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.after = QPlainTextEdit()
        self.after.setReadOnly(True)
        self.after.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

        # narrow rows, so that two candidates fit side by side in the centre pane of a 1440-pixel
        # window (one row of title, provider and buttons needed 384 pixels a pane); Commit comes
        # last, under what the candidate kept and leaves
        head = QHBoxLayout()
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.remove_button)
        source = QHBoxLayout()
        source.addWidget(self.provider, 1)
        source.addWidget(self.settings_button)
        run = QHBoxLayout()
        run.addWidget(self.generate_button)
        run.addWidget(self.cancel_button)
        run.addStretch(1)
        commit = QHBoxLayout()
        commit.addStretch(1)
        commit.addWidget(self.commit_button)

        summary_title = QLabel("<b>Summary</b> (editable)")
        split = KeySplitter(Qt.Orientation.Vertical)
        split.addWidget(titled_column(summary_title, self.summary))
        split.addWidget(titled_column(self.kept_title, self.kept))
        split.addWidget(titled_column(self.after_title, self.after))
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 3)  # the twelve-odd headings and two file lists without scrolling
        split.setStretchFactor(2, 2)
        split.setChildrenCollapsible(False)
        self.splitter = split

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        lay.addLayout(head)
        lay.addLayout(source)
        lay.addWidget(self.instructions)
        lay.addLayout(run)
        lay.addWidget(self.status)
        lay.addWidget(self.failure_label)
        lay.addWidget(split, 1)
        lay.addLayout(commit)

        self.generate_button.clicked.connect(self.generate_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.commit_button.clicked.connect(self.commit_requested)
        self.remove_button.clicked.connect(self.remove_requested)
        self.settings_button.clicked.connect(self.settings_requested)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self.stream.part.connect(self._append_part)
        self._provider_changed()

        self.generated_text = ""
        self._parts: dict[int, str] = {}
        self._programmatic = False
        self._shown_after = ""
        self._edit_timer = QTimer(self)
        self._edit_timer.setSingleShot(True)
        self._edit_timer.setInterval(SUMMARY_EDIT_DEBOUNCE_MS)
        self._edit_timer.timeout.connect(self.edited)
        self.summary.textChanged.connect(self._on_text_changed)
        return_clicks_buttons(self)  # made after the window's buttons were

    # ---------------------------------------------------------------- what the user chose
    def provider_key(self) -> str:
        return str(self.provider.currentData())

    def set_provider(self, key: str) -> None:
        self.provider.setCurrentIndex(max(0, self.provider.findData(key)))

    def show_pi_default(self, model: str | None) -> None:
        """Name pi's default model (the open session's settings.json) on its item of the list."""
        name_pi_default(self.provider, model)
        self.provider.setToolTip(self.provider.currentText())

    def custom_instructions(self) -> str | None:
        return self.instructions.text().strip() or None

    def text(self) -> str:
        return self.summary.toPlainText()

    def is_edited(self) -> bool:
        """The editor holds text the user typed (not only what a generation produced)."""
        text = self.text()
        return bool(text.strip()) and text != self.generated_text

    def _provider_changed(self) -> None:
        self.settings_button.setEnabled(
            self.provider_key() == "custom" and not getattr(self, "running", False)
        )

    # ---------------------------------------------------------------- the editable text
    def _on_text_changed(self) -> None:
        if not (self.running or self._programmatic):
            self._edit_timer.start()

    def flush(self) -> None:
        """Deliver a pending edit now (before a commit reads the text)."""
        if self._edit_timer.isActive():
            self._edit_timer.stop()
            self.edited.emit()

    def _replace_all(self, text: str, join: bool) -> None:
        cur = QTextCursor(self.summary.document())
        if join:
            cur.joinPreviousEditBlock()
        else:
            cur.beginEditBlock()
        cur.select(QTextCursor.SelectionType.Document)
        cur.insertText(text)
        cur.endEditBlock()

    def _append_part(self, i: int, t: str) -> None:
        if not self.running:  # a late chunk of a generation that has ended: its result is shown
            return
        self._parts[i] = self._parts.get(i, "") + t
        if len(self._parts) == 1:
            cur = QTextCursor(self.summary.document())
            cur.joinPreviousEditBlock()  # the whole generation is one undo step
            cur.movePosition(QTextCursor.MoveOperation.End)
            cur.insertText(t)
            cur.endEditBlock()
            return
        from session_studio.llm import SPLIT_TURN_SEPARATOR

        self._replace_all(SPLIT_TURN_SEPARATOR.join(self._parts[k] for k in sorted(self._parts)), join=True)

    def set_running(self, running: bool) -> None:
        self.running = running
        for w in (self.generate_button, self.provider, self.instructions, self.remove_button):
            w.setEnabled(not running)
        self._provider_changed()
        self.cancel_button.setEnabled(running)
        self.summary.setReadOnly(running)
        if running:
            self._edit_timer.stop()
            self._parts = {}
            self.commit_button.setEnabled(False)
            self.failure_label.hide()
            self._replace_all("", join=False)  # undoable: Ctrl+Z brings the previous text back
            self.status.setText("Generating…")

    def finish(self, text: str) -> None:
        """The generated summary (with the file lists pi appends): part of the generation's undo step."""
        if self.text() != text:
            self._programmatic = True
            try:
                self._replace_all(text, join=True)
            finally:
                self._programmatic = False
        self.generated_text = text

    def show_failure(self, failure: Failure) -> None:
        """A failed generation, in this pane only (the other candidates go on)."""
        self.status.setText("Failed")
        self.failure_label.setText(f"{failure.title}\n\n{failure.text}".strip())
        self.failure_label.setToolTip(failure.details[:4000])
        self.failure_label.show()

    def set_commit_allowed(self, why_not: str | None) -> None:
        self.commit_button.setEnabled(why_not is None and not self.running)
        self.commit_button.setToolTip(why_not or "Append this candidate as the compaction entry")

    # ---------------------------------------------------------------- what core computed
    def show_view(self, pair: ContextPair | None, kept: SummaryKept | None) -> None:
        if kept is None:
            self.kept_title.setText("<b>What it kept</b>")
            self.kept.clear()
        else:
            self.kept_title.setText(f"<b>What it kept</b> · {html.escape(kept_summary_line(kept))}")
            self.kept.setHtml(kept_html(kept))
        if pair is None:
            self.after_title.setText("<b>After</b>")
            self.after.clear()
            self._shown_after = ""
            return
        self.after_title.setText(after_title(pair))
        text = pair.after_text[:MAX_VIEW_CHARS]
        if text != self._shown_after:
            self.after.setPlainText(break_long_lines(text))
            self._shown_after = text


class ScrollChain(QObject):
    """Wheel scrolling goes on in the outer scroll area once an inner text view is at its end (or
    cannot scroll): with the candidates one under the other, the wheel over a summary reached the
    next candidate only by dragging the outer scroll bar."""

    def __init__(self, outer: QScrollArea, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.outer = outer
        #: viewport → its view (the wheel reaches the viewport)
        self._views: dict[QObject, QAbstractScrollArea] = {}

    def watch(self, view: QAbstractScrollArea) -> None:
        port = view.viewport()
        port.installEventFilter(self)
        self._views[port] = view
        port.destroyed.connect(lambda: self._views.pop(port, None))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel:
            return False
        view = self._views.get(obj)
        if view is None:
            return False
        assert isinstance(event, QWheelEvent)
        dy = event.angleDelta().y()
        if not dy:
            return False
        inner = view.verticalScrollBar()
        at_end = inner.value() <= inner.minimum() if dy > 0 else inner.value() >= inner.maximum()
        outer = self.outer.verticalScrollBar()
        if not at_end or outer.maximum() == outer.minimum():
            return False
        # Qt's own step: three lines of the outer bar per notch of 120
        outer.setValue(outer.value() - dy * 3 * outer.singleStep() // 120)
        return True


class CompareView(QWidget):
    """The candidate panes side by side, with Add candidate; one under the other (scrolled down)
    when the view is too narrow for them side by side (the middle column of a 1100 px window)."""

    add_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel(
            "Candidate summaries of the current plan, generated separately; nothing is written until you "
            "commit one. Sizes are pi's estimate (chars/4)."
        )
        self.note.setWordWrap(True)
        self.note.setProperty("muted", True)
        self.note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.add_button = QPushButton("Add candidate")
        self.add_button.setToolTip("Another summary of the same plan, with its own provider and instructions")
        self.panes: list[CandidatePane] = []
        self.row = KeySplitter(Qt.Orientation.Horizontal)
        self.row.setChildrenCollapsible(False)
        self.scroll_area = QScrollArea()
        # no Tab stop of its own (it drew no focus; Tab went on to its controls one press later)
        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidget(self.row)
        self._scroll_chain = ScrollChain(self.scroll_area, self)
        top = QHBoxLayout()
        top.addWidget(self.note, 1)
        top.addWidget(self.add_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.scroll_area, 1)
        self.add_button.clicked.connect(self.add_requested)

    def next_name(self) -> str:
        used = {p.name for p in self.panes}
        return next(_names(used))

    def add_pane(self) -> CandidatePane:
        pane = CandidatePane(self.next_name())
        for view in (pane.summary, pane.kept, pane.after):
            self._scroll_chain.watch(view)
        self.panes.append(pane)
        self.row.addWidget(pane)
        self._fit()
        self._update_remove()
        previous = self.panes[-2] if len(self.panes) > 1 else None
        chain_tab_order(
            next(reversed(focusable(previous)), self.add_button) if previous else self.add_button, pane
        )
        return pane

    def remove_pane(self, pane: CandidatePane) -> None:
        self.panes.remove(pane)
        pane.hide()
        pane.setParent(None)
        pane.deleteLater()
        self._fit()
        self._update_remove()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Side by side when the panes fit at their minimum width, else one under the other."""
        n = max(1, len(self.panes))
        side_by_side = self.scroll_area.width() >= PANE_MIN_WIDTH * n + _SCROLLBAR_ROOM
        orientation = Qt.Orientation.Horizontal if side_by_side else Qt.Orientation.Vertical
        if self.row.orientation() != orientation:
            self.row.setOrientation(orientation)
        if side_by_side:
            self.row.setMinimumSize(PANE_MIN_WIDTH * n, 0)
        else:
            self.row.setMinimumSize(PANE_MIN_WIDTH, PANE_STACKED_HEIGHT * n)

    def _update_remove(self) -> None:
        # two candidates at least: it is a comparison
        for p in self.panes:
            p.remove_button.setVisible(len(self.panes) > 2)

    def pane(self, name: str) -> CandidatePane:
        return next(p for p in self.panes if p.name == name)


def _names(used: set[str]) -> Iterator[str]:
    for c in string.ascii_uppercase:
        if c not in used:
            yield c
    k = 2
    while True:
        for c in string.ascii_uppercase:
            if f"{c}{k}" not in used:
                yield f"{c}{k}"
        k += 1
