"""The report writers: one interface, HTML and Markdown, both streaming to a text file.

The report builders (:mod:`.path_report`, :mod:`.plan_report`, :mod:`.context_report`) describe
a report once through :class:`ReportWriter`; each format decides how it looks. Every string a
builder passes as *content* is untrusted and escaped here; headings and labels the builders
compose may embed untrusted parts too, so they are escaped the same way. Nothing is buffered
beyond one block: a 100k-entry path streams to the file in bounded memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["FOLD_CHARS", "FOLD_LINES", "Figure", "ReportWriter"]

#: text blocks longer than this are folded (HTML: a closed <details>)
FOLD_LINES = 24
FOLD_CHARS = 2400


@dataclass(frozen=True)
class Figure:
    """A static picture made by Session Studio's own code (never from session text): an inline SVG
    for HTML, and the same facts as lines of text for Markdown and screen readers."""

    svg: str
    caption: str
    text: list[str] = field(default_factory=list)


def is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


class ReportWriter(ABC):
    """Describes a report; :class:`~.html_writer.HtmlWriter` and
    :class:`~.markdown_writer.MarkdownWriter` render it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(text)

    @abstractmethod
    def start(self, title: str, subtitle: str) -> None: ...

    @abstractmethod
    def heading(self, level: int, text: str, anchor: str | None = None) -> None:
        """A section heading (level 2 or 3; the title is level 1)."""

    @abstractmethod
    def para(self, text: str, *, tone: str = "") -> None:
        """A paragraph of plain text; ``tone``: "", "muted" or "warning"."""

    @abstractmethod
    def facts(self, rows: Sequence[tuple[str, Any]]) -> None:
        """Label → value pairs (values may be any JSON scalar or text)."""

    @abstractmethod
    def table(self, header: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str = "") -> None: ...

    @abstractmethod
    def bullets(self, items: Sequence[str]) -> None: ...

    @abstractmethod
    def text_block(self, text: str, *, label: str = "") -> None:
        """Untrusted text shown verbatim (preformatted); folded when long."""

    @abstractmethod
    def open_fold(self, summary: str, *, kind: str = "", opened: bool = False) -> None:
        """A collapsible part (tool calls, thinking, long details); closed by :meth:`close_fold`."""

    @abstractmethod
    def close_fold(self) -> None: ...

    @abstractmethod
    def open_entry(self, title: str, anchor: str, kind: str, note: str = "") -> None:
        """One entry or message of a listing; closed by :meth:`close_entry`."""

    @abstractmethod
    def close_entry(self) -> None: ...

    @abstractmethod
    def image(self, block: Any) -> None:
        """A session image block (embedded only when it is a safe base64 raster image)."""

    @abstractmethod
    def figure(self, fig: Figure) -> None: ...

    @abstractmethod
    def finish(self) -> None: ...
