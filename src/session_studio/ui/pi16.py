"""What the window shows of pi 1.6.0's entries (spec §10): context edits on their targets,
usage totals, the parts of system messages. No Qt here.

The facts come from core: which edit applies to which entry is the 1.6.0 projection's
(:func:`core.projection.build_session_projection`, rule 18: the latest edit in the context
list wins, edits outside it do nothing), tokens are core's estimates. This module only
gathers them per entry for the tree and the inspector, by entry shape: a file without
1.6.0 entries costs one scan of the record types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from session_studio.core.jsvalue import UNDEFINED, JsTypeError, js_key
from session_studio.core.projection import build_session_projection
from session_studio.core.session import Session
from session_studio.core.tokens import estimate_system_tokens, estimate_tokens_16, js_plus

__all__ = [
    "EditFacts",
    "UsageTotals",
    "context_edit_facts",
    "edit_target",
    "has_context_edits",
    "is_retain_none",
    "section_tokens",
    "system_tokens",
    "tool_tokens",
    "usage_totals",
]


@dataclass(frozen=True)
class EditFacts:
    """The context edits of a session, seen from one branch (the active path)."""

    #: target record → the context_edit record whose edit applies on the branch
    applied: dict[int, int] = field(default_factory=dict)
    #: target record → estimateTokens of what the LLM sees instead (replacements only)
    replaced_tokens: dict[int, Any] = field(default_factory=dict)
    #: target records the applied edit hides (`replacement: null`)
    hidden: frozenset[int] = frozenset()
    #: target record → every context_edit record naming it, in file order
    by_target: dict[int, list[int]] = field(default_factory=dict)
    #: why the projection could not be built (pi would throw), if it could not
    error: str | None = None


NO_EDITS = EditFacts()

#: up to this many path entries the context edits are found on the GUI thread (the 1.6.0
#: projection costs ~10 µs an entry); longer paths are projected in a worker
SYNC_EDIT_PATH = 10_000


def has_context_edits(session: Session, start: int = 0) -> bool:
    """Whether a record from ``start`` on is a context edit (a C-level scan of the types column: a
    record view per entry held the GIL for ~0.2 s on 100k entries while the window painted)."""
    return bool(session.records.indices_of_types(("context_edit",), start=start))


def edit_replacement(session: Session, edit: int) -> Any:
    """The edit's `replacement`: None hides the target, `{content}` replaces its content."""
    v = session.value(edit)
    return v.get("replacement", UNDEFINED) if type(v) is dict else UNDEFINED


def edit_target(session: Session, edit: int) -> int | None:
    """The record a context_edit names (`targetId`), if the file has it."""
    v = session.value(edit)
    if type(v) is not dict:
        return None
    return session.get_index(v.get("targetId", UNDEFINED))


def context_edit_facts(session: Session, path: list[int]) -> EditFacts:
    """Which context edits apply on ``path`` (root → leaf), and every edit per target."""
    edits = [r.index for r in session.records if r.type == "context_edit"]
    if not edits:
        return NO_EDITS
    by_target: dict[int, list[int]] = {}
    hiding: set[int] = set()  # edits with `replacement: null`
    for e, v in zip(edits, session.values(edits), strict=True):
        if type(v) is not dict:
            continue
        if v.get("replacement", UNDEFINED) is None:
            hiding.add(e)
        target = session.get_index(v.get("targetId", UNDEFINED))
        if target is not None:
            by_target.setdefault(target, []).append(e)
    if not path:
        return EditFacts(by_target=by_target)
    try:
        projection = build_session_projection(session, path=path)
        applied: dict[int, int] = {}
        replaced: dict[int, Any] = {}
        for k, entry in enumerate(projection.entries):
            if entry.edit is None:
                continue
            applied[entry.record] = entry.edit
            if entry.roles:
                replaced[entry.record] = _token_sum(projection.entry_tokens(k))
    except JsTypeError as e:
        return EditFacts(by_target=by_target, error=str(e))
    hidden = frozenset(t for t, e in applied.items() if e in hiding)
    return EditFacts(applied, replaced, hidden, by_target)


def _token_sum(tokens: list[Any]) -> Any:
    acc: Any = 0
    for t in tokens:
        if isinstance(t, JsTypeError):
            return None
        acc = js_plus(acc, t)
    return acc


# ------------------------------------------------------------------ system messages
def system_tokens(message: Any) -> Any:
    """pi 1.6.0's estimate of a system message (rule 21), or None where pi would throw."""
    try:
        return estimate_tokens_16(message)
    except JsTypeError:
        return None


def section_tokens(value: Any) -> Any:
    """The share of one section in the message's estimate (its length over 4, rounded up)."""
    try:
        return estimate_system_tokens({"role": "system", "content": "", "sections": {"s": value}})
    except JsTypeError:
        return None


def tool_tokens(tool: Any) -> Any:
    """About what one added tool declaration costs (its JSON over 4, rounded up)."""
    try:
        return estimate_system_tokens({"role": "system", "content": "", "toolsAdded": [tool]})
    except JsTypeError:
        return None


def is_retain_none(value: Any) -> bool:
    """A 1.6.0 retain-none compaction: `firstKeptEntryId` is the entry's own id (rule 5)."""
    if type(value) is not dict:
        return False
    own = value.get("id", UNDEFINED)
    return type(own) is str and bool(own) and js_key(value.get("firstKeptEntryId", UNDEFINED)) == js_key(own)


# ------------------------------------------------------------------ usage
USAGE_FIELDS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
USAGE_SOURCES = ("assistant messages", "usage entries", "compactions", "branch summaries")


@dataclass
class UsageTotals:
    """Reported usage of a whole session (every branch), by where it was recorded (rule 1)."""

    #: source → [entries, input, output, cacheRead, cacheWrite, totalTokens, cost]
    by_source: dict[str, list[float]] = field(default_factory=dict)

    def add(self, source: str, usage: Any) -> None:
        if type(usage) is not dict:
            return
        row = self.by_source.setdefault(source, [0.0] * (2 + len(USAGE_FIELDS)))
        row[0] += 1
        for n, key in enumerate(USAGE_FIELDS, start=1):
            row[n] += _number(usage.get(key))
        cost = usage.get("cost")
        row[-1] += _number(cost.get("total")) if type(cost) is dict else 0.0

    def total(self) -> list[float]:
        out = [0.0] * (2 + len(USAGE_FIELDS))
        for row in self.by_source.values():
            out = [a + b for a, b in zip(out, row, strict=True)]
        return out


def _number(v: Any) -> float:
    return float(v) if type(v) is int or type(v) is float else 0.0


def usage_totals(session: Session) -> UsageTotals:
    """Usage reported anywhere in the file: assistant messages, `usage` entries, and the
    summarisation calls recorded on compactions and branch summaries (1.6.0)."""
    sources: dict[str, str] = {"usage": "usage entries", "compaction": "compactions"}
    sources["branch_summary"] = "branch summaries"
    picked: list[tuple[int, str]] = []
    for r in session.records:
        if r.type == "message":
            if r.role == "assistant":
                picked.append((r.index, "assistant messages"))
        elif r.type in sources:
            picked.append((r.index, sources[r.type]))
    totals = UsageTotals()
    values = session.values(i for i, _ in picked)
    for (_i, source), v in zip(picked, values, strict=True):
        if type(v) is not dict:
            continue
        if source == "assistant messages":
            m = v.get("message")
            totals.add(source, m.get("usage") if type(m) is dict else None)
        else:
            totals.add(source, v.get("usage"))
    return totals
