"""RequestLimits and the SSE decoder's cost on a server that never sends a line break."""

from __future__ import annotations

import time

import pytest

from session_studio.llm._sse import SseDecoder
from session_studio.llm.base import RequestLimits
from session_studio.llm.config import ProviderConfig, resolve_provider


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="deadline_s"):
        RequestLimits(deadline_s=0)
    with pytest.raises(ValueError, match="idle_timeout_s"):
        RequestLimits(idle_timeout_s=float("nan"))


def test_config_limits_reach_the_resolved_provider(tmp_path: object) -> None:
    config = ProviderConfig(
        provider="openai", base_url="http://127.0.0.1:9/v1", model="m", timeout_s=5, idle_timeout_s=2
    )
    r = resolve_provider(config, env={})
    assert r.limits == RequestLimits(deadline_s=5, idle_timeout_s=2)
    # explicit limits win, also when the provider comes from pi's settings
    assert resolve_provider(config, env={}, limits=RequestLimits(deadline_s=1)).limits.deadline_s == 1


def test_a_long_line_without_a_break_is_decoded_in_linear_time() -> None:
    decoder = SseDecoder()
    chunk = b"x" * 65536
    start = time.monotonic()
    for _ in range(512):  # 32 MiB, no line break
        assert decoder.feed(chunk) == []
    events = decoder.feed(b"\n\ndata: ok\n\n")
    assert time.monotonic() - start < 2.0
    assert [e.data for e in events] == ["ok"]
