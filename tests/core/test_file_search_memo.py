"""What content searches learned of whole files (core.file_search_memo): an answer proved by an
earlier one is the answer reading the file gives, and a changed file is read again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_studio.core import content_search
from session_studio.core.content_search import file_holds_text
from session_studio.core.file_search_memo import FileSearchMemo
from tests.core.test_content_search import ALPHABET, _write

IDENTITY = (1, 2, 300, 4)


def test_a_missing_text_is_missing_in_every_longer_one_and_a_held_one_in_every_shorter() -> None:
    memo = FileSearchMemo()
    memo.remember("f", IDENTITY, "rend", False)
    memo.remember("f", IDENTITY, "flux capacitor", True)
    assert memo.known("f", IDENTITY, "render") is False
    assert memo.known("f", IDENTITY, "rend") is False
    assert memo.known("f", IDENTITY, "capa") is True
    assert memo.known("f", IDENTITY, "ren") is None  # shorter than the missing one: unknown
    assert memo.known("f", IDENTITY, "flux capacitors") is None  # longer than the held one
    assert memo.known("g", IDENTITY, "render") is None  # another file


def test_a_changed_file_is_known_anew() -> None:
    memo = FileSearchMemo()
    memo.remember("f", IDENTITY, "rend", False)
    grown = (1, 2, 400, 5)  # pi appended: the new bytes may hold it
    assert memo.known("f", grown, "render") is None
    memo.remember("f", grown, "x", True)
    assert memo.known("f", IDENTITY, "render") is None  # what was known of the old bytes is gone


def test_containment_is_of_the_lowercased_texts() -> None:
    # "ΑΣ" holds as "ας" (a final sigma), "ΑΣΑ" as "ασα": the first is not in the second lowercased
    assert "ΑΣ" in "ΑΣΑ" and "ΑΣ".lower() not in "ΑΣΑ".lower()
    memo = FileSearchMemo()
    memo.remember("f", IDENTITY, "ΑΣ".lower(), False)
    assert memo.known("f", IDENTITY, "ΑΣΑ".lower()) is None


def test_each_file_keeps_a_bounded_number_of_texts_without_redundant_ones() -> None:
    memo = FileSearchMemo(per_file=3)
    for t in ("a", "ab", "abc"):  # each implied by the one before: one is kept
        memo.remember("f", IDENTITY, t, False)
    for t in ("x1", "x2", "x3", "x4"):
        memo.remember("f", IDENTITY, t, False)
    assert memo.known("f", IDENTITY, "abcd") is None  # "a" was the oldest of four
    assert all(memo.known("f", IDENTITY, t + "!") is False for t in ("x2", "x3", "x4"))
    memo.remember("f", IDENTITY, "ren", True)
    memo.remember("f", IDENTITY, "render", True)  # holds "ren" too: one text kept
    assert memo.known("f", IDENTITY, "ren") is True
    memo.forget({"g"})
    assert memo.known("f", IDENTITY, "render") is None


def test_an_answer_the_memo_proves_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = str(_write(tmp_path / "s.jsonl", ["the render pass", "flux"]))
    reads: list[str] = []
    real = content_search._reader_holds_text

    def counting(fh, needle, cancelled):  # type: ignore[no-untyped-def]
        reads.append(needle)
        return real(fh, needle, cancelled)

    monkeypatch.setattr(content_search, "_reader_holds_text", counting)
    memo = FileSearchMemo()
    assert file_holds_text(f, "zzq", memo=memo) is False
    assert file_holds_text(f, "zzqx", memo=memo) is False
    assert file_holds_text(f, "Render Pass", memo=memo) is True
    assert file_holds_text(f, "RENDER", memo=memo) is True
    assert reads == ["zzq", "render pass"]
    with open(f, "a", encoding="utf-8") as fh:  # pi appends a line that holds it
        fh.write(_write(tmp_path / "more.jsonl", ["zzqx"]).read_text(encoding="utf-8").splitlines()[1] + "\n")
    assert file_holds_text(f, "zzqx", memo=memo) is True
    assert reads[-1] == "zzqx"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(alphabet=ALPHABET, max_size=20), min_size=1, max_size=8),
    queries=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=5), min_size=1, max_size=12),
    append_at=st.integers(0, 12),
    appended=st.text(alphabet=ALPHABET, max_size=20),
)
def test_with_a_memo_every_answer_is_the_one_reading_gives(
    tmp_path_factory: pytest.TempPathFactory,
    texts: list[str],
    queries: list[str],
    append_at: int,
    appended: str,
) -> None:
    d = tmp_path_factory.mktemp("m")
    f = _write(d / "s.jsonl", texts)
    memo = FileSearchMemo(per_file=4)
    for k, q in enumerate(queries):
        if k == append_at:  # pi appends one entry between two searches
            line = _write(d / "one.jsonl", [appended]).read_text(encoding="utf-8").splitlines()[1]
            st_ = f.stat()
            with f.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            os.utime(f, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # a coarse clock: the size alone differs
        assert file_holds_text(str(f), q, memo=memo) == file_holds_text(str(f), q)
