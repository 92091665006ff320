"""The error tree, overflow classification (spec §4.6 case 1) and redaction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from session_studio.llm import (
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
from session_studio.llm._http import error_for_message


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("prompt is too long: 213462 tokens > 200000 maximum", True),
        ("Rate limit: prompt is too long", False),
        ("ThrottlingException: Too many tokens, please wait", True),
        ("Throttling error: Too many tokens, please wait", False),
        ("413 (no body)", True),
        ("400 status code (no body)", True),
        ("x 413 (no body)", False),
        ("context_length_exceeded", True),
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            True,
        ),
        ("Input exceeds model's maximum context length (262144)", True),
        ("the request exceeds the available context size, try increasing it", True),
        (
            "Trying to keep the first 9000 tokens when context the overflows. greater than the context length",
            True,
        ),
        ("429 Too Many Requests: context length exceeded", False),
        ("Service unavailable: prompt too long; exceeded max context length", False),
        ("prompt too long; exceeded max context length by 10 tokens", True),
        ("Internal server error", False),
        ("", False),
    ],
)
def test_overflow_patterns(message: str, expected: bool) -> None:
    assert is_context_overflow_message(message) is expected


def test_tree() -> None:
    for cls in (
        LlmConfigError,
        LlmAuthError,
        LlmRateLimitError,
        LlmServerError,
        LlmTimeoutError,
        LlmConnectionError,
        LlmProtocolError,
        LlmContextOverflowError,
        LlmRequestError,
        LlmCancelledError,
        LlmSummaryError,
    ):
        assert issubclass(cls, LlmError)
        err = cls("technical")
        assert err.user_message and err.user_message != "technical"
    assert LlmRateLimitError("x").retryable and LlmServerError("x").retryable
    assert not LlmAuthError("x").retryable
    assert LlmError.__doc__ is not None
    import session_studio.llm.errors as errors_module

    assert errors_module.__doc__ is not None and "LlmContextOverflowError" in errors_module.__doc__


def test_error_mapping_user_messages() -> None:
    auth = error_for_message(
        "401 invalid api key", provider="OpenAI", status=401, key_hint="environment variable OPENAI_API_KEY"
    )
    assert isinstance(auth, LlmAuthError)
    assert auth.user_message.startswith("The server said 401")
    assert "check the API key in environment variable OPENAI_API_KEY" in auth.user_message
    rate = error_for_message("429 slow", provider="p", status=429, retry_after=2.5)
    assert isinstance(rate, LlmRateLimitError) and rate.retry_after == 2.5 and "2.5 s" in rate.user_message
    assert isinstance(error_for_message("x", provider="p", kind="overloaded_error"), LlmServerError)
    assert isinstance(error_for_message("x", provider="p", status=503), LlmServerError)
    assert isinstance(error_for_message("x", provider="p", status=408), LlmTimeoutError)
    assert isinstance(error_for_message("x", provider="p", kind="authentication_error"), LlmAuthError)
    assert isinstance(
        error_for_message("429 rate limit: too many tokens", provider="p", status=429), LlmRateLimitError
    )


def test_summary_failure_messages() -> None:
    assert summary_failure_message("history", "boom") == "Summarization failed: boom"
    assert summary_failure_message("update", None) == "Summarization failed: Unknown error"
    assert summary_failure_message("turn_prefix", "") == "Turn prefix summarization failed: Unknown error"
    assert summary_failure_message("branch", None) == "Summarization failed"
    assert summary_failure_message("branch", "bad") == "bad"


def test_redact_known_secret_and_credential_shapes() -> None:
    secret = "my-very-private-proxy-token"
    register_secret(secret)
    text = (
        f"Authorization: Bearer {secret}; x-api-key: abc123secretvalue; url=https://h/v1?key=AIzaXYZ123&x=1 "
        "sk-proj-ABCDEFGHIJKLMNOP sk-ant-api03-abcdefghijkl https://user:pass@host/path "
        '{"authorization": "Basic dXNlcjpwYXNz"} api_key=hunter22222'
    )
    out = redact(text)
    for leaked in (
        secret,
        "abc123secretvalue",
        "AIzaXYZ123",
        "ABCDEFGHIJKLMNOP",
        "abcdefghijkl",
        "user:pass",
        "dXNlcjpwYXNz",
        "hunter22222",
    ):
        assert leaked not in out, leaked
    assert "x=1" in out and "https://" in out
    assert redact("task-force and a desk-lamp") == "task-force and a desk-lamp"
    assert redact("short", ["abc"]) == "short"  # too-short secrets are ignored
    assert redact("token ABCDEFGH12", ["ABCDEFGH12"]) == "token [REDACTED]"


def test_errors_redact_their_messages() -> None:
    register_secret("sk-live-0123456789abcdef")
    err = LlmAuthError(
        "bad key sk-live-0123456789abcdef", user_message="key sk-live-0123456789abcdef rejected"
    )
    assert "0123456789abcdef" not in str(err)
    assert "0123456789abcdef" not in err.user_message


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
def test_package_imports_no_qt() -> None:
    import session_studio

    src = str(Path(session_studio.__file__).resolve().parents[1])
    code = "import sys, session_studio.llm; print(any(m.startswith('PySide6') for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": src, "PATH": ""},
    )
    assert out.stdout.strip() == "False"


def test_an_error_body_is_said_in_words_a_person_reads() -> None:
    """A 404 with an empty body read "(status code (no body))"; an HTML 404 quoted its markup."""
    empty = error_for_message("404 status code (no body)", provider="p", status=404, url="http://h/v1/chat")
    assert (
        empty.user_message
        == "The server said 404 at http://h/v1/chat: check the base URL and the model name."
    )
    page = "404 <html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>"
    html = error_for_message(page, provider="p", status=404, url="http://h/v1")
    assert "(an HTML page: 404 Not Found)" in html.user_message and "<" not in html.user_message
    assert "(bad key)" in error_for_message("401 bad key", provider="p", status=401).user_message


def test_an_answer_that_is_no_event_stream_points_at_the_base_url() -> None:
    """A 200 with a web page or plain JSON (a proxy, a wrong path) was "ended before it was complete
    (no finish reason)"; it is no event stream, and the base URL is what to check."""
    import httpx

    from session_studio.llm import OpenAICompatibleSummarizer, Prompts, history_request

    req = history_request("[User]: hi", None, None, 16384, 0, False, None, Prompts())
    for body, kind in (
        ("<html><body>Welcome</body></html>", "text/html"),
        ('{"ok": true}', "application/json"),
    ):
        summarizer = OpenAICompatibleSummarizer(
            "https://h.test/v1",
            "m",
            "sk-test",
            transport=httpx.MockTransport(
                lambda r, b=body, k=kind: httpx.Response(200, text=b, headers={"content-type": k})
            ),
            max_retries=0,
        )
        with summarizer, pytest.raises(LlmProtocolError) as failed:
            summarizer.summarize(req)
        assert "not an event stream" in failed.value.user_message and "base URL" in failed.value.user_message


def test_a_retry_is_said_as_it_happens() -> None:
    """A 429's retries were seconds of "Generating…" (and nothing on the CLI's stderr)."""
    import httpx

    from session_studio.llm import OpenAICompatibleSummarizer, Prompts, history_request

    answers = [httpx.Response(429, json={"error": {"message": "slow down"}})]
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"## Goal\\nok"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )

    def handler(request: httpx.Request) -> httpx.Response:
        if answers:
            return answers.pop()
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    notes: list[str] = []
    summarizer = OpenAICompatibleSummarizer(
        "https://h.test/v1", "m", "sk-test", transport=httpx.MockTransport(handler), retry_backoff_s=0
    )
    summarizer.retry_note = notes.append
    req = history_request("[User]: hi", None, None, 16384, 0, False, None, Prompts())
    with summarizer:
        assert summarizer.summarize(req).text == "## Goal\nok"
    assert notes == ["Attempt 1 of 3 failed (the server said 429); trying again in 0 s…"]
