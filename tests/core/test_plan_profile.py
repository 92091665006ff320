"""The one plan under pi 1.6.0: PathPlanner(profile=1.6.0) equals `plan --pi-version 1.6.0`.

`plan --pi-version 1.6.0` (core/oracle_schema.py) agrees with the real pi 1.6.0
(tests/core/test_oracle16_differential.py); the window, `info` and the engine read the
PathPlanner, so both must give the same cut, turn start, tokens and preparation — at
every keepRecentTokens where pi's answer changes, not only at one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.oracle_schema import plan_output
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.session import Session
from tests.conftest import ORACLE16_DIR, Oracle16, as_js_json, generate_scenarios, plan_cut_fields

CASES_DIR = ORACLE16_DIR / "cases"
CASE_KEEPS: dict[str, int] = json.loads((CASES_DIR / "cases.json").read_text())


def _reference(session: Session, keep: int) -> dict[str, Any]:
    out, _ = plan_output(
        session,
        keep_recent=keep,
        fields=["cut", "contextTokens", "preparation", "sweep"],
        profile=PROFILE_1_6_0,
    )
    return as_js_json(out)  # type: ignore[no-any-return]


def _disagreements(path: Path, keep: int) -> list[str]:
    session = Session.open(path)
    planner = PathPlanner(session, profile=PROFILE_1_6_0)
    ref = _reference(session, keep)
    keeps = sorted({keep, 20000, *(row["keepRecentTokens"] for row in ref.get("sweep") or [])})
    out: list[str] = []
    for k in keeps:
        want = _reference(session, k)
        st = planner.plan(PlanParams(keep_recent_tokens=k))
        where = f"{path.name} keep={k}"
        assert st.error is None, where
        assert st.cut is not None, where
        wc = want["cut"]
        got = {
            **plan_cut_fields(st),
            "boundaryStart": st.plan.boundary.start if st.plan is not None else None,
        }
        for name, value in got.items():
            if value != wc[name]:
                out.append(f"{where} {name}: plan {wc[name]!r}, PathPlanner {value!r}")
        if as_js_json(st.tokens.to_json() if st.tokens else None) != want["contextTokens"]:
            out.append(f"{where} tokens: plan {want['contextTokens']}, PathPlanner {st.tokens}")
        if st.nothing_to_compact != (want["preparation"] is None):
            out.append(f"{where} nothing to compact: PathPlanner {st.nothing_to_compact}")
        prep = st.prepare()
        if not st.nothing_to_compact and as_js_json(prep.to_json() if prep else None) != want["preparation"]:
            out.append(f"{where} preparation differs")
        if st.profile is not PROFILE_1_6_0 or (st.key is not None and st.key.profile != "1.6.0"):
            out.append(f"{where} the plan does not carry the 1.6.0 profile")
    return out


@pytest.mark.parametrize("case", sorted(CASE_KEEPS))
def test_path_planner_1_6_0_equals_plan_command_on_the_cases(case: str) -> None:
    diffs = _disagreements(CASES_DIR / case, CASE_KEEPS[case])
    assert not diffs, "\n".join(diffs)


@pytest.mark.oracle
def test_path_planner_1_6_0_equals_plan_command_on_the_scenarios(oracle16: Oracle16, tmp_path: Path) -> None:
    files = generate_scenarios(tmp_path, oracle16.env)
    diffs = [d for f in files for d in _disagreements(f, 2000)]
    assert not diffs, "\n".join(diffs)


def _plan(case: str, keep: int, profile: Any = PROFILE_1_6_0) -> Any:
    return PathPlanner(Session.open(CASES_DIR / case), profile=profile).plan(
        PlanParams(keep_recent_tokens=keep)
    )


def test_example_d_follows_rule_27_under_1_6_0_and_quirk_12_1_2_under_0_80_2() -> None:
    new = _plan("m4-example-d.jsonl", 100)
    old = _plan("m4-example-d.jsonl", 100, PROFILE_0_80_2)
    assert not new.nothing_to_compact and old.nothing_to_compact
    assert [q.title for q in new.quirks if q.spec == "10.5"] == [
        "Rule 27: keepRecentTokens reached after the last cut point, which is kept"
    ]
    assert any(q.spec == "12.1.2" for q in old.quirks)
    assert not any(q.spec == "12.1.2" for q in new.quirks)


def test_system_message_is_counted_and_marked_under_1_6_0() -> None:
    st = _plan("m1-system-first.jsonl", 20000)
    session = st.session
    assert session is not None
    system = next(i for i in st.path if session.records[i].role == "system")
    kinds = {r: (k, t) for r, k, t in st.item_tokens}
    assert kinds[system][0] == "system" and kinds[system][1] > 0
    assert st.marks[system] == "invalid"
    assert "system message" in st.mark_reason(system)
    assert "rule 25" in st.mark_reason(system)


def test_entry_hidden_by_a_context_edit_leaves_the_items_and_is_no_cut_point() -> None:
    planner = PathPlanner(Session.open(CASES_DIR / "m2-edit-null.jsonl"), profile=PROFILE_1_6_0)
    st = planner.plan(PlanParams(keep_recent_tokens=300))
    session = st.session
    assert session is not None
    edits = [i for i in st.path if session.records[i].type == "context_edit"]
    assert edits
    target_ids = {session.value(i)["targetId"] for i in edits if session.value(i)["replacement"] is None}
    hidden = [i for i in st.path if session.records[i].id in target_ids]
    assert hidden
    shown = {r for r, _, _ in st.item_tokens}
    for i in hidden:
        assert i not in shown
        assert planner.base_marks[i] == "invalid"  # the plan's own overlay may still put the cut on it
        assert "context edit" in st.mark_reason(i)
        why_not = planner.manual_cut_error(st.path.index(i))
        assert why_not is not None and "context edit" in why_not
    old = _plan("m2-edit-null.jsonl", 300, PROFILE_0_80_2)
    assert any(r in {r for r, _, _ in old.item_tokens} for r in hidden)  # 0.80.2 shows it again


def test_after_compaction_the_context_starts_with_the_system_snapshot() -> None:
    st = _plan("m1-system-first.jsonl", 20000)
    if st.nothing_to_compact:
        st = _plan("m1-system-first.jsonl", 100)
    assert not st.nothing_to_compact
    assert [k for _, k, _ in st.after_tokens[:2]] == ["system", "compactionSummary"]
    assert all(k != "system" for _, k, _ in st.after_tokens[2:])


def test_tokens_unknown_after_a_compaction_without_a_later_answer() -> None:
    st = _plan("m7-split-after-compaction.jsonl", 1500)
    session = st.session
    assert session is not None
    recs = session.records
    last_c = max(k for k, i in enumerate(st.path) if recs[i].type == "compaction")
    answered = any(
        recs[i].role == "assistant" and (recs[i].usage_tokens or 0) > 0 for i in st.path[last_c + 1 :]
    )
    assert st.tokens_unknown is (not answered)


def test_why_this_cut_speaks_the_profile() -> None:
    from session_studio.core.explain import explain_plan

    new = explain_plan(_plan("m4-example-d.jsonl", 100))
    old = explain_plan(_plan("m4-example-d.jsonl", 100, PROFILE_0_80_2))
    new_text = "\n".join(s.text for s in new.steps)
    old_text = "\n".join(s.text for s in old.steps)
    assert "rule 26" in new_text and "rule 27" in new_text and "rule 29" in new_text
    assert "rule 2" not in old_text and "12.1.2" in old_text
    assert {q.spec for q in new.quirks} == {"10.5"}
    assert "12.1.2" in {q.spec for q in old.quirks}


def test_why_this_cut_under_1_6_0_scans_over_context_edits_by_rule_28() -> None:
    from session_studio.core.explain import explain_plan

    st = _plan("m2-edit-null.jsonl", 150)
    scan = next(s for s in explain_plan(st).steps if s.kind == "scan")
    assert "context_edit (no context message) → move the cut back" in scan.text


def test_info_explains_the_cut_with_the_window_s_model_under_1_6_0() -> None:
    from session_studio.core.overview import explain_cut

    session = Session.open(CASES_DIR / "m4-example-d.jsonl")
    path = session.path_indices(session.leaf_index())
    lines = explain_cut(session, path, 100, PROFILE_1_6_0)
    assert any("rule 27" in line for line in lines)
    assert any(line.startswith("would summarise") for line in lines)
    assert any(line.startswith("result: first kept = #3") for line in lines)


def test_a_manual_cut_outside_the_projection_is_an_error_not_a_crash() -> None:
    """A manual cut kept by entry id across a reload may fall on an entry pi 1.6.0 leaves out."""
    session = Session.open(CASES_DIR / "m7-split-after-compaction.jsonl")
    planner = PathPlanner(session, profile=PROFILE_1_6_0)
    pl = planner.plan_
    assert pl is not None and pl.boundary.start > 0  # the entries before it were summarised away
    assert planner.manual_cut_error(0) is not None
    st = planner.plan(PlanParams(keep_recent_tokens=1500, manual_cut=0))
    assert st.error is not None and "projection" in st.error


# ------------------------------------------------------- pi 1.6.0's explanations (a teacher's audit)
def _walk(st: Any) -> str:
    from session_studio.core.explain import explain_plan, render_text

    return "\n".join(render_text(explain_plan(st)))


def test_an_empty_history_part_after_a_compaction_keeps_the_previous_summary_under_1_6_0() -> None:
    """m7 exists to teach rule 38; only the pi versions tab said it, and the report said no quirk."""
    new = _plan("m7-split-after-compaction.jsonl", 1500)
    old = _plan("m7-split-after-compaction.jsonl", 1500, PROFILE_0_80_2)
    (rule,) = [q for q in new.quirks if q.spec == "10.7"]
    assert "Rule 38" in rule.title and "kept word for word as the history part" in rule.text
    assert any(q.spec == "12.1.4" for q in old.quirks) and not any(q.spec == "12.1.4" for q in new.quirks)


def test_the_range_is_told_as_pi_1_6_0_projects_the_previous_compaction() -> None:
    """ "…at #4 inside the range" was 0.80.2's wording: 1.6.0 puts the compaction before the range,
    and one that kept nothing (rule 5) starts the range after itself."""
    new = _walk(_plan("m7-split-after-compaction.jsonl", 1500))
    assert "after the previous compaction at #4, which kept nothing" in new and "inside the range" not in new
    assert "inside the range" in _walk(_plan("m7-split-after-compaction.jsonl", 1500, PROFILE_0_80_2))


def test_nothing_to_compact_before_only_system_messages_says_why() -> None:
    walk = _walk(_plan("m1-system-first.jsonl", 20000))
    assert "Nothing to compact (session too small): what stands before the cut are system messages" in walk
    assert "rule 31" in walk


def test_rule_27_says_when_the_trailing_results_reach_the_budget_together(tmp_path: Path) -> None:
    """Two tool results of 300 each and keepRecentTokens 500: "the newest tool result alone reaches
    keepRecentTokens" was false (300 < 500) and neither is oversized."""
    from tests.core.util import A, T, U, call, chain, to_bytes

    calls = [call("read", path="a"), call("read", path="b")]
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(400), A(400), U(400), A("", blocks=calls), T(1200), T(1200))))
    st = PathPlanner(Session.open(p), profile=PROFILE_1_6_0).plan(PlanParams(keep_recent_tokens=500))
    (rule,) = [q for q in st.quirks if q.spec == "10.5"]
    assert "reach keepRecentTokens only together" in rule.text and "alone" not in rule.text


def test_the_keep_zone_is_described_by_each_pi() -> None:
    from session_studio.core.explain import keep_zone_text

    assert "never a tool result" in keep_zone_text(PROFILE_0_80_2)
    new = keep_zone_text(PROFILE_1_6_0)
    assert "rule 27" in new and "never a tool result" not in new


def test_the_scan_names_the_context_edit_that_hid_an_entry() -> None:
    """m2: "#2 is toolResult (no context message)" beside a cut at that tool result read as a
    contradiction of rule 25; the edit at #4 hid it (rule 18)."""
    walk = _walk(_plan("m2-edit-null.jsonl", 300))
    assert "#2 is toolResult (hidden by the context edit at #4, rule 18)" in walk


def test_info_says_when_pi_1_6_0_does_not_count_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    """m6: "usage 0 + estimated 300" beside an answer that reported 300 read as a bug (rule 22)."""
    from session_studio.cli import main

    case = str(CASES_DIR / "m6-recovery.jsonl")
    assert main(["info", case, "--pi-version", "1.6.0"]) == 0
    assert "does not count the last reported usage" in capsys.readouterr().out
    assert main(["info", case, "--pi-version", "0.80.2"]) == 0
    assert "does not count the last reported usage" not in capsys.readouterr().out
