"""The entry inspector: one entry rendered for reading.

Session content is untrusted: everything is escaped or inserted as markdown with
HTML disabled, links never open, and the only images are the entry's own base64
data, registered as document resources under ``entryimg:`` URLs. Every other
resource request (remote, file, qrc) returns nothing.
"""

from __future__ import annotations

import base64
import html
import json
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QGuiApplication, QImage, QTextCursor, QTextDocument, QTextImageFormat, QTextOption
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.session import Session

from .theme import current_theme, kind_of

__all__ = ["EntryInspector", "SafeTextBrowser", "render_entry"]

FOLD_LINES = 24
MAX_PRE_CHARS = 200_000
MAX_IMAGE_W = 520
MD_FEATURES = QTextDocument.MarkdownFeature.MarkdownNoHTML


class SafeTextBrowser(QTextBrowser):
    """A QTextBrowser that loads nothing from outside the document."""

    toggled = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.blocked: list[str] = []

    def loadResource(self, type_: int, name: QUrl) -> Any:
        res = self.document().resource(type_, name)
        if res is not None and name.scheme() == "entryimg":
            return res
        self.blocked.append(name.toString())
        return None

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == "toggle":
            self.toggled.emit(url.path() or url.host())


def _esc(s: Any) -> str:
    return html.escape(s if isinstance(s, str) else json.dumps(s, ensure_ascii=False, default=str))


def _num(v: Any) -> str:
    return (
        f"{v:,}"
        if isinstance(v, int)
        else (f"{v:.6f}".rstrip("0").rstrip(".") if isinstance(v, float) else _esc(v))
    )


class _Writer:
    def __init__(self, doc: QTextDocument, expanded: set[str]) -> None:
        self.doc = doc
        self.cur = QTextCursor(doc)
        self.expanded = expanded
        self.n_img = 0
        th = current_theme()
        self.muted = th.muted.name()
        self.code_bg = th.alt_base.name()
        self.grid = th.grid.name()

    def html(self, s: str) -> None:
        self.cur.insertHtml(s)

    def block(self) -> None:
        self.cur.insertBlock()

    def heading(self, text: str, color: str | None = None, sub: str = "") -> None:
        c = f"color:{color};" if color else ""
        subhtml = f" <span style='color:{self.muted}; font-weight:normal'>{_esc(sub)}</span>" if sub else ""
        self.html(
            f"<p style='margin-top:10px; margin-bottom:2px'><b style='{c}'>{_esc(text)}</b>{subhtml}</p>"
        )
        self.block()

    def markdown(self, text: str) -> None:
        self.cur.insertMarkdown(text, MD_FEATURES)
        self.block()

    def pre(self, text: str, key: str | None = None) -> None:
        if len(text) > MAX_PRE_CHARS:
            text = text[:MAX_PRE_CHARS] + f"\n… ({len(text) - MAX_PRE_CHARS:,} more characters)"
        lines = text.split("\n")
        folded = key is not None and len(lines) > FOLD_LINES and key not in self.expanded
        shown = "\n".join(lines[:FOLD_LINES]) if folded else text
        self.html(
            f"<table width='100%' cellpadding='6' style='background:{self.code_bg}; border:1px solid {self.grid}'>"
            # pre-wrap (and the view's wrap-anywhere mode): long arguments wrap instead of running off the edge
            f"<tr><td><pre style='margin:0; white-space:pre-wrap'>{html.escape(shown)}</pre></td></tr></table>"
        )
        self.block()
        if key is not None and len(lines) > FOLD_LINES:
            label = f"▸ show all {len(lines):,} lines" if folded else "▾ fold"
            self.html(f"<a href='toggle:{key}'>{label}</a>")
            self.block()

    def image(self, block: dict[str, Any]) -> None:
        data = block.get("data")
        img = QImage()
        if isinstance(data, str):
            try:
                img.loadFromData(base64.b64decode(data, validate=False))
            except (ValueError, TypeError):
                img = QImage()
        if img.isNull():
            self.html(
                f"<i style='color:{self.muted}'>[image: {_esc(block.get('mimeType', '?'))}, not decodable]</i>"
            )
            self.block()
            return
        self.n_img += 1
        url = QUrl(f"entryimg:img{self.n_img}")
        self.doc.addResource(QTextDocument.ResourceType.ImageResource, url, img)
        fmt = QTextImageFormat()
        fmt.setName(url.toString())
        w = min(MAX_IMAGE_W, img.width())
        fmt.setWidth(w)
        fmt.setHeight(img.height() * w / max(1, img.width()))
        self.cur.insertImage(fmt)
        self.block()
        self.html(
            f"<span style='color:{self.muted}'>{_esc(block.get('mimeType', 'image'))} · "
            f"{img.width()}×{img.height()}</span>"
        )
        self.block()

    def kv(self, rows: list[tuple[str, str]]) -> None:
        cells = "".join(
            f"<tr><td style='color:{self.muted}; padding-right:12px'>{_esc(k)}</td><td>{v}</td></tr>"
            for k, v in rows
        )
        self.html(f"<table cellspacing='0' cellpadding='1'>{cells}</table>")
        self.block()


def _content(w: _Writer, content: Any, key: str, as_pre: bool = False) -> None:
    if isinstance(content, str):
        (w.pre(content, key) if as_pre else w.markdown(content))
        return
    if not isinstance(content, list):
        w.pre(json.dumps(content, ensure_ascii=False, indent=2, default=str))
        return
    for n, b in enumerate(content):
        if not isinstance(b, dict):
            w.pre(json.dumps(b, ensure_ascii=False, default=str))
            continue
        t = b.get("type")
        k = f"{key}.{n}"
        if t == "text":
            text = b.get("text")
            text = text if isinstance(text, str) else json.dumps(text, default=str)
            (w.pre(text, k) if as_pre else w.markdown(text))
        elif t == "thinking":
            text = b.get("thinking") if isinstance(b.get("thinking"), str) else ""
            if k in w.expanded:
                w.html(
                    f"<a href='toggle:{k}'>▾ Thinking</a> <span style='color:{w.muted}'>· {len(text):,} chars</span>"
                )
                w.block()
                w.html(
                    f"<p style='color:{w.muted}; margin-left:12px'><i>"
                    f"{html.escape(text).replace(chr(10), '<br>')}</i></p>"
                )
                w.block()
            else:
                w.html(
                    f"<a href='toggle:{k}'>▸ Thinking</a> <span style='color:{w.muted}'>· {len(text):,} chars"
                    f"{' · redacted' if b.get('redacted') else ''}</span>"
                )
                w.block()
        elif t == "toolCall":
            w.heading(
                f"→ {b.get('name', '?')}", current_theme().role("toolResult").name(), f"id {b.get('id', '')}"
            )
            w.pre(json.dumps(b.get("arguments"), ensure_ascii=False, indent=2, default=str), k)
        elif t == "image":
            w.image(b)
        else:
            w.pre(json.dumps(b, ensure_ascii=False, indent=2, default=str), k)


def render_entry(doc: QTextDocument, session: Session, index: int, expanded: set[str]) -> None:
    """Fill ``doc`` with the entry at record ``index``."""
    doc.clear()
    th = current_theme()
    doc.setDefaultStyleSheet(f"a {{ color: {th.role('user').name()}; text-decoration: none; }}")
    w = _Writer(doc, expanded)
    rec = session.records[index]
    v = session.value(index)
    if not isinstance(v, dict):
        w.heading("Not an object", th.role("damaged").name())
        w.pre(json.dumps(v, ensure_ascii=False, default=str))
        return
    t = v.get("type")
    color = th.role(kind_of(rec.type, rec.role)).name()
    if t == "message":
        m = v.get("message")
        if not isinstance(m, dict):
            w.heading(
                "Damaged message entry", th.role("damaged").name(), "no message object: pi would throw here"
            )
            return
        role = m.get("role")
        if role == "user":
            w.heading("User", color)
            _content(w, m.get("content"), "c")
        elif role == "assistant":
            w.heading("Assistant", color, f"{m.get('provider', '?')}/{m.get('model', '?')}")
            _content(w, m.get("content"), "c")
            rows = [("stop reason", _esc(m.get("stopReason", "")))]
            if m.get("errorMessage"):
                rows.append(
                    (
                        "error",
                        f"<span style='color:{th.role('damaged').name()}'>{_esc(m['errorMessage'])}</span>",
                    )
                )
            u = m.get("usage")
            if isinstance(u, dict):
                rows += [
                    (k, _num(u.get(k)))
                    for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
                    if k in u
                ]
                cost = u.get("cost")
                if isinstance(cost, dict) and "total" in cost:
                    rows.append(("cost", f"${_num(cost.get('total'))}"))
            if rec.usage_tokens is not None:
                rows.append(("context tokens", f"{_num(rec.usage_tokens)} (valid usage)"))
            w.heading("Usage", None)
            w.kv(rows)
        elif role == "toolResult":
            err = m.get("isError")
            w.heading(
                f"Tool result · {m.get('toolName', '?')}",
                th.role("damaged").name() if err else color,
                ("error · " if err else "") + f"call {m.get('toolCallId', '')}",
            )
            _content(w, m.get("content"), "r", as_pre=True)
        elif role == "bashExecution":
            w.heading(
                "Bash execution",
                color,
                f"exit {m.get('exitCode')}" + (" · cancelled" if m.get("cancelled") else ""),
            )
            w.pre("$ " + str(m.get("command", "")))
            w.pre(str(m.get("output", "")), "out")
            if m.get("excludeFromContext"):
                w.html(f"<i style='color:{w.muted}'>excluded from the LLM context</i>")
                w.block()
        else:
            w.heading(f"Message · {role}", color)
            _content(w, m.get("content"), "c")
    elif t == "compaction":
        w.heading("Compaction", color, f"{_num(v.get('tokensBefore'))} tokens before")
        w.kv(
            [
                ("first kept entry", _esc(v.get("firstKeptEntryId"))),
                ("from hook", _esc(v.get("fromHook", False))),
            ]
        )
        w.markdown(str(v.get("summary", "")))
        d = v.get("details")
        if isinstance(d, dict):
            w.heading("Details", None)
            w.pre(json.dumps(d, ensure_ascii=False, indent=2, default=str), "details")
    elif t == "branch_summary":
        w.heading("Branch summary", color, f"from {v.get('fromId')}")
        w.markdown(str(v.get("summary", "")))
    elif t == "custom_message":
        w.heading(
            f"Custom message · {v.get('customType', '?')}",
            color,
            "displayed" if v.get("display") else "hidden",
        )
        _content(w, v.get("content"), "c")
    else:
        w.heading(str(t).replace("_", " ").capitalize() if isinstance(t, str) else "Entry", color)
        rows = [(k, _esc(val)) for k, val in v.items() if k not in ("type", "id", "parentId", "timestamp")]
        if rows:
            w.kv(rows)
    if session.label_of(rec.id):
        w.kv([("label", f"<b>{_esc(session.label_of(rec.id))}</b>")])


class EntryInspector(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: Session | None = None
        self.index = -1
        self.expanded: set[str] = set()
        self.title = QLabel("No entry selected")
        # a long title is clipped (its tooltip has it all) instead of widening the pane
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.setTextInteractionFlags(
            self.title.textInteractionFlags() | self.title.textInteractionFlags().TextSelectableByMouse
        )
        self.raw_button = QToolButton()
        self.raw_button.setText("Raw JSON")
        self.raw_button.setCheckable(True)
        self.raw_button.setToolTip("Show the entry's JSON as stored (after migration)")
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy id")
        self.browser = SafeTextBrowser()
        self.browser.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.browser.toggled.connect(self._toggle)
        self.raw = QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        f = QGuiApplication.font()
        f.setFamily("monospace")
        self.raw.setFont(f)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.browser)
        self.stack.addWidget(self.raw)
        head = QHBoxLayout()
        head.setContentsMargins(8, 4, 4, 4)
        head.addWidget(self.title, 1)
        head.addWidget(self.copy_button)
        head.addWidget(self.raw_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(head)
        lay.addWidget(self.stack, 1)
        self.raw_button.toggled.connect(self._show_raw)
        self.copy_button.clicked.connect(self._copy_id)

    def set_session(self, session: Session | None) -> None:
        self.session = session
        self.show_entry(-1)

    def show_entry(self, index: int) -> None:
        if index != self.index:
            self.expanded = set()
        self.index = index
        s = self.session
        if s is None or index < 0 or index >= len(s.records):
            self.title.setText("No entry selected")
            self.title.setToolTip("")
            self.browser.clear()
            self.raw.clear()
            return
        rec = s.records[index]
        role = f" · {rec.role}" if rec.type == "message" else ""
        self.title.setText(
            f"<b>{html.escape(str(rec.type))}</b>{html.escape(str(role))} · id "
            f"<code>{html.escape(str(rec.id))}</code> · line {rec.line}"
            f"<span style='color:{current_theme().muted.name()}'> · {html.escape(str(rec.timestamp))}</span>"
        )
        self.title.setToolTip(f"{rec.type}{role} · id {rec.id} · line {rec.line} · {rec.timestamp}")
        self._render()

    def _render(self) -> None:
        s = self.session
        if s is None or self.index < 0:
            return
        if self.raw_button.isChecked():
            self.raw.setPlainText(json.dumps(s.value(self.index), ensure_ascii=False, indent=2, default=str))
        else:
            bar = self.browser.verticalScrollBar().value()
            render_entry(self.browser.document(), s, self.index, self.expanded)
            self.browser.verticalScrollBar().setValue(bar)

    def _toggle(self, key: str) -> None:
        self.expanded ^= {key}
        self._render()

    def _show_raw(self, on: bool) -> None:
        self.stack.setCurrentIndex(1 if on else 0)
        self._render()

    def _copy_id(self) -> None:
        if self.session is not None and self.index >= 0:
            QGuiApplication.clipboard().setText(str(self.session.records[self.index].id))
