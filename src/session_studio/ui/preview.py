"""Preview: the summary streamed as it is generated (editable), the file lists, and the
context the LLM sees before and after the compaction, side by side."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.history import CHUNK_ENTRIES
from session_studio.core.jsvalue import UNDEFINED, js_string, prop
from session_studio.core.messages import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, convert_to_llm
from session_studio.core.preparation import Preparation
from session_studio.core.projection import Projection, current_system_message
from session_studio.core.serialize import serialize_conversation
from session_studio.core.tokens import estimator_for

from .document import PlanState
from .pane_keys import KeySplitter
from .plain import break_long_lines
from .shortcuts import chain_tab_order

if TYPE_CHECKING:
    from session_studio.llm import ProviderConfig

__all__ = [
    "ContextPair",
    "PreviewPane",
    "ProviderDialog",
    "StreamDialog",
    "after_title",
    "build_context_pair",
    "custom_key_problem",
    "name_pi_default",
    "provider_config",
    "provider_status",
]

PROVIDERS = [
    ("offline", "Offline draft (no network)"),
    ("pi", "pi's default model (settings.json)"),
    ("custom", "Custom provider (base URL)"),
]
MAX_VIEW_CHARS = 400_000
#: typing in the summary re-plans (token counts, the "after" context) once it pauses this long
SUMMARY_EDIT_DEBOUNCE_MS = 300


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
    #: no summary yet: ``after_tokens`` counts everything but it (the bar counts a placeholder)
    summary_pending: bool = False


#: what the Before/After headings count
CHARS4_TIP = (
    "The sum of pi's chars/4 estimate of each message shown. The context size on the token bar and "
    "the compaction's tokensBefore count the last answer's usage where there is one (what the "
    "provider reported), so they differ from this sum."
)


def after_title(pair: ContextPair) -> str:
    """The "After" pane's heading (the Preview's and each candidate summary's)."""
    return f"<b>After</b> · {pair.after_count:,} messages · ≈{pair.after_tokens:,.0f} tokens (chars/4)" + (
        " + the summary"  # not generated yet: the bar counts a placeholder for it
        if pair.summary_pending
        else f" · saves {pair.before_tokens - pair.after_tokens:,.0f}"
        if pair.before_tokens > pair.after_tokens
        else ""
    )


def _sum(msgs: list[Any], estimate: Callable[[Any], int | float]) -> float:
    """``estimate`` (the profile's estimateTokens: 1.6.0 counts system messages) over ``msgs``."""
    t = 0.0
    for m in msgs:
        try:
            v = estimate(m)
        except Exception:
            v = 0
        t += v if isinstance(v, int | float) and not (isinstance(v, float) and math.isnan(v)) else 0
    return t


def _view(msgs: list[Any], with_system: bool) -> str:
    view = _ViewText(with_system)
    view.add(msgs)
    return view.text()


#: how much of a system message's text the Before/After panes show (its tokens count whole)
SYSTEM_HEAD_CHARS = 600


def _js_text(v: Any) -> str:
    return "" if v is None or v is UNDEFINED else js_string(v)


def _system_text(msg: Any) -> str:
    """A system message for the panes: its text, and the tools it adds or removes (pi 1.6.0)."""
    content = prop(msg, "content")
    if type(content) is str:
        text = content
    else:
        blocks = content if type(content) is list else []
        text = "\n".join(_js_text(prop(b, "text")) for b in blocks if prop(b, "type") == "text")
    sections = prop(msg, "sections")
    named = [(str(k), v) for k, v in sections.items() if type(v) is str] if isinstance(sections, dict) else []
    if named and not text:  # the prompt held in its sections (their lengths count, rule 21)
        text = "\n\n".join(f"[{name}] {body}" for name, body in named)
    notes = []
    if named:
        notes.append("sections: " + ", ".join(f"{name} ({len(body):,} chars)" for name, body in named))
    for key, said in (("toolsAdded", "tools added"), ("toolsRemoved", "tools removed")):
        tools = prop(msg, key)
        if type(tools) is list and tools:
            notes.append(f"{said}: " + ", ".join(_js_text(prop(t, "name")) for t in tools))
    if len(text) > SYSTEM_HEAD_CHARS:  # a system prompt runs to pages: its head, and where the rest is
        text = (
            text[:SYSTEM_HEAD_CHARS]
            + f"… (+{len(text) - SYSTEM_HEAD_CHARS:,} chars: the whole message is in the inspector)"
        )
    return "[System]: " + text + "".join(f"\n({n})" for n in notes)


class _ViewText:
    """serialize_conversation(convert_to_llm(messages)) for a pane, of messages given a chunk at a
    time (a long path's context is never held whole), kept up to MAX_VIEW_CHARS: the chunks' texts
    join as one conversation's parts do (a blank line between), and a message that cannot be serialised anywhere
    makes the whole view say so, as it did when the whole context was serialised at once."""

    def __init__(self, with_system: bool) -> None:
        #: pi 1.6.0: system messages reach the LLM (spec §10 rule 20) and are shown in their place,
        #: though the summary's serialisation (the rest of the view) leaves them out
        self.with_system = with_system
        self.pieces: list[str] = []
        self.length = -2  # of the pieces joined
        self.error: Exception | None = None

    def add(self, msgs: list[Any]) -> None:
        if self.error is not None:
            return
        if self.with_system and any(prop(m, "role") == "system" for m in msgs):
            run: list[Any] = []
            for m in msgs:
                if prop(m, "role") == "system":
                    self._add_run(run)
                    run = []
                    self._add_text(_system_text(m))
                else:
                    run.append(m)
            self._add_run(run)
            return
        self._add_run(msgs)

    def _add_run(self, msgs: list[Any]) -> None:
        if self.error is not None or not msgs:
            return
        try:
            text = serialize_conversation(convert_to_llm(msgs))
        except Exception as e:
            self.error = e
            return
        self._add_text(text)

    def _add_text(self, text: str) -> None:
        if text and self.length <= MAX_VIEW_CHARS:  # beyond it only an error could change the view
            self.pieces.append(text)
            self.length += 2 + len(text)

    def text(self) -> str:
        if self.error is not None:
            return f"(cannot serialise: {self.error})"
        text = "\n\n".join(self.pieces)
        return (
            text if len(text) <= MAX_VIEW_CHARS else text[:MAX_VIEW_CHARS] + "\n\n[… truncated for display]"
        )


def _chunks(messages: Iterable[Any], n: int = CHUNK_ENTRIES) -> Iterator[list[Any]]:
    it = iter(messages)
    while chunk := list(itertools.islice(it, n)):
        yield chunk


def build_context_pair(st: PlanState, summary: str, outcome: Any = None) -> ContextPair:
    """The messages before (current context) and after (summary + kept entries). Worker-safe.

    With the engine's ``outcome`` the "after" side is exactly what will be written and what
    pi rebuilds (``outcome.context_after()`` with the edited ``summary``).
    """
    assert st.plan is not None and st.cut is not None
    ctx = st.plan.context
    estimate = estimator_for(st.profile.system_messages)
    kept = set(st.path[st.cut.first_kept_index :])
    # the context read a chunk at a time, never held whole (a path before its first compaction: 100k
    # messages): its view, tokens and count, its system messages (1.6.0), the kept ones (0.80.2)
    view = _ViewText(st.profile.system_messages)
    before_tokens, before_count = 0.0, 0
    system: list[Any] = []
    kept_messages: list[Any] = []
    if isinstance(ctx, Projection):
        for chunk in _chunks(itertools.chain.from_iterable(ctx.iter_entry_messages())):
            system.extend(m for m in chunk if prop(m, "role") == "system")
            view.add(chunk)
            before_tokens += _sum(chunk, estimate)
            before_count += len(chunk)
    else:
        for chunk in _chunks(ctx.iter_messages()):
            items = ctx.items[before_count : before_count + len(chunk)]
            kept_messages.extend(
                m
                for it, m in zip(items, chunk, strict=True)
                if it.record in kept and it.kind != "compactionSummary"
            )
            view.add(chunk)
            before_tokens += _sum(chunk, estimate)
            before_count += len(chunk)
    before_text = view.text()
    if st.nothing_to_compact:
        note = "(nothing to compact with this cut: the context stays as it is)"
        return ContextPair(before_text, before_tokens, before_count, note, before_tokens, before_count)
    if outcome is not None:
        final = dataclasses.replace(outcome, summary=summary)
        after_ctx = final.context_after()
        msgs = after_ctx.messages()
        return ContextPair(
            before_text,
            before_tokens,
            before_count,
            _view(msgs, st.profile.system_messages),
            _sum(msgs, estimate),
            len(msgs),
            after_ctx.to_json(),
        )
    after_msgs: list[Any] = [{"role": "compactionSummary", "summary": summary, "tokensBefore": 0}]
    if isinstance(ctx, Projection):  # pi 1.6.0: kept entries' edited messages, no system messages (rule 17)
        recs = ctx.session.records
        snapshot = current_system_message(system)
        if snapshot is not None:  # the new compaction carries the replayed system message first
            after_msgs.insert(0, snapshot)
        for k, e in enumerate(ctx.entries):
            if e.record in kept and recs[e.record].type != "compaction":
                after_msgs.extend(m for m in ctx.entry_messages(k) if prop(m, "role") != "system")
    else:
        after_msgs.extend(kept_messages)
    after_text = _view(after_msgs, st.profile.system_messages)
    if not summary:
        after_text = after_text.replace(
            COMPACTION_SUMMARY_PREFIX + COMPACTION_SUMMARY_SUFFIX,
            COMPACTION_SUMMARY_PREFIX + "(summary not generated yet)" + COMPACTION_SUMMARY_SUFFIX,
        )
    return ContextPair(
        before_text,
        before_tokens,
        before_count,
        after_text,
        _sum(after_msgs, estimate),
        len(after_msgs),
        summary_pending=not summary,
    )


class _Stream(QObject):
    text = Signal(str)
    part = Signal(int, str)  # request index, text delta (split turns stream two requests at once)
    note = Signal(str)  # what the request is doing besides streaming (a retry after a 429)


class ProviderDialog(QDialog):
    """A custom summariser endpoint: API kind, base URL, model and the *name* of the key variable.

    The key itself is never stored: it is read from the environment variable at run time.
    """

    KINDS = (("openai", "OpenAI-compatible (chat/completions)"), ("anthropic", "Anthropic (messages)"))
    #: the variable each API conventionally reads its key from (the placeholder of the key field)
    KEY_VARIABLES: ClassVar[dict[str, str]] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}

    def __init__(self, values: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Custom provider")
        self.kind = QComboBox()
        for key, label in self.KINDS:
            self.kind.addItem(label, key)
        i = self.kind.findData(values.get("kind", "openai"))
        self.kind.setCurrentIndex(max(0, i))
        self.base_url = QLineEdit(values.get("base_url", ""))
        self.model = QLineEdit(values.get("model", ""))
        self.model.setPlaceholderText("e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.1:8b")
        self.key_env = QLineEdit(values.get("key_env", ""))
        note = QLabel(
            "The API key is read from this environment variable when a summary is generated; "
            "Session Studio never stores keys."
        )
        note.setWordWrap(True)
        note.setProperty("muted", True)
        # next to "pi's default model" in the list, this form can look like that model's settings
        purpose = QLabel(
            "The summariser “Custom provider (base URL)” uses these. pi's default model needs nothing "
            "here: it is read, with its key, from pi's settings.json, models.json and auth.json."
        )
        purpose.setWordWrap(True)
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
        lay.addWidget(purpose)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(buttons)
        for w in (self.base_url, self.model):
            w.textChanged.connect(self._validate)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed()
        self._validate()

    def _kind_changed(self) -> None:
        if self.kind.currentData() == "anthropic":
            self.base_url.setPlaceholderText("https://api.anthropic.com")
            self.key_env.setPlaceholderText(f"{self.KEY_VARIABLES['anthropic']} (required)")
        else:
            self.base_url.setPlaceholderText("https://api.openai.com/v1 · http://localhost:11434/v1")
            self.key_env.setPlaceholderText(
                f"{self.KEY_VARIABLES['openai']} (empty: no key, e.g. a local server)"
            )
        # each field as wide as its example: the examples were cut off mid-URL in the dialog's
        # first width ("https://api.openai.com/v1 · http://localh"); never narrower than before,
        # so switching the API does not make the dialog jump
        for field in (self.base_url, self.model, self.key_env):
            need = field.fontMetrics().horizontalAdvance(field.placeholderText()) + 24
            field.setMinimumWidth(max(field.minimumWidth(), need))

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


def custom_key_problem(values: dict[str, str] | None, environ: Any = None) -> str | None:
    """Why the custom provider cannot get its API key, in the words of the Custom provider dialog."""
    import os

    if not values:
        return None
    env = os.environ if environ is None else environ
    var = (values.get("key_env") or "").strip()
    kind = values.get("kind") or "openai"
    if not var:
        if kind == "anthropic":
            return (
                "The Anthropic API needs a key, and no API key variable is set. In Custom provider…, enter "
                "the name of the environment variable that holds the key (usually ANTHROPIC_API_KEY) in "
                "“API key variable”, and set that variable before starting Session Studio."
            )
        return None  # an OpenAI-compatible local server may need no key
    if not env.get(var):
        return (
            f"The environment variable {var} (Custom provider ▸ “API key variable”) is not set. "
            "Set it to your API key before starting Session Studio, or enter the name of a variable "
            "that is set."
        )
    return None


def name_pi_default(providers: QComboBox, model: str | None) -> None:
    """Name the model pi's settings.json names (the open session's) on the "pi" item of a
    summariser list (the Preview's and each candidate's in Compare summaries)."""
    label = f"pi's default model ({model})" if model else "pi's default model (none in settings.json)"
    providers.setItemText(providers.findData("pi"), label)


def provider_status(key: str, pi_model: str | None) -> str:
    """The Preview's status line for a summariser: where Generate sends the context, if anywhere."""
    if key == "pi":
        if pi_model:
            return f"Generate sends the context to pi's default model, {pi_model} (pi's settings.json)."
        return "pi's settings name no default model: Generate writes the offline draft."
    if key == "custom":
        return "Generate sends the context to the custom provider (Custom provider…)."
    return "Offline draft: nothing leaves this machine."


def provider_config(values: dict[str, str] | None) -> ProviderConfig | None:
    """A ProviderConfig from the dialog's values (None when not configured)."""
    if not values or not values.get("base_url") or not values.get("model"):
        return None
    from session_studio.llm import ProviderConfig  # the network package loads on first use

    return ProviderConfig(
        provider="anthropic" if values.get("kind") == "anthropic" else "openai",
        base_url=values["base_url"],
        model=values["model"],
        api_key_env=values.get("key_env") or None,
    )


def titled_column(title: QLabel, view: QWidget) -> QWidget:
    """A view under its title, the view taking the height: the panes of the preview and of the
    summary candidates."""
    w = QWidget()
    lay = QVBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(3)
    lay.addWidget(title)
    lay.addWidget(view, 1)
    return w


def _mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class StaleSummaryNote(QFrame):
    """ "This summary was made for another plan", with Use it anyway / Regenerate."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("staleSummary")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.use_button = QPushButton("Use it anyway")
        self.use_button.setToolTip("Commit this text against the current plan (asks first)")
        self.regenerate_button = QPushButton("Regenerate")
        self.regenerate_button.setToolTip("Generate a new summary for the current plan")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.use_button)
        lay.addWidget(self.regenerate_button)
        self.hide()

    def set_text(self, why: str | None, can_use: bool = True) -> None:
        """Show ``why`` the summary does not fit the plan (document.stale_summary_text); None hides
        the note. ``can_use``: there is a plan to commit it against."""
        if why is None:
            self.hide()
            return
        self.label.setText(why)
        self.use_button.setEnabled(can_use)
        self.show()


class PreviewPane(QWidget):
    generate_requested = Signal(str)  # provider key
    cancel_requested = Signal()
    provider_settings_requested = Signal()
    summary_edited = Signal(str)  # debounced: once typing pauses (see flush_summary)
    use_anyway_requested = Signal()
    regenerate_requested = Signal(str)  # provider key

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream = _Stream()
        self.provider = QComboBox()
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
        # a long provider name must not make the centre pane (and so the tree) wide
        self.provider.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.provider.setMinimumContentsLength(10)
        self.provider_button = QPushButton("Custom provider…")
        self.provider_button.setToolTip(
            "Base URL, model and API key variable of the custom provider (pi's default model is "
            "read from pi's own settings)"
        )
        self.generate_button = QPushButton("Generate summary")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.focus = QLineEdit()
        self.focus.setPlaceholderText("Focus / custom instructions (optional), like pi's /compact <focus>")
        self.focus.setToolTip(
            "Added to the summary request as “Additional focus”, exactly as pi's /compact <text> does"
        )
        self.focus.setAccessibleName("Focus / custom instructions")
        self.stale_note = StaleSummaryNote()
        #: ``provider/model`` pi's settings name as the default model (None: none, or not known yet)
        self.pi_model: str | None = None
        self.status = QLabel(provider_status("offline", None))
        self.status.setProperty("muted", True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary = QPlainTextEdit()
        self.summary.setAccessibleName("Summary")
        # Tab moves on (a summary is Markdown, indented with spaces): tabbing through the pane
        # silently edited the summary
        self.summary.setTabChangesFocus(True)
        self.summary.setPlaceholderText(
            "The summary appears here as it is generated; you can edit it before committing."
        )
        self.files = QPlainTextEdit()
        self.files.setAccessibleName("Files read and modified")
        self.files.setReadOnly(True)
        self.files.setFont(_mono())
        self.files.setMaximumHeight(140)
        self.before = QPlainTextEdit()
        self.after = QPlainTextEdit()
        self.before.setAccessibleName("Context before compaction")
        self.after.setAccessibleName("Context after compaction")
        for w in (self.before, self.after):
            w.setReadOnly(True)
            w.setFont(_mono())
            w.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.before_title = QLabel("<b>Before</b>")
        self.after_title = QLabel("<b>After</b>")
        # their counts are sums of pi's per-message estimates: the context size pi weighs
        # (tokensBefore) counts the last answer's usage instead, and differs (124,661 against 177,657)
        self.before_title.setToolTip(CHARS4_TIP)
        self.after_title.setToolTip(CHARS4_TIP)
        for lab in (self.before_title, self.after_title):
            lab.setWordWrap(True)
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        top = QHBoxLayout()
        top.addWidget(QLabel("Provider"))
        top.addWidget(self.provider, 1)
        top.addWidget(self.provider_button)
        focus_row = QHBoxLayout()
        focus_row.addWidget(QLabel("Focus"))
        focus_row.addWidget(self.focus, 1)
        # the buttons and the status get their own line: the pane stays narrow enough for a wide tree
        run = QHBoxLayout()
        run.addWidget(self.generate_button)
        run.addWidget(self.cancel_button)
        run.addWidget(self.status, 1)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        summary_title = QLabel("<b>Summary</b> (editable)")
        files_title = QLabel("<b>Files</b> read / modified")
        files_title.setToolTip("Appended to the summary as <read-files> / <modified-files>")
        for lab in (summary_title, files_title):
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.files.setMaximumHeight(16777215)
        self.files.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        upper = KeySplitter(Qt.Orientation.Horizontal)
        upper.addWidget(titled_column(summary_title, self.summary))
        upper.addWidget(titled_column(files_title, self.files))
        upper.setStretchFactor(0, 3)
        upper.setStretchFactor(1, 2)
        upper.setChildrenCollapsible(False)
        ctx = KeySplitter(Qt.Orientation.Horizontal)
        ctx.addWidget(titled_column(self.before_title, self.before))
        ctx.addWidget(titled_column(self.after_title, self.after))
        ctx.setChildrenCollapsible(False)
        # summary + files above, the two contexts below: every pane keeps a readable width
        split = KeySplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(ctx)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        self.splitter = split

        single = QWidget()
        lay = QVBoxLayout(single)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addLayout(focus_row)
        lay.addLayout(run)
        lay.addWidget(self.stale_note)
        lay.addWidget(split, 1)
        self.single = single
        #: "Compare summaries" (summary_candidates.CompareView), added by its controller
        self.compare: QWidget | None = None
        self.modes = QTabWidget()
        self.modes.setDocumentMode(True)
        self.modes.addTab(single, "One summary")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 2, 6, 6)
        outer.addWidget(self.modes, 1)

        self.generate_button.clicked.connect(
            lambda: self.generate_requested.emit(self.provider.currentData())
        )
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.stream.text.connect(self._append)
        self.stream.part.connect(self._append_part)
        self.stream.note.connect(self._note)
        self.provider_button.clicked.connect(self.provider_settings_requested)
        self.provider.currentIndexChanged.connect(lambda _i: self._say_provider())
        self.stale_note.use_button.clicked.connect(self.use_anyway_requested)
        self.stale_note.regenerate_button.clicked.connect(
            lambda: self.regenerate_requested.emit(self.provider.currentData())
        )
        self.pair: ContextPair | None = None
        self._shown_before = self._shown_after = ""
        self._parts: dict[int, str] = {}
        #: the text last put in the editor by a generation (or loaded); anything else was typed
        self.generated_text = ""
        self._streaming = False
        #: the editor's text when the running generation started (back in it if that one fails)
        self._before_stream = ""
        self._programmatic = False
        self._edit_timer = QTimer(self)
        self._edit_timer.setSingleShot(True)
        self._edit_timer.setInterval(SUMMARY_EDIT_DEBOUNCE_MS)
        self._edit_timer.timeout.connect(self._emit_edit)
        self.summary.textChanged.connect(self._on_text_changed)

    # ---------------------------------------------------------------- the editable summary
    def _on_text_changed(self) -> None:
        # a keystroke costs only the edit itself: the re-plan waits until typing pauses
        if not (self._streaming or self._programmatic):
            self._edit_timer.start()

    def _emit_edit(self) -> None:
        self.summary_edited.emit(self.summary.toPlainText())

    def flush_summary(self) -> None:
        """Deliver a pending edit now (before a commit or a generation reads the summary)."""
        if self._edit_timer.isActive():
            self._edit_timer.stop()
            self._emit_edit()

    def is_edited(self) -> bool:
        """The editor holds text the user typed (not only what a generation produced)."""
        text = self.summary.toPlainText()
        return bool(text.strip()) and text != self.generated_text

    def _replace_all(self, text: str, join: bool) -> None:
        """Replace the editor's text as one undoable step (``join``: part of the previous one)."""
        cur = QTextCursor(self.summary.document())
        if join:
            cur.joinPreviousEditBlock()
        else:
            cur.beginEditBlock()
        cur.select(QTextCursor.SelectionType.Document)
        cur.insertText(text)
        cur.endEditBlock()

    def load_summary(self, text: str) -> None:
        """The document's summary changed (another file, a commit): show it, not as a user edit."""
        if text == self.summary.toPlainText():
            return
        self._edit_timer.stop()
        self._programmatic = True
        try:
            self.summary.setPlainText(text)
        finally:
            self._programmatic = False
        self.generated_text = text

    def _append(self, t: str) -> None:
        if not self._streaming:  # a late chunk of a generation that has ended: its result is shown
            return
        cur = QTextCursor(self.summary.document())
        cur.joinPreviousEditBlock()  # the whole generation is one undo step
        cur.movePosition(QTextCursor.MoveOperation.End)
        cur.insertText(t)
        cur.endEditBlock()
        self.summary.moveCursor(QTextCursor.MoveOperation.End)

    def _append_part(self, i: int, t: str) -> None:
        if not self._streaming:
            return
        if self.status.text().startswith("Attempt "):  # a retry said: its answer is coming now
            self.status.setText("Generating…")
        self._parts[i] = self._parts.get(i, "") + t
        if len(self._parts) == 1:
            self._append(t)
            return
        from session_studio.llm import SPLIT_TURN_SEPARATOR

        parts = [self._parts[k] for k in sorted(self._parts)]
        self._replace_all(SPLIT_TURN_SEPARATOR.join(parts), join=True)

    def finish_stream(self, text: str) -> None:
        """The generated summary (with the file lists): part of the generation's undo step."""
        if self.summary.toPlainText() != text:
            self._programmatic = True
            try:
                self._replace_all(text, join=True)
            finally:
                self._programmatic = False
        self.generated_text = text

    def show_pi_default(self, model: str | None) -> None:
        """Name pi's default model (the open session's settings.json) on its item of the list."""
        self.pi_model = model
        name_pi_default(self.provider, model)
        self._say_provider()

    def _say_provider(self) -> None:
        """What Generate will do with the summariser chosen (unless a generation is running)."""
        if self.generate_button.isEnabled():
            self.status.setText(provider_status(str(self.provider.currentData()), self.pi_model))

    def set_running(self, running: bool) -> None:
        self.generate_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.provider.setEnabled(not running)
        self.provider_button.setEnabled(not running)
        self.focus.setEnabled(not running)
        self.stale_note.setEnabled(not running)
        self.summary.setReadOnly(running)
        if running:
            self._edit_timer.stop()
            self._parts = {}
            self._before_stream = self.summary.toPlainText()
            self._streaming = True
            # undoable: Ctrl+Z after the generation brings the previous text back
            self._replace_all("", join=False)
            self.status.setText("Generating…")
        else:
            self._streaming = False

    def _note(self, text: str) -> None:
        if self._streaming:  # a late note of a generation that has ended says nothing
            self.status.setText(text)

    def abandon_stream(self) -> None:
        """A generation failed or was cancelled: what it streamed leaves the editor, which shows
        what it showed before (still the document's summary). The partial text had become the
        summary, "edited", and Commit wrote it: 20 characters of a broken-off answer, without
        its turn prefix."""
        self._streaming = False
        if self.summary.toPlainText() != self._before_stream:
            self._programmatic = True
            try:
                self._replace_all(self._before_stream, join=True)  # the generation's step undone
            finally:
                self._programmatic = False

    def custom_instructions(self) -> str | None:
        """The focus text for the summary request (pi's /compact <focus>), None when empty."""
        return self.focus.text().strip() or None

    def set_loading(self) -> None:
        """A file is being read: nothing of the previous plan stays on show, and nothing can be
        generated until the new one is planned (set_preparation enables Generate again)."""
        self.set_contexts(None)
        self.files.setPlainText("(loading…)")
        self.generate_button.setEnabled(False)
        self.status.setText("Reading the session…")

    def set_pending(self) -> None:
        """The plan changed: the previous preparation (file lists, counts) no longer applies."""
        self.files.setPlainText("(preparing…)")
        self.status.setText("Preparing the messages to summarise…")

    def add_compare_view(self, view: QWidget) -> None:
        """The second mode: candidate summaries of the same plan side by side."""
        self.compare = view
        i = self.modes.addTab(view, "Compare summaries")
        chain_tab_order(self.modes.tabBar(), view)  # Tab from the mode's tabs into it, not the planner
        self.modes.setTabToolTip(i, "Generate two or more candidate summaries of this plan and commit one")

    def show_compare(self) -> None:
        if self.compare is not None:
            self.modes.setCurrentWidget(self.compare)

    def comparing(self) -> bool:
        return self.compare is not None and self.modes.currentWidget() is self.compare

    def set_preparation(self, prep: Preparation | None) -> None:
        if prep is None:
            self.status.setText("Nothing to summarise with this cut.")
            self.files.setPlainText("(nothing to compact\nwith this cut)")  # the pane does not wrap
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
            self.before_title.setText("<b>Before</b>")  # no counts of another file or plan
            self.after_title.setText("<b>After</b>")
            self._shown_before = self._shown_after = ""
            return
        self.before_title.setText(
            f"<b>Before</b> · {pair.before_count:,} messages · ≈{pair.before_tokens:,.0f} tokens (chars/4)"
        )
        self.after_title.setText(after_title(pair))
        # a long unbroken line (base64, minified code) would freeze the wrapping view;
        # a summary edit changes only "after": re-laying out an unchanged 400k-char "before" costs tens of ms
        if pair.before_text != self._shown_before:
            self.before.setPlainText(break_long_lines(pair.before_text))
            self._shown_before = pair.before_text
        if pair.after_text != self._shown_after:
            self.after.setPlainText(break_long_lines(pair.after_text))
            self._shown_after = pair.after_text


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

    def reject(self) -> None:
        """Escape or the window's close button: a cancel while the summary is being written (it
        only hid the dialog, and the entry was appended when the answer came)."""
        self._cancel()

    def finish(self, note: str) -> None:
        self.finished_ = True
        self.status.setText(note)
        self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
