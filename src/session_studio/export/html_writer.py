"""One self-contained HTML file: inline CSS, no scripts, no remote resources, a strict CSP.

Everything from the session is escaped with ``html.escape(quote=True)`` after its control and bidi
characters were made visible; no session text is ever interpreted as HTML or Markdown, links are
text, and images are only the session's own base64 raster blocks as ``data:`` URIs. The page
reads without scripts (collapsible parts are ``<details>``), follows the system's dark mode and
prints.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from session_studio.core.role_colors import ROLE_COLORS, role_hex

from .safe import image_data_uri, visible
from .writer import Figure, ReportWriter, is_long

__all__ = ["CSP", "HtmlWriter"]

#: nothing may load or run: styles inline, images only as data: URIs
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

_CSS = """
:root { color-scheme: light dark; --fg:#1f2328; --muted:#656d76; --bg:#ffffff; --panel:#f6f8fa;
  --line:#d0d7de; --accent:#0969da; --warn:#9a6700; --cut:#cf222e;
  @ROLES_LIGHT@ }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --muted:#8d96a0; --bg:#0d1117;
  --panel:#161b22; --line:#30363d; --accent:#4493f8; --warn:#d29922; --cut:#f85149;
  @ROLES_DARK@ } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { font-size: 1.25em; margin: 28px 0 8px;
  padding-bottom: 4px; border-bottom: 1px solid var(--line); } h3 { font-size: 1.05em; margin: 18px 0 6px; }
.subtitle, .muted { color: var(--muted); } .warning { color: var(--warn); font-weight: 600; }
p { margin: 6px 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 8px 0; font-size: .93em; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top;
  overflow-wrap: anywhere; }
th { background: var(--panel); } table.facts th { width: 15em; font-weight: 600; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  margin: 6px 0; white-space: pre-wrap; overflow-wrap: anywhere;
  font: 13px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; }
.label { color: var(--muted); font-size: .85em; margin: 6px 0 0; }
details { margin: 6px 0; border: 1px solid var(--line); border-radius: 6px; padding: 2px 10px; }
details > summary { cursor: pointer; color: var(--muted); padding: 2px 0; overflow-wrap: anywhere; }
details[open] > summary { margin-bottom: 4px; }
details.thinking > summary::before { content: "thinking · "; font-weight: 600; }
details.toolCall > summary::before { content: "tool call · "; font-weight: 600; }
article.entry { border-left: 4px solid var(--meta); background: var(--bg); margin: 12px 0;
  padding: 4px 0 4px 14px; break-inside: avoid-page; }
article.entry > header { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
article.entry > header .title { font-weight: 600; overflow-wrap: anywhere; }
article.entry > header .note { color: var(--muted); font-size: .85em; overflow-wrap: anywhere; }
article.user { border-color: var(--user); } article.assistant { border-color: var(--assistant); }
article.toolResult { border-color: var(--toolResult); } article.bashExecution { border-color: var(--bashExecution); }
article.custom { border-color: var(--custom); } article.branchSummary { border-color: var(--branchSummary); }
article.compaction, article.compactionSummary { border-color: var(--compaction); }
article.system { border-color: var(--system); } article.cut { box-shadow: -8px 0 0 var(--cut); }
figure { margin: 10px 0; } figure svg { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: .85em; }
img.session-image { max-width: 100%; max-height: 480px; border: 1px solid var(--line); }
ul { margin: 4px 0; padding-left: 22px; }
@media print { body { background: #fff; color: #000; } main { max-width: none; padding: 0; }
  details { border: none; padding: 0; } pre { white-space: pre-wrap; } a { color: inherit; } }
"""


def _role_variables(dark: bool) -> str:
    """The entry kinds' colours as CSS variables (--user, --assistant…): the window's own
    (core.role_colors)."""
    return " ".join(f"--{kind}:{role_hex(kind, dark)};" for kind in ROLE_COLORS)


_CSS = _CSS.replace("@ROLES_LIGHT@", _role_variables(False)).replace("@ROLES_DARK@", _role_variables(True))


def esc(value: Any, *, one_line: bool = False) -> str:
    """Untrusted text → inert HTML text (controls made visible, then escaped, quotes included)."""
    return html.escape(visible(value, one_line=one_line), quote=True)


_NOT_TOKEN = re.compile(r"[^A-Za-z0-9_-]+")


@functools.lru_cache(maxsize=4096)
def _attr_token(value: str) -> str:
    """A class name or anchor we compose: letters, digits, '-' and '_' only."""
    return _NOT_TOKEN.sub("", value) or "x"


class HtmlWriter(ReportWriter):
    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self._folds = 0
        self._entries = 0

    def start(self, title: str, subtitle: str) -> None:
        self.write(
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="generator" content="Session Studio">\n'
            f"<title>{esc(title, one_line=True)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
            f"<h1>{esc(title, one_line=True)}</h1>\n"
            f'<p class="subtitle">{esc(subtitle, one_line=True)}</p>\n'
        )

    def heading(self, level: int, text: str, anchor: str | None = None) -> None:
        level = min(max(level, 2), 4)
        ident = f' id="{_attr_token(anchor)}"' if anchor else ""
        self.write(f"<h{level}{ident}>{esc(text, one_line=True)}</h{level}>\n")

    def para(self, text: str, *, tone: str = "") -> None:
        cls = f' class="{_attr_token(tone)}"' if tone else ""
        self.write(f"<p{cls}>{esc(text)}</p>\n")

    def facts(self, rows: Sequence[tuple[str, Any]]) -> None:
        body = "".join(f"<tr><th>{esc(k, one_line=True)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
        self.write(f'<table class="facts">{body}</table>\n')

    def table(self, header: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str = "") -> None:
        cap = f"<caption>{esc(caption, one_line=True)}</caption>" if caption else ""
        head = "".join(f"<th>{esc(h, one_line=True)}</th>" for h in header)
        self.write(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>\n")
        for row in rows:
            self.write("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>\n")
        self.write("</tbody></table>\n")

    def bullets(self, items: Sequence[str]) -> None:
        self.write("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>\n")

    def text_block(self, text: str, *, label: str = "") -> None:
        if label:
            self.write(f'<p class="label">{esc(label, one_line=True)}</p>\n')
        pre = f"<pre>{esc(text)}</pre>\n"
        if is_long(text):
            lines = text.count("\n") + 1
            self.write(
                f'<details class="fold"><summary>{lines:,} lines · {len(text):,} characters (folded)'
                f"</summary>\n{pre}</details>\n"
            )
        else:
            self.write(pre)

    def open_fold(self, summary: str, *, kind: str = "", opened: bool = False) -> None:
        self._folds += 1
        cls = f' class="{_attr_token(kind)}"' if kind else ""
        self.write(
            f"<details{cls}{' open' if opened else ''}><summary>{esc(summary, one_line=True)}</summary>\n"
        )

    def close_fold(self) -> None:
        self._folds -= 1
        self.write("</details>\n")

    def open_entry(self, title: str, anchor: str, kind: str, note: str = "") -> None:
        self._entries += 1
        classes = " ".join(_attr_token(k) for k in ("entry", *kind.split()))
        note_html = f'<span class="note">{esc(note, one_line=True)}</span>' if note else ""
        self.write(
            f'<article class="{classes}" id="{_attr_token(anchor)}"><header>'
            f'<span class="title">{esc(title, one_line=True)}</span>{note_html}</header>\n'
        )

    def close_entry(self) -> None:
        self._entries -= 1
        self.write("</article>\n")

    def image(self, block: Any) -> None:
        uri = image_data_uri(block)
        mime = block.get("mimeType") if isinstance(block, dict) else None
        if uri is None:
            self.para(f"[image not embedded: {visible(mime, one_line=True)}]", tone="muted")
            return
        # the data URI holds only [A-Za-z0-9+/=] and a known mime type: nothing to escape
        self.write(f'<p><img class="session-image" alt="session image ({esc(mime)})" src="{uri}"></p>\n')

    def figure(self, fig: Figure) -> None:
        desc = "".join(f"<li>{esc(t)}</li>" for t in fig.text)
        self.write(
            f"<figure>{fig.svg}<figcaption>{esc(fig.caption)}"
            + (f"<ul>{desc}</ul>" if desc else "")
            + "</figcaption></figure>\n"
        )

    def finish(self) -> None:
        while self._folds > 0:
            self.close_fold()
        while self._entries > 0:
            self.close_entry()
        self.write(
            '<p class="muted">Made by Session Studio. Session content is shown as text: '
            "nothing in this file runs or loads anything.</p>\n</main>\n</body>\n</html>\n"
        )
