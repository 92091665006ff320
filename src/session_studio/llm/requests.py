"""Pure functions that frame summary requests exactly as pi 0.80.2 does (spec §7.2, §7.4, §8.4),
or as pi 1.6.0 does where it differs (spec §10.7: no output cap, the turn-prefix layout, the
previous summary kept for an empty history, answers rejected on a length stop or a tool call).

They take the already serialized conversation (``serializeConversation`` output, spec §7.1)
and return :class:`~session_studio.llm.base.SummaryRequest` records; no I/O.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import Final

from session_studio.core.profile import PROFILE_0_80_2, PiProfile
from session_studio.llm.base import SummaryRequest, SummaryResult
from session_studio.llm.prompts import Prompts

__all__ = [
    "BRANCH_MAX_TOKENS",
    "BRANCH_SUMMARY_PREAMBLE",
    "NO_PRIOR_HISTORY",
    "SPLIT_TURN_SEPARATOR",
    "answer_failure",
    "branch_request",
    "extract_text",
    "history_request",
    "merge_split_turn",
    "reasoning_option",
    "summary_failure",
    "summary_max_tokens",
    "turn_prefix_request",
]

logger = logging.getLogger(__name__)

BRANCH_SUMMARY_PREAMBLE: Final[str] = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)
SPLIT_TURN_SEPARATOR: Final[str] = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_PRIOR_HISTORY: Final[str] = "No prior history."
BRANCH_MAX_TOKENS: Final[int] = 2048
_ADDITIONAL_FOCUS: Final[str] = "\n\nAdditional focus: "


def summary_max_tokens(reserve_tokens: int, fraction: float, model_max_tokens: int) -> int:
    """``min(floor(fraction × reserve_tokens), model_max_tokens if > 0 else ∞)`` (JS float math)."""
    budget = math.floor(fraction * reserve_tokens)
    return min(budget, model_max_tokens) if model_max_tokens > 0 else budget


def reasoning_option(model_reasoning: bool, thinking_level: str | None) -> str | None:
    """The ``reasoning`` option pi adds: the level, only for reasoning models and a level other than "off"."""
    if model_reasoning and thinking_level and thinking_level != "off":
        return thinking_level
    return None


def _conversation_block(conversation: str) -> str:
    return "<conversation>\n" + conversation + "\n</conversation>\n\n"


def history_request(
    conversation: str,
    previous_summary: str | None,
    custom_instructions: str | None,
    reserve_tokens: int,
    model_max_tokens: int,
    model_reasoning: bool,
    thinking_level: str | None,
    prompts: Prompts,
    profile: PiProfile = PROFILE_0_80_2,
) -> SummaryRequest:
    """A history summary request (``generateSummary``): initial, or ``update`` if ``previous_summary``.
    pi 1.6.0 sends no output cap (rule 33)."""
    instructions = prompts.update if previous_summary else prompts.history
    if custom_instructions:
        instructions = instructions + _ADDITIONAL_FOCUS + custom_instructions
    text = _conversation_block(conversation)
    if previous_summary:
        text += "<previous-summary>\n" + previous_summary + "\n</previous-summary>\n\n"
    text += instructions
    return SummaryRequest(
        kind="update" if previous_summary else "history",
        system_prompt=prompts.system,
        prompt_text=text,
        max_tokens=None if profile.projection else summary_max_tokens(reserve_tokens, 0.8, model_max_tokens),
        reasoning=reasoning_option(model_reasoning, thinking_level),
    )


def turn_prefix_request(
    conversation: str,
    reserve_tokens: int,
    model_max_tokens: int,
    model_reasoning: bool,
    thinking_level: str | None,
    prompts: Prompts,
    profile: PiProfile = PROFILE_0_80_2,
    custom_instructions: str | None = None,
) -> SummaryRequest:
    """The turn-prefix request of a split turn: half the reserve, no previous summary, no custom focus.

    pi 1.6.0 (rule 39): ``"# Conversation\n" + conversation + "\n\n# Instructions\n" + prompt``, the
    custom focus appended, no output cap."""
    if profile.projection:
        text = "# Conversation\n" + conversation + "\n\n# Instructions\n" + prompts.turn_prefix_continuation
        if custom_instructions:
            text += _ADDITIONAL_FOCUS + custom_instructions
        return SummaryRequest(
            kind="turn_prefix",
            system_prompt=prompts.system,
            prompt_text=text,
            max_tokens=None,
            reasoning=reasoning_option(model_reasoning, thinking_level),
        )
    return SummaryRequest(
        kind="turn_prefix",
        system_prompt=prompts.system,
        prompt_text=_conversation_block(conversation) + prompts.turn_prefix,
        max_tokens=summary_max_tokens(reserve_tokens, 0.5, model_max_tokens),
        reasoning=reasoning_option(model_reasoning, thinking_level),
    )


def branch_request(
    conversation: str,
    custom_instructions: str | None,
    replace_instructions: bool,
    prompts: Prompts,
    profile: PiProfile = PROFILE_0_80_2,
    model_reasoning: bool = False,
    thinking_level: str | None = None,
) -> SummaryRequest:
    """A branch summary request (``generateBranchSummary``): pi 0.80.2 caps the output at 2048 tokens
    and never asks for reasoning; pi 1.6.0 (rule 41) sends no cap and the session's thinking level
    for a reasoning model."""
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = prompts.branch + _ADDITIONAL_FOCUS + custom_instructions
    else:
        instructions = prompts.branch
    pi16 = profile.projection
    return SummaryRequest(
        kind="branch",
        system_prompt=prompts.system,
        prompt_text=_conversation_block(conversation) + instructions,
        max_tokens=None if pi16 else BRANCH_MAX_TOKENS,
        reasoning=reasoning_option(model_reasoning, thinking_level) if pi16 else None,
    )


def merge_split_turn(history_text: str | None, prefix_text: str, previous_summary: str | None = None) -> str:
    """Join the two halves of a split-turn compaction (spec §7.4).

    ``history_text`` is ``None`` when there was nothing to summarize before the split turn; pi 0.80.2
    then writes the literal ``"No prior history."`` even if a previous summary existed (quirk,
    conformance 55); pi 1.6.0 passes that ``previous_summary`` (rule 38). An empty string (the
    model answered nothing) is kept as is, like pi.
    """
    if history_text is not None:
        history = history_text
    else:
        history = previous_summary if previous_summary is not None else NO_PRIOR_HISTORY
    return history + SPLIT_TURN_SEPARATOR + prefix_text


#: pi 1.6.0's labels for a summary answer it rejects (getSummarizationFailure)
_FAILURE_LABELS: Final[Mapping[str, str]] = {
    "history": "Summarization",
    "update": "Summarization",
    "turn_prefix": "Turn prefix summarization",
    "branch": "Branch summarization",
}


def summary_failure(request: SummaryRequest, result: SummaryResult) -> str | None:
    """pi 1.6.0's reason to reject an answer (rule 35), or None: the generation hit the token cap,
    or the answer called a tool."""
    label = _FAILURE_LABELS.get(request.kind, "Summarization")
    if result.stop_reason == "length":
        return f"{label} failed: generation hit the token cap and the summary is incomplete"
    if result.stop_reason == "toolUse":
        return f"{label} attempted to call a tool"
    return None


def answer_failure(request: SummaryRequest, result: SummaryResult, pi16: bool) -> tuple[str, str] | None:
    """Why an answer is not written, as (pi's words or ours, what the user reads), or None.

    Under pi 1.6.0 its own rejections (summary_failure). Under either pi, an answer with no text:
    pi would store an empty summary, dropping what it summarises from the context for good; Session
    Studio writes nothing and says so."""
    failure = summary_failure(request, result) if pi16 else None
    if failure is not None:
        if result.stop_reason == "length":
            return failure, (
                f"{failure}: the answer stopped at the model's output limit. Try again, or use a model "
                "with a larger output limit."
            )
        return failure, f"{failure}. Try again, or use another model."
    if not result.text.strip():
        label = _FAILURE_LABELS.get(request.kind, "Summarization")
        failure = f"{label} failed: the model answered with no text"
        return failure, f"{failure} (pi would store an empty summary). Try again, or use another model."
    return None


def extract_text(content_blocks: Iterable[Mapping[str, object]]) -> str:
    """The ``text`` of all ``{"type": "text"}`` blocks joined with ``"\\n"`` (thinking/tool calls ignored)."""
    parts: list[str] = []
    for block in content_blocks:
        if block.get("type") == "text":
            text = block.get("text")
            parts.append(text if isinstance(text, str) else "")
    return "\n".join(parts)
