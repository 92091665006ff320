"""Helpers for the CLI tests: run the real command, build sessions, a hostile local LLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m session_studio.cli ARGS`` in a fresh process (this checkout's sources)."""
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = str(SRC)
    full_env.setdefault("PI_CODING_AGENT_DIR", str(Path(full_env.get("TMPDIR", "/tmp")) / "no-such-pi-dir"))
    return subprocess.run(
        [sys.executable, "-m", "session_studio.cli", *args],
        capture_output=True,
        env=full_env,
        timeout=timeout,
        input=stdin.encode() if stdin is not None else None,
        check=False,
    )


def openai_stream(text: str) -> bytes:
    chunks = [
        {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
        },
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def anthropic_stream(text: str) -> bytes:
    events = [
        ("message_start", {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 1}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


@dataclass
class LlmServer:
    """A local HTTP server on 127.0.0.1 acting as an LLM endpoint in one of several ``mode`` s.

    ``ok``: a valid short stream (OpenAI or Anthropic by path); ``trickle``: the stream head, then
    one byte every 0.2 s forever; ``endless``: valid text deltas forever, fast; ``huge``: megabytes
    without a line break; ``silent``: headers, then nothing; ``error``: HTTP 400 whose message is
    ``text``. Every request's headers are recorded.
    """

    mode: str = "ok"
    text: str = "The summary."
    requests: list[dict[str, str]] = field(default_factory=list)
    port: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def auth_headers(self) -> list[tuple[str | None, str | None]]:
        return [(r.get("authorization"), r.get("x-api-key")) for r in self.requests]


def _handler(server: LlmServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            server.requests.append({k.lower(): v for k, v in self.headers.items()})
            anthropic = self.path.endswith("/messages")
            if server.mode == "error":
                body = json.dumps(
                    {"error": {"message": server.text, "type": "invalid_request_error"}}
                ).encode()
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            if server.mode == "ok":
                body = anthropic_stream(server.text) if anthropic else openai_stream(server.text)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.flush()
            try:
                self._misbehave(anthropic)
            except (BrokenPipeError, ConnectionResetError):
                return

        def _misbehave(self, anthropic: bool) -> None:
            mode = server.mode
            if mode == "trickle":
                # a valid start, then one byte of an endless comment line every 0.2 s
                self.wfile.write(b": hold on")
                while not server.stop.is_set():
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.2)
            elif mode == "endless":
                if anthropic:
                    head = anthropic_stream("")
                    self.wfile.write(head[: head.index(b"event: content_block_stop")])
                while not server.stop.is_set():
                    if anthropic:
                        event = {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": "more text " * 50},
                        }
                        self.wfile.write(
                            f"event: content_block_delta\ndata: {json.dumps(event)}\n\n".encode()
                        )
                    else:
                        chunk = {"choices": [{"index": 0, "delta": {"content": "more text " * 50}}]}
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                    time.sleep(0.001)
            elif mode == "huge":
                block = b"x" * (1 << 20)
                while not server.stop.is_set():
                    self.wfile.write(block)
            elif mode == "silent":
                server.stop.wait(60)
            elif mode == "broken":
                chunk = {
                    "choices": [{"index": 0, "delta": {"content": server.text[: len(server.text) // 2]}}]
                }
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            elif mode == "slow":
                text = server.text
                step = max(1, -(-len(text) // 10))
                for i in range(0, len(text), step):
                    if server.stop.wait(0.1):
                        return
                    chunk = {"choices": [{"index": 0, "delta": {"content": text[i : i + step]}}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
                self.wfile.flush()

    return Handler


@contextmanager
def llm_server(mode: str = "ok", text: str = "The summary.") -> Iterator[LlmServer]:
    state = LlmServer(mode=mode, text=text)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()
