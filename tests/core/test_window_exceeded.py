"""window_exceeded_text: what a context bigger than the context window means (planner and `info`)."""

from __future__ import annotations

from session_studio.core.explain import AUTO_COMPACTION_OFF, window_exceeded_text


def test_usage_over_the_window_says_the_window_is_too_small() -> None:
    # a provider took 250k tokens: the model's window is not 200k (the 1M beta, an unknown model)
    for auto in (True, False):
        text = window_exceeded_text(251_000, 250_000, 200_000, auto)
        assert text is not None and "usage, 250,000 tokens" in text and "window is bigger" in text


def test_an_estimate_over_the_window_overflows_only_without_automatic_compaction() -> None:
    # usage within the window, the estimated messages after it push the context over
    assert window_exceeded_text(210_000, 190_000, 200_000, True) is None  # pi compacts first
    text = window_exceeded_text(210_000, 190_000, 200_000, False)
    assert text is not None and "210,000" in text and "overflows" in text and AUTO_COMPACTION_OFF in text


def test_nothing_to_say_within_the_window_or_without_figures() -> None:
    assert window_exceeded_text(200_000, 200_000, 200_000, False) is None  # at the window is within it
    assert window_exceeded_text(5, 5, 0, False) is None  # no window to compare with
    assert window_exceeded_text("unknown", None, 200_000, False) is None
    assert window_exceeded_text(300_000, None, 200_000, True) is None
