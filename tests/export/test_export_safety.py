"""Session content is untrusted: every report renders it inert (HTML and Markdown)."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.export import ExportOptions, write_report
from session_studio.export.html_writer import CSP
from session_studio.export.markdown_writer import MarkdownWriter
from session_studio.export.plan_report import check_svg
from session_studio.export.safe import fence_for, image_data_uri, md_inline, visible

from .hostile import assert_inert, hostile_strings, outside_fences, tiny_png, write_hostile

PORT = 8765
WHATS = ("path", "plan", "context")
PARAMS = PlanParams(keep_recent_tokens=1000)


def report(path: Path, what: str, fmt: str, profile=PROFILE_0_80_2) -> str:  # type: ignore[no-untyped-def]
    planner = PathPlanner(Session.open(path), profile=profile)
    out = io.StringIO()
    write_report(out, planner, PARAMS, ExportOptions(what, fmt))
    return out.getvalue()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile(tmp_path_factory.mktemp("hostile") / "hostile.jsonl", PORT)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
@pytest.mark.parametrize("what", WHATS)
def test_html_report_of_a_hostile_session_is_inert(hostile: Path, what: str, profile) -> None:  # type: ignore[no-untyped-def]
    page = report(hostile, what, "html", profile)
    # only the writers' own elements; no handler; the only URL is the session's PNG as data:
    assert_inert(page)
    # the strict CSP comes before anything else in <head>
    head = page.split("<head>", 1)[1]
    assert head.index(f'content="{CSP}"') < head.index("<title>") < head.index("<style>")
    assert "default-src 'none'" in CSP and "img-src data:" in CSP and "script" not in CSP
    # no bidi override or control character survives; they are shown as escapes
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", page)
    if what != "plan":  # the plan report shows no message text
        assert "\\u202e" in page and "\\x1b" in page
        for s in hostile_strings(PORT):
            first = visible(s.split("\n")[0])
            assert html.escape(first, quote=True) in page, first


def test_html_embeds_only_safe_base64_raster_images(hostile: Path) -> None:
    page = report(hostile, "path", "html")
    assert page.count('<img class="session-image"') == 1  # the PNG; the SVG, bad mime and URL are named
    assert "[image not embedded: image/svg+xml]" in page
    assert image_data_uri({"type": "image", "mimeType": "image/png", "data": tiny_png()}) is not None
    for bad in (
        {"mimeType": "image/svg+xml", "data": "PHN2Zz4="},
        {"mimeType": "image/png", "data": "http://x/y.png"},
        {"mimeType": "image/png", "data": 'AAAA"><script>'},
        {"mimeType": "text/html", "data": "AAAA"},
        {"mimeType": "image/png", "data": "AAA"},  # not base64 (length)
        "data:image/png;base64,AAAA",
    ):
        assert image_data_uri(bad) is None, bad


@pytest.mark.parametrize("what", WHATS)
def test_markdown_report_of_a_hostile_session_is_inert(hostile: Path, what: str) -> None:
    md = report(hostile, what, "md")
    interpreted = "\n".join(outside_fences(md))
    # outside fences every <, [, ( and ! is escaped: no HTML, link, image or autolink
    assert not re.search(r"(?<!\\)[<\[]", interpreted)
    assert not re.search(r"(?<!\\)\]\(", interpreted)
    assert "javascript:" not in interpreted.lower() and "http://" not in interpreted
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", md)
    if what == "path":
        # the hostile text is inside fences, whole, and the line that tried to close a fence did not
        assert not any(line.startswith("# not a heading") for line in interpreted.split("\n"))
        assert "\n# not a heading\n" in md


def test_fences_are_longer_than_any_backtick_run() -> None:
    assert fence_for("plain") == "```"
    assert fence_for("a ``` b") == "````"
    assert fence_for("x\n``````\ny") == "```````"
    out = io.StringIO()
    MarkdownWriter(out).text_block("before\n````\n# heading?\n````\nafter")
    lines = out.getvalue().split("\n")
    assert lines[0] == "`````text" and lines[-3] == "`````"
    assert outside_fences(out.getvalue()) == ["", ""]


def test_inline_markdown_escapes_links_html_and_autolinks() -> None:
    assert md_inline("[x](javascript:alert(1))") == "\\[x\\](javascript\\:alert(1))"
    assert md_inline("# h") == "\\# h" and md_inline("1. x") == "1\\. x" and md_inline("- x") == "\\- x"
    assert md_inline("<b>") == "\\<b\\>"
    assert md_inline("see http://a.b www.c.d e@f.g") == "see http\\://a.b www\\.c.d e\\@f.g"
    # the visible escapes' backslashes are escaped too, so a viewer shows them as written
    assert md_inline("two\nlines\u202e") == "two\\\\x0alines\\\\u202e"


def test_figures_must_be_plain_drawings() -> None:
    ok = (
        '<svg xmlns="http://www.w3.org/2000/svg"><rect x="1" y="1" width="2" height="2"/><text>a</text></svg>'
    )
    assert check_svg(ok) == ok
    for bad in (
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="http://x/y.png"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"><text>x</text></a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url(http://x/p)"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(http://x/s.css)</style></svg>',
        "<svg><rect></svg>",
    ):
        with pytest.raises(ValueError):
            check_svg(bad)
