"""Preview: the summary streamed as it is generated (editable), the file lists, and the
context the LLM sees before and after the compaction, side by side."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.file_ops import format_file_operations
from session_studio.core.messages import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, convert_to_llm
from session_studio.core.preparation import Preparation
from session_studio.core.serialize import serialize_conversation
from session_studio.core.tokens import estimate_tokens

from .document import PlanState

__all__ = ["ContextPair", "PreviewPane", "build_context_pair", "generate_summary"]

PROVIDERS = [("offline", "Offline draft (no network)"), ("pi", "pi's default model (settings.json)")]
MAX_VIEW_CHARS = 400_000


@dataclass(frozen=True)
class ContextPair:
    before_text: str
    before_tokens: float
    before_count: int
    after_text: str
    after_tokens: float
    after_count: int


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


def build_context_pair(st: PlanState, summary: str) -> ContextPair:
    """The messages before (current context) and after (summary + kept entries). Worker-safe."""
    assert st.plan is not None and st.cut is not None
    ctx = st.plan.context
    before = ctx.messages()
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


def generate_summary(
    prep: Preparation,
    reserve: int,
    provider: str,
    on_text: Any,
    cancel: Any,
    model: Any = None,
    thinking_level: Any = None,
) -> str:
    """Summarise like pi's compact(): history (+ turn prefix) then the file lists. Runs in a worker."""
    from session_studio.llm import OfflineSummarizer, Prompts, make_summarizer
    from session_studio.llm.requests import history_request, merge_split_turn, turn_prefix_request

    summarizer = OfflineSummarizer(chunk_delay_s=0.03) if provider == "offline" else make_summarizer(None)
    prompts = Prompts()
    max_out = 32000
    reasoning = False
    try:
        from session_studio.llm import model_info

        if isinstance(model, dict) and isinstance(model.get("modelId"), str):
            info = model_info(model.get("provider"), model["modelId"])
            if info is not None:
                max_out, reasoning = info.max_tokens, info.reasoning
    except Exception:
        pass
    level = thinking_level if isinstance(thinking_level, str) else None
    prev = prep.previous_summary if isinstance(prep.previous_summary, str) else None

    def run(req: Any, prefix: str = "") -> str:
        if prefix:
            on_text(prefix)
        return summarizer.summarize(req, on_text=on_text, cancel=cancel).text

    hist_conv = serialize_conversation(convert_to_llm(prep.messages_to_summarize))
    if prep.is_split_turn and prep.turn_prefix_messages:
        history = (
            run(history_request(hist_conv, prev, None, reserve, max_out, reasoning, level, prompts))
            if prep.messages_to_summarize
            else None
        )
        if history is None:
            on_text("No prior history.")
        pre_conv = serialize_conversation(convert_to_llm(prep.turn_prefix_messages))
        from session_studio.llm.requests import SPLIT_TURN_SEPARATOR

        prefix = run(
            turn_prefix_request(pre_conv, reserve, max_out, reasoning, level, prompts), SPLIT_TURN_SEPARATOR
        )
        text = merge_split_turn(history, prefix)
    else:
        text = run(history_request(hist_conv, prev, None, reserve, max_out, reasoning, level, prompts))
    read, modified = prep.file_lists
    files = format_file_operations(read, modified)
    if files:
        on_text(files)
    return text + files


class _Stream(QObject):
    text = Signal(str)


def _mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class PreviewPane(QWidget):
    generate_requested = Signal(str)  # provider key
    cancel_requested = Signal()
    summary_edited = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream = _Stream()
        self.provider = QComboBox()
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
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
        top.addWidget(self.provider)
        top.addWidget(self.generate_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.status, 1)

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel("<b>Summary</b> (editable)"))
        ll.addWidget(self.summary, 1)
        ll.addWidget(QLabel("<b>Files</b> read / modified (appended to the summary)"))
        ll.addWidget(self.files)

        def col(title: QLabel, view: QPlainTextEdit) -> QWidget:
            w = QWidget()
            lay = QVBoxLayout(w)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(title)
            lay.addWidget(view, 1)
            return w

        ctx = QSplitter(Qt.Orientation.Horizontal)
        ctx.addWidget(col(self.before_title, self.before))
        ctx.addWidget(col(self.after_title, self.after))
        ctx.setChildrenCollapsible(False)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(ctx)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        self.splitter = split

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addLayout(top)
        lay.addWidget(split, 1)

        self.generate_button.clicked.connect(
            lambda: self.generate_requested.emit(self.provider.currentData())
        )
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.stream.text.connect(self._append)
        self.summary.textChanged.connect(lambda: self.summary_edited.emit(self.summary.toPlainText()))

    def _append(self, t: str) -> None:
        cur = self.summary.textCursor()
        cur.movePosition(cur.MoveOperation.End)
        cur.insertText(t)
        self.summary.setTextCursor(cur)

    def set_running(self, running: bool) -> None:
        self.generate_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.provider.setEnabled(not running)
        if running:
            self.summary.clear()
            self.status.setText("Generating…")

    def set_preparation(self, prep: Preparation | None) -> None:
        if prep is None:
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
        self.before.setPlainText(pair.before_text)
        self.after.setPlainText(pair.after_text)
