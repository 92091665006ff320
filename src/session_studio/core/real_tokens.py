"""Real token counts next to pi's chars/4 estimate.

pi decides with ``ceil(chars / 4)`` (UTF-16 units, :mod:`.tokens`); the model bills real tokens.
This module counts the *same text* pi's estimate counts for each message (the role's text,
thinking, tool-call name + ``JSON.stringify(arguments)``, bash command + output, summaries, a
1.6.0 system message's sections and tools) with an offline BPE tokenizer, and says where the
difference changes a decision pi makes (the compaction threshold, the cut point).

Tokenizer per model: ``o200k_base`` for gpt-4o / 4.1 / 4.5 / 5 / gpt-oss / the o-series,
``cl100k_base`` for gpt-4 and gpt-3.5. Other models (Anthropic, Gemini, most local models) have
no public tokenizer: they are counted with o200k *as an approximation*, and every label says so.

Images: pi counts a fixed 4800 chars (1200 tokens). Here an image counts by OpenAI's published
high-detail tile rule (fit in 2048×2048, shortest side to 768, 170 per 512-px tile + 85) when
its size can be read from the PNG/GIF/JPEG/WebP header in the data; otherwise it counts
:data:`UNKNOWN_IMAGE_TOKENS` and the result says "images estimated".

The tokenizer (`bpe-openai`, vocabularies inside the wheel, nothing downloaded) is loaded lazily
by :mod:`.tokenizer`; where its wheel is missing the feature reports
:func:`tokenizer_unavailable_reason` instead of failing.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .jsvalue import UNDEFINED, js_stringify, js_truthy
from .messages import branch_summary_message, compaction_summary_message, custom_message
from .profile import PROFILE_0_80_2, PiProfile
from .projected_plan import PathCutPlanner
from .tokenizer import (
    CL100K,
    MAX_EXACT_CHARS,
    O200K,
    PIECE_CHARS,
    TokenizerUnavailableError,
    counts_of,
    load_counter,
    tokenizer_unavailable_reason,
)

__all__ = [
    "CL100K",
    "MAX_EXACT_CHARS",
    "O200K",
    "PIECE_CHARS",
    "UNKNOWN_IMAGE_TOKENS",
    "MessageCount",
    "RealDecision",
    "RealPathTokens",
    "TokenizerChoice",
    "TokenizerUnavailableError",
    "context_item_messages",
    "count_edited_entry",
    "count_entry",
    "count_items",
    "count_message",
    "entry_estimate",
    "entry_messages",
    "image_size",
    "image_tokens",
    "iter_entry_counts",
    "load_counter",
    "measure",
    "message_texts",
    "plan_tokens_json",
    "real_path_tokens",
    "tokenizer_for_model",
    "tokenizer_unavailable_reason",
]

#: an image whose size cannot be read: OpenAI's high-detail count for a 1024×1024 image
UNKNOWN_IMAGE_TOKENS = 765

# o200k: gpt-4o, gpt-4.1, gpt-4.5, gpt-5*, gpt-oss, chatgpt-4o, codex models, o1/o3/o4…
_O200K_MODELS = re.compile(r"^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-4o|codex|o[1-9](-|$))")
# cl100k: gpt-4 (not 4o/4.1/4.5, matched above), gpt-3.5, OpenAI's embeddings of that generation
_CL100K_MODELS = re.compile(r"^(gpt-4|gpt-3\.5|gpt-35|text-embedding-(ada-002|3))")


# --------------------------------------------------------------------------- tokenizer choice


@dataclass(frozen=True, slots=True)
class TokenizerChoice:
    """The encoding a model is counted with, and whether it is the model's own."""

    encoding: str
    model: str | None  # the session's model id, None when the session names none
    exact: bool

    @property
    def short(self) -> str:
        return self.encoding.removesuffix("_base")

    def label(self) -> str:
        """What every figure is annotated with: ``o200k`` or ``≈ o200k, approximation for claude-…``."""
        if self.exact:
            return self.short
        return f"≈ {self.short}, approximation for {self.model or 'an unknown model'}"


def _model_id(model: Any) -> str | None:
    """The model id from pi's ``{provider, modelId}`` (or a plain id string)."""
    mid = model.get("modelId", UNDEFINED) if isinstance(model, Mapping) else model
    return mid if isinstance(mid, str) and mid else None


def tokenizer_for_model(model: Any) -> TokenizerChoice:
    """o200k / cl100k for OpenAI models, o200k as an approximation for everything else."""
    mid = _model_id(model)
    if mid is None:
        return TokenizerChoice(O200K, None, False)
    base = mid.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" as OpenRouter names it
    if _O200K_MODELS.match(base):
        return TokenizerChoice(O200K, mid, True)
    if _CL100K_MODELS.match(base):
        return TokenizerChoice(CL100K, mid, True)
    return TokenizerChoice(O200K, mid, False)


# --------------------------------------------------------------------------- images


def _b64_prefix(data: str, n_bytes: int) -> bytes:
    chunk = data[: ((n_bytes + 2) // 3) * 4]
    try:
        return base64.b64decode(chunk + "=" * (-len(chunk) % 4), validate=False)
    except (binascii.Error, ValueError):
        return b""


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (seg_len,) = struct.unpack(">H", raw[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", raw[i + 5 : i + 9])
            return w, h
        i += 2 + seg_len
    return None


def image_size(block: Any) -> tuple[int, int] | None:
    """(width, height) from a pi image block's base64 ``data`` header, or None."""
    data = block.get("data") if isinstance(block, Mapping) else None
    if not isinstance(data, str) or not data:
        return None
    head = _b64_prefix(data, 64)
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return (w, h) if w and h else None
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return (w, h) if w and h else None
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        kind = head[12:16]
        if kind == b"VP8X":
            return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
        if kind == b"VP8 ":
            w, h = struct.unpack("<HH", head[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if kind == b"VP8L":
            bits = int.from_bytes(head[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        return None
    if head[:2] == b"\xff\xd8":
        try:
            raw = base64.b64decode(data + "=" * (-len(data) % 4), validate=False)
        except (binascii.Error, ValueError):
            return None
        return _jpeg_size(raw)
    return None


def image_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail image cost: fit in 2048², shortest side to 768, 85 + 170 per 512² tile."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


# --------------------------------------------------------------------------- what is counted


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _content(content: Any, texts: list[str], images: list[Any]) -> None:
    if isinstance(content, str):
        texts.append(content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, Mapping):
            continue
        t = block.get("type")
        if t == "text":
            text = block.get("text")
            if js_truthy(text) and isinstance(text, str):
                texts.append(text)
        elif t == "image":
            images.append(block)


def message_texts(message: Any) -> tuple[list[str], list[Any]]:
    """The strings pi's estimateTokens measures for a message (by role), and its image blocks."""
    texts: list[str] = []
    images: list[Any] = []
    if not isinstance(message, Mapping):
        return texts, images
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        _content(message.get("content"), texts, images)
    elif role == "assistant":
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                continue
            t = block.get("type")
            if t == "text" or t == "thinking":
                s = _str(block.get(t))
                if s is not None:
                    texts.append(s)
            elif t == "toolCall":
                name = _str(block.get("name"))
                args = js_stringify(block.get("arguments", UNDEFINED))
                if name is not None:
                    texts.append(name)
                if args is not None:
                    texts.append(args)
    elif role == "bashExecution":
        texts.extend(s for s in (_str(message.get("command")), _str(message.get("output"))) if s is not None)
    elif role in ("branchSummary", "compactionSummary"):
        s = _str(message.get("summary"))
        if s is not None:
            texts.append(s)
    elif role == "system":
        _content(message.get("content"), texts, images)
        images.clear()  # pi's system estimate reads only text
        sections = message.get("sections")
        if isinstance(sections, Mapping):
            texts.extend(v for v in sections.values() if js_truthy(v) and isinstance(v, str))
        tools = message.get("toolsAdded")
        if js_truthy(tools):
            s = js_stringify(tools)
            if s is not None:
                texts.append(s)
    return texts, images


@dataclass(frozen=True, slots=True)
class MessageCount:
    """Real tokens of one entry or message: text tokens plus image tokens."""

    tokens: int
    images: int = 0  # image blocks counted
    images_estimated: int = 0  # of them, with no readable size (UNKNOWN_IMAGE_TOKENS each)
    texts_extrapolated: int = 0  # texts over MAX_EXACT_CHARS: counted in part, extrapolated

    def __add__(self, other: MessageCount) -> MessageCount:
        return MessageCount(
            self.tokens + other.tokens,
            self.images + other.images,
            self.images_estimated + other.images_estimated,
            self.texts_extrapolated + other.texts_extrapolated,
        )


ZERO = MessageCount(0)


def count_message(message: Any, count: Callable[[str], int]) -> MessageCount:
    texts, images = _counted_parts(message)
    return _message_count(texts, images, counts_of(count, texts))


def _counted_parts(message: Any) -> tuple[list[str], list[Any]]:
    """The texts to count of a message (the empty ones count nothing) and its image blocks."""
    texts, images = message_texts(message)
    return [s for s in texts if s], images


def _message_count(texts: Sequence[str], images: Sequence[Any], text_tokens: Sequence[int]) -> MessageCount:
    """A message's count from its texts' token counts and its image blocks."""
    tokens = sum(text_tokens)
    extrapolated = sum(len(s) > MAX_EXACT_CHARS for s in texts)
    estimated = 0
    for block in images:
        size = image_size(block)
        if size is None:
            estimated += 1
            tokens += UNKNOWN_IMAGE_TOKENS
        else:
            tokens += image_tokens(*size)
    return MessageCount(tokens, len(images), estimated, extrapolated)


def entry_messages(value: Any, entry_type: Any, profile: PiProfile = PROFILE_0_80_2) -> list[Any]:
    """The messages an entry gives the LLM, as pi builds them (no 1.6.0 context edits)."""
    if not isinstance(value, dict):
        return []
    if entry_type == "message":
        m = value.get("message", UNDEFINED)
        return [m] if isinstance(m, dict) else []
    if entry_type == "custom_message":
        return [custom_message(value, profile)]
    if entry_type == "branch_summary":
        return [branch_summary_message(value)]
    if entry_type == "compaction":
        out = [compaction_summary_message(value)]
        snapshot = value.get("systemMessage", UNDEFINED)
        if profile.projection and isinstance(snapshot, dict):
            out.insert(0, snapshot)
        return out
    return []


def count_entry(
    value: Any, entry_type: Any, count: Callable[[str], int], profile: PiProfile = PROFILE_0_80_2
) -> MessageCount:
    """Real tokens of one entry: what the inspector and the tree's tooltip show next to pi's estimate."""
    total = ZERO
    for m in entry_messages(value, entry_type, profile):
        total = total + count_message(m, count)
    return total


def count_edited_entry(session: Any, record: int, edit: int, count: Callable[[str], int]) -> MessageCount:
    """Real tokens of what pi 1.6.0 sends for an entry the context edit at record `edit` replaces
    (projectContextEntry with the edit): the edited content, not the stored one."""
    from .projection import project_context_entry

    total = ZERO
    for m in project_context_entry(session, record, edit):
        total = total + count_message(m, count)
    return total


# --------------------------------------------------------------------------- path sums and decisions


@dataclass(frozen=True, slots=True)
class RealDecision:
    """pi's compaction decisions with its estimate and with real tokens (one source for every view).

    The real context size is pi's own figure with the drift of the messages pi *estimates*
    (those after the last valid usage, or all of them) replaced by their real counts: a usage
    figure the provider reported is real already."""

    threshold: int
    estimate_context: float
    real_context: float
    estimate_compacts: bool
    real_compacts: bool
    keep_recent_tokens: int
    #: path positions of the first kept entry with pi's estimate / with real tokens (None: no cut)
    estimate_first_kept: int | None
    real_first_kept: int | None

    @property
    def threshold_changes(self) -> bool:
        return self.estimate_compacts != self.real_compacts

    @property
    def cut_moves(self) -> bool:
        return self.estimate_first_kept != self.real_first_kept

    def brief(self) -> list[str]:
        """:meth:`notes` in a few words each (the token bar's legend row)."""
        out: list[str] = []
        if self.threshold_changes:
            where = "past" if self.real_compacts else "below"
            out.append(f"with real tokens {where} the threshold ({self.real_context:,.0f})")
        if self.cut_moves:
            out.append(
                f"with real tokens the cut moves #{self.estimate_first_kept} → #{self.real_first_kept}"
            )
        return out

    def notes(self) -> list[str]:
        """The decisions real tokens change, in words (empty when none changes)."""
        out: list[str] = []
        if self.threshold_changes:
            if self.real_compacts:
                out.append(
                    f"with real tokens this path is past the compaction threshold "
                    f"({self.real_context:,.0f} > {self.threshold:,}); pi's estimate "
                    f"({self.estimate_context:,.0f}) is below it"
                )
            else:
                out.append(
                    f"with real tokens this path is below the compaction threshold "
                    f"({self.real_context:,.0f} ≤ {self.threshold:,}); pi's estimate "
                    f"({self.estimate_context:,.0f}) is past it"
                )
        if self.cut_moves:
            out.append(
                f"with real tokens the cut for keepRecentTokens {self.keep_recent_tokens:,} would move "
                f"from path #{self.estimate_first_kept} to path #{self.real_first_kept}"
            )
        return out


@dataclass(frozen=True, slots=True)
class RealPathTokens:
    """Real counts along a plan's context (aligned with ``PlanState.item_tokens``)."""

    tokenizer: TokenizerChoice
    item_real: list[int]
    item_estimate: list[float]
    item_positions: Sequence[int]  # path position of each item's entry (-1: a compaction's summary)
    images: int
    images_estimated: int
    decision: RealDecision | None
    texts_extrapolated: int = 0

    @property
    def estimate_total(self) -> float:
        return float(sum(self.item_estimate))

    @property
    def real_total(self) -> int:
        return sum(self.item_real)

    @property
    def drift(self) -> float:
        """real − estimate over the path's context (positive: pi under-estimates)."""
        return self.real_total - self.estimate_total

    def caveats(self) -> list[str]:
        out = []
        if not self.tokenizer.exact:
            out.append(f"tokenizer {self.tokenizer.label()}")
        if self.images_estimated:
            out.append(f"{self.images_estimated} image(s) estimated ({UNKNOWN_IMAGE_TOKENS} tokens each)")
        if self.texts_extrapolated:
            out.append(f"{self.texts_extrapolated} text(s) over {MAX_EXACT_CHARS:,} characters extrapolated")
        return out

    def largest_drifts(self, n: int = 5) -> list[tuple[int, float, int]]:
        """The ``n`` items where real tokens differ most from pi's estimate: (item, estimate, real)."""
        order = sorted(
            range(len(self.item_real)), key=lambda j: -abs(self.item_real[j] - self.item_estimate[j])
        )
        return [(j, self.item_estimate[j], self.item_real[j]) for j in order[:n]]

    def describe(self) -> list[str]:
        """The figures in words (the CLI's ``info --tokens real``; the window shows the same facts)."""
        est, real = self.estimate_total, self.real_total
        pct = f" ({(real - est) / est:+.1%})" if est else ""
        lines = [
            f"real tokens: {real:,} ({self.tokenizer.label()}) vs pi estimate {est:,.0f} over "
            f"{len(self.item_real):,} context messages: drift {real - est:+,.0f}{pct}"
        ]
        if self.images:
            lines.append(
                f"images:      {self.images} counted by OpenAI's tile rule"
                + (f", {self.images_estimated} estimated (size unreadable)" if self.images_estimated else "")
            )
        if self.texts_extrapolated:
            lines.append(
                f"long texts:  {self.texts_extrapolated} over {MAX_EXACT_CHARS:,} characters: the first "
                f"{MAX_EXACT_CHARS:,} counted, the rest extrapolated at the same rate"
            )
        d = self.decision
        if d is not None:
            lines.append(
                f"context:     real {d.real_context:,.0f} vs pi {d.estimate_context:,.0f} "
                f"(threshold {d.threshold:,}; provider usage is real already, only estimated messages drift)"
            )
            notes = d.notes()
            lines += [f"decision:    {note}" for note in notes] or [
                "decision:    real tokens change neither the threshold decision nor the cut"
            ]
        drifts = [x for x in self.largest_drifts() if x[2] != x[1]]
        if drifts:
            lines.append("largest drifts:")
            for j, e, r in drifts:
                pos = self.item_positions[j]
                where = f"path #{pos}" if pos >= 0 else "compaction summary"
                lines.append(f"  {where}: pi {e:,.0f} → real {r:,} ({r - e:+,.0f})")
        return lines

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "estimate": self.estimate_total,
            "real": self.real_total,
            "tokenizer": self.tokenizer.label(),
            "encoding": self.tokenizer.encoding,
            "approximation": not self.tokenizer.exact,
            "imagesEstimated": self.images_estimated,
            "textsExtrapolated": self.texts_extrapolated,
            "decision": None
            if d is None
            else {
                "threshold": d.threshold,
                "estimateContext": d.estimate_context,
                "realContext": d.real_context,
                "estimateCompacts": d.estimate_compacts,
                "realCompacts": d.real_compacts,
                "estimateFirstKept": d.estimate_first_kept,
                "realFirstKept": d.real_first_kept,
                "notes": d.notes(),
            },
        }


def context_item_messages(state: Any) -> Iterator[tuple[Any, bool]]:
    """The context messages of a plan, aligned with its ``item_tokens`` (both profiles), each with
    whether it is exactly its message entry's own message (so an entry's count can be reused).
    Read a chunk at a time and not kept: a path before its first compaction has 100k of them, which
    kept, the window held beside everything else (~130 MB on a 52 MB session)."""
    context = state.plan.context if state.plan is not None else None
    if context is None:
        return
    recs = state.session.records
    if hasattr(context, "entries"):  # 1.6.0 projection: messages of the entries with roles
        entries = context.entries
        for k, msgs in enumerate(context.iter_entry_messages()):
            if msgs:
                e = entries[k]
                raw = e.edit is None and recs[e.record].type == "message"
                for m in msgs:
                    yield m, raw
        return
    for it, m in zip(context.items, context.iter_messages(), strict=True):
        yield m, it.kind == "message"


def _real_cut(state: Any, real_by_pos: Mapping[int, float]) -> tuple[int | None, int | None]:
    """(first kept path position with pi's estimate, with real tokens) for the plan's automatic cut."""
    cut = state.cut
    est = cut.first_kept_index if cut is not None else None
    if state.plan is None or cut is None or state.params.manual_cut is not None:
        return est, est  # a manual cut does not depend on token counts
    planner = state.plan.planner
    keep = state.params.keep_recent_tokens
    if isinstance(planner, PathCutPlanner):  # 1.6.0: the sums run over projected entries
        at = planner.path_position
        sums = planner.projected
        if sums.stop_error is not None or sums.stop_nan:
            return est, est  # pi throws or never reaches the budget either way
        real = sums.reweighed(lambda j, t: real_by_pos.get(at(j), t))
        return est, planner.to_path(real.cut(keep)).first_kept_index
    if planner.stop_error is not None or planner.stop_nan:
        return est, est
    return est, planner.reweighed(lambda i, t: real_by_pos.get(i, t)).cut(keep).first_kept_index


def real_path_tokens(
    state: Any,
    item_counts: Sequence[MessageCount],
    tokenizer: TokenizerChoice,
) -> RealPathTokens:
    """Sums, drift and the decisions real tokens change, for a ``PlanState`` and per-item counts."""
    items = state.item_tokens
    if len(item_counts) != len(items):
        raise ValueError(f"{len(item_counts)} counts for {len(items)} context items")
    est = [float(t) for _, _, t in items]
    real = [c.tokens for c in item_counts]
    decision: RealDecision | None = None
    if state.tokens is not None and state.error is None:
        last = state.tokens.last_usage_index
        first = 0 if last is None else last + 1
        weighed = range(first, len(items))
        if last is None and state.profile.projection:
            # 1.6.0 without usage counts only the current (last) system message (rule 22)
            systems = [j for j in weighed if items[j][1] == "system"]
            weighed = [j for j in weighed if items[j][1] != "system" or j == systems[-1]]  # type: ignore[assignment]
        drift = sum(real[j] - est[j] for j in weighed)
        real_context = state.context_tokens + drift
        positions = state.positions
        real_by_pos: dict[int, float] = {}
        recs = state.session.records
        for (rec, _, _), r in zip(items, real, strict=True):
            pos = positions.get(rec)
            if pos is not None and recs[rec].type != "compaction":  # a summary is never weighed for the cut
                real_by_pos[pos] = real_by_pos.get(pos, 0.0) + r
        est_cut, real_cut = _real_cut(state, real_by_pos)
        decision = RealDecision(
            threshold=state.threshold,
            estimate_context=state.context_tokens,
            real_context=real_context,
            estimate_compacts=state.context_tokens > state.threshold,
            real_compacts=real_context > state.threshold,
            keep_recent_tokens=state.keep,
            estimate_first_kept=est_cut,
            real_first_kept=real_cut,
        )
    recs = state.session.records if state.session is not None else []
    item_positions = array(  # the window keeps these: not 100k int objects
        "q", [-1 if recs[rec].type == "compaction" else state.positions.get(rec, -1) for rec, _, _ in items]
    )
    return RealPathTokens(
        tokenizer,
        real,
        est,
        item_positions,
        sum(c.images for c in item_counts),
        sum(c.images_estimated for c in item_counts),
        decision,
        sum(c.texts_extrapolated for c in item_counts),
    )


def measure(planner: Any, params: Any, cancelled: Callable[[], bool] | None = None) -> RealPathTokens:
    """Real tokens of a :class:`~.plan.PathPlanner`'s context for ``params``, with the session model's tokenizer."""
    state = planner.plan(params)
    choice = tokenizer_for_model(planner.model)
    counts = count_items(state, load_counter(choice.encoding), cancelled=cancelled)
    return real_path_tokens(state, counts, choice)


#: texts counted in one call of the counter in :func:`count_items` (characters, about 0.3 s of
#: counting: the most a cancelled path count runs on)
BATCH_CHARS = 1 << 20


def count_items(
    state: Any,
    count: Callable[[str], int],
    known: Mapping[int, MessageCount] | None = None,
    cancelled: Callable[[], bool] | None = None,
    *,
    learned: dict[int, MessageCount] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[MessageCount]:
    """Real counts of a plan's context items. ``known`` (record → count of an entry) is reused for
    items that are exactly their message entry's message, and such counts made here are added to
    ``learned``. ``cancelled`` is polled (raising InterruptedError), ``progress(done, total)`` told."""
    items = state.item_tokens
    out: list[MessageCount | None] = [None] * len(items)
    # messages to count, (item, texts, images, is its entry's own message), counted a batch at a
    # time: one call of the counter per batch (one round trip when it is another process)
    batch: list[tuple[int, list[str], list[Any], bool]] = []
    batch_chars = 0

    def flush() -> None:
        nonlocal batch_chars
        got = iter(counts_of(count, [t for _, texts, _, _ in batch for t in texts]))
        for j, texts, images, raw in batch:
            c = _message_count(texts, images, [next(got) for _ in texts])
            out[j] = c
            if raw and learned is not None:
                learned[items[j][0]] = c
        batch.clear()
        batch_chars = 0

    for j, ((rec, _, _), (m, raw)) in enumerate(zip(items, context_item_messages(state), strict=True)):
        if j % 512 == 0:
            if cancelled is not None and cancelled():
                raise InterruptedError
            if progress is not None and j:
                flush()  # what is reported as done is in `learned`
                progress(j, len(items))
        got = known.get(rec) if raw and known is not None else None
        if got is not None:
            out[j] = got
            continue
        texts, images = _counted_parts(m)
        batch.append((j, texts, images, raw))
        batch_chars += sum(min(len(t), MAX_EXACT_CHARS) for t in texts)
        if batch_chars >= BATCH_CHARS:
            flush()
    flush()
    counted = [c for c in out if c is not None]
    assert len(counted) == len(items)
    return counted


def entry_estimate(value: Any, entry_type: Any, profile: PiProfile = PROFILE_0_80_2) -> float | None:
    """pi's estimate of the messages :func:`entry_messages` gives (None: pi would throw, or no messages)."""
    from .jsvalue import JsTypeError
    from .tokens import estimate_tokens_16

    messages = entry_messages(value, entry_type, profile)
    if not messages:
        return None
    total = 0.0
    for m in messages:
        try:
            t = estimate_tokens_16(m)
        except JsTypeError:
            return None
        if not isinstance(t, int | float) or math.isnan(t):
            return None
        total += t
    return total


def iter_entry_counts(
    session: Any,
    records: Iterable[int],
    count: Callable[[str], int],
    profile: PiProfile = PROFILE_0_80_2,
) -> Iterable[tuple[int, MessageCount]]:
    """(record, real count) of each entry, reading values in batches (huge sessions keep no values)."""
    batch: list[int] = []
    for r in records:
        batch.append(r)
        if len(batch) == 1024:
            yield from _count_batch(session, batch, count, profile)
            batch = []
    if batch:
        yield from _count_batch(session, batch, count, profile)


def _count_batch(
    session: Any, batch: list[int], count: Callable[[str], int], profile: PiProfile
) -> Iterable[tuple[int, MessageCount]]:
    recs = session.records
    for r, v in zip(batch, session.values(batch), strict=True):
        yield r, count_entry(v, recs[r].type, count, profile)


def plan_tokens_json(
    session: Any, leaf: Any, params: Any, profile: PiProfile = PROFILE_0_80_2
) -> dict[str, Any]:
    """The ``tokens`` field of ``plan --fields``: estimate, real and tokenizer (real None and an
    ``error`` when the tokenizer is unavailable here)."""
    from .plan import PathPlanner

    planner = PathPlanner(session, session.leaf_index(leaf), profile=profile)
    try:
        return measure(planner, params).to_json()
    except TokenizerUnavailableError as e:
        state = planner.plan(params)
        return {
            "estimate": float(sum(t for _, _, t in state.item_tokens)),
            "real": None,
            "tokenizer": None,
            "error": str(e),
        }
