"""Export a session path, a compaction plan or the rebuilt context as Markdown or one HTML file.

The caller builds the plan the way every view does (one :class:`PathPlanner` per session and leaf,
``planner.plan(params)``); the report only renders it. Reports stream to their file (a 100k-entry
path in bounded memory) and land atomically: a temp file next to the target, fsynced, renamed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..core.explain import RecoveryPlanner
from ..core.ids import now_iso
from ..core.migrate import version_name
from ..core.plan import PathPlanner, PlanParams, PlanState
from ..core.session import Session
from ..core.timeline import build_timeline
from ..core.timeline_svg import timeline_svg
from .content import render_entry
from .context_report import context_after, write_context
from .html_writer import HtmlWriter
from .markdown_writer import MarkdownWriter
from .plan_report import ReportSection, figure_section, plan_sections, write_sections
from .safe import visible
from .writer import ReportWriter

__all__ = ["FORMATS", "WHATS", "ExportOptions", "export_report", "suggested_name", "write_report"]

WHATS = ("path", "plan", "context")
FORMATS = ("md", "html")
#: entries read from the file at a time when the values are not in memory (bounded memory)
CHUNK = 512


@dataclass(frozen=True)
class ExportOptions:
    what: str = "plan"
    fmt: str = "html"
    #: a generated (or edited) summary for the "after" context; None: a placeholder says it is pending
    summary: str | None = None
    #: more plan sections (e.g. the context timeline), shown right after the token bar
    extra_sections: Sequence[ReportSection] = ()
    #: plans pi 1.6.0's overflow recovery (core.explain.RecoveryPlanner; None: not said)
    recovery: RecoveryPlanner | None = None

    def __post_init__(self) -> None:
        if self.what not in WHATS:
            raise ValueError(f"unknown report {self.what!r}; choose one of {', '.join(WHATS)}")
        if self.fmt not in FORMATS:
            raise ValueError(f"unknown format {self.fmt!r}; choose one of {', '.join(FORMATS)}")


def _writer(fmt: str, out: TextIO) -> ReportWriter:
    return HtmlWriter(out) if fmt == "html" else MarkdownWriter(out)


def _title(session: Session) -> str:
    name = session.session_name()
    return name if name else os.path.basename(session.path)


def _session_facts(w: ReportWriter, planner: PathPlanner, st: PlanState) -> None:
    s = planner.session
    h = s.header or {}
    leaf = s.records[planner.leaf_index].id if planner.leaf_index is not None else None
    rows = [
        ("file", s.path),
        ("session id", h.get("id", "(no header)")),
        ("created", h.get("timestamp", "")),
        ("working directory", h.get("cwd", "")),
        ("entries in the file", f"{len(s.records):,}"),
        ("leaf", f"{visible(leaf, one_line=True)} ({len(st.path):,} entries on its path)"),
        ("read as", f"pi {planner.profile.version}"),
    ]
    if s.migrated:
        # a version 1/2 file's ids come from pi's migration on every open (info says so too)
        rows.append(
            (
                "entry ids",
                f"made on opening: this {version_name(s.source_version)} file has none of its own, so "
                "each reading of it (another report, info, the window, pi) makes other ids",
            )
        )
    w.facts(rows)


def _write_path(w: ReportWriter, planner: PathPlanner, st: PlanState) -> None:
    s = planner.session
    path = planner.path
    marks: dict[int, str] = {}
    if st.cut is not None and not st.nothing_to_compact and st.error is None:
        if st.first_kept_record is not None:
            marks[st.first_kept_record] = "first kept entry: the planned cut"
        if st.cut.is_split_turn and 0 <= st.cut.turn_start_index < len(path):
            marks.setdefault(path[st.cut.turn_start_index], "start of the split turn")
    for start in range(0, len(path), CHUNK):
        chunk = path[start : start + CHUNK]
        for k, (i, v) in enumerate(zip(chunk, s.values(chunk), strict=True)):
            render_entry(w, s, start + k, s.records[i], v, marks.get(i, ""))


def _tokens(value: float) -> str:
    return "?" if value != value else f"{value:,.0f}"


def timeline_section(planner: PathPlanner, st: PlanState) -> ReportSection:
    """The context timeline of the plan's path (core.timeline, drawn by core.timeline_svg): the
    chart, and for the Markdown report its drops and markers as text."""
    timeline = build_timeline(planner, st)
    text = [
        f"compaction at #{d.position}: {_tokens(d.tokens_before)} → {_tokens(d.tokens_after)} tokens "
        f"(summary {_tokens(d.summary_tokens)})"
        for d in timeline.drops
    ]
    text += [f"{m.kind.replace('_', ' ')} at #{m.position}: {m.label}" for m in timeline.markers]
    if timeline.planned is not None:
        pd = timeline.planned
        text.append(
            f"planned compaction now: {_tokens(pd.tokens_before)} → {_tokens(pd.tokens_after)} tokens"
        )
    usage = sum(timeline.from_usage)
    caption = (
        f"The context at each of the path's {len(timeline.tokens):,} assistant answers ({usage:,} from "
        f"provider usage, solid; {len(timeline.tokens) - usage:,} by pi's chars/4 estimate, dashed), "
        f"the window and threshold, each compaction's drop and the planned one."
    )
    return figure_section(
        "Context timeline", "timeline", timeline_svg(timeline, width=1000, height=260), caption, text
    )


def write_report(
    out: TextIO,
    planner: PathPlanner,
    params: PlanParams,
    options: ExportOptions,
    *,
    state: PlanState | None = None,
) -> None:
    """Write the report to ``out`` (streamed). ``state``: the plan already computed for ``params``."""
    st = state if state is not None else planner.plan(params)
    w = _writer(options.fmt, out)
    what = {"path": "the path", "plan": "compaction plan", "context": "the context the LLM sees"}[
        options.what
    ]
    w.start(_title(planner.session), f"Session Studio report: {what} · exported {now_iso()}")
    w.heading(2, "Session", "session")
    _session_facts(w, planner, st)
    if planner.error:
        w.para(planner.error, tone="warning")
    if options.what == "path":
        w.heading(2, f"The path ({len(planner.path):,} entries, oldest first)", "path")
        _write_path(w, planner, st)
    elif options.what == "plan":
        sections = plan_sections(st, options.recovery)
        sections[2:2] = [timeline_section(planner, st), *options.extra_sections]
        write_sections(w, sections)
    else:
        # the settings, the count now and the cut first: a context report alone said none of them
        write_sections(w, [s for s in plan_sections(st, options.recovery) if s.anchor in ("plan", "cut")])
        w.heading(2, "Context now", "context-before")
        write_context(w, planner.context, planner.profile, anchor="before")
        after = context_after(planner, st, options.summary)
        if after is not None:
            w.heading(2, "Context after the planned compaction", "context-after")
            if not options.summary:
                w.para("The summary is a placeholder until it is generated.", tone="muted")
            write_context(w, after, planner.profile, anchor="after")
    w.finish()


def suggested_name(session: Session, what: str, fmt: str) -> str:
    """report file name next to the session: ``<session file stem>.<what>.<fmt>``."""
    return f"{Path(session.path).stem}.{what}.{fmt}"


def export_report(
    target: str | os.PathLike[str],
    planner: PathPlanner,
    params: PlanParams,
    options: ExportOptions,
    *,
    state: PlanState | None = None,
) -> Path:
    """Write the report to ``target`` atomically (replacing an existing file) and return its path."""
    path = Path(target)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        e.filename = str(path)  # the file asked for, not the hidden temporary one beside it
        raise
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass", newline="\n") as fh:
            write_report(fh, planner, params, options, state=state)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename == tmp_name:
            e.filename = str(path)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return path
