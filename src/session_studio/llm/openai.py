"""Summarizer for OpenAI-compatible chat-completions endpoints.

Works with OpenAI, OpenRouter, Groq, DeepSeek, xAI, Mistral, Ollama, llama.cpp, vLLM, LM Studio
and anything else that serves ``POST {base_url}/chat/completions`` with SSE streaming. The
request body follows pi-ai 0.80.2's ``openai-completions`` provider: system prompt as a
``system`` message (``developer`` for reasoning models on hosts that support it), one user
message with a text block, ``stream_options.include_usage``, ``store: false`` on standard
hosts, ``max_completion_tokens`` (or ``max_tokens`` on hosts that need it) and the reasoning
parameters in the host's dialect.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

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
    "OpenAICompat",
    "OpenAICompatibleSummarizer",
    "clamp_thinking_level",
    "detect_openai_compat",
    "map_openai_finish_reason",
]

logger = logging.getLogger(__name__)

ThinkingFormat = Literal["openai", "openrouter", "deepseek", "zai", "together", "qwen", "qwen-chat-template"]
_THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True, slots=True)
class OpenAICompat:
    """Per-host quirks, as pi-ai's ``OpenAICompletionsCompat`` (only the fields a summary needs)."""

    supports_store: bool = True
    supports_developer_role: bool = True
    supports_reasoning_effort: bool = True
    supports_usage_in_streaming: bool = True
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    thinking_format: ThinkingFormat = "openai"

    def with_pi_overrides(self, compat: Mapping[str, Any] | None) -> OpenAICompat:
        """Apply a ``compat`` object from pi's ``models.json`` (camelCase keys); unknown keys are ignored."""
        if not compat:
            return self
        updates: dict[str, Any] = {}
        for key, attr in (
            ("supportsStore", "supports_store"),
            ("supportsDeveloperRole", "supports_developer_role"),
            ("supportsReasoningEffort", "supports_reasoning_effort"),
            ("supportsUsageInStreaming", "supports_usage_in_streaming"),
        ):
            if isinstance(compat.get(key), bool):
                updates[attr] = compat[key]
        if compat.get("maxTokensField") in ("max_completion_tokens", "max_tokens"):
            updates["max_tokens_field"] = compat["maxTokensField"]
        if compat.get("thinkingFormat") in get_args(ThinkingFormat):
            updates["thinking_format"] = compat["thinkingFormat"]
        return replace(self, **updates) if updates else self


def detect_openai_compat(base_url: str, model: str, provider: str | None = None) -> OpenAICompat:
    """Guess the host's quirks from its URL and pi provider id (port of pi-ai's ``detectCompat``)."""
    p = provider or ""
    u = base_url
    is_zai = p in ("zai", "zai-coding-cn") or "api.z.ai" in u or "open.bigmodel.cn" in u
    is_together = p == "together" or "api.together.ai" in u or "api.together.xyz" in u
    is_moonshot = p in ("moonshotai", "moonshotai-cn") or "api.moonshot." in u
    is_openrouter = p == "openrouter" or "openrouter.ai" in u
    is_cf_workers = p == "cloudflare-workers-ai" or "api.cloudflare.com" in u
    is_cf_gateway = p == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in u
    is_nvidia = p == "nvidia" or "integrate.api.nvidia.com" in u
    is_ant_ling = p == "ant-ling" or "api.ant-ling.com" in u
    is_grok = p == "xai" or "api.x.ai" in u
    is_deepseek = p == "deepseek" or "deepseek.com" in u
    non_standard = (
        is_nvidia
        or p == "cerebras"
        or "cerebras.ai" in u
        or is_grok
        or is_together
        or "chutes.ai" in u
        or "deepseek.com" in u
        or is_zai
        or is_moonshot
        or p == "opencode"
        or "opencode.ai" in u
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
    )
    use_max_tokens = (
        "chutes.ai" in u or is_moonshot or is_cf_gateway or is_together or is_nvidia or is_ant_ling
    )
    openrouter_developer = is_openrouter and (model.startswith("anthropic/") or model.startswith("openai/"))
    thinking: ThinkingFormat
    if is_deepseek:
        thinking = "deepseek"
    elif is_zai:
        thinking = "zai"
    elif is_together:
        thinking = "together"
    elif is_openrouter:
        thinking = "openrouter"
    else:
        thinking = "openai"
    return OpenAICompat(
        supports_store=not non_standard,
        supports_developer_role=openrouter_developer or (not non_standard and not is_openrouter),
        supports_reasoning_effort=not (
            is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        supports_usage_in_streaming=True,
        max_tokens_field="max_tokens" if use_max_tokens else "max_completion_tokens",
        thinking_format=thinking,
    )


def clamp_thinking_level(
    level: str, reasoning_model: bool, level_map: Mapping[str, str | None] | None
) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest level the model supports (searching upwards first)."""
    if not reasoning_model:
        available = ["off"]
    else:
        lm = level_map or {}
        available = []
        for candidate in _THINKING_LEVELS:
            if candidate in lm and lm[candidate] is None:
                continue
            if candidate == "xhigh" and candidate not in lm:
                continue
            available.append(candidate)
    if level in available:
        return level
    if level not in _THINKING_LEVELS:
        return available[0] if available else "off"
    index = _THINKING_LEVELS.index(level)
    for candidate in _THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(_THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def map_openai_finish_reason(reason: str | None) -> tuple[str, str | None]:
    """pi-ai's mapping of ``finish_reason`` to (stop reason, error message)."""
    if reason is None or reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def _usage_from(raw: Mapping[str, Any]) -> dict[str, int]:
    def num(value: Any) -> int:
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    def first_set(*values: Any) -> Any:  # JavaScript's a ?? b ?? c
        return next((v for v in values if v is not None), None)

    prompt = num(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    # OpenAI/OpenRouter: details.cached_tokens; DeepSeek: prompt_cache_hit_tokens; Kimi: cached_tokens
    cache_read = num(
        first_set(details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens"))
    )
    cache_write = num(details.get("cache_write_tokens"))
    output = num(raw.get("completion_tokens"))
    completion = raw.get("completion_tokens_details")
    completion = completion if isinstance(completion, Mapping) else {}
    input_tokens = max(0, prompt - cache_read - cache_write)
    # pi-ai's parseChunkUsage, field for field and in its order (the entry stores the object)
    return {
        "input": input_tokens,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "reasoning": num(completion.get("reasoning_tokens")) or num(raw.get("reasoning_tokens")),
        "totalTokens": input_tokens + output + cache_read + cache_write,
    }


class _OpenAIStream(StreamHandler):
    def __init__(self, request: SummaryRequest, model: str, provider: str) -> None:
        self._kind = request.kind
        self._requested_model = model
        self._provider = provider
        self._text: list[str] = []
        self._usage: dict[str, int] | None = None
        self._model: str | None = None
        self._stop_reason = "stop"
        self._error: str | None = None
        self._has_finish = False
        self._done = False
        self._events = 0  # events read: none means the answer was no event stream at all

    @property
    def done(self) -> bool:
        return self._done

    def handle(self, event: SseEvent) -> str | None:
        self._events += 1
        if event.data.startswith("[DONE]"):
            self._done = True
            return None
        if event.event == "error":
            data = json_event(event.data, self._provider)
            raise self._stream_error(data)
        chunk = json_event(event.data, self._provider)
        if not isinstance(chunk, dict):
            return None
        if chunk.get("error"):
            raise self._stream_error(chunk)
        if isinstance(chunk.get("model"), str) and chunk["model"] and self._model is None:
            self._model = chunk["model"]
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = _usage_from(chunk["usage"])
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, Mapping):
            return None
        if self._usage is None and isinstance(choice.get("usage"), Mapping):
            self._usage = _usage_from(choice["usage"])
        finish = choice.get("finish_reason")
        if finish:
            self._stop_reason, error = map_openai_finish_reason(str(finish))
            if error:
                self._error = error
            self._has_finish = True
        delta = choice.get("delta")
        if isinstance(delta, Mapping):
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                return content
        return None

    def _stream_error(self, data: Any) -> Exception:
        err = data.get("error") if isinstance(data, Mapping) else None
        message = "unknown error in the event stream"
        kind: str | None = None
        status: int | None = None
        if isinstance(err, Mapping):
            if isinstance(err.get("message"), str):
                message = err["message"]
            if isinstance(err.get("type"), str):
                kind = err["type"]
            code = err.get("code")
            if isinstance(code, int) and not isinstance(code, bool):
                status = code
            elif isinstance(code, str) and kind is None:
                kind = code
        elif isinstance(err, str):
            message = err
        return error_for_message(message, provider=self._provider, status=status, kind=kind)

    def finish(self) -> SummaryResult:
        if self._stop_reason == "error":
            raise LlmSummaryError(
                summary_failure_message(self._kind, self._error),
                user_message=f"The model stopped with an error instead of a summary ({self._error}).",
                provider=self._provider,
            )
        if not self._events:
            # an HTML page or a plain JSON answer (a proxy, a wrong path): said like a garbled stream
            raise LlmProtocolError(
                f"{self._provider}: the answer held no server-sent event",
                user_message=(
                    "The server's answer was not an event stream: check that the base URL points to "
                    "an OpenAI-compatible API (its /v1), not a web page or a proxy."
                ),
                provider=self._provider,
            )
        if not self._has_finish:
            raise LlmProtocolError(
                f"{self._provider}: stream ended without finish_reason",
                user_message=(
                    "The server's answer ended before it was complete (no finish reason). Try again; if "
                    "it keeps happening, check the server or proxy."
                ),
                provider=self._provider,
            )
        return SummaryResult(
            text="".join(self._text),
            stop_reason=self._stop_reason,
            usage=self._usage,
            model=self._model or self._requested_model,
        )


class OpenAICompatibleSummarizer(HttpSummarizer):
    """Summarizer for ``POST {base_url}/chat/completions`` (streaming).

    ``base_url`` is the API root including the version, e.g. ``https://api.openai.com/v1``,
    ``https://openrouter.ai/api/v1``, ``http://localhost:11434/v1`` (Ollama). ``api_key`` may be
    ``None`` for local servers (no ``Authorization`` header is sent). ``reasoning_model`` and
    ``thinking_level_map`` describe the model as pi's model catalogue/models.json does; ``compat``
    overrides the quirks detected from the URL and ``provider`` (pi's provider id).
    """

    provider_label = "OpenAI-compatible"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
        extra_headers: Mapping[str, str] | None = None,
        reasoning_model: bool = False,
        thinking_level_map: Mapping[str, str | None] | None = None,
        compat: OpenAICompat | None = None,
        provider: str | None = None,
        max_retry_delay_s: float = 30.0,
        retry_backoff_s: float = 1.0,
        key_hint: str | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        if base.endswith("/chat/completions"):
            base = base[: -len("/chat/completions")]
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
        if (
            not api_key
            and not names_a_credential(extra_headers, {"authorization"})
            and _is_openai_api(self.base_url)
        ):
            # a local or self-hosted server may need no key; OpenAI's own API always does: say so
            # here rather than after a request (and, off the network, a name-resolution error)
            raise LlmConfigError(
                f"{self.provider_label}: no API key",
                user_message=(
                    "No OpenAI API key found: for api.openai.com set OPENAI_API_KEY or add an api_key "
                    "entry for openai to ~/.pi/agent/auth.json; for another server name the variable "
                    "holding its key (--api-key-env, or the key variable in the provider settings)."
                ),
                provider=self.provider_label,
            )
        self.reasoning_model = reasoning_model
        self.thinking_level_map = dict(thinking_level_map) if thinking_level_map else None
        self.compat = compat or detect_openai_compat(self.base_url, model, provider)

    def _endpoint(self) -> str:
        return self.base_url + "/chat/completions"

    def _headers(self, request: SummaryRequest) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def request_body(self, request: SummaryRequest) -> dict[str, Any]:
        """The JSON body that :meth:`summarize` sends for ``request`` (for inspection and tests)."""
        compat = self.compat
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            role = "developer" if self.reasoning_model and compat.supports_developer_role else "system"
            messages.append({"role": role, "content": sanitize_surrogates(request.system_prompt)})
        messages.append(
            {"role": "user", "content": [{"type": "text", "text": sanitize_surrogates(request.prompt_text)}]}
        )
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if compat.supports_usage_in_streaming:
            body["stream_options"] = {"include_usage": True}
        if compat.supports_store:
            body["store"] = False
        if request.max_tokens:
            body[compat.max_tokens_field] = request.max_tokens
        self._add_reasoning(body, request.reasoning)
        return body

    def _add_reasoning(self, body: dict[str, Any], reasoning: str | None) -> None:
        if not self.reasoning_model:
            return
        level_map = self.thinking_level_map or {}
        effort: str | None = None
        if reasoning:
            clamped = clamp_thinking_level(reasoning, self.reasoning_model, level_map)
            effort = None if clamped == "off" else clamped

        def mapped(level: str) -> Any:
            value = level_map.get(level)
            return value if value is not None else level

        fmt = self.compat.thinking_format
        off_value = level_map.get("off", "")  # "" = not given, None = explicitly unsupported
        if fmt == "zai":
            body["thinking"] = {"type": "enabled" if effort else "disabled"}
            if effort and self.compat.supports_reasoning_effort:
                body["reasoning_effort"] = mapped(effort)
        elif fmt == "qwen":
            body["enable_thinking"] = bool(effort)
        elif fmt == "qwen-chat-template":
            body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
        elif fmt == "deepseek":
            if effort:
                body["thinking"] = {"type": "enabled"}
            elif off_value is not None:
                body["thinking"] = {"type": "disabled"}
            if effort and self.compat.supports_reasoning_effort:
                body["reasoning_effort"] = mapped(effort)
        elif fmt == "openrouter":
            if effort:
                body["reasoning"] = {"effort": mapped(effort)}
            elif off_value is not None:
                body["reasoning"] = {"effort": off_value or "none"}
        elif fmt == "together":
            body["reasoning"] = {"enabled": bool(effort)}
            if effort and self.compat.supports_reasoning_effort:
                body["reasoning_effort"] = mapped(effort)
        elif effort and self.compat.supports_reasoning_effort:
            body["reasoning_effort"] = mapped(effort)
        elif (
            not effort and self.compat.supports_reasoning_effort and isinstance(off_value, str) and off_value
        ):
            body["reasoning_effort"] = off_value

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        return self.request_body(request)

    def _stream_handler(self, request: SummaryRequest) -> StreamHandler:
        return _OpenAIStream(request, self.model, self.provider_label)


def _is_openai_api(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own API (which refuses a request without a key)."""
    from urllib.parse import urlsplit

    return (urlsplit(base_url).hostname or "").lower() == "api.openai.com"
