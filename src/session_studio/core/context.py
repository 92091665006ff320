"""`buildSessionContext` (spec §3.1): what the LLM sees for a leaf.

The walk works on the index: a :class:`SessionContext` knows which path entries
produce which messages, so token counts come from the index and the messages
themselves are only materialised when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .gc_pause import gc_paused
from .history import CHUNK_ENTRIES
from .jsvalue import UNDEFINED, JsTypeError, js_key, js_truthy
from .messages import branch_summary_message, compaction_summary_message, custom_message
from .priority import yield_to_foreground
from .record_table import ERROR, column_on_path, indexes_of
from .session import CURRENT_LEAF, Session
from .tokens import ContextTokens, estimate_tokens, js_plus

__all__ = [
    "ContextItem",
    "SessionContext",
    "build_session_context",
    "context_settings",
    "first_on_path_with_id",
    "js_strict_eq",
    "resolve_path",
]


def js_strict_eq(a: Any, b: Any) -> bool:
    """JavaScript `===` for JSON values."""
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        return bool(a == b)
    if ta in (int, float) and tb in (int, float):
        return bool(float(a) == float(b))
    if ta is bool and tb is bool:
        return bool(a == b)
    if a is None or a is UNDEFINED or b is None or b is UNDEFINED:
        return a is b
    if ta in (dict, list) or tb in (dict, list):
        return a is b
    return False


def first_on_path_with_id(
    session: Session, path: list[int], value: Any, *, type_name: str | None = None, stop: int | None = None
) -> int:
    """The first k < `stop` with ``records[path[k]].id === value`` (and, with `type_name`, that type),
    -1 if none. A string is looked up by its id code (equal strings have one code) in the path's
    id column, gathered in C: a Python loop over a 200k-entry path made a record object per step
    (~1 s of the 1 GB session's 0.80.2 plan). Any other value is compared entry by entry."""
    recs = session.records
    stop = len(path) if stop is None else max(0, min(stop, len(path)))
    want_type = -2 if type_name is None else recs.code(type_name)
    if type_name is not None and want_type < 0:
        return -1
    if type(value) is not str:
        for k in range(stop):
            i = path[k]
            if (want_type == -2 or recs.types[i] == want_type) and js_strict_eq(recs.id_of(i), value):
                return k
        return -1
    code = recs.id_code(value)
    if code is None:
        return -1
    ids = column_on_path(recs.ids, path[:stop])
    return next((k for k in indexes_of(ids, code) if want_type == -2 or recs.types[path[k]] == want_type), -1)


class ContextItem(NamedTuple):
    """One context message and the entry that produced it."""

    kind: str  # "message" | "custom" | "branchSummary" | "compactionSummary"
    record: int


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class SessionContext:
    session: Session
    path: list[int]
    items: list[ContextItem]
    thinking_level: Any = "off"
    model: Any = None
    compaction: int | None = None  # record index of the compaction used
    compaction_path_index: int = -1
    _messages: list[Any] | None = field(default=None, repr=False)

    def messages(self) -> list[Any]:
        if self._messages is None:
            self._messages = self._made(self.items)
        return self._messages

    def iter_messages(self, chunk: int = CHUNK_ENTRIES) -> Iterator[Any]:
        """The messages in order, read ``chunk`` items at a time and not kept (once made, the kept
        list): for who reads a long path's context once (a token count, a view) without holding it."""
        if self._messages is not None:
            yield from self._messages
            return
        for a in range(0, len(self.items), chunk):
            yield from self._made(self.items[a : a + chunk])

    def _made(self, items: list[ContextItem]) -> list[Any]:
        vals = self.session.values(it.record for it in items)
        out: list[Any] = []
        with gc_paused():  # a message per item, by the 100k on a long path (see gc_pause)
            for it, v in zip(items, vals, strict=True):
                if it.kind == "message":
                    out.append(v.get("message", UNDEFINED))
                elif it.kind == "custom":
                    out.append(custom_message(v))
                elif it.kind == "branchSummary":
                    out.append(branch_summary_message(v))
                else:
                    out.append(compaction_summary_message(v))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages(), "thinkingLevel": self.thinking_level, "model": self.model}

    def message_tokens(self, start: int = 0) -> list[Any]:
        """estimateTokens of the context messages from ``start`` on (all by default), from the index
        where possible."""
        recs = self.session.records
        out: list[Any] = []
        msgs = None
        for j in range(start, len(self.items)):
            it = self.items[j]
            if it.kind == "message":
                out.append(recs[it.record].tokens)
            else:
                if msgs is None:
                    msgs = self.messages()
                try:
                    out.append(estimate_tokens(msgs[j]))
                except JsTypeError as e:
                    out.append(e)
        return out

    def estimate_tokens(self) -> ContextTokens:
        """pi's estimateContextTokens(context.messages), computed from the index."""
        recs = self.session.records
        last = None
        usage: Any = 0
        for j in range(len(self.items) - 1, -1, -1):
            it = self.items[j]
            if it.kind == "message":
                u = recs[it.record].usage_tokens
                if u is not None:
                    last, usage = j, u
                    break
        trailing: Any = 0
        # only the messages after the last usage count (a long path's others are not estimated)
        for t in self.message_tokens((last + 1) if last is not None else 0):
            if isinstance(t, JsTypeError):
                raise t
            trailing = js_plus(trailing, t)
        if last is None:
            return ContextTokens(trailing, 0, trailing, None)
        return ContextTokens(js_plus(usage, trailing), usage, trailing, last)


def _empty(session: Session) -> SessionContext:
    return SessionContext(session, [], [])


def resolve_path(session: Session, leaf_id: Any = CURRENT_LEAF, path: list[int] | None = None) -> list[int]:
    """buildSessionPath(entries, leafId): the path pi builds context over ([] for none)."""
    if path is not None:
        return path
    recs = session.records
    lid = session.leaf_id if leaf_id is CURRENT_LEAF else leaf_id
    if lid is None:
        return []
    leaf = session.by_id.get(js_key(lid)) if js_truthy(lid) else None
    if leaf is None:
        if not recs:
            return []
        leaf = len(recs) - 1
    return session.path_indices(leaf)


#: bytes.translate table: a flags byte → 1 if it has the ERROR bit, else 0
_ERROR_BIT = bytes(1 if b & ERROR else 0 for b in range(256))


def _last_with(codes: tuple[int, ...], code: int) -> int:
    """The last position of `code` in `codes`, -1 if none (-1 codes match nothing)."""
    if code < 0:
        return -1
    try:
        return len(codes) - 1 - codes[::-1].index(code)
    except ValueError:
        return -1


def context_settings(session: Session, path: list[int]) -> tuple[Any, Any, int | None]:
    """(thinkingLevel, model, last compaction's record) of a path, raising where pi throws."""
    recs = session.records
    # the codes of the path's records, gathered once, searched with tuple.index (paths are long)
    types = column_on_path(recs.types, path)
    yield_to_foreground()
    message_code = recs.code("message")
    errors = bytes(column_on_path(recs.flags, path)).translate(_ERROR_BIT)
    yield_to_foreground()
    error_at = errors.find(1)
    while error_at >= 0:
        if types[error_at] == message_code:
            error = recs[path[error_at]].error
            assert error is not None
            raise error  # pi reads entry.message.role here
        error_at = errors.find(1, error_at + 1)
    thinking_at = _last_with(types, recs.code("thinking_level_change"))
    compaction_at = _last_with(types, recs.code("compaction"))
    # the model: the last model change or assistant message (a role code is a message's only)
    model_at = max(
        _last_with(types, recs.code("model_change")),
        _last_with(column_on_path(recs.roles, path), recs.code("assistant")),
    )
    compaction = None if compaction_at < 0 else path[compaction_at]
    # the last setting on the path wins: read only those entries
    thinking: Any = "off"
    model: Any = None
    if thinking_at >= 0:
        thinking = session.value(path[thinking_at]).get("thinkingLevel", UNDEFINED)
    if model_at >= 0:
        v = session.value(path[model_at])
        if recs[path[model_at]].type == "model_change":
            model = {"provider": v.get("provider", UNDEFINED), "modelId": v.get("modelId", UNDEFINED)}
        else:
            m = v["message"]
            model = {"provider": m.get("provider", UNDEFINED), "modelId": m.get("model", UNDEFINED)}
    return thinking, model, compaction


def build_session_context(
    session: Session, leaf_id: Any = CURRENT_LEAF, *, path: list[int] | None = None
) -> SessionContext:
    """buildSessionContext(entries, leafId, byId) of pi 0.80.2 (1.6.0: see projection).

    `leaf_id`: CURRENT_LEAF for the session's leaf, None for pi's explicit null
    leaf, or an id. `path`: a precomputed path (prepareCompaction passes its own
    path entries and no leaf: the leaf is then the path's last entry).
    """
    recs = session.records
    path = resolve_path(session, leaf_id, path)
    if not path:
        return _empty(session)
    ctx = SessionContext(session, path, [])
    ctx.thinking_level, ctx.model, compaction = context_settings(session, path)

    items = ctx.items
    # type codes, not record objects, per path entry (paths are long)
    types = column_on_path(recs.types, path)
    message, custom, branch = recs.code("message"), recs.code("custom_message"), recs.code("branch_summary")

    def emit(lo: int, hi: int) -> None:  # the path's entries lo … hi - 1 (one loop: paths are long)
        for t, i in zip(types[lo:hi], path[lo:hi], strict=True):
            if t == message:
                items.append(ContextItem("message", i))
            elif t == custom:
                items.append(ContextItem("custom", i))
            elif t == branch and js_truthy(session.value(i).get("summary", UNDEFINED)):
                items.append(ContextItem("branchSummary", i))

    if compaction is None:
        emit(0, len(path))
        return ctx
    ctx.compaction = compaction
    items.append(ContextItem("compactionSummary", compaction))
    ci = first_on_path_with_id(session, path, recs.id_of(compaction), type_name="compaction")
    ctx.compaction_path_index = ci
    fk = session.value(compaction).get("firstKeptEntryId", UNDEFINED)
    kept_from = first_on_path_with_id(session, path, fk, stop=ci)
    if kept_from >= 0:
        emit(kept_from, ci)
    emit(ci + 1, len(path))
    return ctx
