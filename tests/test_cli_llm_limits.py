"""Issue 12 #6 / issue 9 #20: no server can keep an LLM call running: deadline, idle timeout, size caps,
cancellation, for both API kinds and whichever way the provider was configured."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from session_studio.llm import (
    AnthropicSummarizer,
    CancelToken,
    LlmCancelledError,
    LlmResponseTooLargeError,
    LlmTimeoutError,
    OpenAICompatibleSummarizer,
    SummaryRequest,
)
from session_studio.llm.base import RequestLimits
from tests.cli_support import LlmServer, llm_server, run_cli
from tests.core.util import A, T, U, chain, to_bytes

REQUEST = SummaryRequest("history", "system", "prompt", 100, None)


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    entries = []
    for _ in range(6):
        entries += [U(800), A(800), T(800)]
    path.write_bytes(to_bytes(chain(*entries)))
    return path


def _summarizer(
    kind: str, srv: LlmServer, limits: RequestLimits
) -> OpenAICompatibleSummarizer | AnthropicSummarizer:
    if kind == "openai":
        return OpenAICompatibleSummarizer(srv.openai_url, "m", None, limits=limits, max_retries=0)
    return AnthropicSummarizer(srv.anthropic_url, "m", "sk-test-key-123456", limits=limits, max_retries=0)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_trickling_server_meets_the_deadline(kind: str) -> None:
    with llm_server("trickle") as srv, _summarizer(kind, srv, RequestLimits(deadline_s=1.0)) as s:
        start = time.monotonic()
        with pytest.raises(LlmTimeoutError, match="deadline"):
            s.summarize(REQUEST)
        assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_endless_stream_meets_the_deadline_or_the_length_cap(kind: str) -> None:
    with llm_server("endless") as srv:
        with _summarizer(kind, srv, RequestLimits(deadline_s=1.0)) as s:
            start = time.monotonic()
            with pytest.raises(LlmTimeoutError, match="deadline"):
                s.summarize(REQUEST)
            assert time.monotonic() - start < 2.0
        with (
            _summarizer(kind, srv, RequestLimits(max_summary_chars=20_000)) as s,
            pytest.raises(LlmResponseTooLargeError, match="20,000 characters"),
        ):
            s.summarize(REQUEST)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_huge_answer_is_cut_at_the_byte_cap(kind: str) -> None:
    with llm_server("huge") as srv, _summarizer(kind, srv, RequestLimits(max_response_bytes=4 << 20)) as s:
        start = time.monotonic()
        with pytest.raises(LlmResponseTooLargeError, match="4,194,304 bytes"):
            s.summarize(REQUEST)
        assert time.monotonic() - start < 3.0


def test_a_silent_server_meets_the_idle_timeout() -> None:
    limits = RequestLimits(idle_timeout_s=0.5, deadline_s=30)
    with llm_server("silent") as srv, _summarizer("openai", srv, limits) as s:
        start = time.monotonic()
        with pytest.raises(LlmTimeoutError, match=r"stalled for 0\.5 s") as info:
            s.summarize(REQUEST)
        assert time.monotonic() - start < 2.0
        assert "sent nothing for 0.5 s" in info.value.user_message


def test_a_connection_that_is_never_made_is_not_called_a_silent_server() -> None:
    """A host that drops the handshake (here: a listening socket whose backlog is full) makes the
    idle timeout run out while connecting: the user reads "could not connect", not that the server
    "sent nothing"."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the accept queue: later handshakes are dropped
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    limits = RequestLimits(idle_timeout_s=0.5, connect_timeout_s=30, deadline_s=30)
    try:
        with OpenAICompatibleSummarizer(
            f"http://127.0.0.1:{port}/v1", "m", None, limits=limits, max_retries=0
        ) as s:
            start = time.monotonic()
            with pytest.raises(LlmTimeoutError, match="no connection") as info:
                s.summarize(REQUEST)
            assert time.monotonic() - start < 2.0
        message = info.value.user_message
        assert f"Could not connect to http://127.0.0.1:{port}/v1/chat/completions within 0.5 s" in message
        assert "--idle-timeout" in message and "sent nothing" not in message
    finally:
        for sock in (*fillers, listener):
            sock.close()


@pytest.mark.parametrize("mode", ["trickle", "silent", "endless"])
def test_cancel_works_at_any_moment(mode: str) -> None:
    with llm_server(mode) as srv, _summarizer("openai", srv, RequestLimits()) as s:
        token = CancelToken()
        timer = threading.Timer(0.4, token.cancel)
        timer.start()
        start = time.monotonic()
        with pytest.raises(LlmCancelledError):
            s.summarize(REQUEST, cancel=token)
        assert time.monotonic() - start < 1.5
        timer.join()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_compact_ends_with_a_clear_error_and_writes_nothing(tmp_path: Path, provider: str) -> None:
    session = _session(tmp_path)
    before = session.read_bytes()
    with llm_server("trickle") as srv:
        url = srv.openai_url if provider == "openai" else srv.anthropic_url
        start = time.monotonic()
        r = _with_provider(
            "compact", session, provider, url, "--keep-recent", "600", "--yes", "--timeout", "2"
        )
        elapsed = time.monotonic() - start
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "within 2 s (the overall deadline)" in err and "nothing was written" in err
    assert "Traceback" not in err
    assert elapsed < 8
    assert session.read_bytes() == before


def test_compact_caps_a_huge_answer(tmp_path: Path) -> None:
    session = _session(tmp_path)
    before = session.read_bytes()
    with llm_server("huge") as srv:
        r = run_cli(
            "compact",
            str(session),
            "--keep-recent",
            "600",
            "--yes",
            "--provider",
            "openai",
            "--base-url",
            srv.openai_url,
            "--model",
            "m",
            "--timeout",
            "60",
            env={"PATH": "/usr/bin:/bin"},
            timeout=60,
        )
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "67,108,864 bytes" in err and "nothing was written" in err
    assert session.read_bytes() == before


def test_timeout_applies_when_the_provider_comes_from_pi_settings(tmp_path: Path) -> None:
    session = _session(tmp_path)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "local", "defaultModel": "m"}))
    with llm_server("trickle") as srv:
        (agent / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "local": {
                            "baseUrl": srv.openai_url,
                            "api": "openai-completions",
                            "models": [{"id": "m"}],
                        }
                    }
                }
            )
        )
        start = time.monotonic()
        r = run_cli(
            "compact",
            str(session),
            "--dry-run",
            "--keep-recent",
            "600",
            "--timeout",
            "1.5",
            env={"PI_CODING_AGENT_DIR": str(agent), "PATH": "/usr/bin:/bin"},
            timeout=30,
        )
        elapsed = time.monotonic() - start
    assert srv.requests, "the provider from pi's settings was not used"
    assert r.returncode == 1 and "within 1.5 s" in r.stderr.decode()
    assert elapsed < 8


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ReadTimeout("timed out"), "the stream stalled for 0.5 s"),
        (httpx.PoolTimeout("timed out"), "the stream stalled for 0.5 s"),
        (httpx.ConnectTimeout("timed out"), "no connection to"),
    ],
)
def test_httpx_timeouts_say_which_limit_was_met(exc: httpx.TimeoutException, expected: str) -> None:
    """httpx's read timeout is the idle timeout: whichever notices the silence first (httpx or our
    watchdog), the user reads the same error (under load the race went either way)."""
    s = OpenAICompatibleSummarizer(
        "http://127.0.0.1:9/v1", "m", None, limits=RequestLimits(idle_timeout_s=0.5), max_retries=0
    )
    with s:
        err = s._transport_error(exc, after_head=True, url="http://127.0.0.1:9/v1/chat/completions")
    assert isinstance(err, LlmTimeoutError)
    assert expected in str(err)


def test_compact_without_yes_and_no_terminal_asks_nothing_of_the_model(tmp_path: Path) -> None:
    """Without --yes and with no terminal to answer, compact used to pay for a summary first and
    only then say it could not ask; now it stops before any request."""
    session = _session(tmp_path)
    before = session.read_bytes()
    with llm_server("ok") as srv:
        r = run_cli(
            "compact",
            str(session),
            "--keep-recent",
            "600",
            "--provider",
            "openai",
            "--base-url",
            srv.openai_url,
            "--model",
            "m",
            stdin="",  # not a terminal
        )
        assert not srv.requests
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "add --yes to write, or --dry-run to only preview" in err and "nothing was sent" in err
    assert session.read_bytes() == before


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("command", ["compact", "branch-to"])
def test_an_answer_with_no_text_is_not_written(tmp_path: Path, provider: str, command: str) -> None:
    """A model that ended its answer without a word: compact and branch-to wrote it (exit 0)."""
    session = _session(tmp_path)
    before = session.read_bytes()
    target = [] if command == "compact" else [json.loads(before.splitlines()[2])["id"], "--summarize"]
    with llm_server("ok", text="") as srv:
        url = srv.openai_url if provider == "openai" else srv.anthropic_url
        r = _with_provider(
            command,
            session,
            provider,
            url,
            *target,
            *(["--keep-recent", "600", "--yes"] if command == "compact" else []),
        )
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "the model answered with no text" in err and "nothing was written" in err
    assert session.read_bytes() == before


def test_compact_json_answers_on_stdout_when_the_call_fails(tmp_path: Path) -> None:
    """`compact --json` printed nothing on stdout when the summary call failed: a script got an
    empty stream. It prints the failure as JSON (and the line on stderr, as before)."""
    session = _session(tmp_path)
    with llm_server("error", text="model m does not exist") as srv:
        r = _with_provider("compact", session, "openai", srv.openai_url, "--keep-recent", "600", "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["written"] is False and out["entry"] is None and "model m does not exist" in out["error"]
    assert "nothing was written" in r.stderr.decode()


def _with_provider(command: str, session: Path, provider: str, url: str, *args: str) -> Any:
    """``command SESSION ARGS…`` against the test server at ``url``, its key named by --api-key-env."""
    return run_cli(
        command,
        str(session),
        *args,
        "--provider",
        provider,
        "--base-url",
        url,
        "--model",
        "m",
        "--api-key-env",
        "MY_KEY",
        env={"MY_KEY": "sk-test-key-123456", "PATH": "/usr/bin:/bin"},
        timeout=30,
    )
