"""pi 1.6.0's `buildSessionProjection` (spec §10.3, rules 16–19) and its token figures (rules 21, 22).

The projection is the compaction-aware list of context entries, each with the
messages it contributes after context edits. Token counts come from the index
where the message is the entry's own (unedited, not normalised, not a system
message); everything else is materialised on demand, so a 100k-entry path costs
one pass over records.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast, overload

from .context import context_settings, js_strict_eq, resolve_path
from .gc_pause import gc_paused
from .history import CHUNK_ENTRIES
from .jsdate import js_date_ms
from .jsvalue import UNDEFINED, JsTypeError, _ordered_items, js_key, js_string, js_truthy, prop
from .messages import branch_summary_message, compaction_summary_message, custom_message
from .priority import STEP_ITEMS, yield_to_foreground
from .profile import PROFILE_1_6_0
from .record_table import INT_ESTIMATE_FLAGS, TOKENS_INT, column_on_path, indexes_of
from .session import CURRENT_LEAF, Session
from .tokens import ContextTokens, estimate_tokens_16, js_plus

__all__ = [
    "EDITABLE_ROLES",
    "ProjectedEntries",
    "ProjectedEntry",
    "Projection",
    "build_session_projection",
    "current_system_message",
    "entry_projection",
    "project_context_entry",
    "system_message_snapshot",
]

#: roles whose content a context edit replaces (projectContextEntry)
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
_NORMALISED_ROLES = ("user", "assistant", "toolResult")
_RECORD = operator.attrgetter("record")
_ROLES = operator.attrgetter("roles")
#: prefetch of more entries than this makes every entry's object once (ProjectedEntries.whole)
PREFETCH_WHOLE = 64
#: first_index_of_id looks for each record with the id on the path up to this many (else gathers the path's ids)
_FEW_HOLDERS = 16


class ProjectedEntry(NamedTuple):
    """One context entry: its record, the roles of its messages, the edit applied."""

    record: int
    roles: tuple[Any, ...]
    #: messages sessionEntryToContextMessages gives before edits (isIntrinsicallyVisible)
    intrinsic_count: int
    #: record index of the context_edit applied, or None
    edit: int | None = None
    #: the entry's message is its raw `message` value, so its index estimate applies
    raw: bool = False


class ProjectedEntries(Sequence[ProjectedEntry]):
    """The projection's entries, one per context entry, in order.

    A plain message's entry (its own raw message, one role that is not "system", an int estimate in
    the index: most of a long path) is not kept but made from the columns when asked: a path of
    100k entries before its first compaction made 100k objects of which a plan reads a few, while
    its estimates and roles come from the columns (:meth:`plain`, :meth:`roles`). The code that
    reads every entry gets them made once (:meth:`whole`)."""

    __slots__ = ("_kept", "_one_role", "_role_codes", "_whole", "records", "types")

    def __init__(
        self,
        records: list[int],
        kept: list[ProjectedEntry | None],
        one_role: Mapping[int, tuple[Any, ...]],
        role_codes: Sequence[int],
        types: Sequence[int],
    ) -> None:
        #: each entry's record, and its record's type code (the index's types column on them)
        self.records = records
        self.types = types
        #: each entry as made, None for a plain message's
        self._kept = kept
        #: a plain message's roles by its role's code in the index (one tuple per role, shared), and
        #: each entry's record's role code
        self._one_role = one_role
        self._role_codes = role_codes
        self._whole: list[ProjectedEntry] | None = None if None in kept else cast(list[ProjectedEntry], kept)

    @classmethod
    def of(cls, entries: list[ProjectedEntry], types: Sequence[int]) -> ProjectedEntries:
        """Entries made one by one (none left to the columns); ``types``: their records' type codes."""
        return cls(list(map(_RECORD, entries)), cast(list[ProjectedEntry | None], entries), {}, (), types)

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, k: int) -> ProjectedEntry: ...
    @overload
    def __getitem__(self, k: slice) -> list[ProjectedEntry]: ...
    def __getitem__(self, k: int | slice) -> ProjectedEntry | list[ProjectedEntry]:
        if isinstance(k, slice):
            return self.whole()[k]
        if self._whole is not None:
            return self._whole[k]
        e = self._kept[k]
        if e is None:
            return ProjectedEntry(self.records[k], self._one_role[self._role_codes[k]], 1, None, True)
        return e

    def __iter__(self) -> Iterator[ProjectedEntry]:
        return iter(self.whole())

    def whole(self) -> list[ProjectedEntry]:
        """Every entry as an object, made once."""
        got = self._whole
        if got is None:
            one_role = self._one_role
            with gc_paused():  # 100k entry objects: the collections they set off doubled the time
                got = [
                    ProjectedEntry(i, one_role[code], 1, None, True) if e is None else e
                    for e, i, code in zip(self._kept, self.records, self._role_codes, strict=True)
                ]
            self._whole = got
        return got

    def plain(self, lo: int, hi: int) -> bool:
        """Whether each entry from ``lo`` to ``hi - 1`` is a plain message's (its raw estimate is
        the index's int)."""
        return self._kept[lo:hi].count(None) == len(self.records[lo:hi])

    def plain_flags(self, lo: int, hi: int) -> list[bool]:
        """For each entry from ``lo`` to ``hi - 1``: whether it is a plain message's (its one context
        message is its record's raw message, role not "system", no edit)."""
        return [e is None for e in self._kept[lo:hi]]

    def message_count(self, lo: int, hi: int) -> int:
        """How many context messages the entries from ``lo`` to ``hi - 1`` give: a plain message's
        one, each other entry as many as its roles (after the context edits)."""
        if self._whole is not None:
            return sum(map(len, map(_ROLES, self._whole[lo:hi])))
        kept = self._kept[lo:hi]
        plain = kept.count(None)
        if plain == len(kept):
            return plain
        return plain + sum(len(e.roles) for e in kept if e is not None)

    def roles(self, lo: int = 0, hi: int | None = None) -> list[tuple[Any, ...]]:
        """The roles of each entry from ``lo`` to ``hi - 1``: a plain message's from its role code,
        the others' from their entries."""
        if self._whole is not None:
            return list(map(_ROLES, self._whole[lo:hi]))
        kept = self._kept[lo:hi]
        out: list[Any] = list(map(self._one_role.get, self._role_codes[lo:hi]))
        for j in itertools.compress(range(len(kept)), map(operator.is_not, kept, itertools.repeat(None))):
            out[j] = cast(ProjectedEntry, kept[j]).roles
        return out


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class Projection:
    session: Session
    path: list[int]
    entries: ProjectedEntries
    thinking_level: Any = "off"
    model: Any = None
    _messages: dict[int, list[Any]] = field(default_factory=dict, repr=False)
    _tokens: dict[int, list[Any]] = field(default_factory=dict, repr=False)
    _prefetching: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    # ------------------------------------------------------------- messages
    def entry_messages(self, k: int) -> list[Any]:
        got = self._messages.get(k)
        if got is None:
            got = self._materialise(k)
            self._messages[k] = got
        return got

    def _materialise(self, k: int, values: Mapping[int, Any] | None = None) -> list[Any]:
        """Entry k's messages; ``values``: its record's (and edit's) values, already read."""
        e = self.entries[k]
        if not e.roles:
            return []
        s = self.session
        v = values[e.record] if values is not None else s.value(e.record)
        msgs = entry_messages_of(v, s.records[e.record].type)
        if e.edit is None:
            return msgs
        edit = values[e.edit] if values is not None else s.value(e.edit)
        return _apply_edit(msgs, edit.get("replacement", UNDEFINED))

    def prefetch(self, ks: Iterable[int]) -> None:
        """Make the messages of entries ``ks`` at once: their values read in one pass over the file
        (Session.values), not one open, check and read per entry (a summary of a 90k-entry path
        before its first compaction took ~17 s that way, the window's real-token count another 18)."""
        ks = list(ks)
        # the window's preparation and its real-token count ask for the same path's messages from two
        # threads at once: the second waits for the first's instead of parsing the file a second time
        # (on a 100k-entry path: the second copy of every message, ~100 MB, and a second pass)
        with self._prefetching:
            entries = self.entries.whole() if len(ks) > PREFETCH_WHOLE else self.entries
            wanted = [k for k in ks if k not in self._messages and entries[k].roles]
            if len(wanted) < 2:
                return
            with gc_paused():  # a message list per entry, by the 100k (see gc_pause)
                values = self._entry_values(entries, wanted)
                for k in wanted:
                    self._messages[k] = self._materialise(k, values)

    def _entry_values(self, entries: Sequence[ProjectedEntry], ks: list[int]) -> dict[int, Any]:
        """The values of entries ``ks``' records and of the edits applied to them, read in one pass."""
        records: list[int] = []
        for k in ks:
            e = entries[k]
            records.append(e.record)
            if e.edit is not None:
                records.append(e.edit)
        return dict(zip(records, self.session.values(records), strict=True))

    def iter_entry_messages(self, chunk: int = CHUNK_ENTRIES) -> Iterator[list[Any]]:
        """entry_messages(k) of each entry, in order; the ones not made yet read ``chunk`` entries at
        a time and not kept: for who reads a long path's context once (a token count, a view)
        without holding it (prefetch keeps what it reads)."""
        n = len(self.entries)
        entries, made = self.entries, self._messages
        for a in range(0, n, chunk):
            ks = range(a, min(n, a + chunk))
            missing = [k for k in ks if k not in made and entries[k].roles]
            values = self._entry_values(entries, missing)
            with gc_paused():  # a message list per entry, by the 100k (see gc_pause)
                fresh = {k: self._materialise(k, values) for k in missing}
            for k in ks:
                got = made.get(k)
                yield got if got is not None else fresh.get(k, [])

    def messages(self) -> list[Any]:
        self.prefetch(range(len(self.entries)))
        out: list[Any] = []
        for k in range(len(self.entries)):
            out.extend(self.entry_messages(k))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages(), "thinkingLevel": self.thinking_level, "model": self.model}

    def records(self, lo: int = 0, hi: int | None = None) -> list[int]:
        """The record of each entry from ``lo`` to ``hi - 1`` (all by default)."""
        return self.entries.records[lo:hi]

    # --------------------------------------------------------------- tokens
    def raw_estimates(self, lo: int, hi: int) -> list[int | None]:
        """Each entry's estimate from ``lo`` to ``hi - 1`` straight from the index's columns where its
        one context message is its raw message with an int estimate (what pi writes; entry_tokens
        says the same, through a record object and a cache entry: a long path before its first
        compaction asks it of every entry), else None; the columns gathered in one call each."""
        recs = self.session.records
        records = self.records(lo, hi)
        tokens = column_on_path(recs.tokens, records)
        if self.entries.plain(lo, hi):  # a run of plain messages: the column's ints
            return list(map(int, tokens))
        entries = self.entries[lo:hi]
        flags = column_on_path(recs.flags, records)
        return [
            int(t) if e.raw and len(e.roles) == 1 and f & INT_ESTIMATE_FLAGS == TOKENS_INT else None
            for e, f, t in zip(entries, flags, tokens, strict=True)
        ]

    def entry_tokens(self, k: int) -> list[Any]:
        """estimateTokens of each message of entry k (a JsTypeError where pi throws)."""
        got = self._tokens.get(k)
        if got is not None:
            return got
        e = self.entries[k]
        if e.raw:
            got = [self.session.records[e.record].tokens]
        else:
            got = []
            for m in self.entry_messages(k):
                try:
                    got.append(estimate_tokens_16(m))
                except JsTypeError as err:
                    got.append(err)
        self._tokens[k] = got
        return got

    def entry_token_sum(self, k: int) -> Any:
        """`messages.reduce((sum, m) => sum + estimateTokens(m), 0)`, raising where pi throws."""
        acc: Any = 0
        for t in self.entry_tokens(k):
            if isinstance(t, JsTypeError):
                raise t
            acc = js_plus(acc, t)
        return acc

    def estimate_context_tokens(self) -> ContextTokens:
        """estimateContextTokens(projection.messages), from the index where possible."""
        return self._estimate_context_tokens()[0]

    def _estimate_context_tokens(self) -> tuple[ContextTokens, int | None]:
        """estimate_context_tokens, and the entry whose message holds the last usage (None: none)."""
        recs = self.session.records
        entries = self.entries
        last: int | None = None
        for k in range(len(entries) - 1, -1, -1):
            e = entries[k]
            if e.roles and recs[e.record].type == "message" and recs[e.record].usage_tokens is not None:
                last = k
                break
        trailing: Any = 0
        for k in range(last + 1 if last is not None else 0, len(entries)):
            trailing = js_plus(trailing, self.entry_token_sum(k))
        if last is None:
            return ContextTokens(trailing, 0, trailing, None), None
        usage = recs[entries[last].record].usage_tokens
        # the message's place overall: the messages of the entries before it (a C-level sum)
        before = entries.message_count(0, last)
        return ContextTokens(js_plus(usage, trailing), usage, trailing, before), last

    def estimate_projected_context_tokens(self, branch: list[int]) -> ContextTokens:
        """estimateProjectedContextTokens(projection, branchEntries) (rule 22)."""
        estimate, usage_entry = self._estimate_context_tokens()
        recs = self.session.records
        if usage_entry is not None:
            # the entry holding message number last_usage_index is the one that held the usage
            usage_id: Any = recs[self.entries[usage_entry].record].id
            usage_at = first_index_of_id(self.session, branch, usage_id) if js_truthy(usage_id) else -1
            invalidating = -1
            stops = {recs.code("context_edit"), recs.code("compaction")}
            types = column_on_path(recs.types, branch)  # gathered in C: branches are long
            for code in stops:  # the last compaction or context edit, searched in C
                if code in types:
                    invalidating = max(invalidating, len(types) - 1 - types[::-1].index(code))
            if usage_at > invalidating:
                return estimate
        system_entries = [k for k, e in enumerate(self.entries) if "system" in e.roles]
        system_messages = [
            m for k in system_entries for m in self.entry_messages(k) if prop(m, "role") == "system"
        ]
        current = current_system_message(system_messages)
        tokens: Any = estimate_tokens_16(current) if current is not None else 0
        for k, e in enumerate(self.entries):
            if "system" not in e.roles:
                tokens = js_plus(tokens, self.entry_token_sum(k))
                continue
            for m, t in zip(self.entry_messages(k), self.entry_tokens(k), strict=True):
                if prop(m, "role") != "system":
                    if isinstance(t, JsTypeError):
                        raise t
                    tokens = js_plus(tokens, t)
        return ContextTokens(tokens, 0, tokens, None)

    def source_ids(self) -> list[Any]:
        recs = self.session.records
        return [None if recs[e.record].id is UNDEFINED else recs[e.record].id for e in self.entries]


# ------------------------------------------------------------------ building
def entry_messages_of(v: Any, t: Any) -> list[Any]:
    """sessionEntryToContextMessages(entry) of pi 1.6.0."""
    if t == "message":
        m = v.get("message", UNDEFINED)
        role = prop(m, "role")
        content = prop(m, "content")
        if content is None or content is UNDEFINED:
            if role == "system":
                return [{**m, "content": ""}]
            if role in _NORMALISED_ROLES:
                return [{**m, "content": []}]
        return [m]
    if t == "custom_message":
        return [custom_message(v, PROFILE_1_6_0)]
    if t == "branch_summary":
        return [branch_summary_message(v)] if js_truthy(v.get("summary", UNDEFINED)) else []
    if t == "compaction":
        summary = compaction_summary_message(v)
        snapshot = v.get("systemMessage", UNDEFINED)
        return [snapshot, summary] if js_truthy(snapshot) else [summary]
    return []


def _apply_edit(messages: list[Any], replacement: Any) -> list[Any]:
    """projectContextEntry with an edit: null hides, content replaces (rule 18)."""
    if replacement is None:
        return []
    out = []
    for m in messages:
        role = prop(m, "role")
        if type(role) is not str or role not in EDITABLE_ROLES:
            out.append(m)
            continue
        content = prop(replacement, "content")
        if (role == "assistant" or role == "toolResult") and type(content) is str:
            content = [{"type": "text", "text": content}]
        out.append({**m, "content": content})
    return out


def project_context_entry(session: Session, i: int, edit: int | None = None) -> list[Any]:
    """projectContextEntry(entry, edit) of pi 1.6.0: the entry's context messages, with the
    context edit at record `edit` applied (branch summaries use it entry by entry)."""
    messages = entry_messages_of(session.value(i), session.records[i].type)
    if edit is None:
        return messages
    return _apply_edit(messages, session.value(edit).get("replacement", UNDEFINED))


def _intrinsic_roles(session: Session, i: int) -> tuple[tuple[Any, ...], bool]:
    """(roles of the entry's own messages, whether the index estimate applies)."""
    r = session.records[i]
    t = r.type
    if t == "message":
        if r.error is not None:
            raise r.error
        role = r.role
        if role == "system":
            return (role,), False
        if isinstance(r.tokens, JsTypeError) and role in _NORMALISED_ROLES:
            return (role,), False  # perhaps null content, normalised to []: estimate the copy
        return (role,), True
    if t == "custom_message":
        return ("custom",), False
    if t == "branch_summary":
        return (("branchSummary",) if js_truthy(session.value(i).get("summary", UNDEFINED)) else ()), False
    if t == "compaction":
        snapshot = session.value(i).get("systemMessage", UNDEFINED)
        if js_truthy(snapshot):
            return (prop(snapshot, "role"), "compactionSummary"), False
        return ("compactionSummary",), False
    return (), False


def _plain_messages(
    session: Session, records: list[int], types: Sequence[int], roles: Sequence[int]
) -> list[bool]:
    """Per record: a message entry with a message whose role is not "system" and an int estimate
    in the index (what pi writes): its own context message is its raw message, one of its role
    (_intrinsic_roles' answer, read from the columns: a path before its first compaction is long)."""
    recs = session.records
    message, system = recs.code("message"), recs.code("system")
    flags = column_on_path(recs.flags, records)
    return [
        t == message and r != system and f & INT_ESTIMATE_FLAGS == TOKENS_INT
        for t, r, f in zip(types, roles, flags, strict=True)
    ]


def _context_entries(session: Session, path: list[int], compaction: int | None) -> list[int]:
    """buildContextEntries (rule 17): the compaction, its kept range without system messages, the rest."""
    if compaction is None:
        return path
    recs = session.records
    ci = first_index_of_id(session, path, recs[compaction].id)
    if ci < 0:
        return path
    out = [compaction]
    fk = session.value(compaction).get("firstKeptEntryId", UNDEFINED)
    yield_to_foreground()
    start = first_index_of_id(session, path[:ci], fk)
    yield_to_foreground()
    for i in path[start:ci] if start >= 0 else ():
        r = recs[i]
        if not (r.type == "message" and r.role == "system"):
            out.append(i)
    out.extend(path[ci + 1 :])
    return out


def first_index_of_id(session: Session, path: list[int], entry_id: Any) -> int:
    """`path.findIndex((e) => e.id === entry_id)`; plain `==` where `===` means the same for strings."""
    recs = session.records
    if type(entry_id) is str:
        code = recs.id_code(entry_id)  # compare the packed id column: paths are long
        if code is None:
            return -1
        holders = recs.records_with_id(code)
        if len(holders) > _FEW_HOLDERS:
            try:
                return column_on_path(recs.ids, path).index(code)
            except ValueError:
                return -1
        # the first place on the path of any record with this id (usually one record)
        best = len(path)
        for h in holders:
            with contextlib.suppress(ValueError):
                best = path.index(h, 0, best)
        return best if best < len(path) else -1
    return next((k for k, i in enumerate(path) if js_strict_eq(recs[i].id, entry_id)), -1)


def build_session_projection(
    session: Session, leaf_id: Any = CURRENT_LEAF, *, path: list[int] | None = None
) -> Projection:
    """buildSessionProjection(entries, leafId) — or over `path` (prepareCompaction's call)."""
    path = resolve_path(session, leaf_id, path)
    proj = Projection(session, path, ProjectedEntries.of([], ()))
    if not path:
        return proj
    proj.thinking_level, proj.model, compaction = context_settings(session, path)
    yield_to_foreground()
    recs = session.records
    context = _context_entries(session, path, compaction)
    yield_to_foreground()
    types = column_on_path(recs.types, context)
    edits: dict[Any, int] = {}
    context_edit = recs.code("context_edit")
    for k in indexes_of(types, context_edit):  # the edits found in C: most paths have none
        i = context[k]
        edits[js_key(session.value(i).get("targetId", UNDEFINED))] = i
    role_codes = column_on_path(recs.roles, context)
    plain = _plain_messages(session, context, types, role_codes)
    symbols = recs.symbols
    # what _intrinsic_roles and the rest say of a plain message no edit targets: its role, once
    # (one tuple per role, shared: the planners answer per tuple)
    one_role = {code: (symbols[code],) for code in set(role_codes)}
    kept: list[ProjectedEntry | None] = []
    _project_entries(session, context, plain, edits, kept)
    proj.entries = ProjectedEntries(context, kept, one_role, role_codes, types)
    return proj


def _project_entries(
    session: Session,
    context: list[int],
    plain: list[bool],
    edits: dict[Any, int],
    entries: list[ProjectedEntry | None],
) -> None:
    """Each context entry's projected entry into ``entries``; None for a plain message no edit
    targets (ProjectedEntries makes it from the columns: its roles, one, no edit, raw)."""
    recs = session.records
    for block in range(0, len(context), STEP_ITEMS):
        yield_to_foreground()
        stop = min(block + STEP_ITEMS, len(context))
        if not edits and all(plain[block:stop]):  # a run of plain messages: a long path is mostly that
            entries.extend(itertools.repeat(None, stop - block))
            continue
        for k in range(block, stop):
            i = context[k]
            if plain[k] and (not edits or js_key(recs.id_of(i)) not in edits):
                entries.append(None)
                continue
            roles, raw = _intrinsic_roles(session, i)
            count = len(roles)
            if recs[i].type == "compaction" and k > 0:
                entries.append(ProjectedEntry(i, (), count))
                continue
            edit = edits.get(js_key(recs[i].id)) if edits else None
            if edit is None:
                entries.append(ProjectedEntry(i, roles, count, None, raw))
                continue
            replacement = session.value(edit).get("replacement", UNDEFINED)
            if replacement is None:
                entries.append(ProjectedEntry(i, (), count, edit))
            else:
                if replacement is UNDEFINED and any(r in EDITABLE_ROLES for r in roles if type(r) is str):
                    raise JsTypeError("Cannot read properties of undefined (reading 'content')")
                entries.append(ProjectedEntry(i, roles, count, edit))


def entry_projection(session: Session, path: list[int]) -> Projection:
    """Every path entry with its own context messages (sessionEntryToContextMessages), without
    compaction awareness or context edits: what 1.6.0's exported raw-entry findCutPoint walks."""
    entries = []
    for i in path:
        roles, raw = _intrinsic_roles(session, i)
        entries.append(ProjectedEntry(i, roles, len(roles), None, raw))
    types = column_on_path(session.records.types, path)
    return Projection(session, path, ProjectedEntries.of(entries, types))


def current_system_message(messages: list[Any]) -> dict[str, Any] | None:
    """pi-ai's getCurrentSystemMessage: every system message replayed into one (rule 3)."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp: Any = UNDEFINED
    tools: dict[Any, Any] = {}
    for m in messages:
        if prop(m, "role") != "system":
            continue
        if timestamp is UNDEFINED or timestamp is None:
            timestamp = prop(m, "timestamp")
        text = _content_text(prop(m, "content"))
        if text:
            content.append(text)
        secs = prop(m, "sections")
        if type(secs) is dict:
            for name, value in _ordered_items(secs):
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
    for m in messages:
        if prop(m, "role") != "system":
            continue
        for tool in _iter_list(prop(m, "toolsRemoved")):
            tools.pop(js_key(prop(tool, "name")), None)
        for tool in _iter_list(prop(m, "toolsAdded")):
            tools[js_key(prop(tool, "name"))] = tool  # Map.set keeps an existing key's position
    if (timestamp is UNDEFINED or timestamp is None) and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        out["sections"] = dict(sections)
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = 0 if timestamp is UNDEFINED or timestamp is None else timestamp
    return out


def system_message_snapshot(session: Session, leaf_id: Any, timestamp: str) -> dict[str, Any] | None:
    """What 1.6.0's appendCompaction stores as `systemMessage` (rule 4): the current system
    message of the leaf's projection, its `timestamp` set to the compaction's time in ms."""
    p = build_session_projection(session, leaf_id)
    messages = [m for k, e in enumerate(p.entries) if "system" in e.roles for m in p.entry_messages(k)]
    current = current_system_message(messages)
    if current is None:
        return None
    return {**current, "timestamp": js_date_ms(timestamp)}


def _iter_list(v: Any) -> Any:
    if v is None or v is UNDEFINED:
        return ()
    if type(v) is list:
        return v
    if type(v) is str:
        return ()
    raise JsTypeError("object is not iterable")


def _content_text(content: Any) -> str:
    if type(content) is str:
        return content
    if type(content) is not list:
        raise JsTypeError("content.filter is not a function")
    parts = []
    for b in content:
        if prop(b, "type") == "text":
            t = prop(b, "text")
            parts.append("" if t is None or t is UNDEFINED else js_string(t))
    return "\n".join(parts)
