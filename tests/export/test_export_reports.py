"""The reports on real pi sessions, pi 1.6.0 cases and generated sessions, in both pi profiles:
what they show agrees with the plan, the context builder and the CLI's JSON; they stream."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_studio.cli import COMMANDS, main, opens_window
from session_studio.core import Session
from session_studio.core.messages import convert_to_llm
from session_studio.core.oracle_schema import context_output, plan_output
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.timeline import build_timeline
from session_studio.core.timeline_svg import timeline_svg
from session_studio.export import ExportOptions, export_report, figure_section, write_report
from session_studio.export.context_report import PENDING_SUMMARY, context_after
from tests.conftest import FIXTURES, ROOT, generate

from .hostile import outside_fences

CASES16 = sorted((ROOT / "tests" / "oracle" / "pi-1.6.0" / "cases").glob("*.jsonl"))
PROFILES = [PROFILE_0_80_2, PROFILE_1_6_0]


def render(planner: PathPlanner, what: str, fmt: str, params: PlanParams | None = None, **kw: Any) -> str:
    out = io.StringIO()
    write_report(out, planner, params or PlanParams(), ExportOptions(what, fmt, **kw))
    return out.getvalue()


def llm_count(page: str, fmt: str, anchor: str) -> int:
    if fmt == "html":
        return len(re.findall(rf'<article class="entry [^"]*" id="{anchor}-\d+">', page))
    part = (
        page.split("## Context after")[0 if anchor == "before" else 1]
        if anchor == "before" or "## Context after" in page
        else ""
    )
    return sum(bool(re.match(r"### \d+\\\. ", line)) for line in outside_fences(part))


def check_reports(path: Path, profile: PiProfile, params: PlanParams) -> None:
    """Every report of ``path`` in both formats, checked against the plan and the context JSON."""
    session = Session.open(path)
    planner = PathPlanner(session, profile=profile)
    st = planner.plan(params)
    expected = context_output(session, profile=profile)[0]
    for fmt in ("html", "md"):
        page = render(planner, "path", fmt, params)
        entries = (
            len(re.findall(r'<article class="entry[ "]', page))
            if fmt == "html"
            else len(re.findall(r"^### \\#\d+ ", page, re.M))
        )
        assert entries == len(planner.path)
        page = render(planner, "context", fmt, params)
        if "llmMessages" in expected:
            assert llm_count(page, fmt, "before") == len(expected["llmMessages"])
        after = context_after(planner, st)
        if after is not None:
            # the context after, rebuilt by core's builder, is the plan's projected "after" context
            assert len(after.messages()) == len(st.after_tokens)
            assert llm_count(page, fmt, "after") == len(convert_to_llm(after.messages(), profile))
        page = render(planner, "plan", fmt, params)
        if st.cut is not None and st.first_kept_record is not None and not st.nothing_to_compact:
            # the cut `session-studio plan` prints (the oracle schema) is the one reported
            cli_cut = plan_output(
                session,
                keep_recent=params.keep_recent_tokens,
                reserve=params.reserve_tokens,
                context_window=params.context_window,
                fields=["cut"],
                profile=profile,
            )[0]["cut"]
            assert cli_cut["firstKeptEntryId"] == session.records[st.first_kept_record].id
            first_id = str(session.records[st.first_kept_record].id)
            assert first_id.replace("-", "\\-" if fmt == "md" else "-") in page
            prep = st.prepare()
            assert prep is not None and f"{prep.tokens_before:,.0f}" in page


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_reports_of_the_real_pi_sessions(name: str, profile: PiProfile) -> None:
    check_reports(FIXTURES / name, profile, PlanParams())


@pytest.mark.parametrize("case", CASES16, ids=lambda p: p.stem)
def test_reports_of_the_pi_1_6_0_cases(case: Path) -> None:
    check_reports(case, PROFILE_1_6_0, PlanParams(keep_recent_tokens=200))


@pytest.mark.parametrize("size", ["small", "medium"])
def test_reports_of_generated_sessions(tmp_path: Path, size: str) -> None:
    files = generate(tmp_path, "--seed", "7", "--count", "2", "--size", size)
    assert files
    for path in files:
        for profile in PROFILES:
            check_reports(path, profile, PlanParams(keep_recent_tokens=4000))


@pytest.mark.oracle
def test_reports_of_generated_pi_1_6_0_scenarios(tmp_path: Path) -> None:
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed (needed for gen_scenarios.mjs)")
    subprocess.run(
        ["node", str(ROOT / "tests/oracle/pi-1.6.0/gen_scenarios.mjs"), "scenarios", "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) > 10
    for path in files:
        check_reports(path, PROFILE_1_6_0, PlanParams(keep_recent_tokens=300))


def test_pi16_shapes_are_shown(tmp_path: Path) -> None:
    from tests.ui.pi16_sample import write_pi16_session

    planner = PathPlanner(Session.open(write_pi16_session(tmp_path / "s.jsonl")), profile=PROFILE_1_6_0)
    page = render(planner, "path", "html")
    for shown in (
        "section base",  # a system message's sections
        "tools added: read, bash",
        "tools removed: bash",
        "system message snapshot",  # the compaction's
        "usage of the summary",
        "cache_warm",  # a usage entry
        "The target is omitted from the model&#x27;s context",  # context edits
        "[tool output pruned: 8000 chars]",
    ):
        assert shown in page, shown


def test_the_after_context_uses_the_summary_given(tmp_path: Path) -> None:
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    page = render(planner, "context", "md")
    assert "Context after the planned compaction" in page and PENDING_SUMMARY.split(".")[0] in page
    # the settings, the count now and the cut come first (a context report said none of them)
    at = page.index
    assert at("## The plan") < at("## The cut") < at("## Context now") < at("## Context after")
    assert "keepRecentTokens" in page[: at("## Context now")]
    page = render(planner, "context", "html", summary="## Goal\nShip the <b>refactor</b>.")
    assert "Ship the &lt;b&gt;refactor&lt;/b&gt;." in page and PENDING_SUMMARY.split(".")[0] not in page


def test_a_figure_section_lands_after_the_token_bar_and_the_timeline() -> None:
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="5" height="5"/></svg>'
    extra = figure_section("Another figure", "extra", svg, "something else")
    page = render(planner, "plan", "html", extra_sections=[extra])
    assert page.index('id="token-bar"') < page.index('id="timeline"') < page.index('id="extra"')
    assert page.index('id="extra"') < page.index('id="cut"')
    assert svg in page


def test_the_plan_report_draws_cores_timeline_with_its_drops() -> None:
    """The plan report's timeline is core's chart of the same plan (drawn by core.timeline_svg);
    the Markdown report lists each compaction's drop as text."""
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    st = planner.plan(PlanParams())
    timeline = build_timeline(planner, st)
    assert timeline.drops  # the real session has compactions
    page = render(planner, "plan", "html")
    assert timeline_svg(timeline, width=1000, height=260) in page
    md = render(planner, "plan", "md")
    for d in timeline.drops:
        assert f"compaction at #{d.position}: {d.tokens_before:,.0f} → {d.tokens_after:,.0f} tokens" in md


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.largest = 0

    def write(self, s: str) -> int:
        self.calls += 1
        self.largest = max(self.largest, len(s))
        return super().write(s)


def test_reports_stream_block_by_block(tmp_path: Path) -> None:
    """No report is built as one string: each write is one block, however long the path."""
    files = generate(tmp_path, "--seed", "3", "--count", "1", "--size", "medium")
    planner = PathPlanner(Session.open(files[0]))
    for what in ("path", "context"):
        out = CountingStream()
        write_report(out, planner, PlanParams(), ExportOptions(what, "html"))
        assert out.calls > (len(planner.path) if what == "path" else len(planner.item_tokens))
        biggest_entry = max(r.length for r in planner.session.records)
        assert out.largest < 4 * biggest_entry + 20_000


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "export" in COMMANDS and not opens_window(["export", "x.jsonl"])
    src = FIXTURES / "before-compaction.jsonl"
    out = tmp_path / "plan.html"
    assert main(["export", str(src), "-o", str(out), "--pi-version", "0.80.2"]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="token-bar"' in page
    assert "wrote" in capsys.readouterr().err
    # any other name than .html/.htm is Markdown, as --help says (a .txt was written as HTML)
    txt = tmp_path / "plan.txt"
    assert main(["export", str(src), "-o", str(txt), "--pi-version", "0.80.2"]) == 0
    assert not txt.read_text(encoding="utf-8").lstrip().startswith("<")
    # stdout: Markdown by default
    assert main(["export", str(src), "--what", "path", "--pi-version", "0.80.2"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# ") and "## The path" in md
    # a manual cut, as `plan` and the window take it (a v3 file: a v1 file gets new ids at each load)
    src = generate(tmp_path / "gen", "--seed", "5", "--count", "1", "--size", "small")[0]
    session = Session.open(src)
    planner = PathPlanner(session)
    valid = [session.records[r].id for r, m in planner.base_marks.items() if m == "valid"]
    assert main(["export", str(src), "--cut", str(valid[0]), "--format", "md", "--pi-version", "0.80.2"]) == 0
    assert "Manual cut" in capsys.readouterr().out
    invalid = next(session.records[r].id for r, m in planner.base_marks.items() if m == "invalid")
    assert main(["export", str(src), "--cut", str(invalid), "--pi-version", "0.80.2"]) == 1
    assert "cannot cut at" in capsys.readouterr().err


def test_export_replaces_the_file_atomically(tmp_path: Path) -> None:
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    target = tmp_path / "r.md"
    target.write_text("old")
    export_report(target, planner, PlanParams(), ExportOptions("plan", "md"))
    assert target.read_text(encoding="utf-8").startswith("# ")
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # no temp file left
    with pytest.raises(ValueError, match="unknown format"):
        ExportOptions("plan", "pdf")
    asked = tmp_path / "missing" / "r.md"
    with pytest.raises(FileNotFoundError) as info:
        export_report(asked, planner, PlanParams(), ExportOptions("plan", "md"))
    assert info.value.filename == str(asked)  # the file asked for, not the hidden temporary one


def test_cli_export_runs_as_a_command(tmp_path: Path) -> None:
    out = tmp_path / "ctx.md"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_studio.cli",
            "export",
            str(CASES16[0]),
            "--what",
            "context",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "read as:** pi 1.6.0" in out.read_text(encoding="utf-8").replace("\\", "")


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
def test_a_path_pi_throws_on_is_reported(profile: PiProfile) -> None:
    from tests.core.util import A, U, session_of

    planner = PathPlanner(session_of(U(100), {"type": "message"}, A(100)), profile=profile)
    assert planner.error
    for what in ("path", "plan", "context"):
        for fmt in ("html", "md"):
            page = render(planner, what, fmt)
            assert "pi would throw" in page, (what, fmt)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_tokens_after_adds_up_to_its_parts(profile: PiProfile) -> None:
    """ "tokens after" names every part of the projected context, and they add up: under pi 1.6.0
    the new compaction's system snapshot is one (the report used to leave it out)."""
    planner = PathPlanner(
        Session.open(ROOT / "tests/oracle/pi-1.6.0/cases/m1-system-first.jsonl"), profile=profile
    )
    page = render(planner, "plan", "md", PlanParams(keep_recent_tokens=100))
    line = next(ln for ln in page.splitlines() if "tokens after (estimated)" in ln)
    total, *parts = (int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", line))
    assert len(parts) == (3 if profile is PROFILE_1_6_0 else 2), line
    assert total == sum(parts), line
    assert ("system message snapshot" in line) == (profile is PROFILE_1_6_0)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_the_bar_figure_names_the_summary_not_the_snapshot(profile: PiProfile) -> None:
    """The static bar's words took the projected context's first item for the summary: under
    pi 1.6.0 that is the system message snapshot."""
    from session_studio.export.bar_svg import bar_figure

    session = Session.open(ROOT / "tests/oracle/pi-1.6.0/cases/m1-system-first.jsonl")
    st = PathPlanner(session, profile=profile).plan(PlanParams(keep_recent_tokens=100))
    summary = next(t for k, kind, t in st.after_tokens if k == -1 and kind == "compactionSummary")
    (line,) = [ln for ln in bar_figure(st).text if "after: ~" in ln]
    assert line.endswith(f"the summary counted as {summary:,.0f})"), line
    assert ("system message snapshot" in line) == (profile is PROFILE_1_6_0)
