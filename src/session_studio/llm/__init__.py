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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from session_studio.llm.anthropic import (
        AnthropicSummarizer,
    )
    from session_studio.llm.base import (
        SUMMARY_KINDS,
        CancelToken,
        RequestLimits,
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
        insecure_key_warning,
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
        LlmResponseTooLargeError,
        LlmServerError,
        LlmSummaryError,
        LlmTimeoutError,
        is_context_overflow_message,
        redact,
        register_secret,
        summary_failure_message,
    )
    from session_studio.llm.offline import (
        OFFLINE_NOTE,
        OfflineSummarizer,
    )
    from session_studio.llm.openai import (
        OpenAICompat,
        OpenAICompatibleSummarizer,
        detect_openai_compat,
    )
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

# Imported on first use: `label`/`rename` and the core never pay for httpx (issue 7 #3).
_WHERE: dict[str, str] = {
    "AnthropicSummarizer": "session_studio.llm.anthropic",
    "CancelToken": "session_studio.llm.base",
    "RequestLimits": "session_studio.llm.base",
    "SUMMARY_KINDS": "session_studio.llm.base",
    "Summarizer": "session_studio.llm.base",
    "SummaryKind": "session_studio.llm.base",
    "SummaryRequest": "session_studio.llm.base",
    "SummaryResult": "session_studio.llm.base",
    "CompactionSettings": "session_studio.llm.config",
    "ModelInfo": "session_studio.llm.config",
    "PROVIDER_PRESETS": "session_studio.llm.config",
    "ProviderConfig": "session_studio.llm.config",
    "ProviderPreset": "session_studio.llm.config",
    "ResolvedProvider": "session_studio.llm.config",
    "compaction_settings": "session_studio.llm.config",
    "default_agent_dir": "session_studio.llm.config",
    "insecure_key_warning": "session_studio.llm.config",
    "load_pi_settings": "session_studio.llm.config",
    "make_summarizer": "session_studio.llm.config",
    "model_info": "session_studio.llm.config",
    "resolve_provider": "session_studio.llm.config",
    "LlmAuthError": "session_studio.llm.errors",
    "LlmCancelledError": "session_studio.llm.errors",
    "LlmConfigError": "session_studio.llm.errors",
    "LlmConnectionError": "session_studio.llm.errors",
    "LlmContextOverflowError": "session_studio.llm.errors",
    "LlmError": "session_studio.llm.errors",
    "LlmProtocolError": "session_studio.llm.errors",
    "LlmRateLimitError": "session_studio.llm.errors",
    "LlmRequestError": "session_studio.llm.errors",
    "LlmResponseTooLargeError": "session_studio.llm.errors",
    "LlmServerError": "session_studio.llm.errors",
    "LlmSummaryError": "session_studio.llm.errors",
    "LlmTimeoutError": "session_studio.llm.errors",
    "is_context_overflow_message": "session_studio.llm.errors",
    "redact": "session_studio.llm.errors",
    "register_secret": "session_studio.llm.errors",
    "summary_failure_message": "session_studio.llm.errors",
    "OFFLINE_NOTE": "session_studio.llm.offline",
    "OfflineSummarizer": "session_studio.llm.offline",
    "OpenAICompat": "session_studio.llm.openai",
    "OpenAICompatibleSummarizer": "session_studio.llm.openai",
    "detect_openai_compat": "session_studio.llm.openai",
    "BRANCH_HEADINGS": "session_studio.llm.prompts",
    "BRANCH_PROMPT": "session_studio.llm.prompts",
    "HISTORY_HEADINGS": "session_studio.llm.prompts",
    "HISTORY_PROMPT": "session_studio.llm.prompts",
    "Prompts": "session_studio.llm.prompts",
    "SYSTEM_PROMPT": "session_studio.llm.prompts",
    "TURN_PREFIX_HEADINGS": "session_studio.llm.prompts",
    "TURN_PREFIX_PROMPT": "session_studio.llm.prompts",
    "UPDATE_PROMPT": "session_studio.llm.prompts",
    "load_prompt_overrides": "session_studio.llm.prompts",
    "BRANCH_SUMMARY_PREAMBLE": "session_studio.llm.requests",
    "NO_PRIOR_HISTORY": "session_studio.llm.requests",
    "SPLIT_TURN_SEPARATOR": "session_studio.llm.requests",
    "branch_request": "session_studio.llm.requests",
    "extract_text": "session_studio.llm.requests",
    "history_request": "session_studio.llm.requests",
    "merge_split_turn": "session_studio.llm.requests",
    "turn_prefix_request": "session_studio.llm.requests",
}

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
    "LlmResponseTooLargeError",
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
    "RequestLimits",
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
    "insecure_key_warning",
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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
