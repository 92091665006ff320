"""Shareable reports of a session: the path, a compaction plan or the rebuilt context, as Markdown
or one self-contained HTML file. Pure Python over ``core`` (no Qt, no network)."""

from __future__ import annotations

from .plan_report import ReportSection, figure_section
from .report import FORMATS, WHATS, ExportOptions, export_report, suggested_name, write_report

__all__ = [
    "FORMATS",
    "WHATS",
    "ExportOptions",
    "ReportSection",
    "export_report",
    "figure_section",
    "suggested_name",
    "write_report",
]
