"""The provider's own token count: Anthropic's ``POST {base_url}/v1/messages/count_tokens``.

Only on an explicit request (it sends the conversation to the provider). The key, base URL, limits
and error mapping are the summarizer's (:class:`~session_studio.llm.anthropic.AnthropicSummarizer`):
a key only goes to the hosts :func:`~session_studio.llm.config.resolve_provider` allows, and
errors read as they do for a summary call. Inputs are plain strings (no :mod:`session_studio.core`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import orjson

from session_studio.llm._http import sanitize_surrogates
from session_studio.llm.anthropic import AnthropicSummarizer
from session_studio.llm.base import CancelToken
from session_studio.llm.config import ResolvedProvider
from session_studio.llm.errors import LlmConfigError, LlmError, LlmProtocolError, redact

__all__ = ["AnthropicTokenCounter", "CountTurn", "count_tokens_body", "make_token_counter"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CountTurn:
    """One message to count: its role, its texts and its images as ``(media type, base64 data)``."""

    role: Literal["user", "assistant"]
    texts: tuple[str, ...] = ()
    images: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def count_tokens_body(model: str, turns: Sequence[CountTurn], system: str | None = None) -> dict[str, Any]:
    """The request body: consecutive turns of one role merged (the API wants them alternating),
    empty texts left out (it rejects them), a leading assistant turn sent as the user's."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        blocks: list[dict[str, Any]] = [
            {"type": "text", "text": sanitize_surrogates(t)} for t in turn.texts if t.strip()
        ]
        blocks += [
            {"type": "image", "source": {"type": "base64", "media_type": mt, "data": data}}
            for mt, data in turn.images
        ]
        if not blocks:
            continue
        role = turn.role if messages else "user"
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    body: dict[str, Any] = {"model": model, "messages": messages}
    if system:
        body["system"] = [{"type": "text", "text": sanitize_surrogates(system)}]
    return body


class AnthropicTokenCounter(AnthropicSummarizer):
    """An Anthropic client that counts instead of summarising (same key, URL, limits and errors)."""

    def _count_endpoint(self) -> str:
        return self.base_url + "/v1/messages/count_tokens"

    def count_tokens(
        self, turns: Sequence[CountTurn], *, system: str | None = None, cancel: CancelToken | None = None
    ) -> int:
        """``input_tokens`` for the conversation (0 without a request when there is nothing to count)."""
        body = count_tokens_body(self.model, turns, system)
        if not body["messages"]:
            return 0
        token = cancel if cancel is not None else CancelToken()
        token.raise_if_cancelled()
        url = self._count_endpoint()
        headers = {**self._common_headers(), "anthropic-version": self.anthropic_version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        headers.update(self._extra_headers)
        content = orjson.dumps(body)
        logger.debug(
            "%s: POST %s model=%s (%d bytes)", self.provider_label, redact(url), self.model, len(content)
        )
        deadline = time.monotonic() + self.limits.deadline_s
        try:
            with self._client.stream("POST", url, content=content, headers=headers) as response:
                data = bytearray()
                for chunk in response.iter_bytes():
                    data.extend(chunk)
                    token.raise_if_cancelled()
                    if len(data) > self.limits.max_response_bytes:
                        raise self._too_large(url, f"more than {self.limits.max_response_bytes:,} bytes")
                    if time.monotonic() > deadline:
                        raise self._deadline_error(url)
                if response.status_code >= 400:
                    raise self._status_error(response, bytes(data), url)
        except LlmError:
            raise
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, after_head=False, url=url) from None
        try:
            answer = orjson.loads(data)
        except orjson.JSONDecodeError:
            answer = None
        n = answer.get("input_tokens") if isinstance(answer, dict) else None
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise LlmProtocolError(
                f"{self.provider_label}: count_tokens answered without input_tokens: {bytes(data[:120])!r}",
                user_message=(
                    "The server's answer to the token count has no input_tokens: check that the base URL "
                    "points to an Anthropic Messages API."
                ),
                provider=self.provider_label,
            )
        return n


def make_token_counter(
    resolved: ResolvedProvider, *, transport: httpx.BaseTransport | None = None
) -> AnthropicTokenCounter:
    """The counter for a resolved provider: Anthropic only (OpenAI has no count endpoint)."""
    if resolved.provider != "anthropic":
        raise LlmConfigError(
            f"{resolved.provider}: no token count endpoint",
            user_message=(
                "Counting with the provider needs Anthropic configured (its /v1/messages/count_tokens); "
                f"the configured provider is {resolved.provider}."
            ),
        )
    if not resolved.model or not resolved.base_url:
        raise LlmConfigError(
            "anthropic: no model or base URL configured",
            user_message="No Anthropic model or base URL is configured: choose one in the provider settings.",
        )
    return AnthropicTokenCounter(
        resolved.base_url,
        resolved.model,
        resolved.api_key,
        limits=resolved.limits,
        transport=transport,
        extra_headers=resolved.headers,
        provider=resolved.pi_provider if resolved.pi_provider not in (None, "anthropic") else None,
        key_hint=resolved.api_key_source or "the provider settings",
    )
