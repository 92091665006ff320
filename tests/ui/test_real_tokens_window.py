"""Real token counts in the window: the inspector's line, the tree's tooltip, the token bar."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt

from session_studio.core import count_worker
from session_studio.core import real_tokens as rt
from session_studio.ui import real_tokens as ui_rt
from session_studio.ui.main_window import MainWindow
from session_studio.ui.tasks import TaskRunner
from tests.core.test_count_worker import NO_TOKENIZER

from .conftest import settle_window, write_session

CJK = "会话工作室显示每一条消息的真实令牌数量以及估计值之间的差距。" * 40  # chars/4 300, o200k 920


def _cjk_session(tmp_path: Path) -> Path:
    spec: list[Any] = [
        {"type": "message", "message": {"role": "user", "content": CJK, "timestamp": 1}},
        {"type": "message", "message": {"role": "user", "content": CJK, "timestamp": 2}},
    ]
    return write_session(tmp_path / "cjk.jsonl", spec)


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    # the path's count starts once the plan's preparation is done (after_preparation)
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.doc.preparing)


def test_inspector_line_shows_estimate_and_real(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    _open(qtbot, window, _cjk_session(tmp_path))
    leaf = window.doc.session.leaf_index()
    window.doc.select(leaf)
    assert window.inspector.tokens.isVisible()
    assert window.inspector.tokens.text() == (
        "pi estimate 300 · real 920 (≈ o200k, approximation for an unknown model) · drift +620 (+207%)"
    )
    # the tree's tooltip says the same
    ix = window.tree_model.index_of(leaf)
    tip = window.tree_model.data(ix, Qt.ItemDataRole.ToolTipRole)
    assert "Tokens: pi estimate 300 · real 920 (≈ o200k, approximation for an unknown model)" in tip


def test_entries_without_context_tokens_have_no_line(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    spec: list[Any] = [
        {"type": "model_change", "provider": "openai", "modelId": "gpt-4o"},
        {"type": "message", "message": {"role": "user", "content": "hello world", "timestamp": 1}},
    ]
    _open(qtbot, window, write_session(tmp_path / "m.jsonl", spec))
    s = window.doc.session
    window.doc.select(next(i for i, r in enumerate(s.records) if r.type == "model_change"))
    assert not window.inspector.tokens.isVisible()
    window.doc.select(s.leaf_index())
    # gpt-4o has its own tokenizer: no approximation mark
    assert window.inspector.tokens.text() == "pi estimate 3 · real 2 (o200k) · drift -1 (-33%)"


def test_token_bar_shows_the_real_total_and_the_decision(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    _open(qtbot, window, _cjk_session(tmp_path))
    window.doc.set_params(
        20000, 1000, 2000
    )  # threshold 1000: chars/4 600 is below, 1,840 real tokens past it
    view = window.bar.real
    assert view is not None and view.result is not None
    assert view.header() == "real 1,840 (≈ o200k, approximation for an unknown model) vs chars/4 600"
    assert view.notes() == ["with real tokens past the threshold (1,840)"]
    assert "with real tokens this path is past the compaction threshold" in view.tooltip()
    lay = window.bar.layout_
    window.bar.grab()  # paints (the legend boxes the hover test needs)
    tip = window.bar.describe_at(QPoint(lay.x0 + lay.w - 5, lay.legend_y + 5))
    assert "real tokens: 1,840" in tip
    window.doc.set_params(20000, 1000, 10000)  # the same path: counts reused, only the decision changes
    assert window.bar.real is not None and window.bar.real.notes() == []


def test_counting_runs_off_the_gui_thread(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With real pools, the path is counted in a worker thread, never on the GUI thread."""
    from session_studio.ui.settings import AppSettings

    threads: list[int] = []
    real_counter = ui_rt.text_counter

    def spy(encoding: str) -> Any:
        threads.append(threading.get_ident())
        return real_counter(encoding)

    monkeypatch.setattr(ui_rt, "text_counter", spy)
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    _open(qtbot, w, _cjk_session(tmp_path))
    qtbot.waitUntil(lambda: w.bar.real is not None and w.bar.real.result is not None, timeout=10000)
    assert threads and threading.get_ident() not in threads
    runner.wait_idle()


def test_unavailable_tokenizer_is_said_not_raised(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker = count_worker.CountWorker([sys.executable, "-c", NO_TOKENIZER])
    monkeypatch.setattr(count_worker, "_shared", worker)
    try:
        _open(qtbot, window, _cjk_session(tmp_path))
        view = window.bar.real
        assert view is not None and view.result is None
        assert view.header().startswith("real tokens: real token counts unavailable")
        window.doc.select(window.doc.session.leaf_index())
        assert "real token counts unavailable" in window.inspector.tokens.text()
    finally:
        worker.close()


def test_counts_are_kept_per_file(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Counts are kept per file: reopening another file does not show the first file's counts."""
    first = _cjk_session(tmp_path)
    _open(qtbot, window, first)
    assert window.real_tokens._entries
    other = write_session(
        tmp_path / "o.jsonl",
        [{"type": "message", "message": {"role": "user", "content": "hello world", "timestamp": 1}}],
    )
    _open(qtbot, window, other)
    qtbot.waitUntil(lambda: window.doc.path == str(other))
    window.doc.select(window.doc.session.leaf_index())
    # the path's count starts once the plan's preparation is shown (after_preparation)
    qtbot.waitUntil(lambda: "counting" not in window.inspector.tokens.text())
    assert window.inspector.tokens.text().startswith("pi estimate 3 · real 2 ")


def test_appended_entries_are_counted_and_old_counts_kept(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json as _json

    path = _cjk_session(tmp_path)
    _open(qtbot, window, path)
    assert window.bar.real is not None and window.bar.real.result is not None
    assert window.bar.real.result.real_total == 1840
    counted: list[str] = []
    real_texts = rt.message_texts

    def spy(message: Any) -> Any:
        counted.append(message.get("content") if isinstance(message, dict) else "?")
        return real_texts(message)

    monkeypatch.setattr(rt, "message_texts", spy)
    lines = path.read_text(encoding="utf-8").splitlines()
    last = _json.loads(lines[-1])
    new = {
        "type": "message",
        "id": "appended1",
        "parentId": last["id"],
        "timestamp": "2025-01-01T00:10:00.000Z",
        "message": {"role": "user", "content": "hello world", "timestamp": 3},
    }
    with path.open("a", encoding="utf-8") as f:
        f.write(_json.dumps(new, ensure_ascii=False) + "\n")
    window.doc.refresh()
    qtbot.waitUntil(lambda: window.bar.real is not None and window.bar.real.result is not None)
    assert window.bar.real.result.real_total == 1840 + 2
    assert counted == ["hello world"]  # the two CJK messages were not counted again


def test_count_with_the_provider_on_request(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.llm.support import FAKE_KEY
    from tests.llm.test_token_count import count_server

    monkeypatch.setenv("COUNT_KEY", FAKE_KEY)
    _open(qtbot, window, _cjk_session(tmp_path))
    with count_server(input_tokens=1900) as server:
        window.set_custom_provider(
            {"kind": "anthropic", "base_url": server.url, "model": "claude-x", "key_env": "COUNT_KEY"}
        )
        assert server.paths == []  # nothing is sent until the user asks
        window.a_count_provider.trigger()
        qtbot.waitUntil(lambda: bool(window.bar.real and window.bar.real.provider))
    assert server.paths == ["/v1/messages/count_tokens"]
    text = "anthropic's count_tokens (claude-x): 1,900 tokens vs pi estimate 600 (+216.7%)"
    assert window.bar.real is not None and window.bar.real.provider == text
    assert text in window.bar.real.tooltip()
    assert window.statusBar().currentMessage() == text
    window.doc.set_params(20000, 1000, 10000)  # another plan of the same path keeps the provider's figure
    assert window.bar.real.provider == text


def test_count_with_a_non_anthropic_provider_explains(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[Any] = []
    monkeypatch.setattr("session_studio.ui.main_window.report_failure", lambda parent, f: failures.append(f))
    _open(qtbot, window, _cjk_session(tmp_path))
    window.set_custom_provider({"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "gpt-4o"})
    window.a_count_provider.trigger()
    qtbot.waitUntil(lambda: bool(failures))
    assert "needs Anthropic configured" in str(failures[0])


def test_long_paths_are_counted_progressively(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Progress on the bar while a long path is counted; entries reach the cache in batches."""
    spec: list[Any] = [
        {"type": "message", "message": {"role": "user", "content": f"message {k}", "timestamp": k}}
        for k in range(1300)
    ]
    path = write_session(tmp_path / "long.jsonl", spec)
    statuses: list[str] = []
    batches: list[int] = []
    window.real_tokens.path_changed.connect(lambda v: statuses.append(v.status))
    window.real_tokens.entries_counted.connect(lambda recs: batches.append(len(recs)))
    _open(qtbot, window, path)
    assert statuses[0] == "counting…"
    assert "counting 39 %" in statuses and "counting 78 %" in statuses
    assert statuses[-1] == "" and window.bar.real is not None and window.bar.real.result is not None
    assert batches[:2] == [512, 512] and sum(batches) == 1300


def test_a_hostile_model_name_is_shown_literally(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """The labels name the session's model: the bar's and the inspector's tooltips never render it."""
    evil = "<img src='/etc/x.png'>"
    spec: list[Any] = [
        {"type": "model_change", "provider": "p", "modelId": evil},
        {"type": "message", "message": {"role": "user", "content": "hello world", "timestamp": 1}},
    ]
    _open(qtbot, window, write_session(tmp_path / "evil.jsonl", spec))
    window.doc.select(window.doc.session.leaf_index())
    assert evil in window.inspector.tokens.text()  # a plain-text label
    assert evil not in window.inspector.tokens.toolTip() and "&lt;img" in window.inspector.tokens.toolTip()
    lay = window.bar.layout_
    window.bar.grab()
    tip = window.bar.describe_at(QPoint(lay.x0 + lay.w - 5, lay.legend_y + 5))
    assert evil not in tip and "&lt;img" in tip


def test_an_entry_the_path_job_counts_is_not_counted_twice(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Selecting an entry while the path is being counted started a second job that read, parsed
    and counted the same message at the same time (a 50 MB message: +100–200 MB at the peak, the
    hostile-window test's flake). The entry's count now comes from the path job."""
    from session_studio.ui import real_tokens as ui_rt
    from session_studio.ui.settings import AppSettings

    release = threading.Event()
    real_count_items = ui_rt.count_items

    def held(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(10)
        return real_count_items(*args, **kwargs)

    separately: list[int] = []
    real_entry_job = ui_rt._count_entry_job

    def entry_job(session: Any, record: int, *rest: Any) -> Any:
        separately.append(record)
        return real_entry_job(session, record, *rest)

    monkeypatch.setattr(ui_rt, "count_items", held)
    monkeypatch.setattr(ui_rt, "_count_entry_job", entry_job)
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    spec: list[Any] = [
        {"type": "message", "message": {"role": "user", "content": CJK, "timestamp": 1}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": CJK}]}},
        {"type": "message", "message": {"role": "user", "content": CJK, "timestamp": 3}},
    ]
    path = write_session(tmp_path / "three.jsonl", spec)
    _open(qtbot, w, path)
    counts = w.real_tokens
    qtbot.waitUntil(lambda: counts._path_op is not None, timeout=10000)
    s = w.doc.session
    on_path = s.leaf_index()
    counts.request_entry(on_path)  # what selecting it asks
    assert on_path in counts._deferred and on_path not in counts._entry_ops
    release.set()
    qtbot.waitUntil(lambda: on_path in counts._entries and not runner.busy, timeout=10000)
    assert on_path not in separately and not counts._deferred
    # the count is the one the entry's own job makes
    assert counts._entries[on_path] == real_entry_job(s, on_path, counts.tokenizer.encoding, counts.profile)
    runner.wait_idle()


def test_an_entry_waiting_for_a_failed_path_job_says_why(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path job finds no tokenizer: an entry that waited for it gets no job of its own (it
    would fail the same way) and its line is shown again, with the reason."""
    from session_studio.ui import real_tokens as ui_rt
    from session_studio.ui.settings import AppSettings

    release = threading.Event()

    def unavailable(*_args: Any, **_kwargs: Any) -> Any:
        assert release.wait(10)
        raise rt.TokenizerUnavailableError("real token counts unavailable: test")

    separately: list[int] = []
    monkeypatch.setattr(ui_rt, "count_items", unavailable)
    monkeypatch.setattr(ui_rt, "_count_entry_job", lambda _s, record, *_a: separately.append(record))
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    _open(qtbot, w, _cjk_session(tmp_path))
    counts = w.real_tokens
    qtbot.waitUntil(lambda: counts._path_op is not None, timeout=10000)
    leaf = w.doc.session.leaf_index()
    counts.request_entry(leaf)
    assert leaf in counts._deferred
    with qtbot.waitSignal(counts.entries_counted, timeout=10000) as shown:
        release.set()
    assert shown.args == [frozenset({leaf})]
    assert counts.unavailable is not None and "test" in counts.entry_line(leaf)
    runner.wait_idle()
    assert not separately and not counts._deferred


def test_the_count_s_progress_is_shown_per_percent(window: MainWindow) -> None:
    """Reported every 512 items (~200 times on a 100k-entry path): the bar is told a new
    percentage only."""
    shown: list[str] = []
    window.real_tokens.path_changed.connect(lambda view: shown.append(view.status))
    for done in (1, 5, 9, 20, 25, 1000):
        window.real_tokens._on_progress(done, 1000)
    assert shown == ["counting 0 %", "counting 2 %", "counting 100 %"]
