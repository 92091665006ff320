"""Every writer refuses a file that changed since the user's view of it was loaded, and a
failed, short, interleaved or interrupted write never leaves a torn or glued line."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from session_studio import cli
from session_studio.core import Session
from session_studio.core import writer as writer_mod
from session_studio.core.errors import SessionFileError, StaleSessionError, WriteError
from session_studio.engine import (
    append_label,
    append_session_name,
    branch_to,
    commit_compaction,
    draft_compaction,
    fork_to_file,
    summarize_draft,
)
from session_studio.llm import OfflineSummarizer
from tests.core.util import HEADER, A, T, U, chain, to_bytes

CHANGED = "the file changed since you opened it; reload"


@pytest.fixture(autouse=True)
def state_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSION_STUDIO_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def big_session(path: Path, session_id: str = "sess-1", extra: int = 0) -> None:
    """A branched session over 128 KiB (so head and tail hashes cover different bytes)."""
    entries = []
    for _ in range(10 + extra):
        entries += [U(6000), A(6000), T(6000)]
    values = chain(*entries, header={**HEADER, "id": session_id})
    values.append({**values[-1], "id": "side", "parentId": "e3", "type": "custom", "customType": "x"})
    values[-1].pop("message", None)
    path.write_bytes(to_bytes(values))


def _pi_appends(p: Path) -> None:
    with open(p, "ab") as fh:
        fh.write(
            b'{"type":"custom","customType":"pi","data":1,"id":"pi1","parentId":"side","timestamp":"t"}\n'
        )


def _replace_same_size_other_tail(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[-20:-2] = b"y" * 18  # inside the last entry's text
    tmp = p.with_name("other")
    tmp.write_bytes(bytes(data))
    os.replace(tmp, p)


def _edit_in_place_keep_mtime(p: Path, at: int) -> None:
    """Same inode, same size, same mtime: only a content hash can see it."""
    st = os.stat(p)
    with open(p, "r+b") as fh:
        fh.seek(at)
        old = fh.read(1)
        fh.seek(at)
        fh.write(b"Z" if old != b"Z" else b"Y")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def _head_changed_same_tail(p: Path) -> None:
    _edit_in_place_keep_mtime(p, 200)  # in the first entry, far from the last 64 KiB


def _tail_changed_same_head(p: Path) -> None:
    _edit_in_place_keep_mtime(p, os.path.getsize(p) - 30)


def _replaced_by_longer_other(p: Path) -> None:
    other = p.with_name("other.jsonl")
    big_session(other, "sess-other", extra=3)
    os.replace(other, p)


def _replaced_by_symlink(p: Path) -> None:
    other = p.with_name("other.jsonl")
    big_session(other, "sess-other", extra=1)
    p.unlink()
    p.symlink_to(other)


CHANGES: dict[str, Callable[[Path], None]] = {
    "pi appended": _pi_appends,
    "same size, other tail, renamed over": _replace_same_size_other_tail,
    "same size and tail, other head": _head_changed_same_tail,
    "same size and head, other tail": _tail_changed_same_head,
    "a longer other session": _replaced_by_longer_other,
    "a symlink to another session": _replaced_by_symlink,
}


def _label(s: Session) -> Any:
    return append_label(s, "e1", "L")


def _rename(s: Session) -> Any:
    return append_session_name(s, "N")


def _branch_summary(s: Session) -> Any:
    return branch_to(s, "e3", summarize=True, summary_override="abandoned work")


def _fork(s: Session) -> Any:
    return fork_to_file(s, "e6", s.path + ".fork.jsonl")


WRITERS: dict[str, Callable[[Session], Any]] = {
    "label": _label,
    "rename": _rename,
    "branch-to --summarize": _branch_summary,
    "fork": _fork,
}


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_refuses_a_file_changed_since_it_was_opened(
    tmp_path: Path, change: str, writer: str
) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    CHANGES[change](p)
    before = p.read_bytes()
    with pytest.raises(StaleSessionError, match=CHANGED):
        WRITERS[writer](s)
    assert p.read_bytes() == before
    assert not Path(str(p) + ".fork.jsonl").exists()


@pytest.mark.parametrize("change", list(CHANGES))
def test_compaction_commit_refuses_a_file_changed_after_the_plan(tmp_path: Path, change: str) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    draft = draft_compaction(s, keep_recent_tokens=3000, leaf_id="e29")
    outcome = summarize_draft(draft, OfflineSummarizer())
    CHANGES[change](p)
    before = p.read_bytes()
    with pytest.raises(StaleSessionError, match=CHANGED):
        commit_compaction(outcome)
    assert p.read_bytes() == before


def test_a_file_changed_before_the_plan_was_drafted_is_refused_too(tmp_path: Path) -> None:
    """The fingerprint is the one taken at open time, not at draft time."""
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    _replace_same_size_other_tail(p)
    with pytest.raises(StaleSessionError, match=CHANGED):
        draft_compaction(s, keep_recent_tokens=3000, leaf_id="e29")


def test_deleted_file_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    p.unlink()
    with pytest.raises(SessionFileError, match="deleted or moved"):
        append_label(s, "e1", "L")
    assert cli.main(["label", str(p), "e1", "L"]) == 1
    err = capsys.readouterr().err
    assert "session file not found" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["label", "e1", "L"], ["rename", "N"]])
def test_cli_refuses_when_pi_writes_between_load_and_write(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    real_open = Session.open.__func__  # type: ignore[attr-defined]

    def open_then_replace(cls: type[Session], path: Any, **kw: Any) -> Session:
        s = real_open(cls, path, **kw)
        _replace_same_size_other_tail(p)
        changed.append(p.read_bytes())
        return s

    changed: list[bytes] = []
    monkeypatch.setattr(Session, "open", classmethod(open_then_replace))
    assert cli.main([command[0], str(p), *command[1:]]) == 1
    assert CHANGED in capsys.readouterr().err
    assert [p.read_bytes()] == changed


# ---------------------------------------------------------------------- failed and short writes
def _fail_write(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    real = os.write

    def fake(fd: int, data: Any) -> int:
        if how == "short":
            return real(fd, bytes(data)[: len(data) // 3])
        if how == "part then ENOSPC":
            real(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer_mod, "_os_write", fake)


@pytest.mark.parametrize("how", ["short", "ENOSPC", "part then ENOSPC"])
def test_a_failed_append_leaves_the_file_as_planned(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    before = p.read_bytes()
    s = Session.open(p)
    with monkeypatch.context() as m, pytest.raises(WriteError) as e:
        _fail_write(m, how)
        append_session_name(s, "N" * 5000)
    assert p.read_bytes() == before
    assert "the file was left at its" in str(e.value) or "cut off; the file is back" in str(e.value)
    assert Session.open(p).issues == []


def test_a_failed_fsync_takes_the_line_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    before = p.read_bytes()
    s = Session.open(p)

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as m, pytest.raises(WriteError, match=r"flushing .* failed.*cut off"):
        m.setattr(writer_mod.os, "fsync", eio)
        append_label(s, "e1", "L")
    assert p.read_bytes() == before


def test_a_short_write_after_pi_appended_cuts_only_our_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    real = os.write

    def pi_then_short(fd: int, data: Any) -> int:
        _pi_appends(p)
        return real(fd, bytes(data)[:10])

    with monkeypatch.context() as m, pytest.raises(WriteError, match="cut off"):
        m.setattr(writer_mod, "_os_write", pi_then_short)
        append_label(s, "e1", "L")
    assert p.read_bytes().endswith(b'"id":"pi1","parentId":"side","timestamp":"t"}\n')


def test_upgrade_on_a_full_disk_leaves_no_backup_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    before = p.read_bytes()
    s = Session.open(p)
    _fail_write(monkeypatch, "ENOSPC")
    from session_studio.engine.edits import upgrade_legacy_file

    with pytest.raises(WriteError, match="disk is full"):
        upgrade_legacy_file(s)
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir() if x.name != "state") == ["old.jsonl"]


# ---------------------------------------------------------------------- what landed is reported
def test_an_entry_that_landed_after_pi_is_reported_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi appends between the check and the write: the entry is in the file, and we say so."""
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    real = os.write

    def pi_first(fd: int, data: Any) -> int:
        _pi_appends(p)
        return real(fd, data)

    with monkeypatch.context() as m:
        m.setattr(writer_mod, "_os_write", pi_first)
        entry = append_label(s, "e1", "L")
    assert s.notes and "written after them" in s.notes[0]
    lines = p.read_bytes().split(b"\n")
    assert orjson.loads(lines[-3])["id"] == "pi1" and orjson.loads(lines[-2])["id"] == entry["id"]
    assert s.get_index(entry["id"]) is not None and s.get_index("pi1") is not None


def test_lone_surrogates_are_read_back_as_pi_reads_them(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    entry = append_label(s, "e1", "half \ud800 pair")
    assert s.label_of("e1") == "half \ud800 pair"
    assert Session.open(p).get_index(entry["id"]) is not None


# ---------------------------------------------------------------------- rewrites
def test_upgrade_refuses_lines_appended_while_the_prompt_was_open(tmp_path: Path) -> None:
    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    s = Session.open(p)
    _pi_appends(p)
    before = p.read_bytes()
    with pytest.raises(StaleSessionError, match=CHANGED):
        upgrade_legacy_file(s)
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir() if x.name != "state") == ["old.jsonl"]


def test_upgrade_puts_the_original_back_if_pi_appends_just_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    s = Session.open(p)
    real_replace = os.replace

    def pi_then_replace(a: Any, b: Any) -> None:
        if str(b) == str(p) and ".tmp-" in str(a):
            _pi_appends(p)  # after the last check, before the rename
        real_replace(a, b)

    with monkeypatch.context() as m, pytest.raises(StaleSessionError, match="put back"):
        m.setattr(writer_mod.os, "replace", pi_then_replace)
        upgrade_legacy_file(s)
    assert p.read_bytes().endswith(b'"id":"pi1","parentId":"side","timestamp":"t"}\n')
    assert sorted(x.name for x in tmp_path.iterdir() if x.name != "state") == ["old.jsonl"]


def test_upgrade_against_a_concurrent_appender_loses_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    n = 300
    appender = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "for i in range(int(sys.argv[2])):\n"
            "    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n"
            '    os.write(fd, (\'{"type":"custom","customType":"pi","data":%d,"id":"p%d",\'\n'
            '        \'"parentId":null,"timestamp":"t"}\\n\' % (i, i)).encode())\n'
            "    os.close(fd)\n"
            "    time.sleep(0.0005)\n",
            str(p),
            str(n),
        ]
    )
    upgraded = refused = 0
    start = p.stat().st_size
    try:
        while p.stat().st_size == start and appender.poll() is None:
            pass  # until the appender runs
        while appender.poll() is None and not upgraded:
            try:
                s = Session.open(p)
                if s.migrated:
                    upgrade_legacy_file(s, backup_suffix=f".bak{refused}")
                    upgraded += 1
            except StaleSessionError:
                refused += 1
    finally:
        appender.wait(timeout=60)
    seen = [orjson.loads(x).get("data") for x in p.read_bytes().splitlines() if b'"customType":"pi"' in x]
    assert seen == list(range(n))  # every appended line is in the file, once, in order
    assert upgraded + refused > 0


def test_rewrites_keep_the_original_mode(tmp_path: Path) -> None:
    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    p.chmod(0o600)
    path, backup = upgrade_legacy_file(Session.open(p))
    assert (path.stat().st_mode & 0o777, backup.stat().st_mode & 0o777) == (0o600, 0o600)
    fork = fork_to_file(Session.open(p), "e1", tmp_path / "fork.jsonl")
    assert fork.stat().st_mode & 0o777 == 0o600


# ---------------------------------------------------------------------- torn tails (kill -9)
KILL_MID_WRITE = """
import os, signal, sys
from session_studio.core import Session, writer
from session_studio.engine import append_session_name
real = os.write
def torn(fd, data):
    real(fd, bytes(data)[: len(data) // 2])
    os.kill(os.getpid(), signal.SIGKILL)
writer._os_write = torn
append_session_name(Session.open(sys.argv[1]), "n" * 300000)
"""


def test_a_line_torn_by_kill_is_recognised_and_repaired(
    tmp_path: Path, state_here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    p = tmp_path / "s.jsonl"
    big_session(p)
    before = p.read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SESSION_STUDIO_STATE_DIR": str(state_here)}
    r = subprocess.run([sys.executable, "-c", KILL_MID_WRITE, str(p)], env=env, timeout=60)
    assert r.returncode == -9
    data = p.read_bytes()
    assert len(data) > len(before) and not data.endswith(b"\n")  # torn, as kill -9 can leave it
    s = Session.open(p)
    assert s.torn_tail is not None
    assert any(i.kind == "own_torn_tail" and "session-studio repair" in i.message for i in s.issues)
    assert cli.main(["repair", str(p)]) == 0
    assert p.read_bytes() == before
    assert Session.open(p).torn_tail is None
    assert not list(state_here.glob("journal/*.json"))


def test_a_torn_tail_that_is_not_ours_is_not_offered(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    with open(p, "ab") as fh:
        fh.write(b'{"type":"message","id":"half"')  # pi crashed, not us
    s = Session.open(p)
    assert s.torn_tail is None
    assert cli.main(["repair", str(p)]) == 1


def test_fork_of_a_file_replaced_after_open_writes_nothing(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p, keep_values=False)
    shutil.copy(p, tmp_path / "copy")
    _replaced_by_longer_other(p)
    with pytest.raises((StaleSessionError, SessionFileError)):
        fork_to_file(s, "e6", tmp_path / "fork.jsonl")
    assert not (tmp_path / "fork.jsonl").exists()


REAL_BIG_APPEND = """
import os, sys
from session_studio.core import Session, writer
from session_studio.engine import append_session_name
def announced(fd, data):
    print("writing", flush=True)  # the parent kills during the real write that follows
    return os.write(fd, data)
writer._os_write = announced
append_session_name(Session.open(sys.argv[1]), "n" * 30_000_000)
"""


@pytest.mark.slow
def test_kill_9_during_a_real_30_mb_append_never_leaves_an_unrecognised_torn_tail(
    tmp_path: Path, state_here: Path
) -> None:
    """Real kills at varied moments: unchanged, one complete line, or a torn tail we recognise."""
    import random
    import signal
    import subprocess
    import sys
    import time

    p = tmp_path / "s.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SESSION_STUDIO_STATE_DIR": str(state_here)}
    rng = random.Random(19)
    outcomes: dict[str, int] = {"unchanged": 0, "complete": 0, "torn and repaired": 0}
    for _ in range(12):
        big_session(p)
        before = p.read_bytes()
        with subprocess.Popen(
            [sys.executable, "-c", REAL_BIG_APPEND, str(p)], env=env, stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
            time.sleep(rng.uniform(0.0, 0.03))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        data = p.read_bytes()
        if data == before:
            outcomes["unchanged"] += 1
        elif data.endswith(b"\n"):
            assert data.startswith(before) and data.count(b"\n") == before.count(b"\n") + 1
            outcomes["complete"] += 1
        else:
            s = Session.open(p)
            assert s.torn_tail is not None, "a torn tail of ours was not recognised"
            assert cli.main(["repair", str(p)]) == 0 and p.read_bytes() == before
            outcomes["torn and repaired"] += 1
    print(outcomes)
    assert sum(outcomes.values()) == 12


# ---------------------------------------------------------------- found by the write-path audit
def test_a_backup_name_that_is_taken_is_refused_and_left_alone(tmp_path: Path) -> None:
    """The refusal's cleanup removed the existing file of that name (another upgrade's backup:
    the original bytes were gone)."""
    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    taken = tmp_path / "old.jsonl.precious"
    taken.write_bytes(b"someone else's backup\n")
    before = p.read_bytes()
    with pytest.raises(WriteError, match="already exists; nothing was changed"):
        upgrade_legacy_file(Session.open(p), backup_suffix=".precious")
    assert taken.read_bytes() == b"someone else's backup\n" and p.read_bytes() == before


def test_two_upgrades_in_one_second_keep_both_backups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backup's name changes once a second: a second upgrade (of a copy put back) in the same
    second was refused; now it gets a name of its own."""
    from session_studio.engine import edits

    monkeypatch.setattr(edits, "now_iso", lambda: "2026-12-03T12:00:00.000Z")
    p = tmp_path / "old.jsonl"
    original = to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2}))
    p.write_bytes(original)
    _, first = edits.upgrade_legacy_file(Session.open(p))
    p.write_bytes(original)
    _, second = edits.upgrade_legacy_file(Session.open(p))
    assert first != second and first.read_bytes() == second.read_bytes() == original


def test_an_upgrade_through_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    """The rename replaced the link with a v3 file and left the real file as it was."""
    from session_studio.engine.edits import upgrade_legacy_file

    real = tmp_path / "real.jsonl"
    real.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(WriteError, match="symbolic link"):
        upgrade_legacy_file(Session.open(link))
    assert link.is_symlink() and sorted(x.name for x in tmp_path.iterdir() if x.name != "state") == [
        "link.jsonl",
        "real.jsonl",
    ]


def test_the_put_back_keeps_what_pi_appended_to_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi appends to the old file just before the rename and to the new one just after: putting the
    original back dropped the second line."""
    from session_studio.engine.edits import upgrade_legacy_file

    p = tmp_path / "old.jsonl"
    p.write_bytes(to_bytes(chain(U(100), A(100), header={**HEADER, "version": 2})))
    s = Session.open(p)
    real_replace = os.replace
    late = b'{"type":"custom","customType":"pi","data":2,"id":"pi2","parentId":"pi1","timestamp":"t"}\n'

    def pi_around_the_rename(a: Any, b: Any) -> None:
        if str(b) == str(p) and ".tmp-" in str(a):
            _pi_appends(p)
            real_replace(a, b)
            with open(p, "ab") as fh:
                fh.write(late)
            return
        real_replace(a, b)

    with monkeypatch.context() as m, pytest.raises(StaleSessionError, match="put back"):
        m.setattr(writer_mod.os, "replace", pi_around_the_rename)
        upgrade_legacy_file(s)
    assert p.read_bytes().endswith(b'"id":"pi1","parentId":"side","timestamp":"t"}\n' + late)


CTRL_C_DURING_WRITE = """
import os, signal, sys
from session_studio import cli
from session_studio.core import writer
# as in a terminal: a non-interactive shell starts a background job with Ctrl+C ignored, and a
# Python started so keeps ignoring it (then there is no Ctrl+C to wait for)
signal.signal(signal.SIGINT, signal.default_int_handler)
real = writer._os_write
def interrupted(fd, data):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C while the line is being written
    return real(fd, data)
writer._os_write = interrupted
sys.exit(cli.main(["rename", sys.argv[1], "a name"]))
"""


def test_ctrl_c_during_a_write_waits_for_it_and_says_it_was_written(tmp_path: Path, state_here: Path) -> None:
    """Ctrl+C right after the write said "nothing was written" (the user runs it again: two
    entries), and a kill during a big write tore the line: both now wait for the write."""
    import subprocess
    import sys

    p = tmp_path / "s.jsonl"
    big_session(p)
    before = p.read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SESSION_STUDIO_STATE_DIR": str(state_here)}
    r = subprocess.run(
        [sys.executable, "-c", CTRL_C_DURING_WRITE, str(p)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 130, r.stderr
    assert "interrupted after it wrote an entry" in r.stderr and "nothing was written" not in r.stderr
    data = p.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n") and b'"name":"a name"' in data[len(before) :]
    assert Session.open(p).torn_tail is None and not list(state_here.glob("journal/*.json"))


def test_nothing_is_appended_after_our_own_torn_line(tmp_path: Path, state_here: Path) -> None:
    """A label appended after a line torn by a kill made that line a damaged line for good, and
    `repair` could no longer cut it off."""
    import subprocess
    import sys

    p = tmp_path / "s.jsonl"
    big_session(p)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SESSION_STUDIO_STATE_DIR": str(state_here)}
    subprocess.run([sys.executable, "-c", KILL_MID_WRITE, str(p)], env=env, timeout=60)
    torn = p.read_bytes()
    s = Session.open(p)
    assert s.torn_tail is not None
    with pytest.raises(WriteError, match="repair FILE` before anything is appended"):
        append_label(s, "e1", "x")
    assert p.read_bytes() == torn
    assert cli.main(["label", str(p), "e1", "x"]) != 0 and p.read_bytes() == torn


def test_a_failed_label_after_the_branch_summary_says_the_summary_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """branch-to --summarize --label: pi appending between the two appends made the label fail,
    and the message said nothing was written although the summary was."""
    from session_studio.engine import edits

    p = tmp_path / "s.jsonl"
    big_session(p)
    s = Session.open(p)
    real_append = edits.append_entry
    calls = []

    def pi_between(session: Session, entry: dict[str, Any], *args: Any, **kw: Any) -> Any:
        calls.append(entry["type"])
        if len(calls) == 2:
            _pi_appends(p)
        return real_append(session, entry, *args, **kw)

    monkeypatch.setattr(edits, "append_entry", pi_between)
    with pytest.raises(WriteError) as info:
        edits.branch_to(s, "e3", summarize=True, summarizer=OfflineSummarizer(), label="here")
    assert calls == ["branch_summary", "label"]
    message = str(info.value)
    assert "was appended and is the new leaf, but its label was not" in message
    assert "Nothing was written" not in message
    assert b'"type":"branch_summary"' in p.read_bytes()


def test_ctrl_c_before_the_command_runs_is_a_sentence_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl+C while the command line was still being read printed a raw KeyboardInterrupt
    traceback (the write audit: 11 of 150 early interrupts)."""

    def interrupted(*_a: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["plan", "x.jsonl"]) == 130
    assert capsys.readouterr().err.strip() == "session-studio: interrupted (nothing was written)"


def test_ctrl_c_while_the_program_is_imported_is_a_sentence_not_a_traceback() -> None:
    """The console script imported the whole command line before anything could catch a Ctrl+C:
    pressed in that second (the write audit), it printed a traceback. The interrupt is simulated at
    the import of session_studio.cli, in a process of its own."""
    code = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'session_studio.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "sys.argv = ['session-studio', 'plan', 'x.jsonl']\n"
        "import runpy\n"
        "runpy.run_module('session_studio', run_name='__main__')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 130, p.stderr
    assert p.stderr.strip() == "session-studio: interrupted (nothing was written)"


def test_the_console_script_is_the_guarded_entry() -> None:
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "session-studio"]
    assert script.value == "session_studio.launcher:main"


def test_a_label_after_an_incomplete_last_line_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entry was right (after a line end written first), but nothing said the file ended in a
    broken line (the write audit)."""
    p = tmp_path / "s.jsonl"
    big_session(p)
    with open(p, "ab") as fh:
        fh.write(b'{"type":"message","id":"half"')  # pi crashed mid-line
    assert cli.main(["label", str(p), "e1", "x"]) == 0
    assert "the file's last line was incomplete" in capsys.readouterr().err
    assert p.read_bytes().endswith(b'"id":"half"\n' + p.read_bytes().split(b"\n")[-2] + b"\n")
