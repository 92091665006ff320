"""An edited summary changes only its own item of the projected context (both profiles)."""

from __future__ import annotations

from session_studio.core.plan import with_summary_tokens


def test_only_the_new_summary_is_resized_the_1_6_0_snapshot_keeps_its_size() -> None:
    after_16 = [(-1, "system", 2400.0), (-1, "compactionSummary", 1500.0), (7, "user", 40.0)]
    assert with_summary_tokens(after_16, 321.0) == [
        (-1, "system", 2400.0),
        (-1, "compactionSummary", 321.0),
        (7, "user", 40.0),
    ]
    after_080 = [(-1, "compactionSummary", 1500.0), (3, "assistant", 90.0)]
    assert with_summary_tokens(after_080, 12.0) == [(-1, "compactionSummary", 12.0), (3, "assistant", 90.0)]
