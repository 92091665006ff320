"""What a compaction summary kept: the sections pi's prompt asked for and the file lists.

A summary written by a model (or edited by the user) may drop a heading the prompt asked for,
leave a section empty, or lose the ``<read-files>``/``<modified-files>`` blocks that pi appends
(spec §7.3, §7.5). :func:`analyze_summary` reads a summary text against the headings that were
requested (the caller knows them: ``engine.requested_headings`` for a draft) and the plan's file
lists, so that candidate summaries can be compared on what they kept. Pure text work: no Qt, no
network.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .jsvalue import js_string
from .tokens import estimate_tokens

__all__ = [
    "FILE_LIST_TAGS",
    "FileListKept",
    "SectionKept",
    "SectionStatus",
    "SummaryKept",
    "analyze_summary",
    "summary_tokens",
]

#: present: the heading and some content; empty: the heading with nothing (or only "(none)")
#: under it; missing: no such heading
SectionStatus = Literal["present", "empty", "missing"]

#: the tags pi appends the file lists in (format_file_operations), read first, then modified
FILE_LIST_TAGS: Final[tuple[str, str]] = ("read-files", "modified-files")

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
#: list markers and checkboxes in front of an item ("- ", "1. ", "- [x] ")
#: a thematic break ends every section (pi's split-turn separator is one)
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
_ITEM_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?")
#: what a model writes in a section the conversation gave nothing for
_NOTHING = frozenset({"", "(none)", "none", "none.", "n/a", "(n/a)", "-", "—", "(empty)", "nothing"})


@dataclass(frozen=True, slots=True)
class SectionKept:
    heading: str  # as the prompt writes it, e.g. "### In Progress"
    status: SectionStatus
    #: content lines under the heading (its sub-sections included), blank lines and "(none)" not counted
    items: int


@dataclass(frozen=True, slots=True)
class FileListKept:
    tag: str  # "read-files" or "modified-files"
    #: the plan's list (what pi appends for this cut)
    expected: tuple[str, ...]
    #: the lines of the tag's block in the text; None: the text has no such block
    written: tuple[str, ...] | None
    missing: tuple[str, ...]  # expected but not written
    extra: tuple[str, ...]  # written but not expected

    @property
    def intact(self) -> bool:
        """The text lists exactly the plan's files (no block is intact when there is none to write)."""
        if not self.expected:
            return not self.written
        return not self.missing and not self.extra


@dataclass(frozen=True, slots=True)
class SummaryKept:
    sections: tuple[SectionKept, ...]
    read_files: FileListKept
    modified_files: FileListKept
    #: pi's estimate of the summary message (chars/4 of its UTF-16 length)
    tokens: int | float

    @property
    def missing_sections(self) -> tuple[str, ...]:
        return tuple(s.heading for s in self.sections if s.status == "missing")

    @property
    def empty_sections(self) -> tuple[str, ...]:
        return tuple(s.heading for s in self.sections if s.status == "empty")

    @property
    def complete(self) -> bool:
        """Every requested heading is there and both file lists match the plan's."""
        return not self.missing_sections and self.read_files.intact and self.modified_files.intact


def summary_tokens(text: str) -> int | float:
    """pi's estimate of a compaction summary in the context (the same under both profiles)."""
    return estimate_tokens({"role": "compactionSummary", "summary": text})


def _heading_key(line: str) -> tuple[int, str] | None:
    """(level, normalised title) of a Markdown heading line; None for any other line.

    Models decorate headings (``## **Goal**``, ``## Goal:``); the title is compared without
    emphasis, a trailing colon, case or repeated spaces.
    """
    m = _HEADING.match(line.strip())
    if m is None:
        return None
    title = m.group(2).replace("*", "").replace("_", " ").strip().rstrip(":").strip()
    return len(m.group(1)), " ".join(title.lower().split())


def _is_content(line: str) -> bool:
    bare = _ITEM_MARKER.sub("", line.strip()).strip().lower()
    return bare.strip("_* ") not in _NOTHING


def _strip_file_blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    inside: str | None = None
    for line in lines:
        s = line.strip()
        if inside is None and s in {f"<{t}>" for t in FILE_LIST_TAGS}:
            inside = s[1:-1]
        elif inside is not None and s == f"</{inside}>":
            inside = None
        elif inside is None:
            out.append(line)
    return out


def _sections(text: str, headings: Sequence[str]) -> tuple[SectionKept, ...]:
    lines = _strip_file_blocks(text.splitlines())
    keys = [_heading_key(line) for line in lines]
    out: list[SectionKept] = []
    for heading in headings:
        want = _heading_key(heading)
        if want is None:
            raise ValueError(f"not a Markdown heading: {heading!r}")
        level = want[0]
        start = next((i for i, k in enumerate(keys) if k == want), None)
        if start is None:
            out.append(SectionKept(heading, "missing", 0))
            continue
        items = 0
        for line, key in zip(lines[start + 1 :], keys[start + 1 :], strict=True):
            if (key is not None and key[0] <= level) or _RULE.match(line):
                break  # the next section of the same or a higher level
            if key is None and _is_content(line):
                items += 1
        out.append(SectionKept(heading, "present" if items else "empty", items))
    return tuple(out)


def _written_block(text: str, tag: str) -> tuple[str, ...] | None:
    """The lines of the last ``<tag>`` block (pi appends the lists at the end), None if there is none."""
    blocks = re.findall(rf"(?ms)^[ \t]*<{tag}>[ \t]*\n(.*?)^[ \t]*</{tag}>[ \t]*$", text)
    if not blocks:
        return None
    return tuple(line.strip() for line in blocks[-1].splitlines() if line.strip())


def _file_list(text: str, tag: str, expected_values: Sequence[Any]) -> FileListKept:
    expected = tuple(js_string(v) for v in expected_values)
    written = _written_block(text, tag)
    have = set(written or ())
    want = set(expected)
    return FileListKept(
        tag,
        expected,
        written,
        tuple(f for f in expected if f not in have),
        tuple(f for f in (written or ()) if f not in want),
    )


def analyze_summary(
    text: str,
    headings: Sequence[str],
    read_files: Sequence[Any],
    modified_files: Sequence[Any],
) -> SummaryKept:
    """What ``text`` kept of the requested ``headings`` and of the plan's file lists.

    ``read_files``/``modified_files`` are the preparation's lists (``Preparation.file_lists``):
    the ones pi appends to the summary it stores.
    """
    return SummaryKept(
        _sections(text, headings),
        _file_list(text, FILE_LIST_TAGS[0], read_files),
        _file_list(text, FILE_LIST_TAGS[1], modified_files),
        summary_tokens(text),
    )
