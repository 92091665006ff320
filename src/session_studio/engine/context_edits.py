"""pi 1.6.0's context edits that omit entries from the model's context (spec §10 rule 2).

pi appends them itself when it recovers from a context overflow or a recoverable length stop
(``AgentSession._omitRecoveryAttempt``, rule 44): the failed answer and its tool results leave the
context before pi compacts and retries. :func:`recovery_omission` finds those entries as pi does,
and :func:`append_omissions` writes the edits as pi's ``SessionManager.appendContextEdit(id, null)``
does, one under the other, so a compaction planned next sees what pi's recovery compacts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.entries import ContextEditEntry
from ..core.errors import EntryNotFoundError, StaleSessionError, WriteError
from ..core.jsvalue import UNDEFINED, js_key, prop
from ..core.projection import project_context_entry
from .common import append_entry, ensure_appendable, fresh_id, loaded_fingerprint

if TYPE_CHECKING:
    from ..core.plan import PlanParams, PlanState
    from ..core.session import Session

__all__ = [
    "OMITTABLE",
    "append_omissions",
    "omission_entries",
    "omission_refusal",
    "recovery_omission",
    "recovery_plan",
]

#: what pi's appendContextEdit edits: a custom message, or a message of these roles
OMITTABLE = ("user", "assistant", "toolResult")


def recovery_omission(state: PlanState) -> list[int]:
    """The records pi 1.6.0's overflow recovery omits for the plan's path (``_omitRecoveryAttempt``):
    the answer its check takes for an overflow it retries, and the tool results of that answer's
    tool calls that follow it in the context (up to the next answer). Empty when pi's check would
    not retry for an overflow (:attr:`.plan.PlanState.overflow`) or the plan is not pi 1.6.0's.
    With automatic compaction off in pi's settings pi does not recover by itself, but the answer
    to omit is the same.

    Raises :class:`WriteError` where pi's own recovery throws (an answer whose content is no list)."""
    check, session = state.threshold_check, state.session
    if not state.omits_failed_attempt or check is None or check.answer is None or session is None:
        return []
    # pi reads the projected copy of the answer: a context edit may have replaced its content
    projected = project_context_entry(session, check.answer, check.answer_edit)
    content = prop(projected[0], "content") if projected else UNDEFINED
    if not isinstance(content, list):  # pi: message.content.flatMap(...) throws
        raise WriteError(
            "the failed answer's content is not a list of blocks, so pi's own recovery fails on it too; "
            "nothing was written"
        )
    calls = {
        js_key(block.get("id", UNDEFINED))
        for block in content
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }
    items = state.item_tokens
    # the answer pi checks is the context's last one: found from the end (a path has 100k items)
    at = next((k for k in range(len(items) - 1, -1, -1) if items[k][0] == check.answer), None)
    if at is None:
        return []
    targets = [check.answer]
    for r, kind, _tokens in items[at + 1 :]:
        if kind == "assistant":
            break
        if kind == "toolResult":
            call = session.value(r).get("message", {}).get("toolCallId", UNDEFINED)
            if js_key(call) in calls:
                targets.append(r)
    return targets


def _active_branch(session: Session) -> set[int]:
    """The records of pi's getBranch(): the path to the session's leaf."""
    return set(session.path_indices(session.get_index(session.leaf_id)))


def omission_refusal(session: Session, target_id: Any, branch: set[int] | None = None) -> str | None:
    """Why pi's appendContextEdit refuses to edit ``target_id`` (None: it edits it): no such entry,
    not on the session's active branch (``branch``: its records, when known), or an entry that gives
    the model no editable content."""
    index = session.get_index(target_id)
    if index is None:
        return f"there is no entry {target_id!r}"
    if index not in (branch if branch is not None else _active_branch(session)):
        return "the entry is not on the active branch (pi edits only the branch it continues)"
    value = session.value(index)
    message = value.get("message") if value.get("type") == "message" else None
    editable = value.get("type") == "custom_message" or (
        isinstance(message, dict) and message.get("role") in OMITTABLE
    )
    return None if editable else "the entry gives the model no content a context edit can take out"


def omission_entries(session: Session, target_ids: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``context_edit`` entries (``replacement: null``) that omit ``target_ids``, in order, each
    under the one before and the first under the session's leaf: what pi's appendContextEdit(id,
    null) appends one after the other (fresh ids, not yet in the file)."""
    parent = session.leaf_id if isinstance(session.leaf_id, str) else None
    entries: list[dict[str, Any]] = []
    taken: set[str] = set()
    for target in target_ids:
        entry = ContextEditEntry(
            id=fresh_id(session, taken), parent_id=parent, target_id=target
        ).to_json_dict()
        entries.append(entry)
        taken.add(entry["id"])
        parent = entry["id"]
    return entries


def recovery_plan(state: PlanState, params: PlanParams | None = None) -> PlanState | None:
    """What pi 1.6.0's overflow recovery compacts, planned without writing anything: the plan of the
    session with the omission's edits appended in memory, as pi's _runAutoCompaction plans on
    getBranch() once _omitRecoveryAttempt has appended them. ``params``: the settings (default: the
    plan's own), with pi's own cut, not one chosen here (``PlanParams.automatic``). None where pi's
    recovery omits nothing (:func:`recovery_omission`) or the plan is of another leaf than the
    file's. A core.explain.RecoveryPlanner as it stands (what `info`, the reports and the window
    pass to the texts that name the recovery). It walks the path: a worker's job on a big session.

    Raises :class:`WriteError` where pi's own recovery throws."""
    from ..core.plan import PathPlanner

    session = state.session
    if session is None or not state.path or session.records[state.path[-1]].id != session.leaf_id:
        return None  # pi recovers at the file's leaf, not at another the plan was asked for
    targets = recovery_omission(state)
    if not targets:
        return None
    ids = [session.records[r].id for r in targets]
    planner = PathPlanner(session.with_virtual_entries(omission_entries(session, ids)), profile=state.profile)
    return planner.plan((params or state.params).automatic())


def append_omissions(
    session: Session, target_ids: Sequence[Any], *, refresh: bool = True
) -> list[dict[str, Any]]:
    """Append a ``context_edit`` with ``replacement: null`` for each of ``target_ids``, in order,
    each under the one before (pi's appendContextEdit(id, null) one after the other). All are
    checked before the first is written; once one is written, a failure says which are in the file."""
    ensure_appendable(session)
    if not target_ids:
        raise WriteError("there is nothing to omit; nothing was written")
    branch = _active_branch(session)  # once: a long path is 100k records
    for target in target_ids:
        if session.get_index(target) is None:
            raise EntryNotFoundError(str(target))
        why = omission_refusal(session, target, branch)
        if why is not None:
            raise WriteError(f"cannot omit {target}: {why}; nothing was written")
    fp = loaded_fingerprint(session)
    written: list[dict[str, Any]] = []
    for entry in omission_entries(session, target_ids):
        try:
            fp = append_entry(session, entry, fp, refresh=False).after
        except (StaleSessionError, WriteError) as e:
            if not written:
                raise
            why = str(e).replace(" Nothing was written.", "").replace("; nothing was written", "")
            raise WriteError(
                f"{len(written)} of the {len(target_ids)} context edits were appended "
                f"({', '.join(w['id'] for w in written)}), the rest were not: {why}"
            ) from e
        written.append(entry)
    if refresh:
        session.refresh()
    return written
