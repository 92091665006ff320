"""pi's token estimate: the fast path (orjson lengths, skipping the number walk when no float or
long integer can be in the arguments) equals the exact JavaScript-semantics path."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from session_studio.core.tokens import _estimate_tokens_exact, estimate_tokens

_leaf = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet="0123456789.eE-+ aé😀", max_size=12),
    st.booleans(),
    st.none(),
)
_json = st.recursive(
    _leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=4), kids, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {
                    "type": st.just("toolCall"),
                    "name": st.text(max_size=6),
                    "arguments": st.dictionaries(st.text(max_size=5), _json, max_size=4),
                }
            ),
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
            st.fixed_dictionaries({"type": st.just("thinking"), "thinking": st.text(max_size=20)}),
        ),
        max_size=4,
    )
)
@example(
    [{"type": "toolCall", "name": "n", "arguments": {"big": 9999999999999999999}}]
)  # JS: 1e19 in 20 digits
@example([{"type": "toolCall", "name": "n", "arguments": {"f": [2.0, 1e16, -0.0]}}])
def test_the_fast_estimate_equals_the_exact_one(blocks: list[dict[str, Any]]) -> None:
    message = {"role": "assistant", "content": blocks}
    assert estimate_tokens(message) == _estimate_tokens_exact(message)
