"""The headings a draft asks for, per pi profile, and what the offline summary kept of them."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

from session_studio.core import Session
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.summary_sections import analyze_summary
from session_studio.engine import draft_compaction, requested_headings, summarize_draft
from session_studio.llm import OfflineSummarizer
from session_studio.llm.prompts import (
    HISTORY_HEADINGS,
    TURN_PREFIX_CONTINUATION_HEADINGS,
    TURN_PREFIX_HEADINGS,
)
from tests.conftest import ORACLE16_DIR
from tests.ui.conftest import write_session


def _copy(tmp_path: Path) -> Session:
    dst = tmp_path / "m7.jsonl"
    shutil.copyfile(ORACLE16_DIR / "cases" / "m7-split-after-compaction.jsonl", dst)
    return Session.open(dst)


def test_a_split_turn_without_history_asks_only_for_the_turn_prefix_of_each_pi(tmp_path: Path) -> None:
    session = _copy(tmp_path)
    new = draft_compaction(session, keep_recent_tokens=1500, profile=PROFILE_1_6_0)
    old = draft_compaction(session, keep_recent_tokens=1500, profile=PROFILE_0_80_2)
    assert requested_headings(new) == TURN_PREFIX_CONTINUATION_HEADINGS
    assert requested_headings(old) == TURN_PREFIX_HEADINGS


def test_a_cut_asks_for_the_history_headings_and_the_offline_draft_has_them(tmp_path: Path) -> None:
    plain = write_session(
        tmp_path / "plain.jsonl", [("user", 3000), ("assistant", 3000), ("user", 400), ("assistant", 400)]
    )
    split = write_session(
        tmp_path / "split.jsonl",
        [("user", 3000), ("assistant", 3000), ("user", 400)] + [("assistant", 600), ("toolResult", 4000)] * 8,
    )
    cases = [(plain, 700, False), (split, 20000, True)]
    for (path, keep, is_split), profile in itertools.product(cases, (PROFILE_0_80_2, PROFILE_1_6_0)):
        draft = draft_compaction(Session.open(path), keep_recent_tokens=keep, profile=profile)
        assert draft.preparation.is_split_turn is is_split
        prefix = TURN_PREFIX_CONTINUATION_HEADINGS if profile is PROFILE_1_6_0 else TURN_PREFIX_HEADINGS
        assert requested_headings(draft) == (HISTORY_HEADINGS + prefix if is_split else HISTORY_HEADINGS)
        out = summarize_draft(draft, OfflineSummarizer(chunk_delay_s=0))
        read, modified = draft.file_lists()
        kept = analyze_summary(out.summary, requested_headings(draft), read, modified)
        assert kept.missing_sections == ()
        assert kept.read_files.intact and kept.modified_files.intact
