"""The counting process: the same counts as the window's own tokenizer would give, batched, and
a process that comes and goes (idle exit, killed, stopped) without a count going wrong."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session, count_worker
from session_studio.core import real_tokens as rt
from session_studio.core.count_worker import CountWorker
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.tokenizer import (
    CL100K,
    MAX_EXACT_CHARS,
    O200K,
    TokenizerUnavailableError,
    load_counter,
)

FIXTURES = Path(__file__).resolve().parents[1] / "oracle" / "fixtures"

#: the counting process where bpe-openai is not installed
NO_TOKENIZER = (
    "import importlib.util as u, sys; real = u.find_spec; "
    "u.find_spec = lambda name, *a: None if name == 'bpe_openai' else real(name, *a); "
    "from session_studio.core.count_worker import main; sys.exit(main(sys.argv[1:]))"
)

TEXTS = [
    "hello world",
    "会话工作室显示每一条消息的真实令牌数量",
    "lone \ud800 surrogate, valid in JavaScript",
    "def f(x):\n    return x * 2\n" * 5000,  # over PIECE_CHARS: counted in pieces
    "x" * (MAX_EXACT_CHARS + 12345),  # over MAX_EXACT_CHARS: the head is sent, the rest extrapolated
    "",
]


@pytest.fixture
def worker() -> Iterator[CountWorker]:
    w = CountWorker()
    yield w
    w.close()


def _wait_until(cond: Any, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("encoding", [O200K, CL100K])
def test_counts_are_the_in_process_tokenizers(worker: CountWorker, encoding: str) -> None:
    here = load_counter(encoding)
    remote = worker.counter(encoding)
    assert remote.many(TEXTS) == [here(t) for t in TEXTS]
    assert remote("hello world") == here("hello world")
    assert worker.started == 1  # one process for both calls


def test_long_texts_are_not_sent_whole(worker: CountWorker, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[int] = []
    count = worker.count
    monkeypatch.setattr(worker, "count", lambda enc, texts: sent.extend(map(len, texts)) or count(enc, texts))
    text = "word " * (MAX_EXACT_CHARS // 2)  # 2.5 × MAX_EXACT_CHARS
    assert worker.counter(O200K)(text) == load_counter(O200K)(text)
    assert sent == [MAX_EXACT_CHARS]


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["0.80.2", "1.6.0"])
def test_a_path_is_counted_as_in_process_in_a_few_round_trips(
    worker: CountWorker, monkeypatch: pytest.MonkeyPatch, profile: Any
) -> None:
    s = Session.open(FIXTURES / "large-session.jsonl")
    state = PathPlanner(s, profile=profile).plan(PlanParams())
    calls: list[int] = []
    count = worker.count
    monkeypatch.setattr(worker, "count", lambda enc, texts: calls.append(len(texts)) or count(enc, texts))
    learned: dict[int, rt.MessageCount] = {}
    remote = rt.count_items(state, worker.counter(O200K), learned=learned)
    here_learned: dict[int, rt.MessageCount] = {}
    assert remote == rt.count_items(state, load_counter(O200K), learned=here_learned)
    assert learned == here_learned
    assert len(state.item_tokens) > 100
    assert len(calls) < len(state.item_tokens) / 50  # batches, not a round trip per text


def test_an_idle_process_exits_and_the_next_count_starts_another() -> None:
    w = CountWorker(idle_exit_s=0.3)
    try:
        assert w.counter(O200K)("hello world") == 2
        first = w.pid
        assert first is not None
        assert _wait_until(lambda: w.pid is None)  # exited on its own: its memory is given back
        assert w.counter(O200K)("hello world") == 2
        assert w.started == 2 and w.pid not in (None, first)
    finally:
        w.close()


def test_a_killed_process_is_replaced_without_a_wrong_count(worker: CountWorker) -> None:
    assert worker.counter(O200K)("hello world") == 2
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert _wait_until(lambda: worker.pid is None)
    assert worker.counter(O200K).many(["hello world", "hello"]) == [2, 1]
    assert worker.started == 2


def test_a_missing_tokenizer_is_said_in_its_words() -> None:
    w = CountWorker([sys.executable, "-c", NO_TOKENIZER])
    try:
        with pytest.raises(TokenizerUnavailableError, match="bpe-openai package is not installed"):
            w.counter(O200K)("hello")
        assert w.pid is not None  # the process lives on: only counting is unavailable
    finally:
        w.close()


def test_a_closed_worker_starts_nothing_and_leaves_nothing(worker: CountWorker) -> None:
    assert worker.counter(O200K)("hello") == 1
    pid = worker.pid
    worker.close()
    assert worker.pid is None
    with pytest.raises(OSError):  # the process is gone (killed and reaped)
        os.kill(pid or 0, 0)
    with pytest.raises(TokenizerUnavailableError, match="stopped"):
        worker.counter(O200K)("hello")
    assert worker.started == 1


def test_nothing_is_sent_for_no_texts(worker: CountWorker) -> None:
    assert worker.counter(O200K).many([]) == []
    assert worker.started == 0


def test_a_process_that_cannot_start_leaves_counting_to_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    w = CountWorker(["/nonexistent/python"])
    tries: list[object] = []
    popen = count_worker.subprocess.Popen
    monkeypatch.setattr(count_worker.subprocess, "Popen", lambda *a, **k: tries.append(a) or popen(*a, **k))
    try:
        assert w.counter(O200K).many(TEXTS) == [load_counter(O200K)(t) for t in TEXTS]
        assert w.counter(O200K)("hello world") == 2
        assert w.pid is None
        assert len(tries) == 1  # not tried again for each batch
    finally:
        w.close()


def test_closing_does_not_wait_for_a_stuck_request() -> None:
    """A request that never ends (a helper that hangs) does not hold the window's exit."""
    import threading

    stuck = "import sys, time; sys.stdin.buffer.read(1); time.sleep(60)"
    w = CountWorker([sys.executable, "-c", stuck])
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            w.counter(O200K)("hello")
        except BaseException as e:  # what the request ends with
            failed.append(e)

    t = threading.Thread(target=ask)
    t.start()
    assert _wait_until(lambda: w.pid is not None)
    start = time.monotonic()
    w.close()
    t.join(10)
    assert not t.is_alive() and time.monotonic() - start < 8
    assert len(failed) == 1 and isinstance(failed[0], TokenizerUnavailableError)
