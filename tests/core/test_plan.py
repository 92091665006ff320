"""The one plan (core/plan.py): the window, the CLI and the engine agree on every cut."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core.explain import explain_plan, render_text
from session_studio.core.jsvalue import UNDEFINED, js_stringify
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.engine.compaction import PlanChangedError, draft_compaction
from tests.core.util import A, T, U, chain, to_bytes

MODEL_CHANGE = {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}


def _write(tmp: Path, *entries: dict[str, Any]) -> Session:
    p = tmp / "s.jsonl"
    p.write_bytes(to_bytes(chain(*entries)))
    return Session.open(str(p))


def test_manual_cut_after_a_model_change_is_pis_cut(tmp_path: Path) -> None:
    """Issue 7's first example: a manual cut on the user right after a model_change. pi's backward
    scan moves the cut onto the model_change, which makes the turn before it a split-turn prefix:
    2 messages + a turn prefix of 2, not 4 messages and no split."""
    s = _write(tmp_path, U(400), A(400), U(400), A(400), MODEL_CHANGE, U(400), A(400))
    planner = PathPlanner(s)
    user_after = 5
    assert s.records[planner.path[user_after]].role == "user"
    state = planner.plan(PlanParams(manual_cut=user_after))
    assert state.cut is not None
    assert (state.cut.first_kept_index, state.cut.turn_start_index, state.cut.is_split_turn) == (4, 2, True)
    assert state.marks[planner.path[4]] == "cut" and state.marks[planner.path[2]] == "turn_start"
    prep = state.prepare()
    assert prep is not None
    assert (len(prep.messages_to_summarize), len(prep.turn_prefix_messages)) == (2, 2)
    draft = draft_compaction(s, cut_entry_id=str(s.records[planner.path[user_after]].id), plan_key=state.key)
    assert draft.cut == state.cut
    assert draft.preparation.first_kept_entry_id == prep.first_kept_entry_id == "e4"
    assert any(q.code == "12.1.1" for q in state.quirks)
    text = "\n".join(render_text(explain_plan(state)))
    assert "move the cut back to #4" in text and "split turn" in text.lower()


def test_draft_refuses_a_plan_that_is_not_the_one_shown(tmp_path: Path) -> None:
    s = _write(tmp_path, U(4000), A(4000), U(4000), A(4000), U(4000), A(4000))
    shown = PathPlanner(s).plan(PlanParams(keep_recent_tokens=1000))
    with pytest.raises(PlanChangedError):
        draft_compaction(s, keep_recent_tokens=2000, plan_key=shown.key)
    with pytest.raises(PlanChangedError):
        draft_compaction(s, keep_recent_tokens=1000, cut_entry_id="e2", plan_key=shown.key)
    # pi appended a line and the session was re-read: the plan shown is not the plan any more
    with open(s.path, "ab") as fh:
        fh.write(to_bytes(chain(U(10, id="e6", parentId="e5"), header=None)))
    s.refresh()
    with pytest.raises(PlanChangedError):
        draft_compaction(s, keep_recent_tokens=1000, plan_key=shown.key)
    fresh = PathPlanner(s).plan(PlanParams(keep_recent_tokens=1000))
    assert draft_compaction(s, keep_recent_tokens=1000, plan_key=fresh.key).cut == fresh.cut


# ---------------------------------------------------------------------------------------------
# property: the window's plan is draft_compaction's preparation, for random sessions and cuts

_META = [
    MODEL_CHANGE,
    {"type": "thinking_level_change", "thinkingLevel": "high"},
    {"type": "label", "targetId": "e0", "label": "x"},
    {"type": "custom", "customType": "ext", "data": {}},
]


@st.composite
def _sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(2, 24))
    out: list[dict[str, Any]] = []
    for _ in range(n):
        kind = draw(st.sampled_from(["user", "assistant", "tool", "meta", "custom_message", "branch"]))
        size = draw(st.integers(1, 3000))
        if kind == "user":
            out.append(U(size))
        elif kind == "assistant":
            out.append(A(size, total=draw(st.integers(0, 50000))))
        elif kind == "tool":
            out.append(T(size))
        elif kind == "meta":
            out.append(dict(draw(st.sampled_from(_META))))
        elif kind == "custom_message":
            out.append({"type": "custom_message", "customType": "n", "content": "x" * size, "display": True})
        else:
            out.append({"type": "branch_summary", "fromId": "e0", "summary": "x" * size})
        if kind == "meta" and draw(st.booleans()):
            out.append(U(size))  # metadata right before a user message (issue 7's shape)
    return out


def _summary(prep: Any) -> tuple[Any, ...]:
    return (
        prep.first_kept_entry_id,
        prep.first_kept_index,
        prep.is_split_turn,
        prep.messages_to_summarize,
        prep.turn_prefix_messages,
        prep.tokens_before,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=_sessions(), keep=st.integers(0, 30000), pick=st.integers(0, 10_000), manual=st.booleans())
def test_window_plan_equals_draft_preparation(
    entries: list[dict[str, Any]], keep: int, pick: int, manual: bool
) -> None:
    with tempfile.TemporaryDirectory() as d:
        s = _write(Path(d), *entries)
        planner = PathPlanner(s)
        pl = planner.plan_
        assert pl is not None
        cut_pos = None
        if manual and pl.planner.cut_points:
            cut_pos = pl.planner.cut_points[pick % len(pl.planner.cut_points)]
        state = planner.plan(PlanParams(keep_recent_tokens=keep, manual_cut=cut_pos))
        cut_id = str(s.records[planner.path[cut_pos]].id) if cut_pos is not None else None
        try:
            draft = draft_compaction(s, keep_recent_tokens=keep, cut_entry_id=cut_id, plan_key=state.key)
        except Exception as e:  # the window must say the same: nothing to compact
            assert type(e).__name__ == "NothingToCompactError", e
            assert state.nothing_to_compact
            return
        assert not state.nothing_to_compact
        assert draft.cut == state.cut
        prep = state.prepare()
        assert prep is not None
        assert _summary(prep) == _summary(draft.preparation)
        # the projected "after" keeps exactly the context items from the first kept entry on
        assert state.cut is not None
        kept = set(planner.path[state.cut.first_kept_index :])
        assert [r for r, _, _ in state.after_tokens[1:]] == [
            r for r, k, _ in state.item_tokens if r in kept and k != "compactionSummary"
        ]
        assert state.first_kept_record is not None
        assert s.records[state.first_kept_record].id is not UNDEFINED


# ---------------------------------------------------------------------------------------------
# the oracle: pi 0.80.2's own plan equals the one plan (automatic, and as a manual cut at pi's cut)

_ORACLE_FIXTURES = Path(__file__).resolve().parents[1] / "oracle" / "fixtures"


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
@pytest.mark.parametrize("keep", [0, 3000, 8000, 20000])
def test_plan_equals_the_oracles_plan(oracle: Any, name: str, keep: int) -> None:
    path = _ORACLE_FIXTURES / name
    pi = oracle.run(
        "plan", str(path), "--keep-recent", str(keep), "--fields", "cut,preparation,contextTokens"
    )
    session = Session.open(str(path))
    planner = PathPlanner(session)
    for manual in (False, True):
        manual_cut = pi["cut"]["firstKeptEntryIndex"] if manual else None
        if manual and planner.manual_cut_error(manual_cut) is not None:
            continue  # pi's cut is a metadata entry: the user cannot pick it, the scan reaches it
        state = planner.plan(PlanParams(keep_recent_tokens=keep, manual_cut=manual_cut))
        assert state.cut is not None
        assert state.cut.first_kept_index == pi["cut"]["firstKeptEntryIndex"]
        assert state.cut.turn_start_index == pi["cut"]["turnStartIndex"]
        assert state.cut.is_split_turn == pi["cut"]["isSplitTurn"]
        assert state.tokens is not None and state.tokens.tokens == pi["contextTokens"]["tokens"]
        prep = state.prepare()
        if pi.get("preparation") is None:
            assert prep is None and state.nothing_to_compact
            continue
        assert prep is not None and not state.nothing_to_compact
        want = pi["preparation"]
        got = prep.to_json()
        # a v1/v2 file gets random new ids when migrated (by pi and by us): compare ids only for v3
        for field in ([] if session.migrated else ["firstKeptEntryId"]) + [
            "isSplitTurn",
            "tokensBefore",
            "messagesToSummarize",
            "turnPrefixMessages",
        ]:
            assert got[field] == want[field], field


def test_why_this_cut_escapes_session_text(tmp_path: Path) -> None:
    """One explanation, two renderings: the window's HTML escapes what comes from the file."""
    from session_studio.ui.why import explain_cut

    evil = {"type": "<img src=x onerror=alert(1)>", "note": "x"}
    s = _write(tmp_path, U(400), A(400), U(400), A(400), evil, U(400), A(400))
    planner = PathPlanner(s)
    state = planner.plan(PlanParams(manual_cut=5))
    html = explain_cut(state)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    text = "\n".join(render_text(explain_plan(state)))
    assert "<img src=x onerror=alert(1)>" in text  # the text rendering shows it as it is


@pytest.mark.oracle
def test_manual_cuts_equal_pis_plan_when_pi_picks_that_candidate(oracle: Any, tmp_path: Path) -> None:
    """A manual cut at cut point c is pi's plan for a keepRecentTokens whose candidate is c (pi's
    backward scan and turn rule then apply to it): checked against the oracle for generated sessions,
    preferring cut points right after metadata entries."""
    from tests.conftest import generate

    checked = meta_checked = 0
    for path in generate(tmp_path / "gen", "--seed", "31", "--count", "3", "--size", "small"):
        session = Session.open(str(path))
        planner = PathPlanner(session)
        pl = planner.plan_
        if pl is None or not pl.planner.cut_points:
            continue
        recs = session.records
        cps = pl.planner.cut_points
        after_meta = [
            c for c in cps if c > 0 and recs[planner.path[c - 1]].type not in ("message", "compaction")
        ]
        for c in (after_meta[-2:] or []) + cps[len(cps) // 2 : len(cps) // 2 + 1]:
            ks = [k for k, pos in enumerate(pl.planner.positions) if pos >= c]
            if not ks:
                continue
            keep = int(pl.planner.sums[ks[-1]])
            if pl.planner.cut(keep) != pl.planner.cut_at(c):
                continue  # zero-token messages: no keep makes c pi's candidate
            state = planner.plan(PlanParams(keep_recent_tokens=keep, manual_cut=c))
            pi = oracle.run("plan", str(path), "--keep-recent", str(keep), "--fields", "cut,preparation")
            assert state.cut is not None
            got = (state.cut.first_kept_index, state.cut.turn_start_index, state.cut.is_split_turn)
            want = (pi["cut"]["firstKeptEntryIndex"], pi["cut"]["turnStartIndex"], pi["cut"]["isSplitTurn"])
            assert got == want, (path.name, c, keep)
            prep = state.prepare()
            if pi.get("preparation") is None:
                assert prep is None and state.nothing_to_compact
            else:
                assert prep is not None
                mine = prep.to_json()
                for field in (
                    "firstKeptEntryId",
                    "messagesToSummarize",
                    "turnPrefixMessages",
                    "tokensBefore",
                ):
                    as_json = json.loads(js_stringify(mine[field]) or "null")  # as pi serialises it
                    assert as_json == pi["preparation"][field], (path.name, c, field)
            checked += 1
            meta_checked += c in after_meta
    assert checked >= 3 and meta_checked >= 1


@pytest.mark.parametrize("version", ["0.80.2", "1.6.0"])
def test_a_cut_inside_a_turn_that_moves_onto_metadata_is_no_example_c(tmp_path: Path, version: str) -> None:
    """[U, A, T, model_change, A, T, A]: the budget reaches the second assistant; the scan moves the
    cut onto the model_change before it. That cut was inside a turn anyway (an ordinary split),
    and the quirk said it had moved "before a user message" (Example C needs a user there)."""
    from session_studio.core.profile import profile_named as profile_for

    s = _write(tmp_path, U(400), A(400), T(400), MODEL_CHANGE, A(400), T(400), A(400))
    planner = PathPlanner(s, profile=profile_for(version))
    state = planner.plan(PlanParams(keep_recent_tokens=250))
    assert state.cut is not None and state.cut.is_split_turn
    assert s.records[planner.path[state.cut.first_kept_index]].type == "model_change"
    assert not any(q.code == "12.1.1" for q in state.quirks)
    example_c = PathPlanner(
        _write(tmp_path, U(400), A(400), MODEL_CHANGE, U(400), A(400)), profile=profile_for(version)
    )
    assert any(q.code == "12.1.1" for q in example_c.plan(PlanParams(keep_recent_tokens=150)).quirks)


def test_a_split_turn_with_an_empty_prefix_is_said_as_one_request(tmp_path: Path) -> None:
    """Example G under pi 0.80.2: the cut at a bash execution starts its own turn. The explanation
    said "entries #2…#1 are the turn prefix, summarised with the turn-prefix prompt"."""
    from session_studio.core.profile import profile_named

    bash = {
        "type": "message",
        "message": {
            "role": "bashExecution",
            "command": "ls",
            "output": "x" * 400,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1,
        },
    }
    s = _write(tmp_path, U(40), A(40), bash, A(400))
    state = PathPlanner(s, profile=profile_named("0.80.2")).plan(PlanParams(keep_recent_tokens=150))
    assert state.cut is not None and state.cut.is_split_turn
    assert state.cut.turn_start_index == state.cut.first_kept_index == 2
    text = "\n".join(render_text(explain_plan(state)))
    assert "turn prefix is empty" in text and "#2…#1" not in text


def test_would_compact_is_pi_s_own_check(tmp_path: Path) -> None:
    """pi's check after an answer (§9) weighs that answer's usage, not usage + the estimate of what
    came after it, and weighs nothing right after a compaction: "pi WOULD compact" was said of
    contexts pi would not compact."""
    from session_studio.core.explain import threshold_check_text

    fixture = Path(__file__).resolve().parents[1] / "oracle" / "fixtures" / "before-compaction.jsonl"
    s = Session.open(str(fixture))
    st = PathPlanner(s).plan(PlanParams(context_window=195_000))
    assert st.context_tokens == 180_820 and st.threshold == 178_616
    assert st.checked_tokens == 168_018 and not st.should_compact and not st.over_threshold
    assert "its last answer's usage 168,018 ≤ threshold 178,616" in threshold_check_text(st)
    assert PathPlanner(s).plan(PlanParams(context_window=180_000)).should_compact  # 168,018 > 163,616
    # a compaction, then no answer with usage: pi's check is stale (step 3)
    compaction = {"type": "compaction", "summary": "s" * 4000, "firstKeptEntryId": "e2", "tokensBefore": 9000}
    stale = _write(tmp_path, U(400), A(400, total=9000), U(400), A(400, total=9500), compaction, U(40000))
    st = PathPlanner(stale).plan(PlanParams(context_window=12_000, reserve_tokens=2_000))
    assert st.tokens_unknown and st.context_tokens > st.threshold
    assert st.checked_tokens is None and not st.should_compact
    assert "nothing to weigh" in threshold_check_text(st)


def test_pi_1_6_0_checks_a_context_without_usage_and_weighs_edits_by_the_projection() -> None:
    """pi 1.6.0's check (agent-session.js _checkCompaction, as tests/oracle/threshold-check.mjs runs it):
    with no usage at all it weighs the chars/4 estimate where 0.80.2 gives up; with a context edit it
    weighs the projected estimate. "pi would not compact" was said where pi 1.6.0 compacts (m7)."""
    from session_studio.core.explain import threshold_check_text
    from session_studio.core.profile import PROFILE_1_6_0

    cases = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases"
    params = PlanParams(keep_recent_tokens=1500, context_window=5000, reserve_tokens=1000)
    m7 = Session.open(str(cases / "m7-split-after-compaction.jsonl"))
    old, new = PathPlanner(m7).plan(params), PathPlanner(m7, profile=PROFILE_1_6_0).plan(params)
    assert old.checked_tokens is None and not old.should_compact
    assert "pi 0.80.2 gives up" in threshold_check_text(old)
    assert new.checked_tokens == 4272 and new.should_compact
    assert "chars/4 estimate of the whole context: context 4,272 > threshold 4,000" in threshold_check_text(
        new
    )
    m2 = Session.open(str(cases / "m2-edit-null.jsonl"))
    edited = PathPlanner(m2, profile=PROFILE_1_6_0).plan(params)
    assert edited.threshold_check is not None and edited.threshold_check.basis == "projected"
    assert edited.checked_tokens == edited.context_tokens
    assert "projected estimate" in threshold_check_text(edited)


def test_a_failed_last_answer_makes_pi_weigh_the_estimate(tmp_path: Path) -> None:
    """The last answer failed: pi weighs estimateContextTokens (the last valid usage plus what came
    after it), not the failed answer's own usage."""
    s = _write(tmp_path, U(400), A(400, total=9000), U(4000), A(400, total=50, stop="error"))
    st = PathPlanner(s).plan(PlanParams(context_window=12_000, reserve_tokens=2_000))
    assert st.threshold_check is not None and st.threshold_check.basis == "failed answer"
    assert st.checked_tokens == st.context_tokens > 9000


def test_an_entry_whose_type_is_a_list_is_no_message(tmp_path: Path) -> None:
    """Hypothesis found it: a type that is a list reached a set lookup (unhashable) in the
    preparation. pi compares it with strings: no message, skipped."""
    from session_studio.core.oracle_schema import plan_output

    odd = {"type": ["message"], "message": {"role": "user"}}
    s = _write(tmp_path, U(4000), odd, A(4000), U(4000), A(4000), U(4000), A(4000), U(4000), A(4000))
    out, _ = plan_output(s, keep_recent=2000)
    assert (
        out.get("error") is None and out["preparation"]["firstKeptEntryId"] == out["cut"]["firstKeptEntryId"]
    )
