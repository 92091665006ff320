"""Hypothesis strategies for pi's entries and messages of every shape, odd ones included (shared by
the compiled helper's tests: its estimate and its line scanner)."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["BLOCK", "JSON", "MESSAGE", "NUMBER", "TEXT"]

NUMBER = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [0.1, 1e21, 1e-7, 123456789012345680.0, 5e-324, -0.0, 2.0**53 + 2, 1.7976931348623157e308]
    ),
)
_LEAF = st.one_of(
    NUMBER, st.text(alphabet='a"\\\n\r\t\x01\x7f\u2028é😀\ud800', max_size=6), st.booleans(), st.none()
)
JSON = st.recursive(
    _LEAF,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=3), kids, max_size=3)
    ),
)
TEXT = st.one_of(st.text(max_size=8), st.sampled_from([None, {}, [], 0, 0.0, 3, True]))
BLOCK = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "thinking", "image", "toolCall", "other", 7])},
        optional={
            "text": TEXT,
            "thinking": TEXT,
            "name": st.one_of(st.text(max_size=4), st.none()),
            "arguments": st.one_of(st.dictionaries(st.text(max_size=4), JSON, max_size=4), JSON),
        },
    ),
    st.fixed_dictionaries({}, optional={"text": st.text(max_size=3)}),  # no type
    st.text(max_size=2),
    st.none(),
)
MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(
            [
                *("user", "assistant", "toolResult", "custom", "bashExecution"),
                *("branchSummary", "compactionSummary", "system", "hookMessage", 3),
            ]
        ),
        "content": st.one_of(st.lists(BLOCK, max_size=4), TEXT),
        "command": TEXT,
        "output": TEXT,
        "summary": TEXT,
    },
)
