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
    assert "compacts and retries the request at once" in said
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
