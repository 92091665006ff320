"""`prepareCompaction` (spec §6): what a compaction would summarise and keep."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import history
from .context import SessionContext, build_session_context, first_on_path_with_id
from .cut_points import CutPlanner, CutPoint
from .file_ops import FileOps, compute_file_lists, format_file_operations
from .gc_pause import gc_paused
from .history import HistoryMessages
from .jsvalue import UNDEFINED, js_truthy
from .messages import branch_summary_message, custom_message
from .profile import PROFILE_0_80_2, PiProfile
from .record_table import INT_ESTIMATE_FLAGS, TOKENS_INT, column_on_path, last_on_path, records_at
from .serialize import serialize_conversation
from .session import Session
from .tokens import ContextTokens

__all__ = ["Boundary", "CompactionPlan", "Preparation", "compaction_boundary", "plan_compaction"]


class Boundary(NamedTuple):
    """The range prepareCompaction looks at: after the previous compaction's kept start."""

    start: int
    end: int
    prev_compaction: int  # path index, -1 if none


def compaction_boundary(session: Session, path: list[int]) -> Boundary:
    prev = last_on_path(session.records, path, "compaction")
    start = 0
    if prev >= 0:
        fk = session.value(path[prev]).get("firstKeptEntryId", UNDEFINED)
        idx = first_on_path_with_id(session, path, fk)
        start = idx if idx >= 0 else prev + 1
    return Boundary(start, len(path), prev)


def messages_for_compaction(session: Session, indices: list[int]) -> list[Any]:
    """getMessageFromEntryForCompaction of each entry of ``indices`` (compaction entries give nothing;
    left out), their values read in one pass (Session.values): a long path's history is most of a
    big file."""
    type_of = session.records.type_of
    # a type that is no string (a list, an object: damaged or hostile input) is no message type,
    # and must not reach the set (unhashable)
    wanted = [i for i in indices if isinstance(t := type_of(i), str) and t in _MESSAGE_TYPES]
    out = []
    for i, value in zip(wanted, session.values(wanted), strict=True):
        m = _message_of(type_of(i), value)
        if m is not None:
            out.append(m)
    return out


_MESSAGE_TYPES = frozenset(("message", "custom_message", "branch_summary"))


def _long_history(session: Session, indices: list[int], ops: FileOps) -> HistoryMessages:
    """messages_for_compaction(session, indices) as a HistoryMessages; their file operations added to
    ``ops`` in order, reading only the lines that may hold one (see history)."""
    recs = session.records
    kinds = {recs.code(t) for t in _MESSAGE_TYPES} - {-1}
    message = recs.code("message")
    types = column_on_path(recs.types, indices)
    flags = column_on_path(recs.flags, indices)
    settled = history.settled_ops(session, indices, flags)
    # a message with an int estimate is one message (not null); its line is read again only if the
    # index did not settle its file operations
    count = 0
    no_ops = history.NO_OPS
    work: list[tuple[int, int | None]] = []  # (record, its kept operations' position, or None: read it)
    for j, (t, f, known) in enumerate(zip(types, flags, settled, strict=True)):
        if t == message and known is not None and f & INT_ESTIMATE_FLAGS == TOKENS_INT:
            count += 1
            if known != no_ops:
                work.append((indices[j], known))
        elif t in kinds:
            work.append((indices[j], None))

    def read(i: int, values: Iterator[Any]) -> None:
        nonlocal count
        m = _message_of(recs.type_of(i), next(values))
        if m is not None:
            count += 1
            ops.add_from_message(m)

    history.add_file_ops(session, work, ops, lambda unread: unread, read)

    def chunks() -> Iterator[list[Any]]:
        for a in range(0, len(indices), history.CHUNK_ENTRIES):
            with gc_paused():
                part = messages_for_compaction(session, indices[a : a + history.CHUNK_ENTRIES])
            yield part

    return HistoryMessages(count, chunks)


def _message_of(entry_type: str, value: Any) -> Any:
    if entry_type == "message":
        return value.get("message", UNDEFINED)
    if entry_type == "custom_message":
        return custom_message(value)
    return branch_summary_message(value)


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class Preparation:
    first_kept_entry_id: Any
    first_kept_index: int
    #: a list, or for a long history a HistoryMessages that reads them again when iterated
    messages_to_summarize: Sequence[Any]
    turn_prefix_messages: list[Any]
    is_split_turn: bool
    tokens_before: Any
    previous_summary: Any
    file_ops: FileOps
    profile: PiProfile = PROFILE_0_80_2

    @property
    def file_lists(self) -> tuple[list[Any], list[Any]]:
        return compute_file_lists(self.file_ops)

    def serialized(self, messages: Sequence[Any]) -> str:
        """serializeConversation(convertToLlm(messages)) of this preparation's pi."""
        from .messages import convert_to_llm

        return serialize_conversation(convert_to_llm(messages, self.profile), self.profile)

    def counts_json(self) -> dict[str, Any]:
        """What prepareCompaction decided, without the messages themselves: their counts, the file
        lists and the cut (``plan --fields prepared``: a preparation's figures in a few hundred bytes
        where ``to_json`` prints every message, and what a benchmark of pi's prepare compares with)."""
        read, modified = self.file_lists
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary is not UNDEFINED,
            "messagesToSummarize": len(self.messages_to_summarize),
            "turnPrefixMessages": len(self.turn_prefix_messages),
            "readFiles": read,
            "modifiedFiles": modified,
        }

    def to_json(self) -> dict[str, Any]:
        read, modified = self.file_lists
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": None if self.previous_summary is UNDEFINED else self.previous_summary,
            "messagesToSummarize": list(self.messages_to_summarize),
            "turnPrefixMessages": self.turn_prefix_messages,
            "fileOps": self.file_ops.to_json(),
            "readFiles": read,
            "modifiedFiles": modified,
            "fileOpsFormatted": format_file_operations(read, modified),
            "serializedHistory": self.serialized(self.messages_to_summarize),
            "serializedTurnPrefix": self.serialized(self.turn_prefix_messages),
        }


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class CompactionPlan:
    """Everything about compacting one path: boundary, cut planner, context before."""

    session: Session
    path: list[int]
    boundary: Boundary
    planner: CutPlanner
    _context: SessionContext | None = None
    #: the caller's buildSessionContext of this path, if it has one (plan_compaction)
    context_source: Callable[[], SessionContext] | None = None

    @property
    def context(self) -> SessionContext:
        if self._context is None:
            # prepareCompaction calls buildSessionContext(pathEntries): leaf = last path entry
            source = self.context_source
            self._context = (
                build_session_context(self.session, path=self.path) if source is None else source()
            )
        return self._context

    def tokens_before(self) -> ContextTokens:
        return self.context.estimate_tokens()

    def cut(self, keep_recent_tokens: float) -> CutPoint:
        return self.planner.cut(keep_recent_tokens)

    def prepare(self, keep_recent_tokens: float, cut: CutPoint | None = None) -> Preparation | None:
        """prepareCompaction(path, settings) — or with a manual `cut`."""
        s = self.session
        recs = s.records
        path = self.path
        if path and recs[path[-1]].type == "compaction":
            return None
        b = self.boundary
        prev = s.value(path[b.prev_compaction]) if b.prev_compaction >= 0 else None
        previous_summary: Any = UNDEFINED if prev is None else prev.get("summary", UNDEFINED)
        tokens_before = self.tokens_before().tokens
        c = cut if cut is not None else self.cut(keep_recent_tokens)
        if c.first_kept_index >= len(path):
            return None
        first_kept = recs[path[c.first_kept_index]]
        if not js_truthy(first_kept.id):
            return None
        history_end = c.turn_start_index if c.is_split_turn else c.first_kept_index
        with gc_paused():  # a long path's messages by the 100k (see gc_pause)
            ops = FileOps()
            if prev is not None:
                ops.seed_from_entry(prev)
            indices = path[b.start : history_end]
            long = len(indices) >= history.LAZY_MIN_ENTRIES and recs.values is None
            # a long history is counted, and its file operations collected, without holding its messages
            messages = _long_history(s, indices, ops) if long else messages_for_compaction(s, indices)
            prefix = (
                messages_for_compaction(s, path[c.turn_start_index : c.first_kept_index])
                if c.is_split_turn
                else []
            )
            if not messages and not prefix:
                return None
            if not long:
                for m in messages:
                    ops.add_from_message(m)
            if c.is_split_turn:
                for m in prefix:
                    ops.add_from_message(m)
        return Preparation(
            first_kept.id,
            c.first_kept_index,
            messages,
            prefix,
            c.is_split_turn,
            tokens_before,
            previous_summary,
            ops,
        )


def plan_compaction(
    session: Session, path: list[int], context: Callable[[], SessionContext] | None = None
) -> CompactionPlan:
    """prepareCompaction's plan of ``path``; ``context``: where the caller gets buildSessionContext of
    that same path, if it builds one too (built once: a 100k-entry path's context is ~0.1 s)."""
    b = compaction_boundary(session, path)
    planner = CutPlanner(records_at(session.records, path), b.start, b.end)
    return CompactionPlan(session, path, b, planner, context_source=context)
