"""Both pis' plans side by side: the facts of each and the §10 rules named for their differences.

The cases are pi 1.6.0's oracle cases (tests/oracle/pi-1.6.0/cases, checked against the real pi
1.6.0 and, for the worked examples, spec §5.4 / §10.5 for both pis).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from session_studio.core.explain import tokens_unknown_text
from session_studio.core.plan import STAND_IN_NOTE, PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.profile_compare import PathFacts, ProfileComparison, compare_plans
from session_studio.core.session import Session
from tests.conftest import ORACLE16_DIR
from tests.core.util import A, U, session_of

CASES = ORACLE16_DIR / "cases"


def _compare(path: Path | Session, keep: int) -> ProfileComparison:
    s = path if isinstance(path, Session) else Session.open(str(path))
    old = PathPlanner(s, profile=PROFILE_0_80_2)
    new = PathPlanner(s, profile=PROFILE_1_6_0)
    p = PlanParams(keep_recent_tokens=keep)
    return compare_plans(old.plan(p), new.plan(p), PathFacts.of(old, new))


def _rules(c: ProfileComparison) -> list[str]:
    return [r.rule for r in c.rules]


def _row(c: ProfileComparison, name: str) -> tuple[str, str]:
    row = next(r for r in c.facts if r.name == name)
    return row.old, row.new


def test_example_g_a_cut_at_a_bash_execution_is_no_split_turn_in_1_6_0() -> None:
    c = _compare(CASES / "m5-example-g.jsonl", 150)
    # spec §5.4 Example G (0.80.2): firstKept 2 = the bash execution, turnStart 2, split; §10.5 rule 29
    assert (c.old.cut_position, c.old.split_turn, c.old.turn_start) == (2, True, 2)
    assert (c.new.cut_position, c.new.split_turn, c.new.turn_start) == (2, False, None)
    assert c.old.cut_entry == c.new.cut_entry == "bash execution"
    assert _rules(c) == ["rule 29", "§9"]  # §9: no usage in the case: only 1.6.0 checks
    assert "#2 starts a turn in pi 1.6.0" in c.rules[0].text
    assert _row(c, "Split turn") == ("yes, turn starts at #2", "no")
    assert c.differs


def test_example_e_the_custom_message_counts_and_starts_a_turn() -> None:
    c = _compare(CASES / "m3-example-e.jsonl", 150)
    # Example E: 0.80.2 skips the custom message → cut 1, split from 0; 1.6.0 counts it → cut 2, unsplit
    assert (c.old.cut_position, c.old.split_turn, c.old.turn_start) == (1, True, 0)
    assert (c.new.cut_position, c.new.cut_entry, c.new.split_turn) == (2, "custom message", False)
    assert _rules(c) == ["rule 26", "rule 29", "§9"]
    assert "#2" in c.rules[0].text and "§12.1.3" in c.rules[0].text
    assert _row(c, "History summarised") == ("none", "#0…#1")


def test_the_backward_scan_absorbs_a_custom_message_in_0_80_2_only() -> None:
    c = _compare(CASES / "m3-example-e.jsonl", 100)
    assert (c.old.cut_position, c.new.cut_position) == (2, 3)
    assert "rule 28" in _rules(c)
    assert "over #2" in next(r.text for r in c.rules if r.rule == "rule 28")


def test_example_d_oversized_tool_result_nothing_to_compact_only_in_0_80_2() -> None:
    c = _compare(CASES / "m4-example-d.jsonl", 100)
    assert c.old.nothing_to_compact and c.old.tokens_after is None
    assert c.old.verdict.startswith("Nothing to compact")
    # no compaction: no count after it (the row said "unknown", as for a count pi does not have)
    assert _row(c, "Context tokens after")[0] == "— (nothing to compact)"
    # no summary yet: the count says it holds a stand-in for it (an audit read "after" above "now")
    assert _row(c, "Context tokens after")[1] == f"{c.new.tokens_after:,.0f} ({STAND_IN_NOTE})"
    assert (c.new.cut_position, c.new.split_turn, c.new.turn_start) == (3, True, 2)  # §10.5 rule 27
    assert not c.new.nothing_to_compact and c.new.tokens_after is not None
    assert _rules(c) == ["rule 27", "§9"]


def test_a_session_starting_with_a_system_message() -> None:
    c = _compare(CASES / "m1-system-first.jsonl", 20000)
    # 0.80.2 counts the system message as 0 tokens and would summarise it alone; 1.6.0 says nothing
    assert c.old.tokens_before is not None and c.new.tokens_before is not None
    assert c.new.tokens_before > c.old.tokens_before
    assert not c.old.nothing_to_compact and c.new.nothing_to_compact
    assert _rules(c) == ["rule 21", "rule 31", "§9"]
    assert "2,029 tokens" in c.rules[0].text and "#0" in c.rules[1].text


def test_recovery_omission_and_untrusted_usage() -> None:
    c = _compare(CASES / "m6-recovery.jsonl", 100)
    assert (c.old.cut_position, c.new.cut_position) == (5, 3)
    assert {"rule 25", "rule 30", "rules 16–18", "rule 22"} <= set(_rules(c))
    assert c.old.tokens_before is not None and c.new.tokens_before is not None
    assert c.old.tokens_before > c.new.tokens_before  # 0.80.2 trusts the failed attempt's usage


def test_previous_summary_lost_in_0_80_2_kept_in_1_6_0() -> None:
    c = _compare(CASES / "m7-split-after-compaction.jsonl", 1500)
    assert c.old.cut_position == c.new.cut_position
    assert _row(c, "Previous summary") == ("lost: 'No prior history.' is sent", "sent")
    assert _rules(c) == ["§9", "rule 38"]


def test_the_context_size_is_unknown_after_a_compaction_on_both_sides() -> None:
    c = _compare(CASES / "m7-split-after-compaction.jsonl", 1500)
    assert c.old.tokens_before is None and c.new.tokens_before is None
    assert c.new.tokens_unknown_reason is not None and "path #4" in c.new.tokens_unknown_reason
    assert _row(c, "Context tokens now")[1].startswith("unknown (the plan counts ")


def test_the_system_snapshot_stays_after_compacting_in_1_6_0() -> None:
    system = {"type": "message", "message": {"role": "system", "content": "s" * 800, "timestamp": 1}}
    c = _compare(session_of(system, U(400), A(400), U(400), A(400)), 150)
    assert c.old.cut_position == c.new.cut_position == 3
    assert c.old.tokens_after is not None and c.new.tokens_after is not None
    assert c.new.tokens_after == c.old.tokens_after + 200  # the 800-char snapshot
    # the usage covers the system message: the counts now agree; 0.80.2 summarises the system
    # message with the rest, 1.6.0 leaves it out (and its compaction keeps it)
    assert _rules(c) == ["rule 31", "rule 17"]
    assert _row(c, "History summarised") == ("#0…#2", "#1…#2")
    assert "200 tokens" in c.rules[1].text


def test_a_plain_session_plans_the_same_under_both_pis() -> None:
    c = _compare(session_of(U(400), A(400), U(400), A(400), U(400), A(400)), 150)
    assert not c.differs and c.rules == []
    assert c.old.cut_position == c.new.cut_position == 4


def test_the_plans_must_be_of_both_profiles() -> None:
    s = Session.open(str(CASES / "m5-example-g.jsonl"))
    st = PathPlanner(s, profile=PROFILE_0_80_2).plan(PlanParams())
    with pytest.raises(ValueError, match=r"0\.80\.2 plan first"):
        compare_plans(st, st)


def test_tokens_unknown_text_only_when_pi_shows_unknown() -> None:
    s = Session.open(str(CASES / "m5-example-g.jsonl"))
    assert tokens_unknown_text(PathPlanner(s, profile=PROFILE_1_6_0).plan(PlanParams())) is None
    s = Session.open(str(CASES / "m7-split-after-compaction.jsonl"))
    text = tokens_unknown_text(PathPlanner(s, profile=PROFILE_1_6_0).plan(PlanParams()))
    assert text is not None and text.startswith("pi 1.6.0 shows the context size as unknown")


def test_a_generated_summary_is_counted_as_itself_after_compacting() -> None:
    s = Session.open(str(CASES / "m4-example-d.jsonl"))
    old, new = PathPlanner(s, profile=PROFILE_0_80_2), PathPlanner(s, profile=PROFILE_1_6_0)
    p = PlanParams(keep_recent_tokens=100, summary_tokens=300.0)
    c = compare_plans(old.plan(p), new.plan(p), PathFacts.of(old, new))
    stand_in = _compare(CASES / "m4-example-d.jsonl", 100)
    assert c.new.tokens_after is not None and stand_in.new.tokens_after is not None
    assert c.new.tokens_after == stand_in.new.tokens_after - 1500 + 300
    assert _row(c, "Context tokens after")[1] == f"{c.new.tokens_after:,.0f}"
