"""Anthropic's count_tokens endpoint against a fake server on 127.0.0.1 (real HTTP, no node)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.engine.token_count import context_turns, count_with_provider
from session_studio.llm import LlmAuthError, LlmConfigError, LlmProtocolError
from session_studio.llm.config import ProviderConfig, resolve_provider
from session_studio.llm.token_count import CountTurn, count_tokens_body, make_token_counter
from tests.core.util import A, U, call, session_of

from .support import FAKE_KEY


@dataclass
class CountServer:
    """Answers POST /v1/messages/count_tokens with ``input_tokens`` (or ``status`` with ``body``)."""

    input_tokens: int = 1234
    status: int = 200
    body: bytes | None = None
    bodies: list[Any] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def count_server(**kw: Any) -> Iterator[CountServer]:
    state = CountServer(**kw)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            state.paths.append(self.path)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            state.bodies.append(json.loads(raw))
            body = state.body if state.body is not None else json.dumps({"input_tokens": state.input_tokens})
            data = body if isinstance(body, bytes) else body.encode()
            self.send_response(state.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _resolved(url: str, tmp_path: Path, **env: str) -> Any:
    config = ProviderConfig(provider="anthropic", base_url=url, model="claude-count", api_key_env="COUNT_KEY")
    return resolve_provider(config, agent_dir=tmp_path, env={"COUNT_KEY": FAKE_KEY, **env})


def _state() -> Any:
    s = session_of(
        U("hello world"),
        A(blocks=[{"type": "thinking", "thinking": "hmm"}, call("read", path="a.py")]),
        U("again"),
        A("done"),
    )
    return PathPlanner(s).plan(PlanParams())


def test_counts_the_path_with_the_endpoint(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with count_server(input_tokens=321) as server:
        got = count_with_provider(_state(), _resolved(server.url, tmp_path))
    assert got.tokens == 321 and got.model == "claude-count" and got.estimate == 3 + 6 + 2 + 1
    assert server.paths == ["/v1/messages/count_tokens"]
    assert server.headers[0]["x-api-key"] == FAKE_KEY
    assert server.headers[0]["anthropic-version"] == "2023-06-01"
    assert server.bodies[0] == {
        "model": "claude-count",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello world"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "hmm"},
                    {"type": "text", "text": "read"},
                    {"type": "text", "text": '{"path":"a.py"}'},
                ],
            },
            {"role": "user", "content": [{"type": "text", "text": "again"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        ],
    }
    assert FAKE_KEY not in caplog.text  # keys are never logged


def test_http_errors_read_as_for_a_summary(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    err = json.dumps({"error": {"type": "authentication_error", "message": f"bad key {FAKE_KEY}"}}).encode()
    with count_server(status=401, body=err) as server, pytest.raises(LlmAuthError) as info:
        count_with_provider(_state(), _resolved(server.url, tmp_path))
    assert FAKE_KEY not in str(info.value) and FAKE_KEY not in caplog.text


def test_an_answer_without_input_tokens_is_a_protocol_error(tmp_path: Path) -> None:
    with count_server(body=b'{"tokens": 3}') as server, pytest.raises(LlmProtocolError):
        count_with_provider(_state(), _resolved(server.url, tmp_path))


def test_the_anthropic_key_is_not_sent_to_another_host(tmp_path: Path) -> None:
    """The key-host policy of the summarizer: ANTHROPIC_API_KEY goes only to Anthropic's host."""
    config = ProviderConfig(provider="anthropic", base_url="http://127.0.0.1:9", model="claude-count")
    resolved = resolve_provider(config, agent_dir=tmp_path, env={"ANTHROPIC_API_KEY": FAKE_KEY})
    assert resolved.api_key is None
    with pytest.raises(LlmConfigError, match="no API key"):
        make_token_counter(resolved)


def test_only_anthropic_has_a_count_endpoint(tmp_path: Path) -> None:
    config = ProviderConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model="gpt-4o")
    with pytest.raises(LlmConfigError) as info:
        make_token_counter(resolve_provider(config, agent_dir=tmp_path, env={}))
    assert "needs Anthropic configured" in info.value.user_message


def test_body_merges_roles_and_drops_empty_texts() -> None:
    body = count_tokens_body(
        "m",
        [
            CountTurn("assistant", ("first",)),
            CountTurn("user", ("", "  ")),
            CountTurn("user", ("a",), (("image/png", "AAAA"),)),
            CountTurn("user", ("b",)),
        ],
    )
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "text", "text": "a"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                {"type": "text", "text": "b"},
            ],
        }
    ]


def test_nothing_to_count_sends_nothing(tmp_path: Path) -> None:
    with count_server() as server:
        counter = make_token_counter(_resolved(server.url, tmp_path))
        assert counter.count_tokens([CountTurn("user", ("",))]) == 0
        counter.close()
    assert server.paths == []


def test_context_turns_carry_images() -> None:
    s = session_of(
        {
            "type": "message",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image", "data": "AA", "mimeType": "image/png"},
                ],
                "timestamp": 1,
            },
        }
    )
    turns = context_turns(PathPlanner(s).plan(PlanParams()))
    assert turns == [CountTurn("user", ("see",), (("image/png", "AA"),))]
