"""The engine under pi 1.6.0 (spec §10.6, §10.7): plan, requests, summary merge and entry as 1.6.0.

The round trip against the real pi 1.6.0 is tests/engine/test_roundtrip16.py (oracle); these
are the fast checks of each rule on the oracle's minimal cases.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.jsdate import js_date_ms
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.engine import draft_compaction, summarize_draft
from session_studio.engine.compaction import InvalidCutError, NothingToCompactError
from session_studio.llm.base import SummaryRequest, SummaryResult
from session_studio.llm.errors import LlmSummaryError
from tests.conftest import ORACLE16_DIR

CASES = ORACLE16_DIR / "cases"
USAGE = {"input": 100, "output": 10, "cacheRead": 1, "cacheWrite": 0, "totalTokens": 111}


class Recorder:
    """A summarizer that answers with its request's kind, records overlap, and can stop oddly."""

    def __init__(self, stop_reason: str = "stop", usage: dict[str, int] | None = USAGE) -> None:
        self.stop_reason = stop_reason
        self.usage = usage
        self.requests: list[SummaryRequest] = []
        self.active = 0
        self.overlapped = False
        self.lock = threading.Lock()

    def summarize(self, request: SummaryRequest, *, on_text: Any = None, cancel: Any = None) -> SummaryResult:
        with self.lock:
            self.active += 1
            self.overlapped |= self.active > 1
            self.requests.append(request)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        return SummaryResult(f"## Goal\n{request.kind}", self.stop_reason, self.usage, None)


def _open(tmp_path: Path, name: str) -> Session:
    dst = tmp_path / name
    shutil.copyfile(CASES / name, dst)
    return Session.open(dst)


def test_split_turn_after_compaction_keeps_the_previous_summary(tmp_path: Path) -> None:
    session = _open(tmp_path, "m7-split-after-compaction.jsonl")
    draft = draft_compaction(session, keep_recent_tokens=1500, profile=PROFILE_1_6_0)
    assert draft.preparation.is_split_turn and not draft.preparation.messages_to_summarize
    assert [r.kind for r in draft.requests] == ["turn_prefix"]
    assert all(r.max_tokens is None for r in draft.requests)  # rule 33
    assert draft.requests[0].prompt_text.startswith("# Conversation\n")  # rule 39
    out = summarize_draft(draft, Recorder())
    previous = draft.preparation.previous_summary
    assert isinstance(previous, str) and out.summary.startswith(previous + "\n\n---\n\n")  # rule 38
    old = summarize_draft(
        draft_compaction(session, keep_recent_tokens=1500, profile=PROFILE_0_80_2), Recorder()
    )
    assert old.summary.startswith("No prior history.")  # the 0.80.2 quirk


def test_split_turn_requests_run_one_after_the_other(tmp_path: Path) -> None:
    session = _open(tmp_path, "m1-system-first.jsonl")
    draft = draft_compaction(session, keep_recent_tokens=100, profile=PROFILE_1_6_0)
    assert [r.kind for r in draft.requests] == ["history", "turn_prefix"]
    rec = Recorder()
    out = summarize_draft(draft, rec)
    assert not rec.overlapped  # rule 37
    entry = out.entry().to_json_dict()
    assert entry["usage"]["input"] == 200 and entry["usage"]["totalTokens"] == 222  # combineUsage
    assert entry["usage"]["cost"]["total"] == 0
    snapshot = entry["systemMessage"]
    assert snapshot["role"] == "system" and snapshot["timestamp"] == js_date_ms(entry["timestamp"])
    assert list(entry)[-3:] == ["usage", "fromHook", "systemMessage"]
    after = out.context_after().messages()
    assert [m["role"] for m in after[:2]] == ["system", "compactionSummary"]
    old = draft_compaction(session, keep_recent_tokens=100, profile=PROFILE_0_80_2)
    old_entry = summarize_draft(old, Recorder()).entry().to_json_dict()
    assert "usage" not in old_entry and "systemMessage" not in old_entry


def test_zero_usage_is_written_when_the_provider_reports_none(tmp_path: Path) -> None:
    """pi-ai starts an answer at zero usage and keeps it when the provider reports nothing."""
    session = _open(tmp_path, "m1-system-first.jsonl")
    draft = draft_compaction(session, keep_recent_tokens=100, profile=PROFILE_1_6_0)
    usage = summarize_draft(draft, Recorder(usage=None)).entry().to_json_dict()["usage"]
    assert {k: usage[k] for k in USAGE} == dict.fromkeys(USAGE, 0)
    assert usage["cost"]["total"] == 0


@pytest.mark.parametrize(
    ("stop", "message"),
    [
        ("length", "Summarization failed: generation hit the token cap and the summary is incomplete"),
        ("toolUse", "Summarization attempted to call a tool"),
    ],
)
def test_answers_pi_1_6_0_rejects(tmp_path: Path, stop: str, message: str) -> None:
    session = _open(tmp_path, "m1-system-first.jsonl")
    draft = draft_compaction(session, keep_recent_tokens=100, profile=PROFILE_1_6_0)
    with pytest.raises(LlmSummaryError) as failed:
        summarize_draft(draft, Recorder(stop_reason=stop))
    assert str(failed.value).endswith(message)  # pi 1.6.0's own words, then what to do
    assert failed.value.user_message.startswith(message) and "Try again" in failed.value.user_message
    old = draft_compaction(session, keep_recent_tokens=100, profile=PROFILE_0_80_2)
    summarize_draft(old, Recorder(stop_reason=stop))  # 0.80.2 takes whatever came back


class Mute(Recorder):
    """A model that ends its answer normally without a word (or only white space)."""

    def summarize(self, request: SummaryRequest, *, on_text: Any = None, cancel: Any = None) -> SummaryResult:
        super().summarize(request)
        return SummaryResult(" \n" if request.kind == "turn_prefix" else "", "stop", self.usage, None)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["0.80.2", "1.6.0"])
def test_an_answer_with_no_text_is_refused_under_either_pi(tmp_path: Path, profile: Any) -> None:
    """pi would store an empty summary (what it summarises then leaves the context with nothing in
    its place); Session Studio writes nothing and says the model answered with no text."""
    session = _open(tmp_path, "m1-system-first.jsonl")
    draft = draft_compaction(session, keep_recent_tokens=100, profile=profile)
    with pytest.raises(LlmSummaryError) as failed:
        summarize_draft(draft, Mute())
    assert "the model answered with no text" in failed.value.user_message
    assert "pi would store an empty summary" in failed.value.user_message


def test_nothing_to_compact_is_pi_1_6_0_s_answer(tmp_path: Path) -> None:
    session = _open(tmp_path, "m1-system-first.jsonl")
    with pytest.raises(NothingToCompactError, match="Nothing to compact"):
        draft_compaction(session, keep_recent_tokens=20000, profile=PROFILE_1_6_0)
    draft_compaction(session, keep_recent_tokens=20000, profile=PROFILE_0_80_2)  # 0.80.2 would go on


def test_a_manual_cut_on_an_edited_away_entry_is_refused_under_1_6_0(tmp_path: Path) -> None:
    session = _open(tmp_path, "m6-recovery.jsonl")
    hidden = {
        session.value(i)["targetId"]
        for i, r in enumerate(session.records)
        if r.type == "context_edit" and session.value(i)["replacement"] is None
    }
    target = next(r.id for r in session.records if r.id in hidden and r.role == "assistant")
    with pytest.raises(InvalidCutError, match="context edit"):
        draft_compaction(session, keep_recent_tokens=300, cut_entry_id=target, profile=PROFILE_1_6_0)
    draft_compaction(session, keep_recent_tokens=300, cut_entry_id=target, profile=PROFILE_0_80_2)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0])
def test_a_draft_reuses_the_callers_planner_of_its_path_only(tmp_path: Path, profile: Any) -> None:
    """The window passes its PathPlanner: the draft plans with it (no second copy of the path's
    planner) and drafts exactly what a planner of its own gives; a planner of another leaf, pi or
    session object is not used."""
    from session_studio.core.plan import PathPlanner

    session = _open(tmp_path, "m7-split-after-compaction.jsonl")
    own = draft_compaction(session, keep_recent_tokens=1500, profile=profile)
    mine = PathPlanner(session, profile=profile)
    reused = draft_compaction(session, keep_recent_tokens=1500, profile=profile, planner=mine)
    assert reused.planner is mine and own.planner is not mine
    assert (reused.cut, reused.path, reused.requests) == (own.cut, own.path, own.requests)
    assert reused.preparation.first_kept_entry_id == own.preparation.first_kept_entry_id

    other_pi = PROFILE_0_80_2 if profile is PROFILE_1_6_0 else PROFILE_1_6_0
    others = [
        PathPlanner(session, profile=other_pi),
        PathPlanner(session, session.require(own.first_kept_entry_id), profile=profile),
        PathPlanner(Session.open(session.path), profile=profile),
    ]
    for other in others:
        assert (
            draft_compaction(session, keep_recent_tokens=1500, profile=profile, planner=other).planner
            is not other
        )
