"""The compact search texts (issue 11: the window's memory) find what a str per record found."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.ui.outline import FILTERS, build_outline
from session_studio.ui.search_texts import BATCH_RECORDS, SearchTexts
from session_studio.ui.tree_model import extend_search_texts, filtered_outline

from .test_outline_columns import as_plain, generated_session

#: characters that make UTF-8 and lowercasing interesting: multi-byte, astral, a lone surrogate
#: (valid in JavaScript strings), Greek sigma (final form when lowercased at a word's end), the
#: Kelvin sign and dotted İ (lowercase to other characters), ß, a combining accent
_ALPHABET = "abcAB →…é😀\ud800ΣσςKİıßẞ\u0301x\n"


def _texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        size = rng.choice([0, 1, 2, 5, 20, 160])
        out.append("".join(rng.choice(_ALPHABET) for _ in range(size)).lower())
    return out


def _needles(rng: random.Random, texts: list[str]) -> list[str]:
    joined = "".join(texts)
    needles = ["a", "é", "😀", "\ud800", "σ", "ς", "k", "i̇", "ß", "→…", "zz-not-there"]
    for _ in range(30):  # pieces of the texts, many running across two records' texts
        at = rng.randrange(max(1, len(joined)))
        needles.append(joined[at : at + rng.choice([1, 2, 3, 7])])
    return [x for x in needles if x]


def _built_in_pieces(rng: random.Random, texts: list[str]) -> SearchTexts:
    st = SearchTexts()
    at = 0
    while at < len(texts):  # appends of any size, some a record at a time
        step = rng.choice([1, 1, 3, 200, BATCH_RECORDS, BATCH_RECORDS + 17])
        st = st.extended(texts[at : at + step])
        at += step
    return st


@pytest.mark.parametrize("seed", range(6))
def test_search_texts_find_what_str_in_finds(seed: int) -> None:
    rng = random.Random(seed)
    texts = _texts(rng, rng.choice([0, 1, 50, 3000]))
    st = _built_in_pieces(rng, texts)
    assert len(st) == len(texts) and list(st) == texts
    for i in rng.sample(range(len(texts)), min(5, len(texts))):
        assert st[i] == texts[i]
    for needle in _needles(rng, texts):
        assert list(st.matching(needle)) == [i for i, t in enumerate(texts) if needle in t], needle
    cut = rng.randrange(len(texts) + 1)
    assert list(st.truncated(cut)) == texts[:cut]
    assert list(st.truncated(cut).extended(texts[cut:])) == texts
    assert list(st.matching("")) == list(range(len(texts)))


def test_search_texts_stay_in_few_batches_when_appended_one_at_a_time() -> None:
    st = SearchTexts()
    for k in range(5):  # a live session: a search after each appended entry
        st = st.extended([f"entry {k}"])
    assert len(st._batches) == 1
    st = st.extended([f"entry {k}" for k in range(5, BATCH_RECORDS + 2)])
    for k in range(BATCH_RECORDS + 2, BATCH_RECORDS + 5):
        st = st.extended([f"entry {k}"])
    assert len(st) == BATCH_RECORDS + 5 and len(st._batches) == 2
    assert list(st.matching("entry 1027")) == [1027]
    assert list(st) == [f"entry {k}" for k in range(BATCH_RECORDS + 5)]


def _reference_filter(s: Session, mode: str, query: str, path: Any, texts: list[str]) -> Any:
    """The search as it was: a str per record, `in` on each, ids through a record view each."""
    hits = {i for i, t in enumerate(texts) if query in t}
    for key, (label, _ts) in s.labels.items():
        if isinstance(label, str) and query in label.lower():
            rec = s.by_id.get(key)
            if rec is not None:
                hits.add(rec)
    hits.update(i for i, r in enumerate(s.records) if str(r.id).lower() == query)
    return as_plain(build_outline(s, mode, hits.__contains__, path))


@pytest.mark.parametrize("seed", range(4))
def test_search_results_equal_the_per_entry_search(tmp_path: Path, seed: int) -> None:
    s = generated_session(tmp_path, seed, 200)
    texts = extend_search_texts(s, None)
    plain = list(texts)
    rng = random.Random(seed)
    path = s.path_indices(s.leaf_index())
    ids = [str(s.records[i].id).lower() for i in rng.sample(range(len(s.records)), 5)]
    queries = [
        "text 1",
        "é",
        "ée",
        "user",
        "l1",
        "compaction",
        "→",
        "undefined",
        "none",
        "12",
        "abcdef12",
        *ids,
    ]
    for query in queries:
        for mode in ("default", "all", "no-tools"):
            got = as_plain(filtered_outline(s, mode, query, path, texts))
            assert got == _reference_filter(s, mode, query, path, plain), (query, mode)
    assert set(FILTERS) >= {"default", "all", "no-tools"}


def test_search_texts_cost_a_few_bytes_per_entry(tmp_path: Path) -> None:
    """Issue 11: a lowercased str per record cost ~380 bytes an entry on the 100k-entry session
    (most previews hold a non-ASCII character, so two bytes a character); compressed batches cost
    a tenth of that."""
    import gc
    import tracemalloc

    n = 1500
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"}
    ]
    for k in range(n):
        words = " ".join(f"word{(k * 7 + j) % 50} → résumé" for j in range(12))
        msg = {"role": "user", "content": f"entry {k}: {words}", "timestamp": k}
        parent = None if k == 0 else f"{k - 1:08x}"
        ts = "2025-01-01T10:00:00.000Z"
        lines.append(
            {"type": "message", "id": f"{k:08x}", "parentId": parent, "timestamp": ts, "message": msg}
        )
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    s = Session.open(path, keep_values=False)
    extend_search_texts(s, None)
    gc.collect()
    tracemalloc.start()
    try:
        texts = extend_search_texts(s, None)
        gc.collect()
        retained, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(texts) == n
    assert retained / n < 80, f"{retained / n:.0f} bytes an entry"


def test_the_preview_cache_of_the_tree_is_bounded(tmp_path: Path) -> None:
    """Issue 11: every preview painted stayed cached (~400 bytes a row): scrolling through a
    900k-entry tree kept them all. The cache keeps at most ``preview_cache_rows``."""
    from session_studio.ui.outline import preview_text
    from session_studio.ui.tree_model import SessionTreeModel

    s = generated_session(tmp_path, 3, 400)
    model = SessionTreeModel()
    model.preview_cache_rows = 100
    model.set_session(s, s.path_indices(s.leaf_index()))
    shown = list(model.outline.group_of)
    assert len(shown) > 300
    for i in shown:  # a scroll through every row
        assert model.preview(i) == preview_text(s.value(i))
        assert len(model._preview) <= 100 + 80  # the limit, plus one batch read for a screenful


def test_search_texts_extended_from_a_part_batch_pack_each_batch_once(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The reads after a partly filled last batch end on batch boundaries: the part batch is
    filled once, and no later batch is unpacked and packed again."""
    from session_studio.ui import search_texts

    s = generated_session(tmp_path, 2, 3 * BATCH_RECORDS + 10)
    first = extend_search_texts(s, None).truncated(BATCH_RECORDS + 7)
    packed: list[int] = []
    real = search_texts._Batch.__init__

    def counting(self: Any, texts: Any) -> None:
        packed.append(len(texts))
        real(self, texts)

    monkeypatch.setattr(search_texts._Batch, "__init__", counting)
    texts = extend_search_texts(s, first)
    assert packed == [BATCH_RECORDS, BATCH_RECORDS, 10]
    assert list(texts) == list(extend_search_texts(s, None))


@pytest.mark.parametrize("seed", range(3))
def test_the_worker_process_builds_the_texts_the_thread_builds(tmp_path: Path, seed: int) -> None:
    """Issue 11: a big session's search texts come from a second process (search_worker), the same
    texts the window's thread builds: every batch, every odd entry, lowercased alike."""
    from session_studio.ui.search_worker import build_search_texts

    generated = generated_session(tmp_path, seed, 2 * BATCH_RECORDS + 300)
    s = Session.open(generated.path, keep_values=False)
    by_worker = build_search_texts(s, min_records=1)
    assert by_worker is not None
    assert list(by_worker) == list(extend_search_texts(s, None))
    assert list(by_worker.matching("é")) == list(extend_search_texts(s, None).matching("é"))
    # and it extends as the thread's texts do when pi appends
    more = by_worker.extended(["appended → é"])
    assert len(more) == len(s.records) + 1 and more[len(s.records)] == "appended → é"


def test_worker_ranges_split_once_at_a_whole_batch() -> None:
    from session_studio.ui.search_worker import WORKER_MIN_RECORDS, worker_ranges

    assert worker_ranges(10, 8) == [(0, 10)]
    assert worker_ranges(2 * WORKER_MIN_RECORDS - 1, 8) == [(0, 2 * WORKER_MIN_RECORDS - 1)]
    assert worker_ranges(900_000, 1) == [(0, 900_000)]
    for count in (2 * WORKER_MIN_RECORDS, 900_000, 900_001, 2 * WORKER_MIN_RECORDS + BATCH_RECORDS - 1):
        (lo0, hi0), (lo1, hi1) = worker_ranges(count, 2)
        assert lo0 == 0 and hi0 == lo1 and hi1 == count
        assert hi0 % BATCH_RECORDS == 0 and 0 <= count // 2 - hi0 < BATCH_RECORDS


@pytest.mark.parametrize("spill", [True, False])
def test_two_workers_build_the_texts_one_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spill: bool
) -> None:
    """Issue 11: on two cores a big session's texts come from two workers, each over half of the
    records; put together they are the texts the thread builds, and they extend the same way."""
    from session_studio.ui import search_worker

    if not spill:
        blocked = tmp_path / "not-a-folder"
        blocked.write_text("a file where the cache folder would be")
        monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(blocked))
    monkeypatch.setattr(search_worker, "WORKER_MIN_RECORDS", BATCH_RECORDS)
    monkeypatch.setattr(search_worker, "_usable_cores", lambda: 2)
    started: list[tuple[int, int]] = []
    send_records = search_worker._Worker.send_records

    def counted(worker: object, session: Session, lo: int, hi: int) -> None:
        started.append((lo, hi))
        send_records(worker, session, lo, hi)  # type: ignore[arg-type]

    monkeypatch.setattr(search_worker._Worker, "send_records", counted)
    generated = generated_session(tmp_path, 6, 3 * BATCH_RECORDS + 300)
    s = Session.open(generated.path, keep_values=False)
    count = len(s.records)
    reported: list[tuple[int, int]] = []
    by_workers = search_worker.build_search_texts(s, progress=lambda n, total: reported.append((n, total)))
    assert started == [(0, BATCH_RECORDS), (BATCH_RECORDS, count)]
    # a report per batch, of both workers' records together
    assert [n for n, _ in reported] == sorted(n for n, _ in reported) and reported[-1] == (count, count)
    assert len(reported) == len(by_workers._batches) if by_workers is not None else False
    assert by_workers is not None
    in_thread = extend_search_texts(s, None)
    assert list(by_workers) == list(in_thread)
    for needle in ("é", "the", "→", "zz-not-there"):
        assert list(by_workers.matching(needle)) == list(in_thread.matching(needle))
    more = by_workers.extended(["appended → é"])
    assert len(more) == count + 1 and more[count] == "appended → é"
    assert [len(b) for b in more._batches[:-1]] == [BATCH_RECORDS] * (len(more._batches) - 1)


def test_the_sessions_columns_are_never_what_the_pipe_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipe write lets the GIL go until the worker has read everything; an array whose buffer it
    holds cannot grow meanwhile, and pi appending makes the GUI thread extend these columns
    (BufferError there). Each worker is sent copies, made holding the GIL."""
    from multiprocessing.connection import Connection

    from session_studio.ui.search_worker import build_search_texts

    generated = generated_session(tmp_path, 9, BATCH_RECORDS + 5)
    s = Session.open(generated.path, keep_values=False)
    columns = (s.records.offsets, s.records.lengths)
    sent: list[object] = []
    real = Connection.send_bytes

    def spy(self: Connection, buf: Any, *a: Any) -> None:
        sent.append(buf)
        real(self, buf, *a)

    monkeypatch.setattr(Connection, "send_bytes", spy)
    assert build_search_texts(s, min_records=1) is not None
    assert len(sent) == 2 and all(x == c for x, c in zip(sent, columns, strict=True))
    assert not any(x is c for x in sent for c in columns)


def test_when_one_of_two_workers_fails_nothing_is_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second half's worker dies (its lines are no longer JSON): no texts, the thread builds them."""
    from session_studio.ui import search_worker

    monkeypatch.setattr(search_worker, "WORKER_MIN_RECORDS", BATCH_RECORDS)
    monkeypatch.setattr(search_worker, "_usable_cores", lambda: 2)
    generated = generated_session(tmp_path, 7, 3 * BATCH_RECORDS)
    s = Session.open(generated.path, keep_values=False)
    t = s.records
    last = len(t) - 5
    with open(generated.path, "r+b") as fh:  # same file, same size: a line's bytes damaged in place
        fh.seek(t.offsets[last])
        fh.write(b"#" * t.lengths[last])
    assert search_worker.build_search_texts(s) is None


def test_the_workers_texts_stay_on_disk_not_in_the_windows_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11 (the window's memory on 1 GB): the worker writes its batches to an unlinked file in
    Session Studio's cache folder; the window keeps only where each lies, and finds the same."""
    import os

    from session_studio.ui import search_texts
    from session_studio.ui.search_worker import build_search_texts

    cache = tmp_path / "cache"
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(cache))
    generated = generated_session(tmp_path, 4, 3 * BATCH_RECORDS + 11)
    s = Session.open(generated.path, keep_values=False)
    by_worker = build_search_texts(s, min_records=1)
    assert by_worker is not None
    batches = by_worker._batches
    assert batches and all(isinstance(b, search_texts._SpilledBatch) for b in batches)
    assert list(os.scandir(cache)) == []  # the folder is made, the file in it already unlinked
    in_thread = extend_search_texts(s, None)
    assert list(by_worker) == list(in_thread)
    for needle in ("é", "the", "zz-not-there", "→"):
        assert list(by_worker.matching(needle)) == list(in_thread.matching(needle))
    assert by_worker.truncated(BATCH_RECORDS + 5)[BATCH_RECORDS + 4] == in_thread[BATCH_RECORDS + 4]
    fd = batches[0].file.fd
    os.fstat(fd)
    del by_worker, batches
    with pytest.raises(OSError):  # the last batch dropped closes the file
        os.fstat(fd)


def test_without_a_spill_folder_the_worker_sends_its_texts_over_the_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_studio.ui import search_texts
    from session_studio.ui.search_worker import build_search_texts

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(blocked))
    generated = generated_session(tmp_path, 5, BATCH_RECORDS + 3)
    s = Session.open(generated.path, keep_values=False)
    by_worker = build_search_texts(s, min_records=1)
    assert by_worker is not None
    assert not any(isinstance(b, search_texts._SpilledBatch) for b in by_worker._batches)
    assert list(by_worker) == list(extend_search_texts(s, None))


def test_the_worker_leaves_to_the_thread_what_the_file_alone_does_not_say(tmp_path: Path) -> None:
    """Values kept in memory, v1 migration patches, too few records, a file replaced or rewritten
    since it was indexed: None, and the caller builds the texts in its thread."""
    import os

    from session_studio.ui.search_worker import build_search_texts, worker_can_build

    generated = generated_session(tmp_path, 1, 300)
    path = Path(generated.path)
    kept = Session.open(path, keep_values=True)
    assert not worker_can_build(kept, min_records=1) and build_search_texts(kept, min_records=1) is None
    s = Session.open(path, keep_values=False)
    assert worker_can_build(s, min_records=1)
    assert not worker_can_build(s) and build_search_texts(s) is None  # 300 records: the thread's job

    v1 = tmp_path / "v1.jsonl"
    v1.write_text(
        json.dumps({"type": "session", "id": "x", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"})
        + "\n"
        + "".join(
            json.dumps({"type": "message", "timestamp": "t", "message": {"role": "user", "content": f"m{k}"}})
            + "\n"
            for k in range(5)
        ),
        encoding="utf-8",
    )
    legacy = Session.open(v1, keep_values=False)
    assert legacy.migrated and build_search_texts(legacy, min_records=1) is None

    data = path.read_bytes()
    replaced = tmp_path / "other.jsonl"
    replaced.write_bytes(data)
    os.replace(replaced, path)  # same bytes, another file
    assert build_search_texts(s, min_records=1) is None
    s = Session.open(path, keep_values=False)
    path.write_bytes(data[: len(data) // 2])  # rewritten in place: lines are gone
    assert build_search_texts(s, min_records=1) is None


def test_the_worker_process_loads_no_qt() -> None:
    """The worker is a fresh interpreter per big session: it must not pay for (or need) Qt."""
    import subprocess
    import sys

    code = (
        "import sys, session_studio.ui.search_worker; "
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]; print(bad); sys.exit(bool(bad))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_cancelled_build_stops_the_worker_at_its_next_batch(tmp_path: Path) -> None:
    """Closing the window while a big file's search text is built: the wait for the worker process
    (~30 s on 1 GB) ends at once, the process is stopped, nothing is returned. Batches came so often
    that a wait which looked at cancelled() only between them never did."""
    import time

    from session_studio.ui.search_worker import build_search_texts

    generated = generated_session(tmp_path, 0, 4 * BATCH_RECORDS)
    s = Session.open(generated.path, keep_values=False)
    asked: list[float] = []

    def cancelled() -> bool:
        asked.append(time.monotonic())
        return len(asked) > 2  # after the first batch or two

    assert build_search_texts(s, min_records=1, cancelled=cancelled) is None
    assert len(asked) == 3
    assert build_search_texts(s, min_records=1, cancelled=lambda: False) is not None


def test_a_search_waiting_for_the_texts_says_so_until_its_rows_come(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under X on the 1 GB session a search typed right after the plan was usable showed nothing
    for ~10 s (the texts still coming from their workers): the old rows and count stayed as if the
    search had not been taken. The count line now says the search waits, with the workers' progress."""
    import threading

    from session_studio.ui import tree_model
    from session_studio.ui.main_window import MainWindow
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.tasks import TaskRunner

    from .conftest import settle_window

    release = threading.Event()
    real = tree_model.build_search_texts

    def slow_build(session: Session, **kw: Any) -> SearchTexts | None:
        kw["progress"](1024, 3000)  # the first batch came
        release.wait(20)
        return real(session, min_records=1, **kw)

    monkeypatch.setattr(tree_model, "build_search_texts", slow_build)
    generated = generated_session(tmp_path, 8, 3000)
    w = MainWindow(AppSettings(tmp_path / "s.ini"), TaskRunner(), sessions_root=str(tmp_path))
    qtbot.addWidget(w)
    w.open_path(str(generated.path))
    qtbot.waitUntil(lambda: w.tree_model._indexing, timeout=20000)
    shown = w.tree_count.text()
    w.search.setText("the")
    w._apply_filter()  # as the search box's timer does
    assert w.tree_model.waiting_for_search_texts
    qtbot.waitUntil(lambda: "1,024 of 3,000" in w.tree_count.text(), timeout=5000)
    assert w.tree_count.text() == "Searching for “the”… preparing the search: 1,024 of 3,000 entries read"
    release.set()
    qtbot.waitUntil(lambda: w.tree_model.query == "the" and not w.tree_model.rebuilding, timeout=20000)
    qtbot.waitUntil(lambda: "entries shown" in w.tree_count.text(), timeout=5000)
    assert w.tree_count.text() != shown
    assert w.tree_count.text().startswith(f"{len(w.tree_model.outline):,} of 3,00")
    assert 0 < len(w.tree_model.outline) < len(w.doc.session.records)
    settle_window(qtbot, w)


def test_in_content_does_not_wait_for_the_rows_texts_and_adds_their_matches_when_they_come(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An In content search typed while the rows' search texts are still being built (seconds on a
    big session) shows the entries whose content holds it at once, without waiting for them; once
    they come it is searched again with the rows' own text too (a row says "thinking level → high"
    where the entry holds "thinkingLevel": "high"), without reading the file again."""
    import threading

    from session_studio.ui import tree_model
    from session_studio.ui.main_window import MainWindow
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.tasks import TaskRunner

    from .conftest import settle_window, write_session

    release = threading.Event()
    real = tree_model.build_search_texts

    def slow_build(session: Session, **kw: Any) -> SearchTexts | None:
        release.wait(20)
        return real(session, min_records=1, **kw)

    monkeypatch.setattr(tree_model, "build_search_texts", slow_build)
    reads: list[int] = []
    real_matches = tree_model.content_matches
    monkeypatch.setattr(
        tree_model, "content_matches", lambda *a, **kw: reads.append(1) or real_matches(*a, **kw)
    )
    path = write_session(
        tmp_path / "s.jsonl",
        [
            {"type": "thinking_level_change", "thinkingLevel": "high"},
            {
                "type": "message",
                "message": {"role": "user", "content": "the thinking level is fine", "timestamp": 1},
            },
            *[
                {"type": "message", "message": {"role": "user", "content": f"more {n}", "timestamp": 2}}
                for n in range(5)
            ],
        ],
    )
    settings = AppSettings(tmp_path / "cfg" / "s.ini")
    settings.set_search_content(True)
    w = MainWindow(settings, TaskRunner(), sessions_root=str(tmp_path))
    qtbot.addWidget(w)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.tree_model._indexing, timeout=20000)
    w.search.setText("thinking level")
    w._apply_filter()
    qtbot.waitUntil(
        lambda: w.tree_model.query == "thinking level" and not w.tree_model.rebuilding, timeout=20000
    )
    assert w.tree_model._indexing and w.tree_model.outline.contains(1)  # the content's match, at once
    assert not w.tree_model.outline.contains(0) and reads == [1]  # the row's: not yet
    release.set()
    qtbot.waitUntil(lambda: w.tree_model.outline.contains(0), timeout=20000)
    assert w.tree_model.outline.contains(1) and reads == [1]  # the file was not read again
    settle_window(qtbot, w)


def test_the_search_field_says_what_a_search_matches(tmp_path: Path, window: Any) -> None:
    """A search matches a row's text, the first PREVIEW_CHARS characters of its entry (its tooltip
    says so: a word deep in a tool's output is not found), in upper or lower case alike."""
    from session_studio.ui.outline import PREVIEW_CHARS

    from .conftest import write_session

    early = "Needle " + "x" * 300
    late = "x" * (PREVIEW_CHARS + 20) + " needle"
    path = write_session(
        tmp_path / "s.jsonl",
        [
            {"type": "message", "message": {"role": "user", "content": early, "timestamp": 1}},
            {"type": "message", "message": {"role": "user", "content": late, "timestamp": 2}},
        ],
    )
    s = Session.open(str(path))
    texts = extend_search_texts(s, None)
    hits = list(texts.matching("needle"))
    assert len(hits) == 1 and s.value(hits[0])["message"]["content"] == early
    tip = window.search.toolTip()
    assert f"first {PREVIEW_CHARS} characters" in tip and "case" in tip and "Ctrl+Shift+F" in tip


@pytest.mark.parametrize("threaded", [False, True], ids=["inline", "worker"])
def test_in_content_finds_a_word_deep_in_a_tools_output(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threaded: bool
) -> None:
    """In content (Ctrl+Shift+F) finds what the rows' text does not hold, says so in the field, in
    the count while it reads the file, and when nothing matches; it is remembered for the next
    window, and switching back searches the rows again."""
    from session_studio.core import content_search
    from session_studio.core import session as session_module
    from session_studio.ui.main_window import MainWindow
    from session_studio.ui.outline import PREVIEW_CHARS
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.tasks import TaskRunner

    from .conftest import settle_window, write_session

    monkeypatch.setattr(content_search, "READ_BYTES", 300)  # several reads, each reported
    monkeypatch.setattr(session_module, "KEEP_VALUES_MAX_BYTES", 0)  # read from the file, as a big one
    output = "x" * (PREVIEW_CHARS + 50) + " the Needle was here"
    path = write_session(
        tmp_path / "s.jsonl",
        [
            {"type": "message", "message": {"role": "user", "content": "find the needle", "timestamp": 1}},
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": "c",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": output}],
                    "isError": False,
                    "timestamp": 2,
                },
            },
            *[
                {"type": "message", "message": {"role": "user", "content": f"more {n}", "timestamp": 3}}
                for n in range(20)
            ],
        ],
    )
    runner = TaskRunner()
    runner.synchronous = not threaded
    settings = AppSettings(tmp_path / "cfg" / "s.ini")
    w = MainWindow(settings, runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.session is not None and not w.tree_model.rebuilding, timeout=20000)
    reads: list[str] = []
    w.tree_model.content_search_progress.connect(lambda _d, _t: reads.append(w.tree_count.text()))

    def search(text: str) -> None:
        w.search.setText(text)
        w._apply_filter()  # as the search box's timer does
        qtbot.waitUntil(
            lambda: w.tree_model.query == text.lower() and not w.tree_model.rebuilding, timeout=20000
        )

    def shown() -> set[int]:
        return {r for r in range(len(w.doc.session.records)) if w.tree_model.outline.contains(r)}

    search("needle")
    assert shown() == {0}  # the row's text only
    assert w.a_search_content.text() == "Search the whole co&ntent" and w.search_scope.text() == "In content"
    w.search_scope.click()
    qtbot.waitUntil(lambda: w.tree_model.in_content and not w.tree_model.rebuilding, timeout=20000)
    assert shown() == {0, 1}
    assert "content" in w.search.placeholderText() and "anywhere in their content" in w.search.toolTip()
    if threaded:
        assert reads and all(r.startswith("Searching the content for “needle”…") for r in reads)
    # the entry shown marks the matches and scrolls to the first, deep in the tool's output
    w.doc.select(1)
    qtbot.waitUntil(lambda: w.inspector.index == 1, timeout=5000)
    marks = w.inspector.browser.extraSelections()
    assert [m.cursor.selectedText().lower() for m in marks] == ["needle"]
    assert w.inspector.browser.textCursor().position() == marks[0].cursor.selectionStart() > PREVIEW_CHARS
    # pi appends an entry holding it: the search stays in content, and reads only what is new
    # (and the entry before it, which a refresh may have read anew)
    from session_studio.ui import tree_model

    starts: list[int] = []
    real = tree_model.content_matches

    def recording(*args: Any, start: int = 0, **kw: Any) -> list[int]:
        starts.append(start)
        return real(*args, start=start, **kw)

    monkeypatch.setattr(tree_model, "content_matches", recording)
    n = len(w.doc.session.records)
    entry = {
        "type": "message",
        "id": "f0000001",
        "parentId": w.doc.session.records[n - 1].id,
        "timestamp": "2025-01-01T10:09:00.000Z",
        "message": {
            "role": "user",
            "content": "x" * (PREVIEW_CHARS + 9) + " one more NEEDLE",
            "timestamp": 9,
        },
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    w.doc.refresh()
    qtbot.waitUntil(lambda: w.tree_model.outline.contains(n) and not w.tree_model.rebuilding, timeout=20000)
    assert shown() == {0, 1, n} and w.tree_model.in_content and starts == [n - 1]
    search("zzz")
    assert "anywhere in its content" in w.tree.empty_text
    assert AppSettings(tmp_path / "cfg" / "s.ini").search_content()  # remembered
    assert w.inspector.browser.extraSelections() == []  # "zzz" is nowhere
    w.a_search_content.trigger()  # off again (the menu's command)
    search("needle")
    assert shown() == {0} and not w.tree_model.in_content
    search("")
    assert w.inspector.search == "" and w.inspector.browser.extraSelections() == []
    settle_window(qtbot, w)
