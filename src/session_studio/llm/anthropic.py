"""Summarizer for the Anthropic Messages API (``POST {base_url}/v1/messages``, streaming).

The body follows pi-ai 0.80.2's ``anthropic-messages`` provider for API keys: ``system`` as a
text block, one user message with a text block, ``cache_control: ephemeral`` on both (pi's
default "short" cache retention), ``max_tokens`` (the request's cap, else the model's), and
``thinking``: budget-based (``enabled`` + ``budget_tokens``) for older reasoning models,
``adaptive`` + ``output_config.effort`` for models flagged ``adaptive_thinking``, or
``disabled`` for reasoning models when no reasoning was requested.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

import httpx

from session_studio.llm._http import (
    DEFAULT_TIMEOUT,
    HttpSummarizer,
    StreamHandler,
    error_for_message,
    json_event,
    names_a_credential,
    sanitize_surrogates,
)
from session_studio.llm._sse import SseEvent
from session_studio.llm.base import RequestLimits, SummaryRequest, SummaryResult
from session_studio.llm.errors import (
    LlmConfigError,
    LlmProtocolError,
    LlmSummaryError,
    summary_failure_message,
)

__all__ = [
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_VERSION",
    "DEFAULT_THINKING_BUDGETS",
    "AnthropicSummarizer",
    "adjust_max_tokens_for_thinking",
    "map_anthropic_stop_reason",
]

logger = logging.getLogger(__name__)

ANTHROPIC_BASE_URL: Final[str] = "https://api.anthropic.com"
ANTHROPIC_VERSION: Final[str] = "2023-06-01"
INTERLEAVED_THINKING_BETA: Final[str] = "interleaved-thinking-2025-05-14"
DEFAULT_THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
_FALLBACK_MAX_TOKENS: Final[int] = 4096
_MESSAGE_EVENTS: Final[frozenset[str]] = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


def adjust_max_tokens_for_thinking(
    base_max_tokens: int | None,
    model_max_tokens: int | None,
    level: str,
    budgets: Mapping[str, int] | None = None,
) -> tuple[int, int]:
    """pi-ai ``adjustMaxTokensForThinking``: (max_tokens, thinking budget) for a budget-thinking model."""
    table = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    clamped = "high" if level == "xhigh" else level
    budget = table.get(clamped, table["medium"])
    if base_max_tokens is None:
        max_tokens = model_max_tokens if model_max_tokens else budget + _FALLBACK_MAX_TOKENS
    else:
        total = base_max_tokens + budget
        max_tokens = min(total, model_max_tokens) if model_max_tokens else total
    if max_tokens <= budget:
        budget = max(0, max_tokens - 1024)
    return max_tokens, budget


def map_anthropic_stop_reason(
    reason: str, details: Mapping[str, Any] | None = None
) -> tuple[str, str | None]:
    """pi-ai's mapping of Anthropic ``stop_reason`` to (stop reason, error message)."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = details.get("explanation") if details else None
        return "error", explanation if isinstance(explanation, str) and explanation else (
            "The model refused to complete the request"
        )
    if reason == "sensitive":
        return "error", "The response was flagged by the provider's safety filters"
    return "error", f"Unhandled stop reason: {reason}"


def _effort_for(level: str, level_map: Mapping[str, str | None]) -> str:
    mapped = level_map.get(level)
    if isinstance(mapped, str):
        return mapped
    if level in ("minimal", "low"):
        return "low"
    if level == "medium":
        return "medium"
    return "high"


class _AnthropicStream(StreamHandler):
    def __init__(self, request: SummaryRequest, model: str, provider: str) -> None:
        self._kind = request.kind
        self._requested_model = model
        self._provider = provider
        self._blocks: dict[int, str] = {}  # stream index -> block type
        self._texts: list[list[str]] = []  # one list of deltas per text block, in order
        self._text_index: dict[int, int] = {}
        self._usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
        self._has_usage = False
        self._model: str | None = None
        self._stop_reason = "stop"
        self._error: str | None = None
        self._started = False
        self._stopped = False

    @property
    def done(self) -> bool:
        return self._stopped

    def handle(self, event: SseEvent) -> str | None:
        name = event.event
        if name == "error":
            data = json_event(event.data, self._provider)
            err = data.get("error") if isinstance(data, Mapping) else None
            message = err.get("message") if isinstance(err, Mapping) else None
            kind = err.get("type") if isinstance(err, Mapping) else None
            raise error_for_message(
                message if isinstance(message, str) else event.data,
                provider=self._provider,
                kind=kind if isinstance(kind, str) else None,
            )
        if name is not None and name not in _MESSAGE_EVENTS:
            return None  # ping and future event types
        data = json_event(event.data, self._provider)
        if not isinstance(data, Mapping):
            raise LlmProtocolError(f"{self._provider}: unexpected event payload {event.data[:80]!r}")
        kind = data.get("type")
        if name is None:
            if kind == "error":
                return self.handle(SseEvent("error", event.data))
            if kind not in _MESSAGE_EVENTS:
                return None
        if kind == "message_start":
            self._started = True
            message = data.get("message")
            if isinstance(message, Mapping):
                if isinstance(message.get("model"), str):
                    self._model = message["model"]
                usage = message.get("usage")
                if isinstance(usage, Mapping):
                    self._set_usage(usage, start=True)
            return None
        if kind == "content_block_start":
            index = data.get("index")
            block = data.get("content_block")
            if isinstance(index, int) and isinstance(block, Mapping):
                block_type = str(block.get("type"))
                self._blocks[index] = block_type
                if block_type == "text":
                    self._text_index[index] = len(self._texts)
                    self._texts.append([])
                    initial = block.get("text")
                    prefix = "\n" if len(self._texts) > 1 else ""
                    if isinstance(initial, str) and initial:
                        self._texts[-1].append(initial)
                        return prefix + initial
                    return prefix or None
            return None
        if kind == "content_block_delta":
            index = data.get("index")
            delta = data.get("delta")
            if isinstance(index, int) and isinstance(delta, Mapping) and delta.get("type") == "text_delta":
                slot = self._text_index.get(index)
                text = delta.get("text")
                if slot is not None and isinstance(text, str) and text:
                    self._texts[slot].append(text)
                    return text
            return None
        if kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, Mapping) and isinstance(delta.get("stop_reason"), str):
                details = delta.get("stop_details")
                self._stop_reason, self._error = map_anthropic_stop_reason(
                    delta["stop_reason"], details if isinstance(details, Mapping) else None
                )
            usage = data.get("usage")
            if isinstance(usage, Mapping):
                self._set_usage(usage)
            return None
        if kind == "message_stop":
            self._stopped = True
        return None

    def _set_usage(self, usage: Mapping[str, Any], *, start: bool = False) -> None:
        """pi-ai's usage bookkeeping: message_start sets every field (and ``cacheWrite1h``, 0 when
        absent); message_delta only the fields it has, plus ``reasoning`` from its thinking tokens.
        Keys keep pi-ai's order: the extras come after ``totalTokens`` (and the cost)."""

        def number(value: Any) -> int | None:
            return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

        u = self._usage
        for source, target in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cacheRead"),
            ("cache_creation_input_tokens", "cacheWrite"),
        ):
            value = number(usage.get(source))
            if value is not None:
                u[target] = value
                self._has_usage = True
            elif start:
                u[target] = 0
        creation = usage.get("cache_creation")
        one_hour = (
            number(creation.get("ephemeral_1h_input_tokens")) if isinstance(creation, Mapping) else None
        )
        if start:
            u["cacheWrite1h"] = one_hour or 0
            self._has_usage = True
        elif one_hour is not None:
            u["cacheWrite1h"] = one_hour
        details = usage.get("output_tokens_details")
        thinking = (
            number(details.get("thinking_tokens")) if isinstance(details, Mapping) and not start else None
        )
        if thinking is not None:
            u["reasoning"] = thinking
        u["totalTokens"] = u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]

    def finish(self) -> SummaryResult:
        if not self._started or not self._stopped:
            what = "before message_stop" if self._started else "without a message_start event"
            raise LlmProtocolError(
                f"{self._provider}: Anthropic stream ended {what}",
                user_message=(
                    "The server's answer ended before it was complete. Try again; if it keeps happening, "
                    "check that the base URL points to an Anthropic Messages API."
                ),
                provider=self._provider,
            )
        if self._stop_reason == "error":
            raise LlmSummaryError(
                summary_failure_message(self._kind, self._error),
                user_message=f"The model stopped with an error instead of a summary ({self._error}).",
                provider=self._provider,
            )
        return SummaryResult(
            text="\n".join("".join(parts) for parts in self._texts),
            stop_reason=self._stop_reason,
            usage=dict(self._usage) if self._has_usage else None,
            model=self._model or self._requested_model,
        )


class AnthropicSummarizer(HttpSummarizer):
    """Summarizer for the Anthropic Messages API (and Anthropic-compatible endpoints).

    ``base_url`` is the API root without ``/v1`` (default ``https://api.anthropic.com``; a trailing
    ``/v1`` is tolerated). ``model_max_tokens`` is the model's output limit (used when a request has
    no cap and to fit the thinking budget); ``reasoning_model``/``adaptive_thinking``/
    ``thinking_level_map`` describe the model as pi's catalogue does.
    """

    provider_label = "Anthropic"

    def __init__(
        self,
        base_url: str = ANTHROPIC_BASE_URL,
        model: str = "",
        api_key: str | None = None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
        extra_headers: Mapping[str, str] | None = None,
        reasoning_model: bool = False,
        model_max_tokens: int | None = None,
        adaptive_thinking: bool = False,
        thinking_level_map: Mapping[str, str | None] | None = None,
        thinking_budgets: Mapping[str, int] | None = None,
        cache_control: bool = True,
        interleaved_thinking: bool = True,
        anthropic_version: str = ANTHROPIC_VERSION,
        provider: str | None = None,
        max_retry_delay_s: float = 30.0,
        retry_backoff_s: float = 1.0,
        key_hint: str | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        for suffix in ("/v1/messages", "/v1"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
                break
        if not api_key and not names_a_credential(extra_headers, {"authorization", "x-api-key"}):
            raise LlmConfigError(
                f"{provider or self.provider_label}: no API key",
                user_message=(
                    "No Anthropic API key found: for api.anthropic.com set ANTHROPIC_API_KEY or add an "
                    "api_key entry for anthropic to ~/.pi/agent/auth.json; for another server name the "
                    "variable holding its key (--api-key-env, or the key variable in the provider settings)."
                ),
                provider=provider or self.provider_label,
            )
        if api_key and "sk-ant-oat" in api_key:
            raise LlmConfigError(
                f"{provider or self.provider_label}: OAuth subscription tokens are not supported",
                user_message=(
                    "This is a Claude subscription (OAuth) token, which Session Studio cannot use: "
                    "create an API key in the Anthropic console and use that instead."
                ),
                provider=provider or self.provider_label,
            )
        super().__init__(
            base,
            model,
            api_key,
            timeout=timeout,
            transport=transport,
            max_retries=max_retries,
            extra_headers=extra_headers,
            max_retry_delay_s=max_retry_delay_s,
            retry_backoff_s=retry_backoff_s,
            key_hint=key_hint,
            limits=limits,
        )
        if provider:
            self.provider_label = provider
        self.reasoning_model = reasoning_model
        self.model_max_tokens = model_max_tokens if model_max_tokens and model_max_tokens > 0 else None
        self.adaptive_thinking = adaptive_thinking
        self.thinking_level_map = dict(thinking_level_map) if thinking_level_map else {}
        self.thinking_budgets = dict(thinking_budgets) if thinking_budgets else None
        self.cache_control = cache_control
        self.interleaved_thinking = interleaved_thinking
        self.anthropic_version = anthropic_version

    def _endpoint(self) -> str:
        return self.base_url + "/v1/messages"

    def _headers(self, request: SummaryRequest) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        if self.interleaved_thinking and not self.adaptive_thinking:
            headers["anthropic-beta"] = INTERLEAVED_THINKING_BETA
        return headers

    def request_body(self, request: SummaryRequest) -> dict[str, Any]:
        """The JSON body that :meth:`summarize` sends for ``request`` (for inspection and tests)."""
        cache = {"type": "ephemeral"} if self.cache_control else None
        user_block: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(request.prompt_text)}
        if cache:
            user_block["cache_control"] = cache
        max_tokens = request.max_tokens or self.model_max_tokens or _FALLBACK_MAX_TOKENS
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": [user_block]}],
            "max_tokens": max_tokens,
            "stream": True,
        }
        if request.system_prompt:
            system_block: dict[str, Any] = {
                "type": "text",
                "text": sanitize_surrogates(request.system_prompt),
            }
            if cache:
                system_block["cache_control"] = cache
            body["system"] = [system_block]
        if self.reasoning_model:
            if request.reasoning:
                if self.adaptive_thinking:
                    body["thinking"] = {"type": "adaptive", "display": "summarized"}
                    body["output_config"] = {
                        "effort": _effort_for(request.reasoning, self.thinking_level_map)
                    }
                else:
                    adjusted, budget = adjust_max_tokens_for_thinking(
                        request.max_tokens or None,
                        self.model_max_tokens,
                        request.reasoning,
                        self.thinking_budgets,
                    )
                    body["max_tokens"] = adjusted
                    body["thinking"] = {
                        "type": "enabled",
                        "budget_tokens": budget or 1024,
                        "display": "summarized",
                    }
            elif not ("off" in self.thinking_level_map and self.thinking_level_map["off"] is None):
                body["thinking"] = {"type": "disabled"}
        return body

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        return self.request_body(request)

    def _stream_handler(self, request: SummaryRequest) -> StreamHandler:
        return _AnthropicStream(request, self.model, self.provider_label)
