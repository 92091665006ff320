"""Request framing under pi 1.6.0 (spec §10.7): no output cap, the turn-prefix layout, the
previous summary kept for an empty history, rejected answers."""

from __future__ import annotations

from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.llm.base import SummaryResult
from session_studio.llm.prompts import TURN_PREFIX_CONTINUATION_HEADINGS, Prompts, missing_headings
from session_studio.llm.requests import (
    history_request,
    merge_split_turn,
    summary_failure,
    turn_prefix_request,
)

P = Prompts()


def test_history_request_has_no_output_cap_under_1_6_0() -> None:
    new = history_request("[User]: hi", "prev", "focus", 16384, 8000, True, "high", P, PROFILE_1_6_0)
    old = history_request("[User]: hi", "prev", "focus", 16384, 8000, True, "high", P, PROFILE_0_80_2)
    assert new.max_tokens is None and old.max_tokens == 8000
    assert new.prompt_text == old.prompt_text  # same <conversation>/<previous-summary> framing
    assert new.reasoning == old.reasoning == "high"


def test_turn_prefix_layout_under_1_6_0() -> None:
    r = turn_prefix_request("[User]: hi", 16384, 8000, False, None, P, PROFILE_1_6_0, "mind the tests")
    assert r.prompt_text == (
        "# Conversation\n[User]: hi\n\n# Instructions\n"
        + P.turn_prefix_continuation
        + "\n\nAdditional focus: mind the tests"
    )
    assert r.max_tokens is None and r.kind == "turn_prefix"
    old = turn_prefix_request("[User]: hi", 16384, 8000, False, None, P, PROFILE_0_80_2, "mind the tests")
    assert old.prompt_text.startswith("<conversation>\n") and "Additional focus" not in old.prompt_text
    assert old.max_tokens == 8000


def test_the_1_6_0_turn_prefix_prompt_has_pi_1_6_0_s_headings() -> None:
    assert not missing_headings("turn_prefix_continuation", P.turn_prefix_continuation)
    assert all(h in P.turn_prefix_continuation for h in TURN_PREFIX_CONTINUATION_HEADINGS)


def test_empty_history_keeps_the_previous_summary_only_when_given() -> None:
    assert merge_split_turn(None, "prefix", "old summary").startswith("old summary\n\n---\n\n")
    assert merge_split_turn(None, "prefix").startswith("No prior history.\n\n---\n\n")
    assert merge_split_turn("", "prefix", "old summary").startswith("\n\n---\n\n")


def test_rejected_answers_carry_pi_s_messages() -> None:
    hist = history_request("c", None, None, 1, 0, False, None, P, PROFILE_1_6_0)
    pre = turn_prefix_request("c", 1, 0, False, None, P, PROFILE_1_6_0)

    def result(stop: str) -> SummaryResult:
        return SummaryResult("x", stop, None, None)

    assert summary_failure(hist, result("stop")) is None
    assert (
        summary_failure(pre, result("length"))
        == "Turn prefix summarization failed: generation hit the token cap and the summary is incomplete"
    )
    assert summary_failure(hist, result("toolUse")) == "Summarization attempted to call a tool"
