"""The token bar's per-item sums (bar_geometry.cumulative, cleaned): computed in C where every
estimate is clean, the same floats as the item-by-item definition for any estimates (NaN, ±inf,
negatives and -0.0 count as 0)."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from session_studio.core.bar_geometry import cleaned, cumulative

ESTIMATES = st.lists(
    st.one_of(
        st.integers(min_value=-5, max_value=10**9),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0, 0.0, -0.0, math.nan, math.inf, -math.inf]),
    ),
    max_size=60,
)


def _clean(t: Any) -> float:
    return t if t > 0 and math.isfinite(t) else 0.0


def _reference_cumulative(tokens: list[Any]) -> list[float]:
    out, acc = [0.0], 0.0
    for t in tokens:
        acc += _clean(t)
        out.append(acc)
    return out


@given(ESTIMATES)
def test_cumulative_is_the_item_by_item_sum(tokens: list[Any]) -> None:
    assert repr(list(cumulative(tokens))) == repr(_reference_cumulative(tokens))


@given(ESTIMATES)
def test_cleaned_values_add_up_as_the_clean_ones(tokens: list[Any]) -> None:
    got = cleaned(tokens)
    assert len(got) == len(tokens)
    for a, b in zip(got, tokens, strict=True):
        assert a == _clean(b)  # -0.0 may stay -0.0: equal to 0.0, and adding it changes no sum
