"""The report as Markdown, readable as plain text and in any Markdown viewer.

Session text never reaches Markdown syntax: blocks go in backtick fences longer than any run of
backticks they contain (so they cannot end early), and inline values are backslash-escaped (no
link, image, emphasis or HTML can come out of them). No raw HTML is written, so viewers that
do not render HTML show the same report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .safe import fence_for, image_data_uri, md_inline, visible
from .writer import Figure, ReportWriter, is_long

__all__ = ["MarkdownWriter"]


def _cell(value: Any) -> str:
    return md_inline(value).replace("|", "\\|") or " "


class MarkdownWriter(ReportWriter):
    def start(self, title: str, subtitle: str) -> None:
        self.write(f"# {md_inline(title)}\n\n{md_inline(subtitle)}\n\n")

    def heading(self, level: int, text: str, anchor: str | None = None) -> None:
        level = min(max(level, 2), 4)
        self.write(f"{'#' * level} {md_inline(text)}\n\n")

    def para(self, text: str, *, tone: str = "") -> None:
        lines = [md_inline(line) for line in visible(text).split("\n")]
        body = "  \n".join(lines)
        if tone == "warning":
            body = f"**{body}**"
        elif tone == "muted":
            body = f"*{body}*"
        self.write(body + "\n\n")

    def facts(self, rows: Sequence[tuple[str, Any]]) -> None:
        self.write("".join(f"- **{md_inline(k)}:** {md_inline(v)}\n" for k, v in rows) + "\n")

    def table(self, header: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str = "") -> None:
        if caption:
            self.write(f"*{md_inline(caption)}*\n\n")
        self.write("| " + " | ".join(_cell(h) for h in header) + " |\n")
        self.write("|" + "---|" * len(header) + "\n")
        for row in rows:
            self.write("| " + " | ".join(_cell(c) for c in row) + " |\n")
        self.write("\n")

    def bullets(self, items: Sequence[str]) -> None:
        self.write("".join(f"- {md_inline(i)}\n" for i in items) + "\n")

    def text_block(self, text: str, *, label: str = "") -> None:
        shown = visible(text)
        if label or is_long(shown):
            size = f"{shown.count(chr(10)) + 1:,} lines, {len(shown):,} characters" if is_long(shown) else ""
            parts = [p for p in (md_inline(label) if label else "", size) if p]
            self.write(f"*{' · '.join(parts)}*\n\n")
        fence = fence_for(shown)
        self.write(f"{fence}text\n{shown}\n{fence}\n\n")

    def open_fold(self, summary: str, *, kind: str = "", opened: bool = False) -> None:
        what = {"thinking": "thinking", "toolCall": "tool call"}.get(kind, "")
        prefix = f"{what}: " if what else ""
        self.write(f"> **{md_inline(prefix + summary)}**\n\n")

    def close_fold(self) -> None:
        pass

    def open_entry(self, title: str, anchor: str, kind: str, note: str = "") -> None:
        self.write(f"### {md_inline(title)}\n\n")
        if note:
            self.write(f"*{md_inline(note)}*\n\n")

    def close_entry(self) -> None:
        self.write("---\n\n")

    def image(self, block: Any) -> None:
        mime = block.get("mimeType") if isinstance(block, dict) else None
        data = block.get("data") if isinstance(block, dict) else None
        size = f", {len(data) * 3 // 4:,} bytes" if isinstance(data, str) else ""
        where = "embedded in the HTML export" if image_data_uri(block) is not None else "not embedded"
        self.write(f"*\\[image: {md_inline(mime)}{size} — {where}\\]*\n\n")

    def figure(self, fig: Figure) -> None:
        self.write(f"*{md_inline(fig.caption)}*\n\n")
        if fig.text:
            self.bullets(fig.text)

    def finish(self) -> None:
        self.write("*Made by Session Studio.*\n")
