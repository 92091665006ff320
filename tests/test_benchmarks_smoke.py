"""The benchmarks still run: once each on a small generated session (the real runs are on demand).

Marked slow (the oracle stage, in parallel): `plan_vs_pi.py` runs pi on node, `ui_open.py` the window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import generate

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (session,) = generate(tmp_path_factory.mktemp("bench"), "--seed", "5", "--count", "1", "--size", "small")
    return session


def _run_json(*args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])


@pytest.mark.parametrize("pi", ["0.80.2", "1.6.0"])
def test_plan_vs_pi_smoke(pi: str, request: pytest.FixtureRequest, small_session: Path) -> None:
    """Against each pi (`pi-bench.mjs --pi 1.6.0`), and our plan with that profile."""
    env = dict(os.environ)
    if pi == "0.80.2":
        env["PI_ORACLE_HOME"] = request.getfixturevalue("oracle_home")
    else:
        env["PI16_HOME"] = request.getfixturevalue("oracle16_home")
    out = _run_json(
        str(BENCHMARKS / "plan_vs_pi.py"), "--file", str(small_session), "--repeat", "1", "--pi", pi, env=env
    )
    assert out["bytes"] == small_session.stat().st_size and out["piVersion"] == pi
    for run in ("ours_cold", "ours_cached_index", "pi"):
        assert out[run]["seconds"] > 0 and out[run]["peakRssMB"] > 0, out
    assert out["ratio_cold"]["time"] > 0 and out["ratio_cold"]["cpu"] > 0
    assert out["pi"]["cpuSeconds"] > 0


def test_ui_open_smoke(small_session: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    before = small_session.read_bytes()
    out = _run_json(
        str(BENCHMARKS / "ui_open.py"), str(small_session), "--smoke", "--append", "--generate", env=env
    )
    assert small_session.read_bytes() == before  # the entry went to a copy
    assert out["entries"] > 0
    assert 0 < out["plan_usable_s"] <= out["fully_loaded_s"]
    assert out["peak_rss_mb"] > 0
    assert 0 < out["empty_window_rss_mb"]["rss"] <= out["loaded_rss_mb"]["rss"] <= out["peak_rss_mb"]
    assert out["cli_plan_cold"]["seconds"] > 0 and out["cli_plan_cold"]["peak_rss_mb"] > 0
    # (on a small session the two CLI runs hold about the same: either may be a little higher)
    assert out["cli_plan_cold"]["start_rss_mb"] > 0
    assert out["cli_session_mb"] == round(
        out["cli_plan_cold"]["peak_rss_mb"] - out["cli_plan_cold"]["start_rss_mb"], 1
    )
    assert out["window_session_mb"] == round(out["peak_rss_mb"] - out["empty_window_rss_mb"]["rss"], 1)
    assert out["ratio_session_memory_to_cli"] is None or out["ratio_session_memory_to_cli"] > 0
    stalls = out["longest_gui_stall_ms_by_interaction"]
    for what in (
        "scroll_through_max_of_40_steps",
        "page_down_max_of_30",
        "search_typed",
        "search_in_content_typed",
        "jump_to_leaf",
    ):
        assert stalls[what] >= 0, out
    assert out["search"]["cleared"]["rows"] >= out["search"]["quoted"]["rows"]
    assert out["search"]["in content"]["rows"] >= out["search"]["quoted"]["rows"]  # rows and more
    assert stalls["pi_appends_an_entry"] >= 0 and out["appended"]["shown"], out
    made = out["generated"]
    assert made["made"] and stalls["generate_offline"] >= 0 and stalls["open_preview_tab"] >= 0, out
    assert made["peak_rise_mb"] >= made["held_mb"] and made["rss_before_mb"] > 0, out


def test_ui_timeline_smoke(small_session: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = _run_json(str(BENCHMARKS / "ui_timeline.py"), str(small_session), env=env)
    for version in ("0.80.2", "1.6.0"):
        run = out[version]
        assert run["points"] > 0 and run["build_s"] >= 0 and run["rebuild_after_append_s"] >= 0
        assert run["paint_ms"]["median"] > 0 and run["hover_ms"]["median"] > 0


def test_make_long_chain_smoke(tmp_path: Path) -> None:
    """The long uncompacted chain (README: a long path before its first compaction): one path of
    every entry, no compaction, turns pi plans (its tool results follow their calls), file tools'
    calls among them."""
    from session_studio.core import Session

    r = subprocess.run(
        [sys.executable, str(BENCHMARKS / "make_long_chain.py"), "--entries", "202", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    path = Path(r.stdout.strip())
    s = Session.open(path, keep_values=False, use_cache=False)
    assert not s.issues and len(s.records) == 202
    assert len(s.path_indices(s.leaf_index())) == 202
    assert {s.records[i].type for i in range(202)} == {"message"}
    assert [s.records[i].role for i in range(4)] == ["user", "assistant", "toolResult", "assistant"]
    out = _run_json(
        "-m",
        "session_studio.cli",
        "plan",
        str(path),
        "--fields",
        "cut,prepared",
        "--pi-version",
        "1.6.0",
        "--keep-recent",
        "2000",
    )
    assert out["cut"]["boundaryStart"] == 0 and out["cut"]["boundaryEnd"] == 202
    # a coding agent's calls: files read and modified to list
    assert out["prepared"]["readFiles"] and out["prepared"]["modifiedFiles"]


def test_ui_paint_smoke(small_session: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = _run_json(str(BENCHMARKS / "ui_paint.py"), str(small_session), "--repeat", "3", env=env)
    assert out["rows_per_paint"] > 0 and out["paints_each"] == 3
    for kind in ("same_rows_ms", "after_scrolling_3_rows_ms", "after_a_page_ms"):
        assert out[kind]["median"] > 0 and out[kind]["cpu_median"] > 0, out
