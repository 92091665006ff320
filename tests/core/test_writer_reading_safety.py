"""Reading never hangs or floods memory (FIFOs, devices, huge lines), a file that changes
under a reader is a message, a replaced file is never indexed as an append, and the index
cache keeps no content."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from session_studio import cli
from session_studio.core import Session
from session_studio.core import reader as reader_mod
from session_studio.core.errors import SessionFileError, SessionLoadError
from tests.core.util import HEADER, A, U, chain, to_bytes

COMMANDS = [["info"], ["plan"], ["context"], ["compact", "--dry-run"]]


def _cli_in_time(args: list[str], seconds: float = 20) -> tuple[int, str]:
    r = subprocess.run(
        [sys.executable, "-m", "session_studio.cli", *args],
        capture_output=True,
        text=True,
        timeout=seconds,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return r.returncode, r.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_fifo_without_writer_is_refused_not_waited_on(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code, err = _cli_in_time([command[0], str(fifo), *command[1:]])
    assert code != 0 and "FIFO" in err and "Traceback" not in err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_before_reading(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} is missing")
    with pytest.raises(SessionFileError, match="character device"):
        Session.open(device)
    assert cli.main(["info", device]) == 1


def test_the_window_loader_refuses_a_fifo_too(tmp_path: Path) -> None:
    from session_studio.ui.document import load_head

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(load_head(str(fifo))), daemon=True)
    t.start()
    t.join(5)
    assert result == [None]


def test_a_line_over_the_limit_is_reported_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_mod, "MAX_LINE_BYTES", 50_000)
    monkeypatch.setattr(reader_mod, "CHUNK_SIZE", 4096)  # the long line spans many chunks
    values = chain(U(10), U(60_000), A(10))
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(values))
    s = Session.open(p)
    too_long = [i for i in s.issues if i.kind == "too_long"]
    assert [(i.line, i.dropped) for i in too_long] == [(3, True)]
    long_line = to_bytes(values[2:3]).rstrip(b"\n")
    assert f"line is {len(long_line):,} bytes" in too_long[0].message and "50,000" in too_long[0].message
    assert [r.id for r in s.records] == ["e0", "e2"]
    assert [r.line for r in s.records] == [2, 4]
    raw = p.read_bytes()
    e2 = s.records[1]
    assert raw[e2.offset : e2.offset + e2.length].startswith(b'{"type": "message", "id": "e2"')


def test_lines_split_across_chunks_keep_their_offsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(30), A(5), U("é" * 9))) + b'{"type":"x"')
    with monkeypatch.context() as m:
        m.setattr(reader_mod, "CHUNK_SIZE", 7)
        small = Session.open(p)
    big = Session.open(p)
    assert [r.facts() for r in small.records] == [r.facts() for r in big.records]
    assert [(i.line, i.offset, i.kind) for i in small.issues] == [
        (i.line, i.offset, i.kind) for i in big.issues
    ]


RSS_PROBE = textwrap.dedent(
    """
    import sys, time
    from session_studio import cli
    t = time.monotonic()
    code = cli.main([sys.argv[1], sys.argv[2]])
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec (the test process's peak would show)
    hwm_kb = int([line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")][0])
    print(code, time.monotonic() - t, hwm_kb // 1024)
    """
)


@pytest.mark.parametrize("command", ["info", "plan"])
def test_a_huge_sparse_file_of_zeros_is_read_fast_in_bounded_memory(tmp_path: Path, command: str) -> None:
    p = tmp_path / "zeros.jsonl"
    with open(p, "wb") as fh:
        fh.write(to_bytes(chain(U(10))))
        fh.truncate(300 * 1024 * 1024)  # one 300 MB "line" of NUL bytes, stored sparse
    r = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, command, str(p)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    code, seconds, rss_mb = r.stdout.split()[-3:]
    assert code == "0" and "Traceback" not in r.stderr, r.stderr
    assert float(seconds) < 20
    assert int(rss_mb) < 200, f"{rss_mb} MB"


def test_info_on_a_file_truncated_while_read_is_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), U(100), A(100))))
    real_open = Session.open.__func__  # type: ignore[attr-defined]

    def open_then_truncate(cls: type[Session], path: Any, **kw: Any) -> Session:
        s = real_open(cls, path, **{**kw, "keep_values": False})
        with open(p, "r+b") as fh:
            fh.truncate(200)
        return s

    monkeypatch.setattr(Session, "open", classmethod(open_then_truncate))
    assert cli.main(["info", str(p)]) == 1
    err = capsys.readouterr().err
    assert "changed while it was being read" in err and "reload" in err


# ---------------------------------------------------------------------- refresh
def test_refresh_indexes_what_pi_appends(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    s = Session.open(p)
    with open(p, "ab") as fh:
        fh.write(to_bytes(chain(U(10), A(10), U(5), header=None)[2:]))
    assert s.refresh() == [2]


@pytest.mark.parametrize("how", ["longer other session", "same head, longer, other middle"])
def test_refresh_refuses_a_replaced_longer_file(tmp_path: Path, how: str) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    s = Session.open(p)
    other = tmp_path / "other"
    if how == "longer other session":
        other.write_bytes(to_bytes(chain(U(20), A(20), U(20), header={**HEADER, "id": "other"})))
    else:
        other.write_bytes(to_bytes(chain(U(10), A(11), U(20))))
    os.replace(other, p)
    with pytest.raises(SessionLoadError, match="replaced by another file"):
        s.refresh()


def test_refresh_refuses_an_in_place_rewrite_of_the_indexed_bytes(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    s = Session.open(p)
    data = p.read_bytes().replace(b"xxxxxxxxxx", b"yyyyyyyyyy", 1)
    with open(p, "r+b") as fh:  # same inode, rewritten, then grown
        fh.write(data + to_bytes(chain(U(1), A(1), U(3), header=None)[2:]))
    with pytest.raises(SessionLoadError, match="changed"):
        s.refresh()


# ---------------------------------------------------------------------- index cache
@pytest.fixture
def cache_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SESSION_STUDIO_NO_INDEX_CACHE", raising=False)
    return tmp_path / "cache"


def test_the_index_cache_keeps_no_content(tmp_path: Path, cache_here: Path) -> None:
    secret = "SECRET-cwd-and-text"
    header = {**HEADER, "cwd": f"/home/{secret}"}
    values = chain(U(f"{secret} in a message"), A(f"{secret} in a reply"), header=header)
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(values) + f'{{"broken {secret}\n'.encode() + b"0\n" + to_bytes(values[1:]))
    cold = Session.open(p, keep_values=False, use_cache=True)
    (cache_file,) = (cache_here / "index").glob("*.idx")
    assert secret.encode() not in cache_file.read_bytes()
    warm = Session.open(p, keep_values=False, use_cache=True)
    assert warm.header == cold.header and warm.header["cwd"] == f"/home/{secret}"
    assert [(i.line, i.kind, i.message) for i in warm.issues] == [
        (i.line, i.kind, i.message) for i in cold.issues
    ]
    assert any(secret in i.message for i in warm.issues)  # re-read from the file, not the cache


def test_the_index_cache_is_keyed_by_the_indexing_code(
    tmp_path: Path, cache_here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_studio.core import index_cache

    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    Session.open(p, keep_values=False, use_cache=True)
    assert index_cache.load_cached(str(p), p.stat().st_size) is not None
    monkeypatch.setattr(index_cache, "code_version", lambda: "another estimator")
    assert index_cache.load_cached(str(p), p.stat().st_size) is None


def test_the_index_cache_does_not_import_the_session() -> None:
    """No import cycle core.session <-> core.index_cache: the cache returns columns only."""
    import ast

    tree = ast.parse(Path(reader_mod.__file__).with_name("index_cache.py").read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert "session" not in imported and not any(m.endswith(".session") for m in imported)
