"""Both providers over real HTTP against the oracle's ``mock-llm.mjs`` (node), incl. every --fail kind."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from session_studio.llm import (
    AnthropicSummarizer,
    CancelToken,
    LlmAuthError,
    LlmCancelledError,
    LlmConnectionError,
    LlmContextOverflowError,
    LlmError,
    LlmProtocolError,
    LlmRateLimitError,
    LlmServerError,
    LlmTimeoutError,
    OpenAICompatibleSummarizer,
    Prompts,
    SummaryRequest,
    branch_request,
    history_request,
    turn_prefix_request,
)
from session_studio.llm._http import HttpSummarizer

from .conftest import MockServer
from .support import FAKE_KEY

pytestmark = pytest.mark.oracle

P = Prompts()
PROVIDERS = ("openai", "anthropic")
FAST = httpx.Timeout(10.0, connect=5.0)


def h8(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def canned(conversation: str, previous: str | None = None) -> str:
    """The mock's reply rule (mock-llm.mjs cannedReply)."""
    tag = f"SUMMARY-{h8(conversation)}" + (f"-UPDATED-{h8(previous)}" if previous is not None else "")
    return f"## Goal\n{tag}\n\n## Progress\n### Done\n- [x] canned 🧪 (要約)\n\n## Next Steps\n1. continue"


def make(provider: str, server: MockServer, **kwargs: Any) -> HttpSummarizer:
    kwargs.setdefault("timeout", FAST)
    kwargs.setdefault("retry_backoff_s", 0.01)
    if provider == "openai":
        return OpenAICompatibleSummarizer(server.openai_url, "mock-model", FAKE_KEY, **kwargs)
    return AnthropicSummarizer(server.anthropic_url, "claude-mock", FAKE_KEY, model_max_tokens=8192, **kwargs)


CONV = '[User]: Fix the bug in src/app.py 😀\n\n[Assistant tool calls]: read(path="src/app.py")\n\n[Tool result]: def f(): ...'


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("request_factory", "previous"),
    [
        (lambda: history_request(CONV, None, "focus", 16384, 0, False, None, P), None),
        (lambda: history_request(CONV, "PREV ✓", None, 16384, 0, False, None, P), "PREV ✓"),
        (lambda: turn_prefix_request(CONV, 16384, 0, False, None, P), None),
        (lambda: branch_request(CONV, "CI", False, P), None),
    ],
    ids=["history", "update", "turn_prefix", "branch"],
)
def test_streamed_summary_matches_the_mock_rule(
    provider: str,
    request_factory: Callable[[], SummaryRequest],
    previous: str | None,
    llm_mock: MockServer,
) -> None:
    deltas: list[str] = []
    with make(provider, llm_mock) as s:
        result = s.summarize(request_factory(), on_text=deltas.append)
    assert result.text == canned(CONV, previous)
    assert "".join(deltas) == result.text
    assert len(deltas) >= 3
    assert result.stop_reason == "stop"
    assert result.usage is not None
    assert result.usage["input"] > 0 and result.usage["output"] > 0
    assert result.usage["totalTokens"] == sum(
        result.usage[k] for k in ("input", "output", "cacheRead", "cacheWrite")
    )


def test_requests_reach_the_mock_as_sent(mock_factory: Callable[..., MockServer]) -> None:
    server = mock_factory(fresh=True)  # its log holds this test's requests only
    req = history_request(CONV, None, None, 16384, 4096, False, None, P)
    with make("openai", server) as s:
        s.summarize(req)
    with make("anthropic", server) as s:
        s.summarize(req)
    new = server.requests()
    assert [r["api"] for r in new] == ["openai", "anthropic"]
    assert new[0]["headers"]["authorization"] == "(set)"
    assert new[1]["headers"]["x-api-key"] == "(set)"
    assert new[0]["body"]["max_completion_tokens"] == 4096
    assert new[1]["body"]["max_tokens"] == 4096
    assert new[0]["body"]["messages"][1]["content"][0]["text"] == req.prompt_text
    assert new[1]["body"]["system"][0]["text"] == P.system


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_then_success(provider: str, mock_factory: Callable[..., MockServer]) -> None:
    server = mock_factory("1:429", fresh=True)
    started = time.monotonic()
    with make(provider, server, max_retries=2) as s:
        result = s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P))
    assert result.text == canned(CONV)
    assert time.monotonic() - started >= 0.9  # the mock says retry-after: 1
    assert [r["failure"] for r in server.requests()] == ["429", None]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_exhausted(provider: str, mock_factory: Callable[..., MockServer]) -> None:
    server = mock_factory("*:429")
    before = len(server.requests())
    with make(provider, server, max_retries=1) as s, pytest.raises(LlmRateLimitError) as info:
        s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P))
    assert info.value.retry_after == 1.0
    assert info.value.status == 429
    assert len(server.requests()) - before == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("kind", "error", "attempts"),
    [
        ("401", LlmAuthError, 1),
        ("500", LlmServerError, 2),
        ("529", LlmServerError, 2),
        ("overflow", LlmContextOverflowError, 1),
        ("reset", LlmConnectionError, 1),
        # The mock's "broken" cuts the socket in the same tick as its first writes, so Node never
        # flushes anything: the client sees exactly what "reset" shows (a disconnect before any
        # response). A stream that really breaks mid-way is covered in test_transport.py
        # (test_stream_broken_mid_way_is_a_protocol_error → LlmProtocolError).
        ("broken", LlmConnectionError, 1),
        ("garbage", LlmProtocolError, 1),
    ],
)
def test_fault_kinds(
    provider: str, kind: str, error: type[LlmError], attempts: int, mock_factory: Callable[..., MockServer]
) -> None:
    server = mock_factory(f"*:{kind}")
    before = len(server.requests())
    deltas: list[str] = []
    with make(provider, server, max_retries=1) as s, pytest.raises(error) as info:
        s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P), on_text=deltas.append)
    assert len(server.requests()) - before == attempts
    assert deltas == []
    assert info.value.user_message
    if kind in ("401", "500", "529", "overflow"):
        assert info.value.status == {"401": 401, "500": 500, "529": 529, "overflow": 400}[kind]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout(provider: str, mock_factory: Callable[..., MockServer]) -> None:
    server = mock_factory("*:timeout")
    started = time.monotonic()
    with (
        make(provider, server, timeout=httpx.Timeout(0.4), max_retries=2) as s,
        pytest.raises(LlmTimeoutError),
    ):
        s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P))
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancel_mid_stream(provider: str, llm_mock: MockServer) -> None:
    token = CancelToken()
    deltas: list[str] = []

    def on_text(delta: str) -> None:
        deltas.append(delta)
        token.cancel()

    with make(provider, llm_mock) as s, pytest.raises(LlmCancelledError):
        s.summarize(
            history_request(CONV, None, None, 16384, 0, False, None, P), on_text=on_text, cancel=token
        )
    assert len(deltas) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancel_while_the_server_is_silent(provider: str, mock_factory: Callable[..., MockServer]) -> None:
    server = mock_factory("*:timeout")
    token = CancelToken()
    timer = threading.Timer(0.3, token.cancel)
    timer.start()
    started = time.monotonic()
    try:
        with make(provider, server, timeout=httpx.Timeout(5.0)) as s, pytest.raises(LlmCancelledError):
            s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P), cancel=token)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 2


def test_connection_refused() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    summarizer = OpenAICompatibleSummarizer(f"http://127.0.0.1:{port}/v1", "m", None, timeout=FAST)
    with summarizer as s, pytest.raises(LlmConnectionError) as info:
        s.summarize(history_request(CONV, None, None, 16384, 0, False, None, P))
    assert f"127.0.0.1:{port}" in info.value.user_message
