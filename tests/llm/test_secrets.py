"""The API key never shows up in logs, exception texts, reprs or descriptions."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from session_studio.llm import (
    AnthropicSummarizer,
    LlmError,
    OpenAICompatibleSummarizer,
    Prompts,
    ProviderConfig,
    history_request,
    make_summarizer,
    resolve_provider,
)

from .conftest import MockServer
from .support import FAKE_KEY

REQ = history_request("[User]: hi", None, None, 16384, 0, False, None, Prompts())


def _assert_clean(texts: list[str]) -> None:
    for text in texts:
        assert FAKE_KEY not in text
        assert FAKE_KEY[-16:] not in text


def test_key_never_leaks_with_echoing_servers(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    """Servers that echo the key (some do, in 401 bodies or URLs) must not make it leak."""

    def echo(request: httpx.Request) -> httpx.Response:
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        if request.url.path.endswith("/messages"):
            return httpx.Response(
                401,
                json={
                    "type": "error",
                    "error": {"type": "authentication_error", "message": f"invalid x-api-key: {key}"},
                },
            )
        if "overflow" in request.url.path:
            return httpx.Response(400, json={"error": {"message": f"context_length_exceeded for {key}"}})
        return httpx.Response(500, text=f"upstream failed, headers were authorization={key}")

    texts: list[str] = []
    with caplog.at_level(logging.DEBUG):
        for summarizer in (
            OpenAICompatibleSummarizer(
                "https://h.test/v1",
                "m",
                FAKE_KEY,
                transport=httpx.MockTransport(echo),
                max_retries=1,
                retry_backoff_s=0,
            ),
            OpenAICompatibleSummarizer(
                "https://h.test/overflow", "m", FAKE_KEY, transport=httpx.MockTransport(echo)
            ),
            AnthropicSummarizer("https://h.test", "claude", FAKE_KEY, transport=httpx.MockTransport(echo)),
        ):
            texts.append(repr(summarizer))
            with summarizer, pytest.raises(LlmError) as info:
                summarizer.summarize(REQ)
            texts += [str(info.value), info.value.user_message, repr(info.value), info.value.message]
        agent = tmp_path / "agent"
        agent.mkdir()
        (agent / "auth.json").write_text(
            json.dumps({"openai": {"type": "api_key", "key": FAKE_KEY}}), encoding="utf-8"
        )
        resolved = resolve_provider(
            ProviderConfig(provider="openai", model="gpt-4o"), agent_dir=agent, env={}
        )
        assert resolved.api_key == FAKE_KEY
        texts += [repr(resolved), resolved.describe()]
        summarizer = make_summarizer(resolved)
        texts.append(repr(summarizer))
    texts.append(caplog.text)
    texts += [r.getMessage() for r in caplog.records]
    assert any("HTTP 401" in t for t in texts)
    _assert_clean(texts)


@pytest.mark.oracle
def test_key_never_leaks_against_the_mock(
    caplog: pytest.LogCaptureFixture, mock_factory: Callable[..., MockServer]
) -> None:
    texts: list[str] = []
    with caplog.at_level(logging.DEBUG):
        for fail in (None, "*:401", "*:overflow", "*:500", "*:garbage", "*:reset"):
            server = mock_factory(fail)
            for summarizer in (
                OpenAICompatibleSummarizer(server.openai_url, "m", FAKE_KEY, max_retries=0),
                AnthropicSummarizer(server.anthropic_url, "claude", FAKE_KEY, max_retries=0),
            ):
                with summarizer:
                    try:
                        texts.append(summarizer.summarize(REQ).text)
                    except LlmError as err:
                        texts += [str(err), err.user_message, repr(err)]
            texts.append(server.log_path.read_text(encoding="utf-8") if server.log_path.exists() else "")
    texts.append(caplog.text)
    assert len(caplog.records) > 0
    _assert_clean(texts)
