"""Fixtures for the LLM tests: the shared mock LLM server (node) and pi's oracle."""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .support import MOCK_SCRIPT, NODE, ORACLE_SCRIPT, PI_HOME


@dataclass
class MockServer:
    """A running ``mock-llm.mjs`` process."""

    proc: subprocess.Popen[str]
    base_url: str
    openai_url: str
    anthropic_url: str
    log_path: Path
    fail: str | None = None
    stopped: bool = field(default=False)

    def requests(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        text = self.log_path.read_text(encoding="utf-8")
        # the mock may be writing a line right now (a request of an earlier test still being logged):
        # only lines it has finished (newline-terminated) are requests
        complete = text[: text.rfind("\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line]

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _start_mock(log_path: Path, fail: str | None) -> MockServer:
    assert NODE is not None
    # the session-scoped server lives as long as the test run (stop() ends it); --seconds only ends
    # one left behind, so it must outlast a slow run of the whole oracle stage (600 s did not)
    args = [NODE, str(MOCK_SCRIPT), "--port", "0", "--log", str(log_path), "--seconds", "3600"]
    if fail:
        args += ["--fail", fail]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        proc.wait(timeout=5)
        err = proc.stderr.read() if proc.stderr else ""
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        raise RuntimeError(f"mock-llm did not start: {err}")
    info = json.loads(line)
    return MockServer(
        proc=proc,
        base_url=info["baseUrl"],
        openai_url=info["openaiBaseUrl"],
        anthropic_url=info["anthropicBaseUrl"],
        log_path=log_path,
        fail=fail,
    )


def _require_mock() -> None:
    if NODE is None:
        pytest.skip("node is not installed")
    if not MOCK_SCRIPT.is_file():
        pytest.skip(f"{MOCK_SCRIPT} not found")


@pytest.fixture(scope="session")
def mock_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., MockServer]]:
    """Start mock servers on demand: ``start(fail=None, fresh=False)``.

    Servers for ``None`` and ``*:KIND`` specs are shared (their behaviour does not depend on the
    request count); numbered specs like ``1:429`` always get a fresh server.
    """
    servers: list[MockServer] = []
    shared: dict[str | None, MockServer] = {}
    counter = [0]

    def start(fail: str | None = None, *, fresh: bool = False) -> MockServer:
        _require_mock()
        reusable = not fresh and (fail is None or all(p.startswith("*:") for p in fail.split(",")))
        if reusable and fail in shared:
            return shared[fail]
        counter[0] += 1
        log = tmp_path_factory.mktemp("mock") / f"requests-{counter[0]}.jsonl"
        server = _start_mock(log, fail)
        servers.append(server)
        if reusable:
            shared[fail] = server
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def llm_mock(mock_factory: Callable[..., MockServer]) -> MockServer:
    """The shared, well-behaved mock server."""
    return mock_factory()


@pytest.fixture(scope="session")
def pi_oracle() -> Callable[..., dict[str, Any]]:
    """Run ``pi-oracle.mjs`` and return its JSON output (skips if pi's install is missing)."""
    if NODE is None:
        pytest.skip("node is not installed")
    if (
        not ORACLE_SCRIPT.is_file()
        or not (PI_HOME / "node_modules" / "@earendil-works" / "pi-coding-agent").is_dir()
    ):
        pytest.skip("pi oracle install not found")

    def run(*args: str) -> dict[str, Any]:
        assert NODE is not None
        done = subprocess.run(
            [NODE, str(ORACLE_SCRIPT), *args, "--pi-home", str(PI_HOME)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    return run
