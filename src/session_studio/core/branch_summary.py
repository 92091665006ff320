"""Branch summaries (spec §8): the abandoned segment and its budgeted preparation.

pi 1.6.0 (rule 41) applies the segment's context edits (the latest per target; `null` hides
the entry) and estimates system messages; everything else is as in 0.80.2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .context import js_strict_eq
from .file_ops import FileOps
from .jsvalue import UNDEFINED, js_key, js_truthy
from .messages import branch_summary_message, compaction_summary_message, custom_message
from .profile import PROFILE_0_80_2, PiProfile
from .projection import project_context_entry
from .record_table import ID_NULL, ID_UNDEFINED, column_on_path
from .session import Session
from .tokens import estimator_for, js_plus

__all__ = [
    "BranchEntries",
    "PreparedBranch",
    "branch_message",
    "collect_entries_for_branch_summary",
    "prepare_branch_entries",
]


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class BranchEntries:
    indices: list[int]
    common_ancestor_id: Any  # None when there is none


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class PreparedBranch:
    messages: list[Any]
    indices: list[int]
    file_ops: FileOps
    total_tokens: Any


def _branch_ids(session: Session, start_id: Any) -> list[int]:
    start = session.by_id.get(js_key(start_id)) if js_truthy(start_id) else None
    return session.path_indices(start)


def collect_entries_for_branch_summary(session: Session, old_leaf_id: Any, target_id: Any) -> BranchEntries:
    """pi's collectEntriesForBranchSummary: the entries from the common ancestor of the old leaf
    and the target (exclusive) to the old leaf, root first."""
    if not js_truthy(old_leaf_id):
        return BranchEntries([], None)
    by_codes = _collect_by_id_codes(session, old_leaf_id, target_id)
    return by_codes if by_codes is not None else _collect_by_ids(session, old_leaf_id, target_id)


def _collect_by_id_codes(session: Session, old_leaf_id: Any, target_id: Any) -> BranchEntries | None:
    """The same entries from the id column's codes, gathered in C: the 1 GB session's 209k-entry
    path took 1.4 s id by id, too long for the window's question before a branch summary.

    A string id's code is the same for every record with that id (8 hex digits are the id's value,
    any other string is numbered once), so for string ids code equality is pi's Map equality. A
    number or object as an id (numbered anew each time), or a missing or null id on the old path:
    None, the id-by-id way. An id is on a path at most once (the path follows byId), so the common
    ancestor is the one entry of the old path with its code, and the entries after it are those
    pi's walk up from the old leaf collects."""
    table = session.records
    if any(type(v) is not str for v in table.ids_other):
        return None
    old_path = _branch_ids(session, old_leaf_id)
    old_codes = column_on_path(table.ids, old_path)
    on_old = set(old_codes)
    if ID_UNDEFINED in on_old or ID_NULL in on_old:
        return None
    target_codes = column_on_path(table.ids, _branch_ids(session, target_id))
    common = next((c for c in reversed(target_codes) if c in on_old), None)
    if common is None:
        return BranchEntries(list(old_path), None)
    at = old_codes.index(common)
    return BranchEntries(old_path[at + 1 :], table.unpack_id(common))


def _collect_by_ids(session: Session, old_leaf_id: Any, target_id: Any) -> BranchEntries:
    recs = session.records
    old_ids = {js_key(recs[i].id) for i in _branch_ids(session, old_leaf_id)}
    target_path = _branch_ids(session, target_id)
    common: Any = None
    for i in reversed(target_path):
        if js_key(recs[i].id) in old_ids:
            common = recs[i].id
            break
    out: list[int] = []
    cur = old_leaf_id
    seen: set[int] = set()
    while js_truthy(cur) and not js_strict_eq(cur, common):
        found = session.by_id.get(js_key(cur))
        if found is None or found in seen:
            break
        seen.add(found)
        out.append(found)
        cur = recs[found].parent_id
    out.reverse()
    return BranchEntries(out, common)


def branch_message(session: Session, i: int, edit: int | None = None) -> Any:
    """getMessageFromEntry of branch-summarization: tool results are skipped; `edit` (1.6.0) is
    the record of the context edit for this entry, applied to messages and custom messages."""
    r = session.records[i]
    t = r.type
    if t == "message":
        if r.error is not None:
            raise r.error
        if r.role == "toolResult":
            return None
        if edit is not None:
            return _first(project_context_entry(session, i, edit))
        return session.value(i).get("message", UNDEFINED)
    if t == "custom_message":
        if edit is not None:
            return _first(project_context_entry(session, i, edit))
        return custom_message(session.value(i))
    if t == "branch_summary":
        return branch_summary_message(session.value(i))
    if t == "compaction":
        return compaction_summary_message(session.value(i))
    return None


def _first(messages: list[Any]) -> Any:
    """`projectContextEntry(entry, edit)[0]`: an entry edited away gives nothing."""
    return messages[0] if messages else None


def _segment_edits(session: Session, indices: list[int]) -> dict[Any, int]:
    """Context edits of the segment by target: the latest per target wins (a JavaScript Map)."""
    edits: dict[Any, int] = {}
    for i in indices:
        if session.records[i].type == "context_edit":
            edits[js_key(session.value(i).get("targetId", UNDEFINED))] = i
    return edits


def prepare_branch_entries(
    session: Session, indices: list[int], token_budget: float = 0, profile: PiProfile = PROFILE_0_80_2
) -> PreparedBranch:
    ops = FileOps()
    for i in indices:
        if session.records[i].type == "branch_summary":
            ops.seed_from_entry(session.value(i))
    edits = _segment_edits(session, indices) if profile.projection else {}
    estimate = estimator_for(profile.system_messages)
    recs = session.records
    messages: list[Any] = []
    kept: list[int] = []
    total: Any = 0
    for i in reversed(indices):
        m = branch_message(session, i, edits.get(js_key(recs[i].id)) if edits else None)
        if m is None:
            continue
        ops.add_from_message(m, profile)
        t = estimate(m)
        if token_budget > 0 and _gt(js_plus(total, t), token_budget):
            if session.records[i].type in ("compaction", "branch_summary") and _lt(total, token_budget * 0.9):
                messages.insert(0, m)
                kept.insert(0, i)
                total = js_plus(total, t)
            break
        messages.insert(0, m)
        kept.insert(0, i)
        total = js_plus(total, t)
    return PreparedBranch(messages, kept, ops, total)


def _gt(a: Any, b: float) -> bool:
    return type(a) in (int, float) and a > b


def _lt(a: Any, b: float) -> bool:
    return type(a) in (int, float) and a < b
