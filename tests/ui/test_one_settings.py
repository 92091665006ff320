"""The window and `session-studio info` start from the same pi settings and model limits."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from session_studio.cli import main
from session_studio.core import Session
from session_studio.llm._catalog import CATALOG_ROWS
from session_studio.ui.document import compute_plan_state, prepare_loaded

from .conftest import write_session


def _session(tmp_path: Path, provider: str, model_id: str, cwd: Path, answer_tokens: int = 0) -> Path:
    """A model_change to the model and two user messages; with ``answer_tokens``, between them an
    answer of that model whose usage is that many tokens (pi's check weighs it)."""
    answer = {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "api": "anthropic-messages",
            "provider": provider,  # the same model: an answer names the session's model
            "model": model_id,
            "usage": {
                "input": answer_tokens,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": answer_tokens,
            },
            "stopReason": "stop",
            "timestamp": 1735725601000,
        },
    }
    spec = [
        {"type": "model_change", "provider": provider, "modelId": model_id},
        ("user", 2000),
        *([answer] if answer_tokens else []),
        ("user", 2000),
    ]
    return write_session(tmp_path / "s.jsonl", spec, cwd=str(cwd))


def _info(path: Path, *options: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["info", str(path), *options]) == 0
    return out.getvalue()


def _info_numbers(text: str) -> tuple[int, int, int]:
    """(window, threshold, keepRecentTokens) as `info` prints them."""
    m = re.search(r"tokens of ([\d,]+) \(", text)
    t = re.search(r"threshold:\s+([\d,-]+) ", text)
    k = re.search(r"cut \(keepRecentTokens ([\d,]+)\)", text)
    assert m and t and k, text

    def n(s: str) -> int:
        return int(s.replace(",", ""))

    return n(m.group(1)), n(t.group(1)), n(k.group(1))


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "agent"
    d.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(d))
    return d


def test_every_catalogue_model_gives_the_same_window(tmp_path: Path, agent: Path) -> None:
    """Issue 7: the window's own table was wrong for 45 of 114 models (claude-opus-4-6 200k vs 1M…)."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    path = _session(tmp_path, "x", "y", cwd)
    text = path.read_text()
    for provider, model_id, window, _max, *_ in CATALOG_ROWS:
        path.write_text(
            text.replace(
                '"provider": "x", "modelId": "y"',
                json.dumps({"provider": provider, "modelId": model_id})[1:-1],
            )
        )
        res = prepare_loaded(Session.open(str(path)))
        assert (res.window, res.window_known) == (window, True), (provider, model_id)
    # and `info` prints the same numbers (a few, each CLI run costs a process-free main() call)
    for provider, model_id, window, *_ in CATALOG_ROWS[::25]:
        path.write_text(
            text.replace(
                '"provider": "x", "modelId": "y"',
                json.dumps({"provider": provider, "modelId": model_id})[1:-1],
            )
        )
        res = prepare_loaded(Session.open(str(path)))
        st = compute_plan_state(res, res.keep, res.reserve, res.window, res.window_known, None)
        assert (
            _info_numbers(_info(path))
            == (st.window, st.threshold, st.keep)
            == (window, window - 16384, 20000)
        )


@pytest.mark.parametrize(
    ("settings", "keep", "reserve"),
    [
        ('{"compaction": {"keepRecentTokens": 30000.0, "reserveTokens": 8000}}', 30000, 8000),
        ('\ufeff{"compaction": {"keepRecentTokens": 30000, "reserveTokens": 8000}}', 20000, 16384),
        ('{\n  // comment\n  "compaction": {"keepRecentTokens": 30000}\n}', 20000, 16384),
        ('{"compaction": {"keepRecentTokens": 12345, "reserveTokens": 1000}}', 12345, 1000),
    ],
)
def test_gui_and_info_read_settings_alike(
    tmp_path: Path, agent: Path, settings: str, keep: int, reserve: int
) -> None:
    (agent / "settings.json").write_text(settings, encoding="utf-8")
    cwd = tmp_path / "proj"
    cwd.mkdir()
    path = _session(tmp_path, "anthropic", "claude-opus-4-6", cwd)
    res = prepare_loaded(Session.open(str(path)))
    st = compute_plan_state(res, res.keep, res.reserve, res.window, res.window_known, None)
    assert (st.keep, st.reserve) == (keep, reserve)
    assert _info_numbers(_info(path)) == (st.window, st.threshold, st.keep)
    assert st.window == 1_000_000


@pytest.mark.parametrize("enabled", [True, False])
def test_auto_compaction_off_in_pi_settings_is_said_everywhere(
    qtbot: Any, tmp_path: Path, agent: Path, enabled: bool
) -> None:
    """pi's shouldCompact is false when settings.json has compaction.enabled false (its /settings
    "auto-compact" off, as people who compact by hand often have): the planner, the comparison and
    `info` said pi would compact by itself."""
    from session_studio.core.explain import AUTO_COMPACTION_OFF
    from session_studio.core.profile_compare import side_of
    from session_studio.ui.planner import PlannerPanel
    from session_studio.ui.tasks import TaskRunner
    from session_studio.ui.timeline import TimelinePanel
    from session_studio.ui.token_bar import BarLayout

    # threshold 1,000 of opus's 1M window; keep 1,000: the first user message and the answer to compact
    compaction = {"reserveTokens": 999_000, "keepRecentTokens": 1000, "enabled": enabled}
    (agent / "settings.json").write_text(json.dumps({"compaction": compaction}), encoding="utf-8")
    cwd = tmp_path / "proj"
    cwd.mkdir()
    path = _session(tmp_path, "anthropic", "claude-opus-4-6", cwd, answer_tokens=1500)
    res = prepare_loaded(Session.open(str(path)))
    st = compute_plan_state(res, res.keep, res.reserve, res.window, res.window_known, None)
    assert st.threshold == 1_000 and st.over_threshold
    assert st.should_compact is enabled
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_state(st)
    details = panel.cut_details.text()
    automatic = side_of(st).automatic
    info = _info(path)
    bar = dict((name, text) for name, _a, _b, text in BarLayout(st, 1000).marks())["threshold"]
    runner = TaskRunner()
    runner.synchronous = True
    timeline = TimelinePanel(runner, lambda: res.planner)
    qtbot.addWidget(timeline)
    timeline.show()
    timeline.follow_plan(st)
    assert timeline.history is not None
    bar += " | " + timeline.status.text()  # the timeline's threshold line is where pi would compact
    exported = tmp_path / "plan.md"
    assert main(["export", str(path), "--what", "plan", "-o", str(exported)]) == 0
    report = exported.read_text(encoding="utf-8")
    if enabled:
        assert "would compact automatically" in details and AUTO_COMPACTION_OFF not in details
        assert automatic.startswith("yes: ")
        assert "pi WOULD compact now" in info
        assert AUTO_COMPACTION_OFF not in bar + report
    else:
        off = AUTO_COMPACTION_OFF  # one sentence in every view
        assert f"would not compact automatically: {off}" in details
        assert automatic.startswith(f"no: {off}")
        assert f"over it, but {off}" in info and "WOULD" not in info
        assert bar.count(off) == 2  # the bar's mark and the timeline's status
        assert f"no: {off}" in report
        assert f"over it, but {off}" in report  # the bar's SVG caption
    # a context over the window itself (a what-if window of 1,500): pi's next request overflows it
    # unless pi compacts first, which it does only with automatic compaction on
    small = compute_plan_state(res, res.keep, 500, 1_500, True, None)
    assert small.context_tokens > 1_500
    panel.set_state(small)
    assert ("more than the context window 1,500" in panel.cut_details.text()) is not enabled


def test_the_model_s_output_limit_reaches_the_window_and_info(
    qtbot: Any, tmp_path: Path, agent: Path
) -> None:
    """pi 1.6.0 compacts and retries for a length stop below the model's maxTokens (its registry:
    models.json over pi-ai's catalogue): the planner and `info` read the same limit."""
    from session_studio.core.explain import overflow_text
    from session_studio.ui.planner import PlannerPanel

    cwd = tmp_path / "proj"
    cwd.mkdir()
    path = _session(tmp_path, "anthropic", "claude-opus-4-6", cwd, answer_tokens=1500)
    text = (
        path.read_text()
        .replace('"output": 0,', '"output": 9000,')
        .replace('"stopReason": "stop"', '"stopReason": "length"')
    )
    lines = text.splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # the length stop last: the answer pi checks
    for max_tokens, recovers in ((None, True), (9000, False), (9001, True)):
        if max_tokens is not None:  # else the catalogue's 128,000
            override = {"modelOverrides": {"claude-opus-4-6": {"maxTokens": max_tokens}}}
            (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": override}}))
        res = prepare_loaded(Session.open(str(path)), pin="1.6.0")
        assert res.model_max_tokens == (max_tokens or 128_000)
        st = compute_plan_state(res, res.keep, res.reserve, res.window, res.window_known, None)
        said = overflow_text(st)
        assert (said is not None) is recovers
        panel = PlannerPanel()
        qtbot.addWidget(panel)
        panel.set_state(st)
        info = _info(path, "--pi-version", "1.6.0")
        if recovers:
            assert f"below the model's output limit {res.model_max_tokens:,}" in said  # type: ignore[operator]
            assert html.escape(said[:1].upper() + said[1:]) in panel.cut_details.text()  # type: ignore[index]
            assert f"overflow:    {said}" in info
        else:
            assert "overflow:" not in info
