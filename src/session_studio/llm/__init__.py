"""LLM summarization for Session Studio: request framing as pi does it, providers, offline drafts.

Typical use (in a worker thread)::

    from session_studio.llm import CancelToken, Prompts, history_request, make_summarizer

    summarizer = make_summarizer(None)          # pi's default model, else the offline drafter
    request = history_request(conversation, previous_summary, None, 16384, 8192, False, None, Prompts())
    token = CancelToken()                       # token.cancel() from the UI thread
    result = summarizer.summarize(request, on_text=append_to_view, cancel=token)

No Qt here; nothing from :mod:`session_studio.core` is required (inputs are plain strings).
"""

from __future__ import annotations

from session_studio.llm.anthropic import AnthropicSummarizer
from session_studio.llm.base import (
    SUMMARY_KINDS,
    CancelToken,
    Summarizer,
    SummaryKind,
    SummaryRequest,
    SummaryResult,
)
from session_studio.llm.config import (
    PROVIDER_PRESETS,
    CompactionSettings,
    ModelInfo,
    ProviderConfig,
    ProviderPreset,
    ResolvedProvider,
    compaction_settings,
    default_agent_dir,
    load_pi_settings,
    make_summarizer,
    model_info,
    resolve_provider,
)
from session_studio.llm.errors import (
    LlmAuthError,
    LlmCancelledError,
    LlmConfigError,
    LlmConnectionError,
    LlmContextOverflowError,
    LlmError,
    LlmProtocolError,
    LlmRateLimitError,
    LlmRequestError,
    LlmServerError,
    LlmSummaryError,
    LlmTimeoutError,
    is_context_overflow_message,
    redact,
    register_secret,
    summary_failure_message,
)
from session_studio.llm.offline import OFFLINE_NOTE, OfflineSummarizer
from session_studio.llm.openai import OpenAICompat, OpenAICompatibleSummarizer, detect_openai_compat
from session_studio.llm.prompts import (
    BRANCH_HEADINGS,
    BRANCH_PROMPT,
    HISTORY_HEADINGS,
    HISTORY_PROMPT,
    SYSTEM_PROMPT,
    TURN_PREFIX_HEADINGS,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    Prompts,
    load_prompt_overrides,
)
from session_studio.llm.requests import (
    BRANCH_SUMMARY_PREAMBLE,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    branch_request,
    extract_text,
    history_request,
    merge_split_turn,
    turn_prefix_request,
)

__all__ = [
    "BRANCH_HEADINGS",
    "BRANCH_PROMPT",
    "BRANCH_SUMMARY_PREAMBLE",
    "HISTORY_HEADINGS",
    "HISTORY_PROMPT",
    "NO_PRIOR_HISTORY",
    "OFFLINE_NOTE",
    "PROVIDER_PRESETS",
    "SPLIT_TURN_SEPARATOR",
    "SUMMARY_KINDS",
    "SYSTEM_PROMPT",
    "TURN_PREFIX_HEADINGS",
    "TURN_PREFIX_PROMPT",
    "UPDATE_PROMPT",
    "AnthropicSummarizer",
    "CancelToken",
    "CompactionSettings",
    "LlmAuthError",
    "LlmCancelledError",
    "LlmConfigError",
    "LlmConnectionError",
    "LlmContextOverflowError",
    "LlmError",
    "LlmProtocolError",
    "LlmRateLimitError",
    "LlmRequestError",
    "LlmServerError",
    "LlmSummaryError",
    "LlmTimeoutError",
    "ModelInfo",
    "OfflineSummarizer",
    "OpenAICompat",
    "OpenAICompatibleSummarizer",
    "Prompts",
    "ProviderConfig",
    "ProviderPreset",
    "ResolvedProvider",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "branch_request",
    "compaction_settings",
    "default_agent_dir",
    "detect_openai_compat",
    "extract_text",
    "history_request",
    "is_context_overflow_message",
    "load_pi_settings",
    "load_prompt_overrides",
    "make_summarizer",
    "merge_split_turn",
    "model_info",
    "redact",
    "register_secret",
    "resolve_provider",
    "summary_failure_message",
    "turn_prefix_request",
]
