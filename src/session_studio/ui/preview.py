"""Preview: the summary streamed as it is generated (editable), the file lists, and the
context the LLM sees before and after the compaction, side by side."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.messages import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, convert_to_llm
from session_studio.core.preparation import Preparation
from session_studio.core.serialize import serialize_conversation
from session_studio.core.tokens import estimate_tokens

from .document import PlanState
from .plain import break_long_lines

__all__ = [
    "ContextPair",
    "PreviewPane",
    "ProviderDialog",
    "StreamDialog",
    "build_context_pair",
    "provider_config",
]

PROVIDERS = [
    ("offline", "Offline draft (no network)"),
    ("pi", "pi's default model (settings.json)"),
    ("custom", "Custom provider (base URL)"),
]
MAX_VIEW_CHARS = 400_000


@dataclass(frozen=True)
class ContextPair:
    before_text: str
    before_tokens: float
    before_count: int
    after_text: str
    after_tokens: float
    after_count: int
    #: the context pi builds after the commit (SessionContext.to_json() of the engine's outcome), if known
    after_context: Any = None


def _sum(msgs: list[Any]) -> float:
    t = 0.0
    for m in msgs:
        try:
            v = estimate_tokens(m)
        except Exception:
            v = 0
        t += v if isinstance(v, int | float) and not (isinstance(v, float) and math.isnan(v)) else 0
    return t


def _view(msgs: list[Any]) -> str:
    try:
        text = serialize_conversation(convert_to_llm(msgs))
    except Exception as e:
        text = f"(cannot serialise: {e})"
    return text if len(text) <= MAX_VIEW_CHARS else text[:MAX_VIEW_CHARS] + "\n\n[… truncated for display]"


def build_context_pair(st: PlanState, summary: str, outcome: Any = None) -> ContextPair:
    """The messages before (current context) and after (summary + kept entries). Worker-safe.

    With the engine's ``outcome`` the "after" side is exactly what will be written and what
    pi rebuilds (``outcome.context_after()`` with the edited ``summary``).
    """
    assert st.plan is not None and st.cut is not None
    ctx = st.plan.context
    before = ctx.messages()
    if st.nothing_to_compact:
        note = "(nothing to compact with this cut: the context stays as it is)"
        return ContextPair(_view(before), _sum(before), len(before), note, _sum(before), len(before))
    if outcome is not None:
        final = dataclasses.replace(outcome, summary=summary)
        after_ctx = final.context_after()
        msgs = after_ctx.messages()
        return ContextPair(
            _view(before),
            _sum(before),
            len(before),
            _view(msgs),
            _sum(msgs),
            len(msgs),
            after_ctx.to_json(),
        )
    kept = set(st.path[st.cut.first_kept_index :])
    after_msgs: list[Any] = [{"role": "compactionSummary", "summary": summary, "tokensBefore": 0}]
    for it, m in zip(ctx.items, before, strict=True):
        if it.record in kept and it.kind != "compactionSummary":
            after_msgs.append(m)
    after_text = _view(after_msgs)
    if not summary:
        after_text = after_text.replace(
            COMPACTION_SUMMARY_PREFIX + COMPACTION_SUMMARY_SUFFIX,
            COMPACTION_SUMMARY_PREFIX + "(summary not generated yet)" + COMPACTION_SUMMARY_SUFFIX,
        )
    return ContextPair(
        _view(before), _sum(before), len(before), after_text, _sum(after_msgs), len(after_msgs)
    )


class _Stream(QObject):
    text = Signal(str)
    part = Signal(int, str)  # request index, text delta (split turns stream two requests at once)


class ProviderDialog(QDialog):
    """A custom summariser endpoint: API kind, base URL, model and the *name* of the key variable.

    The key itself is never stored: it is read from the environment variable at run time.
    """

    KINDS = (("openai", "OpenAI-compatible (chat/completions)"), ("anthropic", "Anthropic (messages)"))

    def __init__(self, values: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Provider settings")
        self.kind = QComboBox()
        for key, label in self.KINDS:
            self.kind.addItem(label, key)
        i = self.kind.findData(values.get("kind", "openai"))
        self.kind.setCurrentIndex(max(0, i))
        self.base_url = QLineEdit(values.get("base_url", ""))
        self.base_url.setPlaceholderText("https://api.openai.com/v1 · http://localhost:11434/v1")
        self.model = QLineEdit(values.get("model", ""))
        self.model.setPlaceholderText("e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.1:8b")
        self.key_env = QLineEdit(values.get("key_env", ""))
        self.key_env.setPlaceholderText("OPENAI_API_KEY (empty: no key, e.g. a local server)")
        note = QLabel(
            "The API key is read from this environment variable when a summary is generated; "
            "Session Studio never stores keys."
        )
        note.setWordWrap(True)
        note.setProperty("muted", True)
        form = QFormLayout()
        form.addRow("API", self.kind)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key variable", self.key_env)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(buttons)
        for w in (self.base_url, self.model):
            w.textChanged.connect(self._validate)
        self._validate()

    def _validate(self) -> None:
        url = self.base_url.text().strip()
        ok = url.startswith(("http://", "https://")) and bool(self.model.text().strip())
        self.ok_button.setEnabled(ok)

    def values(self) -> dict[str, str]:
        return {
            "kind": str(self.kind.currentData()),
            "base_url": self.base_url.text().strip(),
            "model": self.model.text().strip(),
            "key_env": self.key_env.text().strip(),
        }


def provider_config(values: dict[str, str] | None) -> Any:
    """A ProviderConfig from the dialog's values (None when not configured)."""
    if not values or not values.get("base_url") or not values.get("model"):
        return None
    from session_studio.llm import ProviderConfig

    return ProviderConfig(
        provider="anthropic" if values.get("kind") == "anthropic" else "openai",
        base_url=values["base_url"],
        model=values["model"],
        api_key_env=values.get("key_env") or None,
    )


def _mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class PreviewPane(QWidget):
    generate_requested = Signal(str)  # provider key
    cancel_requested = Signal()
    provider_settings_requested = Signal()
    summary_edited = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream = _Stream()
        self.provider = QComboBox()
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
        # a long provider name must not make the centre pane (and so the tree) wide
        self.provider.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.provider.setMinimumContentsLength(10)
        self.provider_button = QPushButton("Settings…")
        self.provider_button.setToolTip("Base URL, model and API key variable of the custom provider")
        self.generate_button = QPushButton("Generate summary")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.status = QLabel("Offline by default: nothing leaves this machine.")
        self.status.setProperty("muted", True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary = QPlainTextEdit()
        self.summary.setPlaceholderText(
            "The summary appears here as it is generated; you can edit it before committing."
        )
        self.files = QPlainTextEdit()
        self.files.setReadOnly(True)
        self.files.setFont(_mono())
        self.files.setMaximumHeight(140)
        self.before = QPlainTextEdit()
        self.after = QPlainTextEdit()
        for w in (self.before, self.after):
            w.setReadOnly(True)
            w.setFont(_mono())
            w.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.before_title = QLabel("<b>Before</b>")
        self.after_title = QLabel("<b>After</b>")
        for lab in (self.before_title, self.after_title):
            lab.setWordWrap(True)
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        top = QHBoxLayout()
        top.addWidget(QLabel("Provider"))
        top.addWidget(self.provider, 1)
        top.addWidget(self.provider_button)
        # the buttons and the status get their own line: the pane stays narrow enough for a wide tree
        run = QHBoxLayout()
        run.addWidget(self.generate_button)
        run.addWidget(self.cancel_button)
        run.addWidget(self.status, 1)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        def col(title: QLabel, view: QPlainTextEdit) -> QWidget:
            w = QWidget()
            lay = QVBoxLayout(w)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(3)
            lay.addWidget(title)
            lay.addWidget(view, 1)
            return w

        summary_title = QLabel("<b>Summary</b> (editable)")
        files_title = QLabel("<b>Files</b> read / modified")
        files_title.setToolTip("Appended to the summary as <read-files> / <modified-files>")
        for lab in (summary_title, files_title):
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.files.setMaximumHeight(16777215)
        self.files.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(col(summary_title, self.summary))
        upper.addWidget(col(files_title, self.files))
        upper.setStretchFactor(0, 3)
        upper.setStretchFactor(1, 2)
        upper.setChildrenCollapsible(False)
        ctx = QSplitter(Qt.Orientation.Horizontal)
        ctx.addWidget(col(self.before_title, self.before))
        ctx.addWidget(col(self.after_title, self.after))
        ctx.setChildrenCollapsible(False)
        # summary + files above, the two contexts below: every pane keeps a readable width
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(ctx)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        self.splitter = split

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addLayout(run)
        lay.addWidget(split, 1)

        self.generate_button.clicked.connect(
            lambda: self.generate_requested.emit(self.provider.currentData())
        )
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.stream.text.connect(self._append)
        self.stream.part.connect(self._append_part)
        self.provider_button.clicked.connect(self.provider_settings_requested)
        self.pair: ContextPair | None = None
        self._parts: dict[int, str] = {}
        self.summary.textChanged.connect(lambda: self.summary_edited.emit(self.summary.toPlainText()))

    def _append(self, t: str) -> None:
        cur = self.summary.textCursor()
        cur.movePosition(cur.MoveOperation.End)
        cur.insertText(t)
        self.summary.setTextCursor(cur)

    def _append_part(self, i: int, t: str) -> None:
        self._parts[i] = self._parts.get(i, "") + t
        if len(self._parts) == 1:
            self._append(t)
            return
        from session_studio.llm import SPLIT_TURN_SEPARATOR

        parts = [self._parts[k] for k in sorted(self._parts)]
        self.summary.setPlainText(SPLIT_TURN_SEPARATOR.join(parts))

    def set_running(self, running: bool) -> None:
        self.generate_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.provider.setEnabled(not running)
        self.provider_button.setEnabled(not running)
        if running:
            self._parts = {}
            self.summary.clear()
            self.status.setText("Generating…")

    def set_pending(self) -> None:
        """The plan changed: the previous preparation (file lists, counts) no longer applies."""
        self.files.setPlainText("(preparing…)")
        self.status.setText("Preparing the messages to summarise…")

    def set_preparation(self, prep: Preparation | None) -> None:
        if prep is None:
            self.status.setText("Nothing to summarise with this cut.")
            self.files.setPlainText("(nothing to compact with this cut)")
            self.generate_button.setEnabled(False)
            return
        self.generate_button.setEnabled(True)
        read, modified = prep.file_lists
        lines = (
            [f"read ({len(read)})"]
            + [f"  {f}" for f in read]
            + [f"modified ({len(modified)})"]
            + [f"  {f}" for f in modified]
        )
        self.files.setPlainText("\n".join(str(x) for x in lines))
        n = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
        self.status.setText(
            f"{len(prep.messages_to_summarize)} history + {len(prep.turn_prefix_messages)} "
            f"turn-prefix messages to summarise ({n} total)"
        )

    def set_contexts(self, pair: ContextPair | None) -> None:
        self.pair = pair
        if pair is None:
            self.before.clear()
            self.after.clear()
            return
        self.before_title.setText(
            f"<b>Before</b> · {pair.before_count:,} messages · ≈{pair.before_tokens:,.0f} tokens"
        )
        self.after_title.setText(
            f"<b>After</b> · {pair.after_count:,} messages · ≈{pair.after_tokens:,.0f} tokens"
            + (
                f" · saves {pair.before_tokens - pair.after_tokens:,.0f}"
                if pair.before_tokens > pair.after_tokens
                else ""
            )
        )
        # a long unbroken line (base64, minified code) would freeze the wrapping view
        self.before.setPlainText(break_long_lines(pair.before_text))
        self.after.setPlainText(break_long_lines(pair.after_text))


class StreamDialog(QDialog):
    """Non-modal progress for a streamed summary written by a job (branch summaries): text + Cancel."""

    cancel_requested = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.stream = _Stream()
        self.status = QLabel("Generating the summary…")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # finish() shows notes quoting the session
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMinimumSize(560, 280)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self._cancel)
        lay = QVBoxLayout(self)
        lay.addWidget(self.status)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.buttons)
        self.finished_ = False
        self.stream.text.connect(self._append)

    def _append(self, t: str) -> None:
        cur = self.text.textCursor()
        cur.movePosition(cur.MoveOperation.End)
        cur.insertText(t)
        self.text.setTextCursor(cur)

    def _cancel(self) -> None:
        if self.finished_:
            self.accept()
            return
        self.status.setText("Cancelling…")
        self.cancel_requested.emit()

    def finish(self, note: str) -> None:
        self.finished_ = True
        self.status.setText(note)
        self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
