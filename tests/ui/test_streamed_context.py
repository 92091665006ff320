"""The Preview's panes and the real-token count read a long path's context a chunk at a time and
never hold it whole (a 100k-entry path before its first compaction held ~130 MB of messages in the
window beside its index); what they show equals what the whole context, read at once, gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.messages import convert_to_llm
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.projection import Projection, current_system_message
from session_studio.core.real_tokens import context_item_messages
from session_studio.core.serialize import serialize_conversation
from session_studio.core.tokens import estimator_for
from session_studio.ui import preview
from session_studio.ui.preview import build_context_pair
from tests.conftest import FIXTURES, ORACLE16_DIR, generate

FILES = [
    FIXTURES / "before-compaction.jsonl",
    *sorted((ORACLE16_DIR / "cases").glob("*.jsonl")),
]


def _whole_view(msgs: list[Any], with_system: bool = False) -> str:
    """The view as it was made: the whole context serialised at once (pi 1.6.0: its system
    messages in their places between the serialised runs), then cut."""
    runs: list[list[Any]] = [[]]
    pieces: list[str] = []
    try:
        for m in msgs:
            if with_system and m.get("role") == "system":
                pieces.append(serialize_conversation(convert_to_llm(runs[-1])))
                pieces.append(preview._system_text(m))
                runs.append([])
            else:
                runs[-1].append(m)
        pieces.append(serialize_conversation(convert_to_llm(runs[-1])))
    except Exception as e:
        return f"(cannot serialise: {e})"
    text = "\n\n".join(p for p in pieces if p)
    cap = preview.MAX_VIEW_CHARS
    return text if len(text) <= cap else text[:cap] + "\n\n[… truncated for display]"


def _whole_pair(st: Any, summary: str) -> tuple[str, float, int, str, int]:
    """build_context_pair's figures as they were made, from ctx.messages() held whole."""
    ctx = st.plan.context
    before = ctx.messages()
    estimate = estimator_for(st.profile.system_messages)
    system = st.profile.system_messages

    def total(msgs: list[Any]) -> float:
        return preview._sum(msgs, estimate)  # unchanged: what the whole list summed

    if st.nothing_to_compact:
        note = "(nothing to compact with this cut: the context stays as it is)"
        return _whole_view(before, system), total(before), len(before), note, len(before)
    kept = set(st.path[st.cut.first_kept_index :])
    after: list[Any] = [{"role": "compactionSummary", "summary": summary, "tokensBefore": 0}]
    if isinstance(ctx, Projection):
        recs = ctx.session.records
        snapshot = current_system_message([m for m in before if m.get("role") == "system"])
        if snapshot is not None:
            after.insert(0, snapshot)
        for k, e in enumerate(ctx.entries):
            if e.record in kept and recs[e.record].type != "compaction":
                after.extend(m for m in ctx.entry_messages(k) if m.get("role") != "system")
    else:
        after.extend(
            m
            for it, m in zip(ctx.items, before, strict=True)
            if it.record in kept and it.kind != "compactionSummary"
        )
    return _whole_view(before, system), total(before), len(before), _whole_view(after, system), len(after)


def _states(tmp_path: Path, profile: PiProfile) -> list[Any]:
    files = [*FILES, *generate(tmp_path, "--seed", "7730", "--count", "3", "--size", "medium")]
    out = []
    for f in files:
        s = Session.open(f, keep_values=False, use_cache=False)
        if s.leaf_index() is None:
            continue
        try:
            st = PathPlanner(s, profile=profile).plan(PlanParams(keep_recent_tokens=300))
        except Exception:
            continue
        if st.cut is not None and st.plan is not None:
            out.append(st)
    return out


@pytest.mark.parametrize("cap", [400_000, 2_000, 37])
@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_the_panes_read_in_chunks_show_what_the_whole_context_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: PiProfile, cap: int
) -> None:
    """Chunks of 3 messages, views cut at several places (a cut inside a chunk's text, between two)."""
    monkeypatch.setattr(preview, "MAX_VIEW_CHARS", cap)
    real_chunks = preview._chunks
    monkeypatch.setattr(preview, "_chunks", lambda msgs, n=2048: real_chunks(msgs, 3))
    states = _states(tmp_path, profile)
    assert len(states) >= 4
    for st in states:
        pair = build_context_pair(st, "## Goal\nthe summary")
        assert (
            pair.before_text,
            pair.before_tokens,
            pair.before_count,
            pair.after_text,
            pair.after_count,
        ) == (_whole_pair(st, "## Goal\nthe summary"))


def test_a_message_that_cannot_be_serialised_anywhere_shows_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = {"role": "user", "content": "hello " * 50}
    bad = {"role": "assistant", "content": 7}  # msg.content is not iterable
    monkeypatch.setattr(preview, "MAX_VIEW_CHARS", 100)
    for msgs in ([good, good, bad], [bad, good], [good] * 5):
        view = preview._ViewText(with_system=False)
        for chunk in preview._chunks(msgs, 2):
            view.add(chunk)
        assert view.text() == _whole_view(msgs)


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_the_count_reads_the_context_without_keeping_it(tmp_path: Path, profile: PiProfile) -> None:
    for st in _states(tmp_path, profile):
        ctx = st.plan.context
        # what planning made (0.80.2: the plan's context is the window's, whose estimate may have
        # made its list of messages already)
        cached = dict(ctx._messages) if isinstance(ctx, Projection) else ctx._messages
        got = list(context_item_messages(st))
        # nothing more kept: neither in the projection's message cache nor as the context's list
        assert (ctx._messages == cached) if isinstance(ctx, Projection) else ctx._messages is cached
        if isinstance(ctx, Projection):
            recs = st.session.records
            want = [
                (m, e.edit is None and recs[e.record].type == "message")
                for k, e in enumerate(ctx.entries)
                if e.roles
                for m in ctx.entry_messages(k)
            ]
        else:
            want = [(m, it.kind == "message") for it, m in zip(ctx.items, ctx.messages(), strict=True)]
        assert got == want
        assert len(got) == len(st.item_tokens)
