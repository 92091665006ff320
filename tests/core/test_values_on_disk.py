"""A big file's way agrees with a small file's: plan, context, branch and a compaction's requests and
entry the same with the values on disk.

Files over KEEP_VALUES_MAX_BYTES are indexed without keeping their values (the compiled loader,
values re-read on demand, some records ruled out by their bytes before they are parsed); smaller
ones keep every value. The oracle tests compare the small-file way with pi; this compares the
big-file way with it on the same generated sessions, for both profiles (a 1.6.0 file whose first
marker was a system message was called plain the big-file way only, until 2026-12-02)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.jsvalue import js_stringify
from session_studio.core.oracle_schema import branch_output, context_output, plan_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, detect_profile
from session_studio.engine.compaction import CompactionOutcome, draft_compaction
from tests.conftest import generate, oracle_compare_module

KINDS = {
    "small": ["--seed", "201", "--count", "6"],
    "legacy": ["--seed", "202", "--count", "4", "--legacy"],
    "damaged": ["--seed", "203", "--count", "8", "--damaged"],
    "medium": ["--seed", "204", "--count", "1", "--size", "medium"],
}


#: the oracle's compare.py: its normalise() names the ids and header a migration or a missing
#: header makes afresh (random at each open) by their places
COMPARE = oracle_compare_module()


def _plan(session: Session, profile: Any, command: str = "plan") -> Any:
    try:
        if command == "plan":
            out, _ = plan_output(session, profile=profile)
        elif command == "context":
            out, _ = context_output(session, profile=profile)
        else:  # a branch summary's entries from the leaf back to the first entry
            first = session.records.id_of(0) if len(session.records) else "none"
            out, _ = branch_output(session, str(session.leaf_id), str(first), 400, profile)
    except Exception as e:  # the failure itself is compared
        return f"raised {type(e).__name__}: {e}"
    text = js_stringify(out)
    assert text is not None
    return json.loads(text)


def _compaction(session: Session, profile: Any) -> Any:
    """What a compaction would send and write (a fixed summary, id and time): the requests, the
    cut, the file lists, the entry and the context after it."""
    try:
        draft = draft_compaction(session, keep_recent_tokens=2000, profile=profile)
    except Exception as e:  # nothing to compact, or pi would throw: compared too
        return f"raised {type(e).__name__}: {e}"
    outcome = CompactionOutcome(draft, "S", entry_id="ffff0000", timestamp="2026-12-02T00:00:00.000Z")
    text = js_stringify(
        {
            "requests": [dataclasses.asdict(r) for r in draft.requests],
            "firstKept": draft.first_kept_entry_id,
            "files": list(draft.file_lists()),
            "entry": outcome.entry().to_json_dict(),
            "after": list(outcome.context_after().messages()),
        }
    )
    assert text is not None
    return json.loads(text)


def _ids_by_place(session: Session) -> dict[str, str]:
    """A v1 file's ids (made afresh, at random, by each open's migration) named by their records."""
    if not session.migrated or session.source_version not in (None, 1):
        return {}
    ids = (session.records.id_of(i) for i in range(len(session.records)))
    return {i: f"@entry{k}" for k, i in enumerate(ids) if isinstance(i, str)}


@pytest.mark.parametrize("kind", list(KINDS))
def test_plans_agree_with_the_values_on_disk(kind: str, tmp_path: Path) -> None:
    files = generate(tmp_path / kind, *KINDS[kind])
    assert files
    for f in files:
        try:
            kept = Session.open(f, keep_values=True)
        except Exception as e:  # a file pi cannot open: the same on disk
            with pytest.raises(type(e)):
                Session.open(f, keep_values=False)
            continue
        on_disk = Session.open(f, keep_values=False, use_cache=False)
        assert on_disk.records.values is None
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            for command in ("plan", "context", "branch"):
                small_way, big_way = _plan(kept, profile, command), _plan(on_disk, profile, command)
                if isinstance(small_way, dict) and isinstance(big_way, dict):
                    COMPARE.normalise(small_way, big_way)
                    COMPARE.replace_ids(small_way, _ids_by_place(kept))
                    COMPARE.replace_ids(big_way, _ids_by_place(on_disk))
                assert big_way == small_way, (f.name, profile.version, command)
            small_way, big_way = _compaction(kept, profile), _compaction(on_disk, profile)
            if isinstance(small_way, dict) and isinstance(big_way, dict):
                COMPARE.replace_ids(small_way, _ids_by_place(kept))
                COMPARE.replace_ids(big_way, _ids_by_place(on_disk))
            assert big_way == small_way, (f.name, profile.version, "compaction")
        assert detect_profile(on_disk, "auto", plain="0.80.2") == detect_profile(kept, "auto", plain="0.80.2")
