"""The entry inspector: one entry rendered for reading.

Session content is untrusted: everything is escaped or inserted as markdown with HTML disabled,
links never open, and the only images are the entry's own base64 data, registered as document
resources under ``entryimg:`` URLs. Markdown images (``![x](url)``) are replaced by a text
placeholder naming the URL, and the document itself refuses every resource it is asked for, so
nothing is read from disk or the network whatever the content says.

Content is also unbounded: text is shown folded (a few lines, a few KB), long lines are broken
for display, markdown formatting is skipped for huge or unbroken text, JSON is formatted with a
depth and size limit, and "show all" of something huge opens it as plain text on request.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextImageFormat,
    QTextOption,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.jsvalue import UNDEFINED, js_number_to_string
from session_studio.core.listing import fmt_size
from session_studio.core.session import Session
from session_studio.core.summary_sections import FILE_LIST_TAGS

from .jsontext import format_json, format_json_text
from .pi16 import (
    USAGE_FIELDS,
    EditFacts,
    UsageTotals,
    context_edit_facts,
    edit_replacement,
    edit_target,
    is_retain_none,
    section_tokens,
    system_tokens,
    tool_tokens,
    usage_totals,
)
from .plain import DISPLAY_LINE_CHARS, break_long_lines, elide, rich_escaped, rich_tooltip, visible
from .theme import current_theme, kind_of

__all__ = ["EntryInspector", "SafeDocument", "SafeTextBrowser", "render_entry"]

UsageSource = Callable[[], UsageTotals | None]

FOLD_LINES = 24
FOLD_CHARS = 8_000  # a folded block shows at most this much
INLINE_MAX_CHARS = 200_000  # "show all" inside the inspector up to this; beyond it, plain-text view
MARKDOWN_MAX_CHARS = 50_000  # bigger text is shown as plain text, not formatted
LONG_WORD = re.compile(r"\S{1000}")  # wrapping an unbroken run costs Qt quadratic time
JSON_DEPTH = 64
RAW_MAX_CHARS = 2_000_000
RAW_MAX_STRING = 20_000
HEAD_CHARS = 300  # headings, ids, names
MAX_IMAGE_W = 520
#: a search's matches marked in an entry at most (an entry of a 10 MB output may hold thousands)
MAX_MARKS = 500
MAX_IMAGE_DATA = 32 * 1024 * 1024
MD_FEATURES = QTextDocument.MarkdownFeature.MarkdownNoHTML
ENTRY_IMAGE = "entryimg"
_BLOCKED_KEPT = 100


def _placeholder_image() -> QImage:
    img = QImage(16, 16, QImage.Format.Format_ARGB32)
    img.fill(QColor(128, 128, 128, 60))
    return img


class SafeDocument(QTextDocument):
    """A QTextDocument that loads no resource at all.

    Entry images are registered with ``addResource`` and found by ``resource()`` without
    coming here; any other name reaching ``loadResource`` comes from the content. Qt's default
    would read local paths and ``data:`` URLs (and QTextBrowser's would ask the document again,
    recursing until the process dies), so the request is recorded and answered with a blank
    placeholder — no disk, no network.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.blocked: list[str] = []

    def loadResource(self, type_: int, name: QUrl | str) -> Any:
        if len(self.blocked) < _BLOCKED_KEPT:
            self.blocked.append(elide(name.toString() if isinstance(name, QUrl) else name, 200))
        return _placeholder_image()


class SafeTextBrowser(QTextBrowser):
    """A QTextBrowser that loads nothing from outside the document and opens no link."""

    toggled = Signal(str)
    full_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.safe_document = SafeDocument(self)
        self.setDocument(self.safe_document)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.horizontalScrollBar().rangeChanged.connect(self._hide_a_pixel_of_overflow)

    #: how far a document may be wider than the view without a scroll bar for it
    OVERFLOW_SLACK_PX = 2

    def _hide_a_pixel_of_overflow(self, _least: int, most: int) -> None:
        """No scroll bar for a document a pixel wider than the view: a table of width 100% is laid
        out 1 px wider than the text width, and "Why this cut" had a scroll bar that moved nothing."""
        policy = (
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if most <= self.OVERFLOW_SLACK_PX
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        if self.horizontalScrollBarPolicy() != policy:
            self.setHorizontalScrollBarPolicy(policy)

    @property
    def blocked(self) -> list[str]:
        """Resource names the content asked for and did not get."""
        return self.safe_document.blocked

    def loadResource(self, type_: int, name: QUrl | str) -> Any:
        # never reached while the SafeDocument is in place; refuse anyway, without asking the
        # document again (that recursion is what crashed the window)
        return None

    def _on_anchor(self, url: QUrl) -> None:
        key = url.path() or url.host()
        if url.scheme() == "toggle":
            self.toggled.emit(key)
        elif url.scheme() == "full":
            self.full_requested.emit(key)


def _esc(s: Any, limit: int | None = HEAD_CHARS) -> str:
    text = s if isinstance(s, str) else format_json(s, indent=None, max_chars=limit or RAW_MAX_CHARS)
    return rich_escaped(text, limit)


def _num(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) < 10**30 else "(a number too large to show)"
    if isinstance(v, float):
        return f"{v:.6f}".rstrip("0").rstrip(".") if abs(v) < 1e15 else _esc(repr(v))
    return _esc(v)


class _Writer:
    def __init__(self, doc: QTextDocument, expanded: set[str]) -> None:
        self.doc = doc
        self.cur = QTextCursor(doc)
        self.expanded = expanded
        self.n_img = 0
        self.n_auto = 0
        self.full_texts: dict[str, str] = {}
        th = current_theme()
        self.muted = th.muted.name()
        self.code_bg = th.alt_base.name()
        self.grid = th.grid.name()

    def html(self, s: str) -> None:
        self.cur.insertHtml(s)

    def block(self) -> None:
        self.cur.insertBlock()

    def note(self, text: str) -> None:
        self.html(f"<i style='color:{self.muted}'>{html.escape(text)}</i>")
        self.block()

    def heading(self, text: str, color: str | None = None, sub: str = "") -> None:
        c = f"color:{color};" if color else ""
        subhtml = f" <span style='color:{self.muted}; font-weight:normal'>{_esc(sub)}</span>" if sub else ""
        self.html(
            f"<p style='margin-top:10px; margin-bottom:2px'><b style='{c}'>{_esc(text)}</b>{subhtml}</p>"
        )
        self.block()

    def markdown(self, text: str, key: str | None = None) -> None:
        text = visible(text, None)  # control and bidi characters shown, never obeyed (Trojan Source)
        if len(text) > MARKDOWN_MAX_CHARS or LONG_WORD.search(text):
            # formatting huge or unbroken text freezes Qt's layout: show it as plain text
            self.pre(text, key or self._auto_key(), wrap_note="shown as plain text: too large to format")
            return
        start = self.cur.position()
        self.cur.insertMarkdown(text, MD_FEATURES)
        self._replace_foreign_images(start, self.cur.position())
        self.block()
        self._plain_block()

    def _plain_block(self) -> None:
        """Leave the markdown's last list or heading: what follows is not one of its items."""
        block = self.cur.block()
        lst = block.textList()
        if lst is not None:
            lst.remove(block)
        self.cur.setBlockFormat(QTextBlockFormat())
        self.cur.setCharFormat(QTextCharFormat())

    def _auto_key(self) -> str:
        self.n_auto += 1
        return f"auto{self.n_auto}"

    def _replace_foreign_images(self, start: int, end: int) -> None:
        """Markdown images name URLs or paths: show the name instead of loading anything."""
        found: list[tuple[int, str, str]] = []
        block = self.doc.findBlock(start)
        while block.isValid() and block.position() <= end:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                fmt = frag.charFormat()
                if frag.isValid() and fmt.isImageFormat():
                    name = fmt.toImageFormat().name()
                    if not name.startswith(ENTRY_IMAGE + ":"):
                        alt = fmt.property(QTextFormat.Property.ImageAltText)
                        alt_text = alt if isinstance(alt, str) else ""
                        found += [(frag.position() + k, name, alt_text) for k in range(frag.length())]
                it += 1
            block = block.next()
        style = QTextCharFormat()
        style.setForeground(QColor(self.muted))
        style.setFontItalic(True)
        for pos, name, alt in reversed(found):
            cur = QTextCursor(self.doc)
            cur.setPosition(pos)
            cur.setPosition(pos + 1, QTextCursor.MoveMode.KeepAnchor)
            label = f"{visible(alt, 80, keep_newlines=False)}: " if alt else ""
            cur.insertText(f"[image not loaded — {label}{visible(name, 160, keep_newlines=False)}]", style)
        self.cur.movePosition(QTextCursor.MoveOperation.End)

    def pre(self, text: str, key: str | None = None, wrap_note: str = "", too_deep: bool = False) -> None:
        """Preformatted text, folded to FOLD_LINES lines / FOLD_CHARS characters under ``key``."""
        text = visible(text, None)  # control and bidi characters shown, never obeyed
        lines = text.count("\n") + 1
        foldable = len(text) > FOLD_CHARS or (key is not None and lines > FOLD_LINES)
        key = key if key is not None else (self._auto_key() if foldable else None)
        folded = foldable and key not in self.expanded
        too_big = len(text) > INLINE_MAX_CHARS
        if folded:
            shown = text[:FOLD_CHARS]
            if lines > FOLD_LINES:
                shown = "\n".join(shown.split("\n")[:FOLD_LINES])
        else:
            shown = text[:INLINE_MAX_CHARS]
        self.html(
            f"<table width='100%' cellpadding='6' style='background:{self.code_bg}; border:1px solid {self.grid}'>"
            # pre-wrap (and the view's wrap-anywhere mode): long arguments wrap instead of running off the edge
            f"<tr><td><pre style='margin:0; white-space:pre-wrap'>{html.escape(break_long_lines(shown))}</pre></td></tr></table>"
        )
        self.block()
        notes = [wrap_note] if wrap_note else []
        if too_deep:
            notes.append(f"parts nested deeper than {JSON_DEPTH} levels are too deep to show")
        if len(shown) < len(text) and not folded:
            notes.append(f"{len(text) - len(shown):,} more characters not shown here")
        if notes:
            self.note(" · ".join(notes))
        if key is None or not foldable:
            return
        links = []
        if folded:
            size = (
                f"{lines:,} lines" if lines > FOLD_LINES else fmt_size(len(text.encode("utf-8", "replace")))
            )
            if too_big:
                links.append(f"<a href='toggle:{key}'>▸ show more</a>")
            else:
                links.append(f"<a href='toggle:{key}'>▸ show all {size}</a>")
        else:
            links.append(f"<a href='toggle:{key}'>▾ fold</a>")
        if too_big:
            self.full_texts[key] = text
            size = fmt_size(len(text.encode("utf-8", "replace")))
            links.append(f"<a href='full:{key}'>show all ({size}) as plain text</a>")
        self.html(" · ".join(links))
        self.block()

    def json(self, value: Any, key: str | None = None) -> None:
        out = format_json_text(value, indent=2, max_depth=JSON_DEPTH, max_chars=RAW_MAX_CHARS)
        self.pre(out.text, key, too_deep=out.too_deep)

    def image(self, block: dict[str, Any]) -> None:
        data = block.get("data")
        img = QImage()
        if isinstance(data, str) and len(data) <= MAX_IMAGE_DATA:
            try:
                img.loadFromData(base64.b64decode(data, validate=False))
            except (ValueError, TypeError):
                img = QImage()
        if img.isNull():
            self.note(f"[image: {visible(block.get('mimeType', '?'), 80)}, not decodable]")
            return
        self.n_img += 1
        url = QUrl(f"{ENTRY_IMAGE}:img{self.n_img}")
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
        (w.pre(content, key) if as_pre else w.markdown(content, key))
        return
    if not isinstance(content, list):
        w.json(content, key)
        return
    for n, b in enumerate(content):
        k = f"{key}.{n}"
        if not isinstance(b, dict):
            w.json(b, k)
            continue
        t = b.get("type")
        if t == "text":
            text = b.get("text")
            text = text if isinstance(text, str) else format_json(text, max_depth=JSON_DEPTH)
            (w.pre(text, k) if as_pre else w.markdown(text, k))
        elif t == "thinking":
            raw = b.get("thinking")
            text = raw if isinstance(raw, str) else ""
            if k in w.expanded:
                w.html(
                    f"<a href='toggle:{k}'>▾ Thinking</a> <span style='color:{w.muted}'>· {len(text):,} chars</span>"
                )
                w.block()
                w.pre(text, f"{k}.text")
            else:
                w.html(
                    f"<a href='toggle:{k}'>▸ Thinking</a> <span style='color:{w.muted}'>· {len(text):,} chars"
                    f"{' · redacted' if b.get('redacted') else ''}</span>"
                )
                w.block()
        elif t == "toolCall":
            w.heading(
                f"→ {visible(b.get('name', '?'))}",
                current_theme().role("toolResult").name(),
                f"id {visible(b.get('id', ''))}",
            )
            _tool_arguments(w, b.get("arguments"), k)
        elif t == "image":
            w.image(b)
        else:
            w.json(b, k)


#: pi's file lists at a summary's end: one path a line, which Markdown would run into one paragraph
_FILE_LIST_BLOCK = re.compile(
    r"^<(" + "|".join(FILE_LIST_TAGS) + r")>\n.*?^</\1>[ \t]*$", re.MULTILINE | re.DOTALL
)


def fenced_file_lists(summary: str) -> str:
    """``summary`` with its ``<read-files>``/``<modified-files>`` blocks as code blocks, so that the
    Markdown view keeps one path a line and shows the tags as written."""

    def fence(m: re.Match[str]) -> str:
        block = m.group(0)
        ticks = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", block)), default=0))
        return f"{ticks}\n{block}\n{ticks}"

    return _FILE_LIST_BLOCK.sub(fence, summary)


def _tool_arguments(w: _Writer, args: Any, key: str) -> None:
    """A call's arguments: a text of several lines (a write's content, an edit's old and new text)
    as its lines under its name, the others as JSON, in the call's order (Raw JSON has them all
    exactly as stored)."""
    if type(args) is not dict or not any(_multiline(v) for v in args.values()):
        w.json(args, key)
        return
    plain: dict[str, Any] = {}

    def flush() -> None:
        if plain:
            w.json(dict(plain), f"{key}.{next(iter(plain))}")  # (a fold's key: stable across renders)
            plain.clear()

    for name, value in args.items():
        if not _multiline(value):
            plain[name] = value
            continue
        flush()
        lines = value.count("\n") + 1
        w.html(
            f"<p style='margin-top:6px; margin-bottom:2px'><b>{_esc(name, 120)}</b>"
            f" <span style='color:{w.muted}'>· {lines:,} lines · {len(value):,} chars</span></p>"
        )
        w.block()
        w.pre(value, f"{key}.{name}")
    flush()


def _multiline(value: Any) -> bool:
    return type(value) is str and "\n" in value


def _tokens(t: Any) -> str:
    return "? tokens" if t is None else f"{_num(t)} tokens"


def _usage_rows(u: Any) -> list[tuple[str, str]]:
    if not isinstance(u, dict):
        return []
    rows = [(k, _num(u.get(k))) for k in USAGE_FIELDS if k in u]
    cost = u.get("cost")
    if isinstance(cost, dict) and "total" in cost:
        rows.append(("cost", _cost(cost.get("total"))))
    return rows


def _cost(v: Any) -> str:
    """A cost in dollars as every place of the inspector writes it: four decimals ($0.1000, $0.0031;
    "$0.1" and "$0.1100" stood side by side), else the stored value as it is."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 1e15:
        return f"${v:,.4f}"
    return "$" + _num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else _num(v)


def _usage_line(u: Any) -> str:
    """Usage in one line: ``input 5,200 · output 640 · … · $0.0252``."""
    rows = _usage_rows(u)
    if not rows:
        return _esc(u)
    return " · ".join(v if k == "cost" else f"{_esc(k)} {v}" for k, v in rows)


def _system_message(w: _Writer, m: dict[str, Any], key: str) -> None:
    """A pi 1.6.0 system message: its text, prompt sections (folded blocks) and tool changes."""
    content = m.get("content")
    if content not in ("", None, []):
        _content(w, content, f"{key}.c", as_pre=True)
    secs = m.get("sections")
    if isinstance(secs, dict) and secs:
        for name, value in secs.items():
            if value is None:
                w.heading(f"Section · {visible(name, 120)}", None, "removed (null): no longer in the prompt")
                continue
            text = value if isinstance(value, str) else format_json(value, max_depth=JSON_DEPTH)
            w.heading(
                f"Section · {visible(name, 120)}",
                None,
                f"{len(text):,} chars · {_tokens(section_tokens(value))}",
            )
            w.pre(text, f"{key}.s.{name}")
    elif secs is not None and not isinstance(secs, dict):
        w.heading("Sections", None, "not an object")
        w.json(secs, f"{key}.s")
    added = m.get("toolsAdded")
    if isinstance(added, list) and added:
        w.heading(f"Tools added ({len(added):,})", None, "declarations the LLM can call")
        rows = []
        for tool in added:
            if not isinstance(tool, dict):
                rows.append(("?", _esc(tool)))
                continue
            desc = tool.get("description")
            first = desc.strip().split("\n", 1)[0] if isinstance(desc, str) else ""
            rows.append(
                (
                    visible(tool.get("name", "?"), 80),
                    f"<span style='color:{w.muted}'>{_esc(_tokens(tool_tokens(tool)))}</span> {_esc(first, 160)}",
                )
            )
        w.kv(rows)
        if f"{key}.tools" in w.expanded:
            w.html(f"<a href='toggle:{key}.tools'>▾ declarations as JSON</a>")
            w.block()
            w.json(added, f"{key}.tools.json")
        else:
            w.html(f"<a href='toggle:{key}.tools'>▸ declarations as JSON</a>")
            w.block()
    removed = m.get("toolsRemoved")
    if isinstance(removed, list) and removed:
        names = ", ".join(_esc(t.get("name", "?") if isinstance(t, dict) else t, 80) for t in removed[:200])
        w.heading(f"Tools removed ({len(removed):,})", None)
        w.html(names)
        w.block()


def _edit_notice(w: _Writer, session: Session, index: int, edits: EditFacts) -> None:
    """On an edited entry: which edit applies on the active path and what the LLM sees instead."""
    th = current_theme()
    recs = session.records
    applied = edits.applied.get(index)

    def banner(inner: str) -> None:
        w.html(
            f"<table width='100%' cellpadding='4' cellspacing='0' bgcolor='{th.warn_bg.name()}'>"
            f"<tr><td style='color:{th.warn_fg.name()}'>{inner}</td></tr></table>"
        )
        w.block()

    others = [e for e in edits.by_target.get(index, ()) if e != applied]
    if others:
        ids = ", ".join(f"{_esc(recs[e].id)} (line {recs[e].line})" for e in others[:20])
        w.note(
            "Also named by context edit(s) that do not apply on the active path "
            "(superseded by a later edit, summarised away or on another branch): "
        )
        w.html(ids)
        w.block()
    if applied is not None:
        e = recs[applied]
        rep = edit_replacement(session, applied)
        if rep is None:
            banner(
                f"⊘ Hidden from the LLM by context edit <b>{_esc(e.id)}</b> (line {e.line}): "
                "this entry contributes nothing to the context. Stored content below."
            )
        else:
            tokens = edits.replaced_tokens.get(index)
            banner(
                f"✎ Replaced for the LLM by context edit <b>{_esc(e.id)}</b> (line {e.line}); "
                f"the LLM sees ({_esc(_tokens(tokens))}):"
            )
            _content(w, rep.get("content") if isinstance(rep, dict) else rep, "edit", as_pre=True)
            w.heading("Original (as stored)", None, "what the LLM no longer sees")


def _context_edit(
    w: _Writer, session: Session, index: int, v: dict[str, Any], color: str, edits: EditFacts
) -> None:
    recs = session.records
    rep = v.get("replacement", UNDEFINED)
    target = edit_target(session, index)
    if rep is UNDEFINED:
        what = "has no replacement: pi 1.6.0 fails reading its content when building the context"
    elif rep is None:
        what = "hides its target from the LLM"
    else:
        what = "replaces its target's content for the LLM"
    w.heading("Context edit", color, what)
    rows = [("target", _esc(v.get("targetId")))]
    if target is None:
        rows.append(("", "not in this file: pi ignores the edit"))
    else:
        t = recs[target]
        kind = f"{t.type} · {t.role}" if t.type == "message" else str(t.type)
        rows.append(("target entry", f"{_esc(kind)} · line {t.line}"))
        rows.append(("target text", _esc(preview_of(session, target), None)))  # a preview is short already
        latest = edits.applied.get(target)
        if edits.error is not None:
            effect = f"unknown: pi 1.6.0 cannot build this branch's context ({_esc(edits.error)})"
        elif latest == index:
            effect = "in effect on the active path"
        elif latest is not None:
            effect = f"superseded by the later edit {_esc(recs[latest].id)} (line {recs[latest].line})"
        else:
            effect = "no effect on the active path (target summarised away, or on another branch)"
        rows.append(("effect", effect))
    w.kv(rows)
    if rep is UNDEFINED:
        return
    # an edit not in effect on the active path changes nothing the LLM sees there: say "would"
    applies = target is not None and edits.error is None and edits.applied.get(target) == index
    if rep is None:
        w.note(
            "replacement: null — the target entry contributes no message to the LLM context"
            if applies
            else "replacement: null — where this edit applies, the target contributes no message"
        )
    elif isinstance(rep, dict):
        w.heading(
            "Replacement content",
            None,
            "what the LLM sees instead (the stored entry is unchanged)"
            if applies
            else "what the LLM would see instead where this edit applies (not on the active path)",
        )
        _content(w, rep.get("content"), "rep", as_pre=True)
    else:
        w.heading("Replacement", th_damaged(), "not an object")
        w.json(rep, "rep")


def th_damaged() -> str:
    return current_theme().role("damaged").name()


def _exit_words(code: object) -> str:
    """A bash execution's exit code as the heading says it: pi stores none (null) for a command it
    killed or never saw finish, and tells the LLM no code then."""
    return "no exit code" if code is None else f"exit {visible(code)}"


def preview_of(session: Session, index: int) -> str:
    from .outline import preview_text

    try:
        return preview_text(session.value(index))
    except Exception as e:  # a damaged value still gets its inspector
        return f"(unreadable: {e})"


def _session_totals(w: _Writer, session: Session, usage: UsageSource | None) -> None:
    """Usage reported anywhere in the session, by where it was recorded (usage entries included)."""
    totals = usage() if usage is not None else usage_totals(session)
    if totals is None:
        w.heading("Session usage", None, "being summed up…")
        return
    if not totals.by_source:
        return
    head = ["", "entries", "input", "output", "cache read", "cache write", "total tokens", "cost"]
    # the browser wraps anywhere: a fixed first column keeps "assistant messages" on one line
    header = "<td width='130'></td>" + "".join(
        f"<td style='color:{w.muted}; padding-right:10px'>{h}</td>" for h in head[1:]
    )
    body = ""
    for name, row in [*totals.by_source.items(), ("all", totals.total())]:
        # a usage field of 1e400 parses as inf, as in pi: said as JS says it ("Infinity")
        cells = [f"{x:,.0f}" if math.isfinite(x) else js_number_to_string(x) for x in row[:-1]]
        cells.append(_cost(row[-1]) if math.isfinite(row[-1]) else js_number_to_string(row[-1]))
        weight = " style='font-weight:bold'" if name == "all" else ""
        body += (
            f"<tr{weight}><td style='padding-right:10px'>{name.replace(' ', '&nbsp;')}</td>"
            # a number never breaks at its thousands separators (the pane scrolls instead)
            + "".join(
                f"<td align='right' style='padding-right:10px; white-space:nowrap'>{c}</td>" for c in cells
            )
            + "</tr>"
        )
    w.heading("Session usage", None, "every branch: assistant messages, usage entries, summarisations")
    w.html(f"<table cellspacing='0' cellpadding='1'><tr>{header}</tr>{body}</table>")
    w.block()


def render_entry(
    doc: QTextDocument,
    session: Session,
    index: int,
    expanded: set[str],
    edits: EditFacts | None = None,
    usage: UsageSource | None = None,
) -> dict[str, str]:
    """Fill ``doc`` with the entry at record ``index``; returns the texts too big to show inline.

    ``edits`` are the pi 1.6.0 context edits seen from the active path (which apply to what);
    ``usage`` gives the session's usage totals (None while they are being summed up)."""
    doc.clear()
    th = current_theme()
    doc.setDefaultStyleSheet(f"a {{ color: {th.role('user').name()}; text-decoration: none; }}")
    w = _Writer(doc, expanded)
    rec = session.records[index]
    v = session.value(index)
    if not isinstance(v, dict):
        w.heading("Not an object", th.role("damaged").name())
        w.json(v, "value")
        return w.full_texts
    t = v.get("type")
    color = th.role(kind_of(rec.type, rec.role)).name()
    if edits is not None and (index in edits.applied or index in edits.by_target):
        _edit_notice(w, session, index, edits)
    if t == "message":
        m = v.get("message")
        if not isinstance(m, dict):
            w.heading(
                "Damaged message entry", th.role("damaged").name(), "no message object: pi would throw here"
            )
            return w.full_texts
        role = m.get("role")
        if role == "user":
            w.heading("User", color)
            _content(w, m.get("content"), "c")
        elif role == "assistant":
            w.heading("Assistant", color, f"{visible(m.get('provider', '?'))}/{visible(m.get('model', '?'))}")
            _content(w, m.get("content"), "c")
            rows = [("stop reason", _esc(m.get("stopReason", "")))]
            if m.get("errorMessage"):
                rows.append(
                    (
                        "error",
                        f"<span style='color:{th.role('damaged').name()}'>{_esc(m['errorMessage'])}</span>",
                    )
                )
            rows += _usage_rows(m.get("usage"))
            if rec.usage_tokens is not None:
                rows.append(("context tokens", f"{_num(rec.usage_tokens)} (valid usage)"))
            w.heading("Usage", None)
            w.kv(rows)
        elif role == "toolResult":
            err = m.get("isError")
            w.heading(
                f"Tool result · {visible(m.get('toolName', '?'))}",
                th.role("damaged").name() if err else color,
                ("error · " if err else "") + f"call {visible(m.get('toolCallId', ''))}",
            )
            _content(w, m.get("content"), "r", as_pre=True)
        elif role == "bashExecution":
            w.heading(
                "Bash execution",
                color,
                _exit_words(m.get("exitCode")) + (" · cancelled" if m.get("cancelled") else ""),
            )
            w.pre("$ " + _text_of(m.get("command", "")), "cmd")
            w.pre(_text_of(m.get("output", "")), "out")
            if m.get("excludeFromContext"):
                w.html(f"<i style='color:{w.muted}'>excluded from the LLM context</i>")
                w.block()
        elif role == "system":
            w.heading(
                "System message",
                color,
                f"{_tokens(system_tokens(m))} (pi 1.6.0 estimate) · prompt sections and tool declarations",
            )
            _system_message(w, m, "sys")
        else:
            w.heading(f"Message · {visible(role)}", color)
            _content(w, m.get("content"), "c")
    elif t == "compaction":
        w.heading("Compaction", color, f"{_num(v.get('tokensBefore'))} tokens before")
        if is_retain_none(v):
            kept = "retain-none: keeps no entry (firstKeptEntryId is the compaction's own id)"
        else:
            kept = _esc(v.get("firstKeptEntryId"))
        rows = [("first kept entry", kept), ("from hook", _esc(v.get("fromHook", False)))]
        if "usage" in v:
            rows.append(("usage", f"{_usage_line(v.get('usage'))} (the summarisation calls)"))
        w.kv(rows)
        w.markdown(fenced_file_lists(_text_of(v.get("summary", ""))), "summary")
        d = v.get("details")
        if isinstance(d, dict):
            w.heading("Details", None)
            w.json(d, "details")
        snap = v.get("systemMessage")
        if isinstance(snap, dict):
            snap_tokens = _tokens(system_tokens(snap))
            if "snap" in w.expanded:
                w.html(f"<p><a href='toggle:snap'>▾ System message snapshot</a> · {_esc(snap_tokens)}</p>")
                w.block()
                _system_message(w, snap, "snap")
            else:
                w.html(
                    f"<p><a href='toggle:snap'>▸ System message snapshot</a> "
                    f"<span style='color:{w.muted}'>· {_esc(snap_tokens)} · the system prompt and tools "
                    "replayed at the boundary, sent before the summary</span></p>"
                )
                w.block()
        elif snap is not None:
            w.heading("System message snapshot", th_damaged(), "not an object")
            w.json(snap, "snap")
    elif t == "branch_summary":
        w.heading("Branch summary", color, f"from {visible(v.get('fromId'))}")
        w.markdown(fenced_file_lists(_text_of(v.get("summary", ""))), "summary")
        if "usage" in v:
            w.kv([("usage", f"{_usage_line(v.get('usage'))} (the summarisation call)")])
    elif t == "context_edit":
        _context_edit(w, session, index, v, color, edits or context_edit_facts(session, []))
    elif t == "usage":
        w.heading(
            f"Usage · {visible(v.get('kind', '?'), 80)}",
            color,
            f"{visible(v.get('provider', '?'), 80)}/{visible(v.get('model', '?'), 80)} · not in the LLM context",
        )
        rows = _usage_rows(v.get("usage")) or [("usage", _esc(v.get("usage")))]
        if "note" in v:
            rows.append(("note", _esc(v.get("note"))))
        w.kv(rows)
        _session_totals(w, session, usage)
    elif t == "custom_message":
        w.heading(
            f"Custom message · {visible(v.get('customType', '?'))}",
            color,
            "displayed" if v.get("display") else "hidden",
        )
        _content(w, v.get("content"), "c")
    else:
        w.heading(visible(t).replace("_", " ").capitalize() if isinstance(t, str) else "Entry", color)
        shown = [(k, val) for k, val in v.items() if k not in ("type", "id", "parentId", "timestamp")]
        rows = [(k, _esc(val)) for k, val in shown if not isinstance(val, dict | list)]
        if rows:
            w.kv(rows)
        for k, val in shown:
            if isinstance(val, dict | list):
                w.heading(k, None)
                w.json(val, f"field.{k}")
    if session.label_of(rec.id):
        w.kv([("label", f"<b>{_esc(session.label_of(rec.id))}</b>")])
    if (
        t != "usage"
        and (rec.parent_id is None or rec.parent_id is UNDEFINED)
        and index == _first_root(session)
    ):
        _session_totals(w, session, usage)  # the root entry sums up the session
    return w.full_texts


def _first_root(session: Session) -> int:
    return next((r.index for r in session.records if r.parent_id is None or r.parent_id is UNDEFINED), -1)


def _text_of(v: Any) -> str:
    return v if isinstance(v, str) else format_json(v, max_depth=JSON_DEPTH)


class EntryInspector(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: Session | None = None
        self.index = -1
        #: the pi 1.6.0 context edits as the tree shows them (its active path); without it the
        #: inspector reads them from the session's own leaf
        self.edit_facts: Callable[[], EditFacts] | None = None
        #: the session's usage totals as the tree's model sums them (None while it does)
        self.usage_totals: UsageSource | None = None
        #: record → "pi estimate N · real M (tokenizer)" (ui.real_tokens); None: no token line
        self.token_line: Callable[[int], str] | None = None
        self._own_edits: tuple[Session, int, EditFacts] | None = None
        self.expanded: set[str] = set()
        self.full_texts: dict[str, str] = {}
        #: the tree's search (lowercased): marked in the entry shown, the first match scrolled to
        self.search = ""
        self._fresh_entry = False  # show_entry → _render: another entry than before
        self.title = QLabel("No entry selected")
        self.title.setTextFormat(Qt.TextFormat.RichText)  # built from escaped parts only
        # a long title wraps onto more lines instead of widening the pane (or being cut off
        # mid-word under the buttons in a narrow one); its tooltip has it all on one line
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(
            self.title.textInteractionFlags() | self.title.textInteractionFlags().TextSelectableByMouse
        )
        self.tokens = QLabel()
        self.tokens.setTextFormat(Qt.TextFormat.PlainText)
        self.tokens.setProperty("muted", True)
        self.tokens.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.tokens.setWordWrap(True)
        self.tokens.setContentsMargins(8, 0, 4, 2)
        self.tokens.setAccessibleName("Entry tokens")
        self.tokens.hide()
        self.raw_button = QToolButton()
        self.raw_button.setText("Raw JSON")
        self.raw_button.setCheckable(True)
        self.raw_button.setToolTip("Show the entry's JSON as stored (after migration)")
        #: the window gives it its Copy entry id action (setDefaultAction)
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy id")
        self.browser = SafeTextBrowser()
        self.browser.setAccessibleName("Entry content")
        self.browser.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.browser.toggled.connect(self._toggle)
        self.browser.full_requested.connect(self.show_full_text)
        f = QGuiApplication.font()
        f.setFamily("monospace")
        self.raw = QPlainTextEdit()
        self.raw.setAccessibleName("Raw JSON of the entry")
        self.raw.setReadOnly(True)
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.raw.setFont(f)
        self.full_title = QLabel()
        self.full_title.setTextFormat(Qt.TextFormat.PlainText)
        self.full_back = QToolButton()
        self.full_back.setText("Back to the entry")
        self.full_text = QPlainTextEdit()
        self.full_text.setAccessibleName("Whole text")
        self.full_text.setReadOnly(True)
        self.full_text.setFont(f)
        full_page = QWidget()
        full_head = QHBoxLayout()
        full_head.setContentsMargins(8, 2, 4, 2)
        full_head.addWidget(self.full_title, 1)
        full_head.addWidget(self.full_back)
        full_lay = QVBoxLayout(full_page)
        full_lay.setContentsMargins(0, 0, 0, 0)
        full_lay.addLayout(full_head)
        full_lay.addWidget(self.full_text, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.browser)
        self.stack.addWidget(self.raw)
        self.stack.addWidget(full_page)
        head = QHBoxLayout()
        head.setContentsMargins(8, 4, 4, 4)
        head.addWidget(self.title, 1)
        head.addWidget(self.copy_button)
        head.addWidget(self.raw_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(head)
        lay.addWidget(self.tokens)
        lay.addWidget(self.stack, 1)
        self.raw_button.toggled.connect(self._show_raw)
        self.full_back.clicked.connect(self._leave_full_text)

    def set_session(self, session: Session | None) -> None:
        self.session = session
        self.show_entry(-1)

    def set_search(self, query: str) -> None:
        """Mark the tree's search in the entry shown (and in the next ones), or no longer."""
        if query != self.search:
            self.search = query
            self._mark_search(scroll=True)

    def show_entry(self, index: int) -> None:
        fresh = index != self.index
        if fresh:
            self.expanded = set()
            if self.stack.currentIndex() == 2:
                self._leave_full_text()
        self._fresh_entry = fresh
        self.index = index
        s = self.session
        if s is None or index < 0 or index >= len(s.records):
            self.title.setText("No entry selected")
            self.title.setToolTip("")
            self.browser.clear()
            self.raw.clear()
            self.refresh_tokens()
            return
        rec = s.records[index]
        role = f" · {rec.role}" if rec.type == "message" else ""
        # a line without them (a damaged file's "{}" or "42") says so once, not "undefined" three times
        kind = "no type" if rec.type is UNDEFINED else rec.type
        id_part = "no id" if rec.id is UNDEFINED else f"id <code>{rich_escaped(rec.id, 80)}</code>"
        if s.id_made_on_open(index):  # a version 1 file's: made by this open, not in the file
            id_part += " (made on opening)"
        stamp = "" if rec.timestamp is UNDEFINED else f" · {rich_escaped(rec.timestamp, 80)}"
        self.title.setText(
            f"<b>{rich_escaped(kind, 80)}</b>{rich_escaped(role, 80)} · {id_part} · line {rec.line}"
            f"<span style='color:{current_theme().muted.name()}'>{stamp}</span>"
        )
        plain_id = "no id" if rec.id is UNDEFINED else f"id {rec.id}"
        plain_stamp = "" if rec.timestamp is UNDEFINED else f" · {rec.timestamp}"
        self.title.setToolTip(rich_tooltip(f"{kind}{role} · {plain_id} · line {rec.line}{plain_stamp}"))
        self.refresh_tokens()
        self._render()

    def refresh_tokens(self, records: Any = None) -> None:
        """Update the token line (``records``: the entries whose counts changed, None: any)."""
        if records is not None and self.index not in records:
            return
        line = ""
        if self.token_line is not None and self.session is not None and self.index >= 0:
            line = self.token_line(self.index)
        self.tokens.setText(line)
        self.tokens.setToolTip(  # the line names the session's model: shown literally, never as HTML
            rich_tooltip(
                line + "\n\npi decides with chars/4; the model bills real tokens. ≈ marks a tokenizer "
                "used as an approximation for a model whose own tokenizer is not public."
            )
            if line
            else ""
        )
        self.tokens.setVisible(bool(line))

    def _render(self) -> None:
        s = self.session
        if s is None or self.index < 0:
            return
        if self.raw_button.isChecked():
            text = format_json(
                s.value(self.index),
                indent=2,
                max_depth=JSON_DEPTH,
                max_chars=RAW_MAX_CHARS,
                max_string=RAW_MAX_STRING,
            )
            self.raw.setPlainText(text)
        else:
            bar = self.browser.verticalScrollBar().value()
            self.full_texts = render_entry(
                self.browser.document(), s, self.index, self.expanded, self._edits(s), self.usage_totals
            )
            self.browser.verticalScrollBar().setValue(bar)
            # a newly shown entry scrolls to the search's first match; a re-render (a section
            # opened, new counts) keeps the reader's place
            self._mark_search(scroll=self._fresh_entry)
        self._fresh_entry = False

    def _mark_search(self, scroll: bool) -> None:
        """The search's matches in the entry's text, marked (at most MAX_MARKS); ``scroll``: the
        first one scrolled into view (a match in a folded section or past a cut text is not shown)."""
        marks: list[QTextEdit.ExtraSelection] = []
        doc = self.browser.document()
        if self.search:
            fmt = QTextCharFormat()
            fmt.setBackground(current_theme().match_bg)
            found = doc.find(self.search)
            while not found.isNull() and len(marks) < MAX_MARKS:
                mark = QTextEdit.ExtraSelection()
                mark.cursor = found
                mark.format = fmt
                marks.append(mark)
                found = doc.find(self.search, found)
        self.browser.setExtraSelections(marks)
        if scroll and marks:
            first = QTextCursor(doc)
            first.setPosition(marks[0].cursor.selectionStart())
            self.browser.setTextCursor(first)
            self.browser.ensureCursorVisible()

    def _edits(self, s: Session) -> EditFacts:
        if self.edit_facts is not None:
            return self.edit_facts()
        cached = self._own_edits
        if cached is None or cached[0] is not s or cached[1] != len(s.records):
            facts = context_edit_facts(s, s.path_indices(s.leaf_index()))
            cached = self._own_edits = (s, len(s.records), facts)
        return cached[2]

    def show_full_text(self, key: str) -> None:
        """All of a text too big for the inspector, as plain text (long lines broken)."""
        text = self.full_texts.get(key)
        if text is None:
            return
        size = fmt_size(len(text.encode("utf-8", "replace")))
        self.full_title.setText(
            f"All {len(text):,} characters ({size}) as plain text; "
            f"lines longer than {DISPLAY_LINE_CHARS:,} characters are broken for display"
        )
        self.full_text.setPlainText(break_long_lines(text))
        self.stack.setCurrentIndex(2)

    def _leave_full_text(self) -> None:
        self.full_text.clear()
        self.stack.setCurrentIndex(1 if self.raw_button.isChecked() else 0)

    def _toggle(self, key: str) -> None:
        self.expanded ^= {key}
        self._render()

    def _show_raw(self, on: bool) -> None:
        self.stack.setCurrentIndex(1 if on else 0)
        self._render()
