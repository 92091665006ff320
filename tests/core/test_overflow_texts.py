"""pi's overflow case in the texts: the planner, `info`, the exports and the pi-versions page all say
it from one sentence (core.explain.overflow_text); against pi's own check in
tests/core/test_threshold_check_oracle.py."""

from __future__ import annotations

from typing import Any

import pytest

from session_studio.core.explain import overflow_text, threshold_check_text
from session_studio.core.overview import render_overview
from session_studio.core.plan import PathPlanner, PlanParams, PlanState
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from tests.core.util import A, U, session_of


def _ending(**message: Any) -> dict[str, Any]:
    answer = A("done")
    answer["message"].update(message)
    return answer


def _state(profile: PiProfile, last: dict[str, Any], **params: Any) -> PlanState:
    session = session_of(U(400), A(400, total=900), U(400), last)
    return PathPlanner(session, profile=profile).plan(PlanParams(context_window=10_000, **params))


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0])
def test_an_overflow_error_is_said_before_the_threshold(profile: PiProfile) -> None:
    st = _state(
        profile, _ending(stopReason="error", errorMessage="prompt is too long: 12000 tokens > 10000 maximum")
    )
    assert st.overflow is not None and st.overflow.kind == "error" and st.overflow.retries
    said = overflow_text(st)
    assert (
        said is not None
        and "failed with a context overflow (“prompt is too long: 12000 tokens > 10000 maximum”" in said
    )
    if profile.projection:  # pi 1.6.0 persists the failed attempt's omission first
        assert "pi first omits it and its tool results from the context" in said
        assert said.endswith("finds nothing to compact and stops there, without a retry")  # keep 20,000
    else:
        assert "compacts and retries the request at once" in said
        assert said.endswith("pi's cut leaves nothing to compact, so it does nothing")
    assert not st.should_compact  # the threshold alone: the overflow line says the rest
    text = render_overview(st.session, context_window=10_000, profile=profile)  # type: ignore[arg-type]
    assert f"overflow:    {said}" in text and "pi would not compact now by the threshold alone" in text


def test_an_input_over_the_window_compacts_without_a_retry() -> None:
    usage = {"input": 9_000, "cacheRead": 1_001, "output": 5, "cacheWrite": 0, "totalTokens": 10_006}
    st = _state(PROFILE_0_80_2, _ending(usage=usage), keep_recent_tokens=10, reserve_tokens=1_000)
    assert st.overflow is not None and (st.overflow.kind, st.overflow.used, st.overflow.retries) == (
        "input",
        10_001,
        False,
    )
    said = overflow_text(st)
    assert said is not None and "10,001 tokens" in said and "no retry" in said
    assert st.should_compact  # 10,006 is over the threshold too
    at_the_window = _state(PROFILE_0_80_2, _ending(usage={**usage, "cacheRead": 1_000}))
    assert at_the_window.overflow is None and overflow_text(at_the_window) is None
    keeps_all = _state(PROFILE_0_80_2, _ending(usage=usage))  # keepRecentTokens 20,000 keeps everything
    assert (overflow_text(keeps_all) or "").endswith("pi's cut leaves nothing to compact, so it does nothing")


def test_no_overflow_when_automatic_compaction_is_off_or_the_error_is_a_rate_limit() -> None:
    st = _state(
        PROFILE_0_80_2, _ending(stopReason="error", errorMessage="prompt is too long"), auto_compaction=False
    )
    said = overflow_text(st)
    assert said is not None and said.endswith(
        "automatic compaction is off in pi's settings (compaction.enabled)"
    )
    limited = _state(PROFILE_1_6_0, _ending(stopReason="error", errorMessage="Rate limit: too many tokens"))
    assert limited.overflow is None
    # the ordinary answer: no overflow, and the threshold sentence as before
    plain = _state(PROFILE_1_6_0, A("done", total=400))
    assert plain.overflow is None and overflow_text(plain) is None and threshold_check_text(plain)


def test_the_versions_differ_where_their_patterns_do() -> None:
    zai = _ending(stopReason="error", errorMessage='{"code":"1261","message":"Prompt too long"}')
    assert _state(PROFILE_0_80_2, zai).overflow is None
    assert _state(PROFILE_1_6_0, zai).overflow is not None


def _length_stop(output: Any, **usage: Any) -> dict[str, Any]:
    return _ending(stopReason="length", usage={"input": 900, "cacheRead": 0, "output": output, **usage})


def test_pi_1_6_0_recovers_a_length_stop_below_the_model_s_output_limit() -> None:
    """pi 1.6.0's isRecoverableLength: a length stop whose output is below the model's maxTokens
    compacts and retries; pi 0.80.2 has no such case, and an unknown limit (0) never holds."""
    st = _state(PROFILE_1_6_0, _length_stop(4_000), model_max_tokens=8_192)
    assert st.overflow is not None and (st.overflow.kind, st.overflow.used, st.overflow.retries) == (
        "truncated",
        4_000,
        True,
    )
    said = overflow_text(st)
    assert said is not None and "after 4,000 output tokens, below the model's output limit 8,192" in said
    assert "pi first omits it and its tool results from the context" in said
    compacts = _state(PROFILE_1_6_0, _length_stop(4_000), model_max_tokens=8_192, keep_recent_tokens=10)
    assert "then compacts and retries the request; its cut without the failed answer" in (
        overflow_text(compacts) or ""
    )
    text = render_overview(st.session, context_window=10_000, profile=PROFILE_1_6_0, model_max_tokens=8_192)
    assert f"overflow:    {said}\n             (`session-studio omit-attempt` appends" in text
    assert st.omits_failed_attempt
    assert _state(PROFILE_0_80_2, _length_stop(4_000), model_max_tokens=8_192).overflow is None
    old_pi = _state(PROFILE_0_80_2, _ending(stopReason="error", errorMessage="prompt is too long"))
    assert old_pi.overflow is not None and not old_pi.omits_failed_attempt  # 0.80.2 omits nothing
    assert "omit-attempt" not in render_overview(old_pi.session, context_window=10_000)
    assert _state(PROFILE_1_6_0, _length_stop(4_000)).overflow is None  # the limit unknown
    assert _state(PROFILE_1_6_0, _length_stop(8_192), model_max_tokens=8_192).overflow is None


@pytest.mark.parametrize(
    ("output", "recovers"),
    [("8191", True), (None, True), ([], True), ([8_192], False), ({}, False), (True, True), ("x", False)],
)
def test_the_output_is_compared_as_javascript_s_less_than(output: Any, recovers: bool) -> None:
    """``usage.output < maxTokens`` on a JSON value: ToNumber ("8191" → 8191, null → 0, [] → 0,
    an object → NaN: false)."""
    st = _state(PROFILE_1_6_0, _length_stop(output), model_max_tokens=8_192)
    assert (st.overflow is not None) is recovers


def test_a_length_stop_that_fills_the_window_is_the_context_overflow_first() -> None:
    st = _state(PROFILE_1_6_0, _length_stop(0, input=9_900), model_max_tokens=8_192)
    assert st.overflow is not None and st.overflow.kind == "length"


def test_a_length_stop_without_usage_fails_pi_s_check() -> None:
    """pi 1.6.0 reads ``message.usage.output``: without usage its check throws and compacts for no
    overflow."""
    answer = _ending(stopReason="length")
    del answer["message"]["usage"]
    assert _state(PROFILE_1_6_0, answer, model_max_tokens=8_192).overflow is None
