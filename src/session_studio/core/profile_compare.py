"""Both pis' plans of one session side by side, and the 1.6.0 rules that make them differ (teaching).

:func:`compare_plans` takes the plan of the same path and the same settings under pi 0.80.2 and
under pi 1.6.0 (two :class:`~session_studio.core.plan.PlanState`) and returns what each pi would do
(:class:`ProfileSide`: the cut, the split turn and its prefix, the tokens before and after, "nothing
to compact") and, where those differ, the rules of spec §10 behind the difference
(:class:`RuleNote`, each with its rule id and a sentence naming the entries it is about).

Facts that depend on the path only (which entries are system messages, custom messages, context
edits…) are gathered once per pair of planners (:class:`PathFacts`, off the GUI thread for big
files); a slider step then compares in time proportional to the entries between the two cuts.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Literal

from .explain import (
    AUTO_COMPACTION_OFF,
    RecoveryCut,
    overflow_text,
    summarised_span_text,
    threshold_check_text,
    tokens_unknown_text,
)
from .plan import STAND_IN_NOTE, ItemTokens, PathPlanner, PlanState, item_kind
from .profile import PROFILE_0_80_2, PROFILE_1_6_0
from .session import Session

__all__ = [
    "FactRow",
    "PathFacts",
    "ProfileComparison",
    "ProfileSide",
    "RuleNote",
    "compare_plans",
    "side_of",
]

#: what a rule note explains: the cut (and its split turn), the token figures, "nothing to compact",
#: the previous summary in the request
Affects = Literal["cut", "history", "tokens", "after", "nothing", "automatic", "summary"]
#: message kinds that start a turn in pi 1.6.0 but not in 0.80.2 (rule 29)
_TURN_STARTS_16 = frozenset({"bashExecution", "custom", "branchSummary"})
_WHO = {
    "toolResult": "tool result",
    "bashExecution": "bash execution",
    "custom": "custom message",
    "branchSummary": "branch summary",
    "compactionSummary": "compaction summary",
    "meta": "metadata",
}
#: entry types whose messages pi 0.80.2 summarises (prepareCompaction's getMessageFromEntry)
_PRODUCES_0_80_2 = ("message", "custom_message", "branch_summary")  # a tuple: a type may be a list
#: entries named in one sentence at most
_NAMED = 4


@dataclass(frozen=True, slots=True)
class ProfileSide:
    """What one pi would do with the path, in path positions (records for selecting them)."""

    version: str
    error: str | None
    cut_position: int | None  # the first kept entry
    cut_record: int | None
    cut_entry: str  # its kind in words ("user", "custom message")
    split_turn: bool
    turn_start: int | None  # path position of the split turn's start
    turn_start_record: int | None
    prefix: tuple[int, int] | None  # path positions [a, b) summarised with the turn-prefix prompt
    history: tuple[int, int] | None  # path positions [a, b) of the history summary
    tokens_before: float | None  # the context size pi shows; None: pi shows it as unknown
    tokens_counted: float  # what the plan weighs against the threshold
    tokens_unknown_reason: str | None
    tokens_after: float | None  # the projected context after compacting (None: nothing to compact)
    nothing_to_compact: bool
    verdict: str  # "Compacts" / pi's "Nothing to compact" message: what /compact does
    previous_summary: str  # whether the summary request carries the previous compaction's summary
    #: what pi does without a /compact: compact once the context it counts passes the threshold
    automatic: str = "—"
    #: ``tokens_after`` counts SUMMARY_PLACEHOLDER_TOKENS for a summary not generated yet
    stand_in_summary: bool = False
    #: the positions the history summary covers, as the planner names them (1.6.0 leaves out its
    #: system messages: "#18, #20…#31"), or "none"
    history_text: str = "none"


@dataclass(frozen=True, slots=True)
class FactRow:
    name: str
    old: str
    new: str

    @property
    def differs(self) -> bool:
        return self.old != self.new


@dataclass(frozen=True, slots=True)
class RuleNote:
    rule: str  # "rule 26", "§4.7"
    title: str
    text: str
    affects: tuple[Affects, ...]


@dataclass(frozen=True)
class ProfileComparison:
    old: ProfileSide  # pi 0.80.2
    new: ProfileSide  # pi 1.6.0
    facts: list[FactRow]
    rules: list[RuleNote]
    #: the automatic cut is compared; a manual cut of the window is not carried over (it may not be a
    #: cut point under the other pi)
    automatic: bool = True

    @property
    def differs(self) -> bool:
        return any(f.differs for f in self.facts)


@dataclass(frozen=True)
class PathFacts:
    """Per-path facts the rules need (computed once for a pair of planners of the same path)."""

    #: path positions of role:"system" messages
    system_positions: list[int]
    #: (path position, pi 1.6.0's estimate) of the system messages with tokens in its context
    system_counted: list[tuple[int, float]]
    #: pi 1.6.0's estimate of the system messages in its context (snapshot included)
    system_tokens: float
    #: (position, kind) of custom messages and branch summaries pi 1.6.0 gives tokens
    counted_16: list[tuple[int, str]]
    #: path positions of entries whose kind starts a turn in 1.6.0 only (rule 29)
    turn_starts_16: list[int]
    #: path positions of context_edit entries
    edit_positions: list[int]
    #: the kind of every path position (item_kind)
    kinds: list[str] = field(repr=False)
    #: [0, n0, n0+n1, …]: entries before each path position that give pi 0.80.2 / 1.6.0 something to
    #: summarise (a "History summarised" range of metadata only is no history)
    producing_old: list[int] = field(default_factory=list, repr=False)
    producing_new: list[int] = field(default_factory=list, repr=False)

    def producing(self, version: str) -> list[int]:
        return self.producing_new if version == PROFILE_1_6_0.version else self.producing_old

    @classmethod
    def of(cls, old: PathPlanner, new: PathPlanner) -> PathFacts:
        """The facts of the path both planners plan (``new`` is the 1.6.0 one)."""
        if old.path != new.path:
            raise ValueError("the two plans are not of the same path")
        return cls.build(new.session, new.path, new.item_tokens)

    @classmethod
    def build(cls, session: Session, path: list[int], items_16: list[ItemTokens]) -> PathFacts:
        """From the path and pi 1.6.0's context items (record, kind, tokens)."""
        recs = session.records
        kinds = [item_kind(recs[r]) for r in path]
        tokens_16: dict[int, float] = {}
        system_tokens = 0.0
        summarised_16: set[int] = set()
        for record, kind, t in items_16:
            tokens_16[record] = tokens_16.get(record, 0.0) + t
            if kind == "system":
                system_tokens += t
            elif kind != "compactionSummary":
                summarised_16.add(record)
        producing_old, producing_new = [0], [0]
        for r in path:
            producing_old.append(producing_old[-1] + (recs[r].type in _PRODUCES_0_80_2))
            producing_new.append(producing_new[-1] + (r in summarised_16))
        system_counted = [
            (k, tokens_16[r])
            for k, r in enumerate(path)
            if kinds[k] == "system" and tokens_16.get(r, 0.0) > 0 and recs[r].type == "message"
        ]
        return cls(
            system_positions=[k for k, kind in enumerate(kinds) if kind == "system"],
            system_counted=system_counted,
            system_tokens=system_tokens,
            counted_16=[
                (k, kinds[k])
                for k, r in enumerate(path)
                if recs[r].type in ("custom_message", "branch_summary") and tokens_16.get(r, 0.0) > 0
            ],
            turn_starts_16=[k for k, kind in enumerate(kinds) if kind in _TURN_STARTS_16],
            edit_positions=[k for k, r in enumerate(path) if recs[r].type == "context_edit"],
            kinds=kinds,
            producing_old=producing_old,
            producing_new=producing_new,
        )


def _fmt(n: float | None) -> str:
    if n is None:
        return "unknown"
    return f"{n:,.0f}" if math.isfinite(n) else str(n)


def _positions(ps: list[int]) -> str:
    shown = ", ".join(f"#{p}" for p in ps[:_NAMED])
    return shown + (f" and {len(ps) - _NAMED} more" if len(ps) > _NAMED else "")


def _nothing_verdict(st: PlanState) -> str:
    recs = st.session.records if st.session is not None else []
    if st.path and recs and recs[st.path[-1]].type == "compaction":
        return "Nothing to compact: already compacted"
    return "Nothing to compact (session too small)"


def _previous_summary(st: PlanState) -> str:
    if st.nothing_to_compact or st.plan is None:
        return "—"
    if st.plan.boundary.prev_compaction < 0:
        return "none (no earlier compaction)"
    if any(q.code == "12.1.4" for q in st.quirks):
        return "lost: 'No prior history.' is sent"
    return "sent"


def side_of(
    st: PlanState, producing: list[int] | None = None, recovery: RecoveryCut | None = None
) -> ProfileSide:
    """One pi's plan as the comparison shows it. ``producing``: :attr:`PathFacts.producing_old` or
    ``producing_new`` for this plan's pi (a history range with nothing to summarise is shown as none);
    ``recovery``: pi 1.6.0's overflow recovery for it (:func:`.explain.overflow_text`)."""
    version = st.profile.version
    unknown = tokens_unknown_text(st)
    before = None if unknown is not None else st.context_tokens
    if st.error is not None or st.cut is None or st.session is None or st.plan is None:
        why = st.error or "no active path to plan"
        return ProfileSide(
            version, why, None, None, "", False, None, None, None, None, before, st.context_tokens,
            unknown, None, True, why, "—", _automatic(st),
        )  # fmt: skip
    c = st.cut
    fk = c.first_kept_index
    recs = st.session.records
    cut_record = st.path[fk] if fk < len(st.path) else None
    kind = item_kind(recs[cut_record]) if cut_record is not None else ""
    split = c.is_split_turn and c.turn_start_index >= 0
    start = st.plan.boundary.start
    hist_end = max(start, c.turn_start_index if split else fk)
    if producing is None:
        producing = PathFacts.build(st.session, st.path, st.item_tokens).producing(version)
    has_history = producing[min(hist_end, len(producing) - 1)] > producing[min(start, len(producing) - 1)]
    after = None if st.nothing_to_compact else sum(t for _, _, t in st.after_tokens)
    return ProfileSide(
        version=version,
        error=None,
        cut_position=fk if cut_record is not None else None,
        cut_record=cut_record,
        cut_entry=_WHO.get(kind, kind),
        split_turn=split,
        turn_start=c.turn_start_index if split else None,
        turn_start_record=st.path[c.turn_start_index] if split else None,
        prefix=(c.turn_start_index, fk) if split and c.turn_start_index < fk else None,
        history=(start, hist_end) if has_history else None,
        tokens_before=before,
        tokens_counted=st.context_tokens,
        tokens_unknown_reason=unknown,
        tokens_after=after,
        stand_in_summary=after is not None and st.params.summary_tokens is None,
        history_text=(summarised_span_text(st) or "none") if has_history else "none",
        nothing_to_compact=st.nothing_to_compact,
        verdict=_nothing_verdict(st) if st.nothing_to_compact else "Compacts",
        previous_summary=_previous_summary(st),
        automatic=_automatic(st, recovery),
    )


def _automatic(st: PlanState, recovery: RecoveryCut | None = None) -> str:
    """Whether pi compacts this context by itself, as the planner says it (core.tokens.should_compact)."""
    if st.session is None or not st.path:
        return "—"
    over = threshold_check_text(st)  # what pi's own check weighs (§9)
    overflow = overflow_text(st, recovery)  # before the threshold: pi's overflow case (the patterns differ)
    if overflow is not None:
        over += f"; before that, {overflow}"
    if not st.params.auto_compaction:
        return f"no: {AUTO_COMPACTION_OFF} ({over})"
    return f"{'yes' if st.should_compact else 'no'}: {over}"


def _range(r: tuple[int, int] | None) -> str:
    if r is None:
        return "none"
    a, b = r
    return f"#{a}" if b - a == 1 else f"#{a}…#{b - 1}"


def _facts(o: ProfileSide, n: ProfileSide) -> list[FactRow]:
    def cut(s: ProfileSide) -> str:
        return "—" if s.cut_position is None else f"#{s.cut_position} ({s.cut_entry})"

    def split(s: ProfileSide) -> str:
        return f"yes, turn starts at #{s.turn_start}" if s.split_turn else "no"

    def before(s: ProfileSide) -> str:
        if s.tokens_before is None:
            return f"unknown (the plan counts {_fmt(s.tokens_counted)})"
        return _fmt(s.tokens_before)

    def after(s: ProfileSide) -> str:
        # None there means no compaction, not an unknown count (which "unknown" said)
        if s.tokens_after is None:
            return "— (nothing to compact)"
        return _fmt(s.tokens_after) + (f" ({STAND_IN_NOTE})" if s.stand_in_summary else "")

    return [
        FactRow("Cut (first kept entry)", cut(o), cut(n)),
        FactRow("Split turn", split(o), split(n)),
        FactRow("Turn prefix", _range(o.prefix), _range(n.prefix)),
        FactRow("History summarised", o.history_text, n.history_text),
        FactRow("Context tokens now", before(o), before(n)),
        FactRow("Context tokens after", after(o), after(n)),
        # "Verdict: Compacts" stood beside the planner's "would not compact automatically": it is
        # what /compact does; whether pi compacts by itself is the row below
        FactRow("Manual compaction", o.verdict, n.verdict),
        FactRow("Automatic compaction", o.automatic, n.automatic),
        FactRow("Previous summary", o.previous_summary, n.previous_summary),
    ]


#: what each fact row is about (the rule notes say what they explain)
_ROW_TOPICS: tuple[Affects, ...] = (
    "cut", "cut", "cut", "history", "tokens", "after", "nothing", "automatic", "summary",
)  # fmt: skip
#: a difference in the key's topic brings differences in these (another cut summarises other entries…)
_CONSEQUENCES: dict[str, frozenset[str]] = {
    "cut": frozenset({"history", "after", "nothing", "summary"}),
    "tokens": frozenset({"after", "automatic"}),
    "nothing": frozenset({"history", "after", "summary"}),
}


def _in(ps: list[int], lo: int, hi: int) -> list[int]:
    """The positions of the sorted ``ps`` in [lo, hi)."""
    return ps[bisect.bisect_left(ps, lo) : bisect.bisect_left(ps, hi)]


def _rules(old: PlanState, new: PlanState, o: ProfileSide, n: ProfileSide, f: PathFacts) -> list[RuleNote]:
    notes: list[RuleNote] = []
    add = notes.append
    end = len(new.path)
    fo, fn = o.cut_position, n.cut_position
    lo = min(x for x in (fo, fn, end) if x is not None)
    # system messages: estimated and counted by 1.6.0, 0 tokens (and summarised) in 0.80.2
    if f.system_positions:
        # in the accumulation range they move the cut; anywhere in the context they change the count
        weighed = [p for p, _ in f.system_counted if p >= lo]
        if f.system_tokens > 0:
            add(
                RuleNote(
                    "rule 21",
                    "System messages have tokens",
                    "pi 1.6.0 estimates the system prompt and tool declarations "
                    f"({_fmt(f.system_tokens)} tokens in its context"
                    + (
                        f", {_positions(weighed)} counted toward keepRecentTokens (rule 26)"
                        if weighed
                        else ""
                    )
                    + "); pi 0.80.2 estimates a system message at 0 tokens and leaves it out of the request.",
                    ("tokens", "cut") if weighed else ("tokens",),
                )
            )
        hist = o.history or (0, 0)
        pre = o.prefix or (0, 0)
        sys_summarised = _in(f.system_positions, *hist) + _in(f.system_positions, *pre)
        if sys_summarised and o.nothing_to_compact != n.nothing_to_compact:
            add(
                RuleNote(
                    "rule 31",
                    "System messages are never summarised",
                    f"pi 0.80.2 would summarise {_positions(sys_summarised)} (a system message: an empty "
                    "conversation for the summariser); pi 1.6.0 leaves system messages out of what it "
                    "summarises, so with nothing else before the cut it says Nothing to compact.",
                    ("nothing", "history"),
                )
            )
        elif sys_summarised and not n.nothing_to_compact:
            add(
                RuleNote(
                    "rule 31",
                    "System messages are never summarised",
                    f"pi 0.80.2 summarises the system message{'s' if len(sys_summarised) > 1 else ''} at "
                    f"{_positions(sys_summarised)} with the rest; pi 1.6.0 leaves system messages out of "
                    "what it summarises (its compaction keeps the current one, rule 17).",
                    ("history",),
                )
            )
    # rule 17 / §10.1 #4: the new compaction carries the current system message
    snapshot = next((t for r, k, t in new.after_tokens if r == -1 and k == "system"), None)
    if snapshot is not None:
        add(
            RuleNote(
                "rule 17",
                "The compaction keeps the system message",
                f"pi 1.6.0's compaction stores a snapshot of the current system message ({_fmt(snapshot)} "
                "tokens), which stays in the context after compacting while system messages in the kept "
                "range are left out; pi 0.80.2 stores no snapshot.",
                ("after",),
            )
        )
    # rule 26: custom messages and branch summaries count toward keepRecentTokens in 1.6.0
    counted = [(p, k) for p, k in f.counted_16 if p >= lo]
    if counted:
        ps = [p for p, _ in counted]
        add(
            RuleNote(
                "rule 26",
                "Custom messages and branch summaries count",
                f"pi 1.6.0 counts the custom messages and branch summaries at {_positions(ps)} toward "
                "keepRecentTokens; pi 0.80.2 adds nothing for them (quirk §12.1.3), so its running total "
                "reaches the budget at another entry.",
                ("cut",),
            )
        )
    # rule 28: the backward scan no longer absorbs entries with context messages
    if fo is not None and fn is not None and fo < fn:
        absorbed = []
        with_context = {q for q, _ in f.counted_16 if fo <= q < fn}
        for p in range(fo, min(fn, fo + 64)):
            kind = f.kinds[p]
            if kind in ("custom", "branchSummary") and p in with_context:
                absorbed.append(p)
            elif kind != "meta":
                break
        if absorbed:
            add(
                RuleNote(
                    "rule 28",
                    "The backward scan stops at entries with context",
                    f"pi 0.80.2's backward scan moves the cut back over {_positions(absorbed)} (not a "
                    "'message' entry); pi 1.6.0 stops at any entry that gives the context a message.",
                    ("cut",),
                )
            )
    # rule 29: bash executions, custom messages and branch summaries start a turn in 1.6.0
    if o.split_turn != n.split_turn or o.turn_start != n.turn_start:
        hi = max(x for x in (fo, fn, 0) if x is not None) + 1
        turn_lo = min(x for x in (o.turn_start, n.turn_start, lo) if x is not None)
        starts = _in(f.turn_starts_16, turn_lo, hi)
        if starts:
            add(
                RuleNote(
                    "rule 29",
                    "Bash executions, custom messages and branch summaries start a turn",
                    f"{_positions(starts)} start{'s' if len(starts) == 1 else ''} a turn in pi 1.6.0, so a "
                    "cut there is no split turn and a turn-start search stops there; pi 0.80.2 starts turns "
                    "at user messages only (a cut at such an entry is a split turn with an empty prefix, "
                    "quirk §12.1.5).",
                    ("cut",),
                )
            )
    # rule 25: which entries are cut points
    if fo is not None and fo != fn and new.marks.get(new.path[fo]) == "invalid":
        add(
            RuleNote(
                "rule 25",
                "Not a cut point in 1.6.0",
                f"#{fo}, pi 0.80.2's cut, is no cut point for pi 1.6.0: {new.mark_reason(new.path[fo])}.",
                ("cut",),
            )
        )
    for q in new.quirks:
        for rule in ("Rule 27", "Rule 30"):
            if q.title.startswith(rule):
                add(
                    RuleNote(
                        rule.lower(), q.title.split(": ", 1)[-1].capitalize(), q.text, ("cut", "nothing")
                    )
                )
    # rules 16–18: context edits hide or replace content in 1.6.0 only
    if f.edit_positions:
        add(
            RuleNote(
                "rules 16–18",
                "Context edits apply",
                f"pi 1.6.0 applies the context edits at {_positions(f.edit_positions)}: edited-away content "
                "leaves its context and its token count, replaced content is counted as replaced; pi 0.80.2 "
                "ignores context_edit entries, so that content reappears.",
                ("tokens", "cut"),
            )
        )
    # rule 22: when usage is trusted
    to, tn = old.tokens, new.tokens
    if (
        to is not None
        and tn is not None
        and to.last_usage_index is not None
        and tn.last_usage_index is None
        and 0 <= to.last_usage_index < len(old.item_tokens)
    ):
        rec = old.item_tokens[to.last_usage_index][0]
        pos = old.positions.get(rec, -1)
        add(
            RuleNote(
                "rule 22",
                "Usage older than a compaction or context edit is not trusted",
                f"pi 0.80.2 takes the provider-reported usage of the answer at #{pos} "
                f"({_fmt(_num(to.usage_tokens))} tokens) and adds estimates after it; pi 1.6.0 trusts usage "
                "only when it is newer than the last compaction or context edit, and otherwise estimates "
                "every message (the current system message once).",
                ("tokens",),
            )
        )
    checks = (old.threshold_check, new.threshold_check)
    ways = tuple(c.basis if c is not None else None for c in checks)
    if ways == ("no usage", "plain estimate"):
        add(
            RuleNote(
                "§9",
                "No usage at all: 1.6.0 still checks",
                "No answer in the context reported usage: pi 0.80.2's automatic check gives up, pi 1.6.0 "
                "weighs the chars/4 estimate of the whole context against the threshold.",
                ("automatic",),
            )
        )
    elif ways[1] == "projected" and ways[0] != "projected":
        add(
            RuleNote(
                "rule 22",
                "Context edits: the check weighs the projection",
                "With a context edit in the context pi 1.6.0's automatic check weighs its projected "
                "estimate, not the last answer's usage.",
                ("automatic",),
            )
        )
    if o.tokens_unknown_reason is not None or n.tokens_unknown_reason is not None:
        add(
            RuleNote(
                "§4.7",
                "Context size shown as unknown",
                n.tokens_unknown_reason or o.tokens_unknown_reason or "",
                ("tokens",),
            )
        )
    if any(q.code == "12.1.4" for q in old.quirks):
        add(
            RuleNote(
                "rule 38",
                "The previous summary is kept",
                "The history part of this split turn is empty: pi 0.80.2 sends 'No prior history.' and loses "
                "the previous compaction summary; pi 1.6.0 sends the previous summary.",
                ("summary",),
            )
        )
    return notes


def _num(v: object) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def compare_plans(
    old: PlanState, new: PlanState, facts: PathFacts | None = None, recovery: RecoveryCut | None = None
) -> ProfileComparison:
    """pi 0.80.2's plan (``old``) beside pi 1.6.0's (``new``) of the same path and settings, with the
    rules that make them differ. ``facts``: :meth:`PathFacts.of` the two planners (computed here
    from the plans' own planners when not given); ``recovery``: what pi 1.6.0's overflow recovery
    for ``new`` does (engine.context_edits.recovery_plan), which its side then names."""
    if old.profile is not PROFILE_0_80_2 or new.profile is not PROFILE_1_6_0:
        raise ValueError("compare_plans takes the 0.80.2 plan first, then the 1.6.0 plan")
    if old.path != new.path:
        raise ValueError("the two plans are not of the same path")
    if facts is None:
        facts = (
            PathFacts.build(new.session, new.path, new.item_tokens)
            if new.session is not None
            else PathFacts([], [], 0.0, [], [], [], [])
        )
    o, n = side_of(old, facts.producing_old or None), side_of(new, facts.producing_new or None, recovery)
    facts_rows = _facts(o, n)
    rules: list[RuleNote] = []
    if o.error is None and n.error is None:
        differing = {topic for row, topic in zip(facts_rows, _ROW_TOPICS, strict=True) if row.differs}
        rules = [r for r in _rules(old, new, o, n, facts) if differing.intersection(r.affects)]
        covered: set[str] = {a for r in rules for a in r.affects}
        for topic in list(covered):
            covered |= _CONSEQUENCES.get(topic, frozenset())
        if differing - covered:
            rules.append(
                RuleNote(
                    "",
                    "Another difference",
                    "The plans differ in a way none of the rules above explains; 'Why this cut' walks each "
                    "pi's algorithm step by step.",
                    (),
                )
            )
    return ProfileComparison(o, n, facts_rows, rules, automatic=not (old.manual or new.manual))
