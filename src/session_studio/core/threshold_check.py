"""What pi's own automatic-compaction check weighs against the threshold, for a path's last answer.

pi checks before each prompt (and after each run) with the last assistant answer in its context
(``AgentSession._checkCompaction``; spec §9 steps 3 and 5, and pi 1.6.0's version of it):

1. no answer in the context, or the answer is not newer than the latest compaction on the branch
   (its timestamp against the compaction's): no check;
2. pi 1.6.0 only: the projection holds a ``context_edit``: the projected estimate (rule 22);
3. the answer failed (``stopReason: "error"``) or its usage adds up to 0: ``estimateContextTokens``
   over the context, unless the usage it finds predates the compaction (no check). With no usage
   at all pi 0.80.2 gives up; pi 1.6.0 weighs the pure estimate;
4. otherwise the answer's own usage (``calculateContextTokens``), whatever came after it.

The overflow cases that come before the threshold in pi's check (an overflow error or usage, pi
1.6.0's recoverable length stop) are :mod:`.overflow`'s: this gathers what they read of the answer
(:attr:`ThresholdCheck.answer_facts`) and of the path after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .jsdate import js_date_ms
from .jsvalue import UNDEFINED, JsTypeError, js_key, js_truthy, prop
from .migrate import js_to_number
from .record_table import column_on_path, last_on_path
from .tokens import ContextTokens, calculate_context_tokens

if TYPE_CHECKING:
    from .profile import PiProfile
    from .projection import Projection
    from .session import Session

__all__ = ["ThresholdCheck", "threshold_check"]

#: ThresholdCheck.basis: what pi weighs: the answer's usage, the projected estimate, the estimate
#: after an answer that failed or reported no usage, the plain estimate (1.6.0, no usage at all) ...
USAGE, PROJECTED, AFTER_FAILURE, AFTER_NO_USAGE, PLAIN = (
    "usage",
    "projected",
    "failed answer",
    "answer without usage",
    "plain estimate",
)
#: ... or why it weighs nothing
NO_ANSWER, STALE_ANSWER, NO_USAGE, STALE_USAGE = "no answer", "stale answer", "no usage", "stale usage"


@dataclass(frozen=True, slots=True)
class ThresholdCheck:
    """``tokens``: what pi compares with window − reserve (None: it does not check); ``basis``: the
    last answer's usage, the context's estimate, the projected estimate (pi 1.6.0 with context
    edits), or why there is no check."""

    tokens: float | None
    basis: str
    #: the answer pi checks (its record; None: no newer answer in the context), the fields of its
    #: message pi's overflow case reads, and (pi 1.6.0) whether a context edit follows it on the
    #: path and whether pi keeps it for an overflow error's recovery (no compaction follows it, its
    #: last edit does not omit it): what :func:`.overflow.answer_overflow` asks before the threshold
    answer: int | None = None
    answer_facts: Mapping[str, Any] | None = None
    edited_after: bool = False
    retained: bool = True
    #: pi 1.6.0: the context edit the projection applies to the answer (its record; None: none):
    #: pi's check and recovery read the projected copy (a replaced content)
    answer_edit: int | None = None


def _number(v: Any) -> float:
    """JS ToNumber, as `>` and `<=` apply it to what pi compares."""
    return float(v) if type(v) is int or type(v) is float else js_to_number(v)


def _not_newer(message: Any, compaction_ms: float | None) -> bool:
    """``message.timestamp <= new Date(compaction.timestamp).getTime()`` (NaN compares false)."""
    if compaction_ms is None:
        return False
    return _number(prop(message, "timestamp")) <= compaction_ms


def threshold_check(
    session: Session,
    path: Sequence[int],
    items: Sequence[tuple[int, str, float]],
    estimate: ContextTokens | None,
    profile: PiProfile,
    projection: Projection | None = None,
) -> ThresholdCheck:
    """The check for the path's context (``items``: its context items as the plan lists them, record
    and kind; ``estimate``: pi's context estimate, the projected one under pi 1.6.0)."""
    recs = session.records
    answer = next((r for r, kind, _ in reversed(items) if kind == "assistant"), None)
    if answer is None:
        return ThresholdCheck(None, NO_ANSWER)
    at = last_on_path(recs, path, "compaction")
    latest = path[at] if at >= 0 else None
    try:
        compaction_ms = (
            None if latest is None else js_date_ms(session.value(latest).get("timestamp", UNDEFINED))
        )
    except JsTypeError:  # a timestamp V8 cannot turn into a string: pi's check would throw
        return ThresholdCheck(None, STALE_ANSWER)
    message = session.value(answer).get("message", UNDEFINED)
    if _not_newer(message, compaction_ms):
        return ThresholdCheck(None, STALE_ANSWER)
    checked = _checked(session, path, items, estimate, profile, projection, message, compaction_ms)
    edited = profile.projection and _edited_after(session, path, answer)
    retained = not edited or _retained(session, path, answer)
    facts = {k: message[k] for k in _OVERFLOW_FIELDS if k in message} if type(message) is dict else None
    return ThresholdCheck(
        checked.tokens, checked.basis, answer, facts, edited, retained, _applied_edit(projection, answer)
    )


def _applied_edit(projection: Projection | None, answer: int) -> int | None:
    """The context edit the projection applies to the answer's entry (None: none, or no projection)."""
    if projection is None:
        return None
    entries = projection.entries
    try:
        return entries[entries.records.index(answer)].edit
    except ValueError:
        return None


#: what pi's overflow case reads of the answer (core.overflow)
_OVERFLOW_FIELDS = ("stopReason", "errorMessage", "provider", "usage")


def _edited_after(session: Session, path: Sequence[int], answer: int) -> bool:
    """A ``context_edit`` on the path after the answer (pi 1.6.0's hasPostAssistantContextEdit)."""
    at = last_on_path(session.records, path, "context_edit")
    if at < 0:
        return False
    try:
        return at > path.index(answer)
    except ValueError:
        return False


def _retained(session: Session, path: Sequence[int], answer: int) -> bool:
    """pi 1.6.0's assistantRetainedForExplicitRecovery: no compaction follows the answer on the
    path, and the last context edit after it that targets it does not omit it (``replacement``
    not null)."""
    try:
        at = path.index(answer)
    except ValueError:
        return True
    if last_on_path(session.records, path, "compaction") > at:
        return False
    recs = session.records
    answer_id, edit = js_key(recs[answer].id), recs.code("context_edit")
    for r in reversed(path[at + 1 :]):
        if recs.types[r] == edit:
            value = session.value(r)
            if js_key(value.get("targetId", UNDEFINED)) == answer_id:  # pi's ===
                return value.get("replacement", UNDEFINED) is not None
    return True


def _checked(
    session: Session,
    path: Sequence[int],
    items: Sequence[tuple[int, str, float]],
    estimate: ContextTokens | None,
    profile: PiProfile,
    projection: Projection | None,
    message: Any,
    compaction_ms: float | None,
) -> ThresholdCheck:
    """What the threshold case weighs for a checked (newer) answer."""
    recs = session.records
    if profile.projection and projection is not None:
        edit = recs.code("context_edit")
        if edit in column_on_path(recs.types, projection.records()):
            return ThresholdCheck(None if estimate is None else _number(estimate.tokens), PROJECTED)
    usage = prop(message, "usage")
    direct: Any = calculate_context_tokens(usage) if js_truthy(usage) else 0
    failed = prop(message, "stopReason") == "error"
    if not failed and not (type(direct) in (int, float) and direct == 0):
        return ThresholdCheck(_number(direct), USAGE)
    basis = AFTER_FAILURE if failed else AFTER_NO_USAGE
    if profile.projection and projection is not None:
        estimate = projection.estimate_context_tokens()  # estimateContextTokens(agent messages)
    if estimate is None:
        return ThresholdCheck(None, NO_USAGE)
    if estimate.last_usage_index is None:
        if not profile.projection:
            return ThresholdCheck(None, NO_USAGE)  # 0.80.2: "No usage data at all"
        return ThresholdCheck(_number(estimate.tokens), PLAIN)
    source = next(
        (r for r, _, _ in reversed(items) if recs[r].type == "message" and recs[r].usage_tokens is not None),
        None,
    )
    if source is not None and _not_newer(session.value(source).get("message", UNDEFINED), compaction_ms):
        return ThresholdCheck(None, STALE_USAGE)
    return ThresholdCheck(_number(estimate.tokens), basis)
