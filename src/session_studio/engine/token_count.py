"""A plan's context counted by the provider (Anthropic's count_tokens), on an explicit request.

The core says what a context holds (:func:`~session_studio.core.real_tokens.message_texts`: the
text pi's estimate measures, and the images); the llm package sends it. The provider's figure
includes what its API adds per message (role markers), so it sits a little above a local count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..core.real_tokens import context_item_messages, message_texts
from ..llm.base import CancelToken
from ..llm.config import ResolvedProvider
from ..llm.token_count import CountTurn, make_token_counter

__all__ = ["ProviderCount", "context_turns", "count_with_provider"]


@dataclass(frozen=True, slots=True)
class ProviderCount:
    tokens: int
    estimate: float  # pi's estimate of the same messages
    model: str
    provider: str  # what the figure is labelled with ("anthropic")


def _image(block: Any) -> tuple[str, str] | None:
    data = block.get("data")
    mime = block.get("mimeType")
    if isinstance(data, str) and data and isinstance(mime, str) and mime:
        return mime, data
    return None


def context_turns(state: Any) -> list[CountTurn]:
    """The plan's context messages as turns to count (assistant stays assistant, the rest is user)."""
    turns: list[CountTurn] = []
    for message, _ in context_item_messages(state):
        texts, images = message_texts(message)
        role: Literal["user", "assistant"] = (
            "assistant" if isinstance(message, dict) and message.get("role") == "assistant" else "user"
        )
        imgs = tuple(i for i in (_image(b) for b in images) if i is not None)
        turns.append(CountTurn(role, tuple(texts), imgs))
    return turns


def count_with_provider(
    state: Any,
    resolved: ResolvedProvider,
    *,
    transport: Any = None,  # an httpx transport (tests); the engine itself does no network
    cancel: CancelToken | None = None,
) -> ProviderCount:
    """Count a ``PlanState``'s context with the configured provider (Anthropic only)."""
    counter = make_token_counter(resolved, transport=transport)
    try:
        n = counter.count_tokens(context_turns(state), cancel=cancel)
    finally:
        counter.close()
    model = counter.model
    estimate = float(sum(t for _, _, t in state.item_tokens))
    return ProviderCount(n, estimate, model, resolved.pi_provider or resolved.provider)
