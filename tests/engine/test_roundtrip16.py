"""Round trip under pi 1.6.0: our compaction, written to disk, is what pi 1.6.0 computes and loads.

Ours runs against mock-llm.mjs, pi 1.6.0's own `compact` (tests/oracle/pi-1.6.0/pi-oracle.mjs)
against its built-in mock with the same reply rule; the appended entries must agree (id,
timestamp and usage numbers aside), the systemMessage snapshot included, and pi 1.6.0's reload
of *our* file must equal the context we previewed. Where pi 1.6.0 has nothing to compact, we
refuse with its reason.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.oracle_schema import plan_output
from session_studio.core.profile import PROFILE_1_6_0
from session_studio.engine import commit_compaction, draft_compaction, summarize_draft
from session_studio.engine.compaction import NothingToCompactError
from session_studio.llm.base import SummaryRequest, SummaryResult
from tests.conftest import ORACLE16_DIR, Oracle16, as_js_json, generate_injected, generate_scenarios
from tests.engine.test_roundtrip import openai

pytestmark = pytest.mark.oracle

ENTRY_FIELDS = ("type", "parentId", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook")
CASES = ORACLE16_DIR / "cases"
CASE_KEEPS: dict[str, int] = json.loads((CASES / "cases.json").read_text())


def _without_timestamp(m: Any) -> Any:
    return {k: v for k, v in m.items() if k != "timestamp"} if isinstance(m, dict) else m


def _roundtrip(oracle16: Oracle16, mock: dict[str, str], src: Path, work: Path, keep: int) -> str:
    """'compacted' / 'refused', asserting everything pi 1.6.0 and we must agree on."""
    ours = work / f"{src.stem}-ours.jsonl"
    shutil.copy(src, ours)
    pi = oracle16.run(
        "compact", str(src), "--keep-recent", str(keep), "--out", str(work / f"{src.stem}-pi.jsonl")
    )
    session = Session.open(ours)
    if "error" in pi:
        with pytest.raises(NothingToCompactError) as refused:
            draft_compaction(session, keep_recent_tokens=keep, profile=PROFILE_1_6_0)
        assert str(refused.value) in str(pi["error"]), (src.name, pi["error"])
        assert ours.read_bytes() == src.read_bytes()
        return "refused"
    draft = draft_compaction(session, keep_recent_tokens=keep, profile=PROFILE_1_6_0)
    with openai(mock) as summarizer:
        outcome = summarize_draft(draft, summarizer)
    preview = as_js_json(outcome.context_after().to_json())
    entry = commit_compaction(outcome)
    theirs = pi["appendedEntry"]
    for k in ENTRY_FIELDS:
        assert entry.get(k) == theirs.get(k), (src.name, k)
    assert ("usage" in entry) == ("usage" in theirs), src.name
    if "usage" in entry:
        # the object pi-ai builds for the API (openai-completions: reasoning before totalTokens),
        # field for field and in its order; the counts differ as the two requests' bodies do
        written = json.loads((work / f"{src.stem}-pi.jsonl").read_bytes().splitlines()[-1])  # pi's key order
        assert _shape(entry["usage"]) == _shape(written["usage"]), src.name
    assert ("systemMessage" in entry) == ("systemMessage" in theirs), src.name
    if "systemMessage" in entry:
        assert _without_timestamp(entry["systemMessage"]) == _without_timestamp(theirs["systemMessage"])
    reloaded = oracle16.run("context", str(ours))
    assert reloaded["leafId"] == entry["id"]
    assert reloaded["context"] == preview, src.name
    # pi's own compaction gives the same context apart from the entry's timestamps
    strip = lambda msgs: [_without_timestamp(m) for m in msgs]  # noqa: E731
    assert strip(pi["contextAfter"]["messages"]) == strip(preview["messages"]), src.name
    return "compacted"


def test_compact_under_1_6_0_matches_pi_on_the_cases(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    outcomes = {
        name: _roundtrip(oracle16, mock_llm, CASES / name, tmp_path, keep)
        for name, keep in CASE_KEEPS.items()
    }
    assert "refused" in outcomes.values() and list(outcomes.values()).count("compacted") >= 4, outcomes


def test_compact_under_1_6_0_matches_pi_on_scenarios(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    done = 0
    for src in generate_scenarios(tmp_path / "sc", oracle16.env)[::3]:
        session = Session.open(src)
        rows = plan_output(session, fields=["sweep"], profile=PROFILE_1_6_0)[0].get("sweep") or []
        keep = rows[len(rows) // 2]["keepRecentTokens"] if len(rows) >= 2 else 2000
        done += _roundtrip(oracle16, mock_llm, src, tmp_path, keep) == "compacted"
    assert done >= 4


def _sweep_keeps(src: Path) -> list[int]:
    """keepRecentTokens at a third and at two thirds of the session's thresholds (2000 without any)."""
    rows = plan_output(Session.open(src), fields=["sweep"], profile=PROFILE_1_6_0)[0].get("sweep") or []
    if len(rows) < 3:
        return [2000]
    return sorted({rows[len(rows) // 3]["keepRecentTokens"], rows[2 * len(rows) // 3]["keepRecentTokens"]})


def test_compact_under_1_6_0_matches_pi_on_injected_sessions(
    oracle16: Oracle16, mock_llm: dict[str, str], tmp_path: Path
) -> None:
    """gen_sessions.py's random sessions with pi 1.6.0's entries injected among their turns (system
    messages, context edits, usage entries): the cases and scenarios are hand-built, these mix
    everything at random places."""
    outcomes: list[str] = []
    for size, count in (("small", "6"), ("medium", "2")):
        for src in generate_injected(tmp_path / size, oracle16.env, 13854, "--count", count, "--size", size):
            for keep in _sweep_keeps(src):
                work = tmp_path / f"work-{keep}"
                work.mkdir(exist_ok=True)
                outcomes.append(_roundtrip(oracle16, mock_llm, src, work, keep))
    assert outcomes.count("compacted") >= 8 and "refused" in outcomes, outcomes


class _NoUsage:
    """A summarizer whose provider reports no usage (the offline one, a bare proxy)."""

    def summarize(self, request: SummaryRequest, *, on_text: Any = None, cancel: Any = None) -> SummaryResult:
        return SummaryResult("## Goal\nno usage reported", "stop", None, None)


def test_without_reported_usage_the_entry_stores_pi_1_6_0s_zeros(oracle16: Oracle16, tmp_path: Path) -> None:
    """pi-ai starts every answer at zero usage: a provider reporting none leaves zeros, and a split
    turn's two calls are combined (combineUsage). The stored object, key order included, is pi's."""
    splits = set()
    for name, keep in {
        "m1-system-first.jsonl": 100,
        "m2-edit-null.jsonl": 300,
        "m3-example-e.jsonl": 150,
    }.items():
        pi_file = tmp_path / f"{name}.pi.jsonl"
        pi = oracle16.run(
            "compact", str(CASES / name), "--keep-recent", str(keep), "--out", str(pi_file), "--no-usage"
        )
        theirs = json.loads(pi_file.read_bytes().splitlines()[-1])  # as written: pi's key order
        shutil.copy(CASES / name, tmp_path / name)
        draft = draft_compaction(
            Session.open(tmp_path / name), keep_recent_tokens=keep, profile=PROFILE_1_6_0
        )
        entry = summarize_draft(draft, _NoUsage()).entry().to_json_dict()
        assert json.dumps(entry["usage"]) == json.dumps(theirs["usage"]), name
        assert theirs["usage"]["totalTokens"] == 0
        splits.add(len(draft.requests))
        assert pi["preparation"]["isSplitTurn"] == draft.preparation.is_split_turn
    assert splits == {1, 2}  # one call, and a split turn's two combined


def _shape(value: Any) -> Any:
    """The keys of a JSON object, in order, with the shape of nested objects."""
    return [(k, _shape(v)) for k, v in value.items()] if isinstance(value, dict) else type(value).__name__
