"""Round trip of branch summaries under pi 1.6.0: ours, written to disk, is what pi 1.6.0 writes and loads.

Ours runs against mock-llm.mjs; pi 1.6.0's own /tree navigation with a summary
(`branch-summary` of tests/oracle/pi-1.6.0/pi-oracle.mjs: collectEntriesForBranchSummary,
generateBranchSummary, branchWithSummary(..., usage)) against its built-in mock with the same
reply rule. The appended entries must agree (id, timestamp and usage numbers aside: `fromId` is
the leaf being left, `usage` is stored), and pi 1.6.0's `context` of *our* file must equal ours.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.oracle_schema import context_output
from session_studio.core.profile import PROFILE_1_6_0
from session_studio.engine.edits import branch_to
from session_studio.llm.base import SummaryRequest, SummaryResult
from tests.conftest import ORACLE16_DIR, ROOT, Oracle16, as_js_json, generate_injected, generate_scenarios
from tests.engine.test_roundtrip import openai

pytestmark = pytest.mark.oracle

ENTRY_FIELDS = ("type", "parentId", "fromId", "summary", "details", "fromHook")
CASES = ORACLE16_DIR / "cases"
#: the oracle's model window; ours must budget the segment the same way
CONTEXT_WINDOW = 200000


def _without_timestamp(m: Any) -> Any:
    return {k: v for k, v in m.items() if k != "timestamp"} if isinstance(m, dict) else m


def _target(src: Path) -> str:
    """An entry in the middle of the path: the branch left behind holds its second half."""
    s = Session.open(src)
    path = s.path_indices(s.leaf_index())
    target = s.records[path[len(path) // 2]].id
    assert isinstance(target, str)
    return target


def _assert_same_as_pi(oracle16: Oracle16, src: Path, ours: Path, entry: dict[str, Any], target: str) -> None:
    pi_file = ours.with_suffix(".pi.jsonl")
    pi = oracle16.run("branch-summary", str(src), "--to", target, "--out", str(pi_file))
    assert "error" not in pi, pi.get("error")
    theirs = json.loads(pi_file.read_bytes().splitlines()[-1])  # as written: pi's key order
    assert theirs == pi["appendedEntry"]
    for k in ENTRY_FIELDS:
        assert entry.get(k) == theirs.get(k), (src.name, k)
    # the usage of the summarisation call is stored, with pi's field names (our cost is 0: no prices);
    # without a call ("No content to summarize") there is none
    assert ("usage" in entry) == ("usage" in theirs), src.name
    if "usage" in entry:
        # the object pi-ai builds for the API (openai-completions: reasoning before totalTokens),
        # field for field and in its order; the counts differ as the two requests' bodies do
        assert _shape(entry["usage"]) == _shape(theirs["usage"]), src.name
    assert list(entry) == [k for k in theirs if k in entry], "pi's key order"
    reloaded = oracle16.run("context", str(ours))
    assert reloaded["leafId"] == entry["id"]
    mine = as_js_json(context_output(Session.open(ours), profile=PROFILE_1_6_0)[0])
    assert reloaded["context"] == mine["context"] and reloaded["llmMessages"] == mine["llmMessages"]
    # pi's own navigation gives the same context apart from the entry's timestamp
    strip = lambda msgs: [_without_timestamp(m) for m in msgs]  # noqa: E731
    assert strip(pi["contextAfter"]["messages"]) == strip(mine["context"]["messages"]), src.name


class _NoUsage:
    """A summarizer whose provider reports no usage."""

    def summarize(self, request: SummaryRequest, *, on_text: Any = None, cancel: Any = None) -> SummaryResult:
        return SummaryResult("## Goal\nno usage reported", "stop", None, None)


def _roundtrip(oracle16: Oracle16, mock: dict[str, str], src: Path, work: Path) -> dict[str, Any]:
    ours = work / f"{src.stem}-ours.jsonl"
    shutil.copy(src, ours)
    target = _target(src)
    with openai(mock) as summarizer:
        out = branch_to(
            Session.open(ours),
            target,
            summarize=True,
            summarizer=summarizer,
            context_window=CONTEXT_WINDOW,
            profile=PROFILE_1_6_0,
        )
    assert out.entry is not None and out.entry["type"] == "branch_summary"
    _assert_same_as_pi(oracle16, src, ours, out.entry, target)
    return out.entry


def _scenarios(oracle16: Oracle16, out: Path) -> list[Path]:
    return generate_scenarios(out, oracle16.env)


def test_branch_summary_under_1_6_0_matches_pi_on_injected_sessions(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    """Random sessions with pi 1.6.0's entries injected (system messages, context edits, usage
    entries): the branch left behind mixes them at random places."""
    files = generate_injected(tmp_path / "gen", oracle16.env, 13854, "--count", "4", "--size", "small")
    assert len(files) == 4
    for src in files:
        _roundtrip(oracle16, mock_llm, src, tmp_path)


@pytest.mark.parametrize(
    "scenario",
    [
        "sc-edit-content",
        "sc-sys-updates",
        "sc-compaction-sysmsg",
        "sc-recovery-omission",
        "sc-branch-summary",
    ],
)
def test_branch_summary_under_1_6_0_matches_pi_on_scenarios(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path, scenario: str
) -> None:
    src = next(f for f in _scenarios(oracle16, tmp_path / "sc") if f.stem == scenario)
    entry = _roundtrip(oracle16, mock_llm, src, tmp_path)
    old_leaf = Session.open(src).leaf_id
    assert entry["fromId"] == old_leaf != entry["parentId"]
    assert "usage" in entry and entry["usage"]["totalTokens"] > 0


def test_branch_summary_under_1_6_0_matches_pi_on_the_cases(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    summaries = {
        name: _roundtrip(oracle16, mock_llm, CASES / name, tmp_path)["summary"]
        for name in ("m2-edit-null.jsonl", "m6-recovery.jsonl", "m7-split-after-compaction.jsonl")
    }
    # m6's abandoned half is a failed attempt its context edits hide: nothing left to summarise
    assert summaries["m6-recovery.jsonl"] == "No content to summarize"


def test_cli_branch_to_writes_what_pi_1_6_0_writes(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    """`session-studio branch-to --summarize` on a 1.6.0 file (auto) through the mock LLM."""
    src = CASES / "m2-edit-null.jsonl"
    ours = tmp_path / "cli.jsonl"
    shutil.copy(src, ours)
    target = _target(src)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT / "src"), MOCK_KEY="sk-test", PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_studio.cli",
            "branch-to",
            str(ours),
            target,
            "--summarize",
            "--provider",
            "openai",
            "--base-url",
            mock_llm["openaiBaseUrl"],
            "--model",
            "mock-model",
            "--api-key-env",
            "MOCK_KEY",
        ],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    entry = json.loads(ours.read_bytes().splitlines()[-1])
    assert "usage" in entry  # a summary was asked for and its usage recorded
    # the CLI has no --context-window for branch-to: the default window (128000) budgets the
    # segment, which holds the whole of this small case either way
    _assert_same_as_pi(oracle16, src, ours, entry, target)


def test_without_reported_usage_the_branch_summary_stores_pi_1_6_0s_zeros(
    oracle16: Oracle16, tmp_path: Path
) -> None:
    src = CASES / "m2-edit-null.jsonl"
    ours = tmp_path / "ours.jsonl"
    shutil.copy(src, ours)
    target = _target(src)
    pi_file = tmp_path / "pi.jsonl"
    pi = oracle16.run("branch-summary", str(src), "--to", target, "--out", str(pi_file), "--no-usage")
    assert "error" not in pi, pi.get("error")
    theirs = json.loads(pi_file.read_bytes().splitlines()[-1])  # as written: pi's key order
    out = branch_to(Session.open(ours), target, summarize=True, summarizer=_NoUsage(), profile=PROFILE_1_6_0)
    assert out.entry is not None and theirs["usage"]["totalTokens"] == 0
    assert json.dumps(out.entry["usage"]) == json.dumps(theirs["usage"])


def _shape(value: Any) -> Any:
    """The keys of a JSON object, in order, with the shape of nested objects."""
    return [(k, _shape(v)) for k, v in value.items()] if isinstance(value, dict) else type(value).__name__
