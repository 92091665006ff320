"""Provider behaviour with ``httpx.MockTransport``: bodies, SSE parsing, retries, error mapping."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from session_studio.llm import (
    AnthropicSummarizer,
    CancelToken,
    LlmAuthError,
    LlmCancelledError,
    LlmConfigError,
    LlmConnectionError,
    LlmContextOverflowError,
    LlmProtocolError,
    LlmRateLimitError,
    LlmRequestError,
    LlmServerError,
    LlmSummaryError,
    LlmTimeoutError,
    OpenAICompat,
    OpenAICompatibleSummarizer,
    Prompts,
    SummaryRequest,
    history_request,
)
from session_studio.llm._http import parse_retry_after
from session_studio.llm._sse import SseDecoder, SseEvent
from session_studio.llm.anthropic import adjust_max_tokens_for_thinking
from session_studio.llm.openai import clamp_thinking_level, detect_openai_compat

P = Prompts()
REQ = history_request("[User]: hello world", None, None, 16384, 0, False, None, P)
Handler = Callable[[httpx.Request], httpx.Response]


class RecordingToken(CancelToken):
    """A cancel token whose waits return at once and are recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None) -> bool:
        self.waits.append(timeout)
        return self.cancelled


def openai_sse(parts: list[str], finish: str | None = "stop", usage: bool = True, done: bool = True) -> bytes:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "served-model"}
    events = [
        {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
        }
    ]
    events += [
        {**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in parts
    ]
    if finish:
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        events.append(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": 100,
                    "completion_tokens": 7,
                    "total_tokens": 107,
                    "prompt_tokens_details": {"cached_tokens": 40},
                },
            }
        )
    out = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    if done:
        out += "data: [DONE]\n\n"
    return out.encode()


def anthropic_sse(
    blocks: list[tuple[str, list[str]]], stop: str = "end_turn", stop_event: bool = True
) -> bytes:
    def ev(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    out = ev(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "m1",
                "model": "claude-test",
                "usage": {"input_tokens": 50, "output_tokens": 1, "cache_read_input_tokens": 5},
            },
        },
    )
    out += ev("ping", {"type": "ping"})
    for index, (kind, deltas) in enumerate(blocks):
        block = {"type": kind, "text": ""} if kind == "text" else {"type": kind, "thinking": ""}
        out += ev(
            "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
        )
        for d in deltas:
            delta = (
                {"type": "text_delta", "text": d}
                if kind == "text"
                else {"type": "thinking_delta", "thinking": d}
            )
            out += ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        out += ev("content_block_stop", {"type": "content_block_stop", "index": index})
    out += ev(
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
    )
    if stop_event:
        out += ev("message_stop", {"type": "message_stop"})
    return out.encode()


def sse_response(
    body: bytes | Iterator[bytes], status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(
        status, headers={"content-type": "text/event-stream", **(headers or {})}, content=body
    )


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, json=payload)


def openai(handler: Handler, **kwargs: Any) -> OpenAICompatibleSummarizer:
    kwargs.setdefault("retry_backoff_s", 0.0)
    return OpenAICompatibleSummarizer(
        "https://api.example.test/v1",
        "gpt-test",
        "sk-unit-test-key-123456",
        transport=httpx.MockTransport(handler),
        **kwargs,
    )


def anthropic(handler: Handler, **kwargs: Any) -> AnthropicSummarizer:
    kwargs.setdefault("retry_backoff_s", 0.0)
    return AnthropicSummarizer(
        "https://anthropic.example.test",
        "claude-test",
        "sk-ant-unit-key-123456",
        transport=httpx.MockTransport(handler),
        **kwargs,
    )


# ---------------------------------------------------------------------------------------------
# SSE decoding


def test_sse_decoder_handles_arbitrary_chunking_and_line_endings() -> None:
    raw = b"event: a\r\ndata: 1\r\ndata: 2\r\n\r\n: comment\n\ndata:x\rdata: \xc3\xa9\r\revent: b\ndata: tail"
    for size in (1, 2, 3, 7, len(raw)):
        decoder = SseDecoder()
        events: list[SseEvent] = []
        for i in range(0, len(raw), size):
            events += decoder.feed(raw[i : i + size])
        events += decoder.close()
        assert events == [SseEvent("a", "1\n2"), SseEvent(None, "x\né"), SseEvent("b", "tail")], size


def test_sse_decoder_rejects_invalid_utf8() -> None:
    with pytest.raises(LlmProtocolError):
        SseDecoder().feed(b"data: \xff\xfe\n\n")


# ---------------------------------------------------------------------------------------------
# OpenAI-compatible


def test_openai_request_and_stream() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return sse_response(openai_sse(["Hel", "lo ", "wörld"]))

    deltas: list[str] = []
    with openai(handler) as s:
        result = s.summarize(REQ, on_text=deltas.append)
    assert result.text == "Hello wörld" == "".join(deltas)
    assert deltas == ["Hel", "lo ", "wörld"]
    assert result.stop_reason == "stop"
    assert result.model == "served-model"
    # pi-ai's parseChunkUsage, in its key order (the committed entry stores the object)
    assert result.usage == {
        "input": 60,
        "output": 7,
        "cacheRead": 40,
        "cacheWrite": 0,
        "reasoning": 0,
        "totalTokens": 107,
    }
    assert list(result.usage) == ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens"]
    (request,) = seen
    assert request.url == "https://api.example.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-unit-test-key-123456"
    body = json.loads(request.content)
    assert body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": P.system},
            {"role": "user", "content": [{"type": "text", "text": REQ.prompt_text}]},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
        "max_completion_tokens": 13107,
    }


def test_openai_case_59_options_and_reasoning_dialects() -> None:
    req = history_request("[User]: hello world", "PREV SUMMARY", "focus on X", 16384, 8192, True, "medium", P)
    s = OpenAICompatibleSummarizer("https://api.openai.com/v1", "o3", "k", reasoning_model=True)
    body = s.request_body(req)
    assert body["messages"][0]["role"] == "developer"
    assert body["max_completion_tokens"] == 8192
    assert body["reasoning_effort"] == "medium"
    s.close()
    s = OpenAICompatibleSummarizer("https://openrouter.ai/api/v1", "deepseek/r1", "k", reasoning_model=True)
    body = s.request_body(req)
    assert (
        body["messages"][0]["role"] == "system"
    )  # OpenRouter: developer role only for openai/ and anthropic/
    assert body["reasoning"] == {"effort": "medium"}
    assert "reasoning_effort" not in body
    s.close()
    s = OpenAICompatibleSummarizer(
        "https://api.groq.com/openai/v1",
        "qwen/qwen3-32b",
        "k",
        reasoning_model=True,
        thinking_level_map={"minimal": None, "low": None, "medium": None, "high": "default"},
    )
    assert s.request_body(req)["reasoning_effort"] == "default"  # medium is unsupported → clamped up to high
    s.close()
    s = OpenAICompatibleSummarizer("https://api.together.ai/v1", "m", "k", reasoning_model=True)
    body = s.request_body(req)
    assert body["max_tokens"] == 8192 and "max_completion_tokens" not in body and "store" not in body
    assert body["reasoning"] == {"enabled": True}
    s.close()
    plain = OpenAICompatibleSummarizer("http://localhost:11434/v1/", "llama3", None)
    body = plain.request_body(history_request("c", None, None, 16384, 0, False, "high", P))
    assert "reasoning_effort" not in body and body["messages"][0]["role"] == "system"
    assert plain._endpoint() == "http://localhost:11434/v1/chat/completions"
    assert "authorization" not in plain._headers(REQ)
    plain.close()
    custom = OpenAICompatibleSummarizer(
        "http://h/v1",
        "m",
        None,
        compat=OpenAICompat().with_pi_overrides({"maxTokensField": "max_tokens", "supportsStore": False}),
    )
    body = custom.request_body(REQ)
    assert body["max_tokens"] == 13107 and "store" not in body
    custom.close()


def test_clamp_and_detect() -> None:
    assert clamp_thinking_level("xhigh", True, None) == "high"
    assert clamp_thinking_level("xhigh", True, {"xhigh": "xhigh"}) == "xhigh"
    assert clamp_thinking_level("minimal", True, {"minimal": None, "low": "LOW"}) == "low"
    assert clamp_thinking_level("high", False, None) == "off"
    assert detect_openai_compat("https://api.x.ai/v1", "grok", None).supports_reasoning_effort is False
    assert detect_openai_compat("https://api.deepseek.com", "d", None).thinking_format == "deepseek"


def test_openai_length_stop_is_accepted_and_sse_is_chunked_weirdly() -> None:
    payload = openai_sse(["part one, ", "part two"], finish="length")

    def handler(request: httpx.Request) -> httpx.Response:
        return sse_response(iter([payload[i : i + 5] for i in range(0, len(payload), 5)]))

    with openai(handler) as s:
        result = s.summarize(REQ)
    assert result.text == "part one, part two"
    assert result.stop_reason == "length"


@pytest.mark.parametrize(
    ("finish", "kind", "message"),
    [
        ("content_filter", "history", "Summarization failed: Provider finish_reason: content_filter"),
        ("weird", "turn_prefix", "Turn prefix summarization failed: Provider finish_reason: weird"),
        ("content_filter", "branch", "Provider finish_reason: content_filter"),
    ],
)
def test_openai_error_finish_reason(finish: str, kind: str, message: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return sse_response(openai_sse(["x"], finish=finish))

    req = SummaryRequest(kind, "s", "p", None, None)  # type: ignore[arg-type]
    with openai(handler) as s, pytest.raises(LlmSummaryError) as info:
        s.summarize(req)
    assert str(info.value) == message


def test_openai_stream_without_finish_reason_is_a_protocol_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return sse_response(openai_sse(["x"], finish=None, usage=False, done=False))

    with openai(handler) as s, pytest.raises(LlmProtocolError):
        s.summarize(REQ)


def test_openai_in_stream_error_object() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        data = {"error": {"message": "This model's maximum context length is 4096 tokens", "code": 400}}
        return sse_response(f"data: {json.dumps(data)}\n\n".encode())

    with openai(handler) as s, pytest.raises(LlmContextOverflowError):
        s.summarize(REQ)


def test_stream_broken_mid_way_is_a_protocol_error() -> None:
    payload = openai_sse(["first ", "second"])

    def body() -> Iterator[bytes]:
        yield payload[: payload.index(b"second")]
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    deltas: list[str] = []
    with openai(lambda r: sse_response(body())) as s, pytest.raises(LlmProtocolError):
        s.summarize(REQ, on_text=deltas.append)
    assert deltas == ["first "]


def test_surrogates_are_sanitized() -> None:
    seen: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return sse_response(openai_sse(["ok"]))

    req = SummaryRequest("history", "sys", "a\ud83db 😀", None, None)
    with openai(handler) as s:
        s.summarize(req)
    assert json.loads(seen[0])["messages"][1]["content"][0]["text"] == "ab 😀"


# ---------------------------------------------------------------------------------------------
# Retries


def test_retry_after_is_honoured_then_success() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return json_response(429, {"error": {"message": "slow down"}}, {"retry-after": "3"})
        if len(calls) == 2:
            return json_response(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "250"})
        return sse_response(openai_sse(["done"]))

    token = RecordingToken()
    with openai(handler, max_retries=2) as s:
        assert s.summarize(REQ, cancel=token).text == "done"
    assert token.waits == [3.0, 0.25]
    assert len(calls) == 3


def test_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = parse_retry_after(httpx.Headers({"retry-after": when}))
    assert delay is not None and 25 <= delay <= 31
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None
    assert parse_retry_after(httpx.Headers({"retry-after": "-5"})) == 0.0


def test_retry_after_beyond_the_cap_fails_at_once() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return json_response(429, {"error": {"message": "daily quota"}}, {"retry-after": "3600"})

    token = RecordingToken()
    with openai(handler, max_retries=3, max_retry_delay_s=30) as s, pytest.raises(LlmRateLimitError) as info:
        s.summarize(REQ, cancel=token)
    assert info.value.retry_after == 3600
    assert "3600" in info.value.user_message
    assert token.waits == [] and len(calls) == 1


def test_server_errors_back_off_exponentially_then_give_up() -> None:
    statuses: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        statuses.append(529)
        return json_response(
            529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        )

    token = RecordingToken()
    summarizer = anthropic(handler, max_retries=3, retry_backoff_s=0.5, max_retry_delay_s=1.5)
    with summarizer as s, pytest.raises(LlmServerError) as info:
        s.summarize(REQ, cancel=token)
    assert token.waits == [0.5, 1.0, 1.5]
    assert len(statuses) == 4
    assert info.value.status == 529


@pytest.mark.parametrize(
    ("status", "payload", "error"),
    [
        (400, {"error": {"message": "Unsupported parameter: 'store'"}}, LlmRequestError),
        (401, {"error": {"message": "Incorrect API key provided"}}, LlmAuthError),
        (403, {"error": {"message": "forbidden"}}, LlmAuthError),
        (404, {"error": {"message": "model not found"}}, LlmConfigError),
        (
            413,
            {
                "type": "error",
                "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"},
            },
            LlmContextOverflowError,
        ),
        (
            400,
            {"error": {"message": "prompt is too long: 213462 tokens > 200000 maximum"}},
            LlmContextOverflowError,
        ),
        (400, None, LlmContextOverflowError),  # "400 status code (no body)" is an overflow in pi 0.80.2
        (422, "plain text body", LlmRequestError),
    ],
)
def test_no_retry_for_client_errors(status: int, payload: Any, error: type[Exception]) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if payload is None:
            return httpx.Response(status)
        if isinstance(payload, str):
            return httpx.Response(status, text=payload)
        return json_response(status, payload)

    token = RecordingToken()
    with openai(handler, max_retries=3) as s, pytest.raises(error):
        s.summarize(REQ, cancel=token)
    assert len(calls) == 1 and token.waits == []


def test_cancel_while_waiting_for_a_retry() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(500, {"error": {"message": "boom"}})

    token = CancelToken()

    class CancellingToken(CancelToken):
        def wait(self, timeout: float | None) -> bool:
            self.cancel()
            return True

    with openai(handler) as s, pytest.raises(LlmCancelledError):
        s.summarize(REQ, cancel=CancellingToken())
    token.cancel()
    with openai(handler) as s, pytest.raises(LlmCancelledError):
        s.summarize(REQ, cancel=token)  # already cancelled: no request at all


def test_transport_exceptions_are_mapped() -> None:
    def raiser(exc: Exception) -> Handler:
        def handler(request: httpx.Request) -> httpx.Response:
            raise exc

        return handler

    cases: list[tuple[Exception, type[Exception]]] = [
        (httpx.ConnectError("Connection refused"), LlmConnectionError),
        (httpx.ReadTimeout("timed out"), LlmTimeoutError),
        (httpx.ConnectTimeout("timed out"), LlmTimeoutError),
        (httpx.RemoteProtocolError("Server disconnected without sending a response."), LlmConnectionError),
        (httpx.UnsupportedProtocol("bad scheme"), LlmConfigError),
    ]
    for exc, error in cases:
        with openai(raiser(exc), max_retries=0) as s, pytest.raises(error) as info:
            s.summarize(REQ)
        # the message says what happened in words; httpx's class name is for the details only
        assert type(exc).__name__ not in info.value.user_message


def test_a_connection_failure_is_said_without_its_errno() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with openai(handler, max_retries=0) as s, pytest.raises(LlmConnectionError) as info:
        s.summarize(REQ)
    assert "(Connection refused)" in info.value.user_message and "Errno" not in info.value.user_message


def test_a_stream_broken_mid_way_says_so_in_words() -> None:
    def body() -> Iterator[bytes]:
        yield openai_sse(["first "])[:20]
        raise httpx.RemoteProtocolError("")

    with openai(lambda r: sse_response(body())) as s, pytest.raises(LlmProtocolError) as info:
        s.summarize(REQ)
    assert "broke off in the middle (the server closed the connection)" in info.value.user_message


@pytest.mark.parametrize(
    ("kind", "advice"),
    [
        ("history", "keep more recent tokens"),
        ("turn_prefix", "keep more recent tokens"),
        ("branch", "budget"),
    ],
)
def test_the_overflow_advice_fits_the_summary_asked_for(kind: str, advice: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        data = {"error": {"message": "This model's maximum context length is 4096 tokens", "code": 400}}
        return httpx.Response(400, json=data)

    req = SummaryRequest(kind, "sys", "text", None, None)  # type: ignore[arg-type]
    with openai(handler, max_retries=0) as s, pytest.raises(LlmContextOverflowError) as info:
        s.summarize(req)
    assert advice in info.value.user_message
    other = "budget" if advice != "budget" else "keep more recent tokens"
    assert other not in info.value.user_message


def test_bad_configuration() -> None:
    for url in ("", "api.openai.com/v1", "ftp://x/v1", "http://"):
        with pytest.raises(LlmConfigError):
            OpenAICompatibleSummarizer(url, "m", None)
    with pytest.raises(LlmConfigError):
        OpenAICompatibleSummarizer("http://localhost:1/v1", "", None)
    with pytest.raises(LlmConfigError) as info:
        AnthropicSummarizer("https://api.anthropic.com", "claude", None)
    assert "ANTHROPIC_API_KEY" in info.value.user_message
    with pytest.raises(LlmConfigError):
        AnthropicSummarizer("https://api.anthropic.com", "claude", "sk-ant-oat01-subscription-token")
    ok = AnthropicSummarizer(
        "https://proxy.test", "claude", None, extra_headers={"Authorization": "Bearer proxytoken123"}
    )
    ok.close()


# ---------------------------------------------------------------------------------------------
# Anthropic


def test_anthropic_request_and_stream() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return sse_response(anthropic_sse([("thinking", ["hmm"]), ("text", ["A", "a"]), ("text", ["B"])]))

    deltas: list[str] = []
    with anthropic(handler, model_max_tokens=8192) as s:
        result = s.summarize(REQ, on_text=deltas.append)
    assert result.text == "Aa\nB" == "".join(deltas)
    assert result.stop_reason == "stop"
    assert result.model == "claude-test"
    # pi-ai sets cacheWrite1h at message_start (0 without 1-hour cache writes), after totalTokens
    assert result.usage == {
        "input": 50,
        "output": 9,
        "cacheRead": 5,
        "cacheWrite": 0,
        "totalTokens": 64,
        "cacheWrite1h": 0,
    }
    assert list(result.usage) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cacheWrite1h"]
    (request,) = seen
    assert request.url == "https://anthropic.example.test/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-unit-key-123456"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    body = json.loads(request.content)
    assert body == {
        "model": "claude-test",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": REQ.prompt_text, "cache_control": {"type": "ephemeral"}}
                ],
            }
        ],
        "max_tokens": 13107,
        "stream": True,
        "system": [{"type": "text", "text": P.system, "cache_control": {"type": "ephemeral"}}],
    }


def test_anthropic_thinking_options() -> None:
    req = history_request("[User]: x", None, None, 16384, 64000, True, "medium", P)
    s = AnthropicSummarizer(
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
        "k" * 10,
        reasoning_model=True,
        model_max_tokens=64000,
    )
    body = s.request_body(req)
    assert s._endpoint() == "https://api.anthropic.com/v1/messages"
    assert body["max_tokens"] == 13107 + 8192
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert s._headers(req)["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    no_reasoning = s.request_body(history_request("[User]: x", None, None, 16384, 64000, True, None, P))
    assert no_reasoning["thinking"] == {"type": "disabled"} and no_reasoning["max_tokens"] == 13107
    branch = s.request_body(SummaryRequest("branch", "s", "p", 2048, None))
    assert branch["max_tokens"] == 2048 and branch["thinking"] == {"type": "disabled"}
    s.close()
    adaptive = AnthropicSummarizer(
        "https://api.anthropic.com",
        "claude-opus-4-6",
        "k" * 10,
        reasoning_model=True,
        model_max_tokens=128000,
        adaptive_thinking=True,
        thinking_level_map={"xhigh": "max"},
    )
    body = adaptive.request_body(history_request("[User]: x", None, None, 16384, 128000, True, "xhigh", P))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "max"}
    assert body["max_tokens"] == 13107
    assert "anthropic-beta" not in adaptive._headers(REQ)
    adaptive.close()
    plain = AnthropicSummarizer(
        "https://api.anthropic.com",
        "claude-3-5-haiku-latest",
        "k" * 10,
        model_max_tokens=8192,
        cache_control=False,
    )
    body = plain.request_body(SummaryRequest("history", "", "p", None, "high"))
    assert "thinking" not in body and "system" not in body and body["max_tokens"] == 8192
    assert "cache_control" not in body["messages"][0]["content"][0]
    plain.close()


def test_adjust_max_tokens_for_thinking() -> None:
    assert adjust_max_tokens_for_thinking(13107, 64000, "medium") == (21299, 8192)
    assert adjust_max_tokens_for_thinking(13107, 16000, "high") == (16000, 14976)
    assert adjust_max_tokens_for_thinking(None, 32000, "xhigh") == (32000, 16384)
    assert adjust_max_tokens_for_thinking(1000, 2000, "high") == (2000, 976)
    assert adjust_max_tokens_for_thinking(100, 500, "medium") == (500, 0)


@pytest.mark.parametrize(
    ("stop", "outcome"),
    [
        ("max_tokens", "length"),
        ("pause_turn", "stop"),
        ("tool_use", "toolUse"),
        ("refusal", LlmSummaryError),
        ("brand_new", LlmSummaryError),
    ],
)
def test_anthropic_stop_reasons(stop: str, outcome: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return sse_response(anthropic_sse([("text", ["x"])], stop=stop))

    with anthropic(handler) as s:
        if isinstance(outcome, str):
            assert s.summarize(REQ).stop_reason == outcome
        else:
            with pytest.raises(outcome):
                s.summarize(REQ)


def test_anthropic_incomplete_and_error_streams() -> None:
    incomplete = anthropic(lambda r: sse_response(anthropic_sse([("text", ["x"])], stop_event=False)))
    with incomplete as s, pytest.raises(LlmProtocolError, match="message_stop"):
        s.summarize(REQ)
    only_ping = anthropic(lambda r: sse_response(b"event: ping\ndata: {}\n\n"))
    with only_ping as s, pytest.raises(LlmProtocolError):
        s.summarize(REQ)
    overloaded = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    calls: list[int] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return sse_response(overloaded if len(calls) == 1 else anthropic_sse([("text", ["ok"])]))

    token = RecordingToken()
    with anthropic(flaky) as s:
        assert s.summarize(REQ, cancel=token).text == "ok"  # overloaded before any text: retried
    assert len(calls) == 2


def test_no_retry_after_text_was_streamed() -> None:
    part = anthropic_sse([("text", ["partial"])]).split(b"event: content_block_stop")[0]
    overloaded = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return sse_response(part + overloaded)

    deltas: list[str] = []
    with anthropic(handler) as s, pytest.raises(LlmServerError):
        s.summarize(REQ, on_text=deltas.append, cancel=RecordingToken())
    assert deltas == ["partial"] and len(calls) == 1


def test_giving_up_is_no_warning_of_its_own(caplog: pytest.LogCaptureFixture) -> None:
    """The caller reports the error: a warning too printed the same failure twice on the CLI."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, json={"error": {"message": "slow down"}})

    with caplog.at_level("INFO"), openai(handler, max_retries=0) as s, pytest.raises(LlmRateLimitError):
        s.summarize(REQ)
    assert any("giving up" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


def test_a_transport_failures_words_are_redacted() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("cannot reach https://proxy.test/v1?key=sk-abcdefghijklmnop1234")

    with openai(handler, max_retries=0) as s, pytest.raises(LlmConnectionError) as info:
        s.summarize(REQ)
    assert "sk-abcdefghijklmnop1234" not in info.value.user_message
    assert "sk-abcdefghijklmnop1234" not in str(info.value)
