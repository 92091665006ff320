"""Safety: a concurrent writer (pi) never loses or interleaves lines, stale plans are refused,
and API keys never reach files, logs, errors or JSON output."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from session_studio.core import Session, StaleSessionError
from session_studio.core.jsvalue import js_stringify
from session_studio.core.writer import append_line, fingerprint
from session_studio.engine import commit_compaction, draft_compaction, summarize_draft
from session_studio.engine.compaction import NothingToCompactError
from session_studio.llm import OfflineSummarizer
from tests.core.util import A, T, U, chain, to_bytes

PI_WRITER = textwrap.dedent(
    """
    import json, os, random, sys, time
    path, n = sys.argv[1], int(sys.argv[2])
    random.seed(7)
    for i in range(n):
        line = json.dumps({"type": "custom", "customType": "pi-writer", "data": {"i": i, "pad": "p" * random.randint(0, 5000)},
                           "id": f"pw{i:05d}", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}) + "\\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)   # like appendFileSync
        os.write(fd, line.encode())
        os.close(fd)
        time.sleep(random.random() * 0.004)
    """
)


def make_session(path: Path) -> None:
    entries = []
    for _ in range(12):
        entries += [U(800), A(800), T(800)]
    path.write_bytes(to_bytes(chain(*entries)))


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
def test_concurrent_pi_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_session(path)
    writer = subprocess.Popen([sys.executable, "-c", PI_WRITER, str(path), "400"])
    committed, refused, raced = [], 0, 0
    try:
        while writer.poll() is None and len(committed) < 40:
            try:
                s = Session.open(path)
                draft = draft_compaction(s, keep_recent_tokens=600, leaf_id="e35")
                outcome = summarize_draft(draft, OfflineSummarizer())
                entry = commit_compaction(outcome)
                if s.notes:  # pi appended between the check and the write: ours landed after it
                    raced += 1
                else:
                    committed.append((entry, draft.fingerprint.size))
            except StaleSessionError:
                refused += 1
            except NothingToCompactError:
                pass
    finally:
        writer.wait(timeout=60)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    values = [orjson.loads(line) for line in lines[:-1]]  # every line is whole, valid JSON
    pi_lines = [v for v in values if v.get("customType") == "pi-writer"]
    assert [v["data"]["i"] for v in pi_lines] == list(range(400))  # none lost, in order
    ours = [v for v in values if v.get("type") == "compaction"]
    assert len(ours) == len(committed) + raced
    # a committed entry starts exactly where the file ended when it was planned: nothing pi
    # wrote in between was skipped over (the plan was not stale)
    data = path.read_bytes()
    for entry, planned_size in committed:
        line = (js_stringify(entry) or "").encode() + b"\n"
        assert data[planned_size : planned_size + len(line)] == line
    assert committed and refused > 0  # both paths were exercised


def test_stale_fingerprint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_session(path)
    fp = fingerprint(path)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"custom","customType":"x","data":1,"id":"zz","parentId":null,"timestamp":"t"}\n')
    before = path.read_bytes()
    with pytest.raises(StaleSessionError):
        append_line(path, {"type": "label"}, fp)
    assert path.read_bytes() == before


def test_missing_final_newline_is_repaired_not_glued(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_session(path)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"message","id":"half"')  # a crashed writer
    s = Session.open(path)
    res = append_line(
        path,
        {"type": "custom", "customType": "x", "data": 1, "id": "n1", "parentId": None, "timestamp": "t"},
        fingerprint(path),
    )
    assert res.repaired_missing_newline
    tail = path.read_bytes().split(b"\n")
    assert tail[-3] == b'{"type":"message","id":"half"' and orjson.loads(tail[-2])["id"] == "n1"
    assert len(Session.open(path).records) == len(s.records) + 1


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
def test_api_keys_never_leak(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Run the CLI against a server that refuses the key; grep every output and file for it."""
    key = "sk-live-DONOTLEAK-0123456789abcdef"
    path = tmp_path / "s.jsonl"
    make_session(path)
    env = dict(os.environ, MY_KEY=key, OPENAI_API_KEY=key, ANTHROPIC_API_KEY=key)
    caplog.set_level(logging.DEBUG)
    outputs = []
    for provider, url in (("openai", "http://127.0.0.1:9/v1"), ("anthropic", "http://127.0.0.1:9")):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "session_studio.cli",
                "compact",
                str(path),
                "--provider",
                provider,
                "--base-url",
                url,
                "--model",
                "m",
                "--api-key-env",
                "MY_KEY",
                "--yes",
                "--json",
                "--timeout",
                "2",
                "--keep-recent",
                "600",
            ],
            capture_output=True,
            env=env,
            timeout=120,
        )
        outputs += [r.stdout, r.stderr]
        assert r.returncode != 0
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_studio.cli",
            "compact",
            str(path),
            "--dry-run",
            "--json",
            "--keep-recent",
            "600",
        ],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0
    outputs += [r.stdout, r.stderr]
    blob = b"".join(outputs) + path.read_bytes() + caplog.text.encode()
    for f in tmp_path.rglob("*"):
        if f.is_file():
            blob += f.read_bytes()
    assert key.encode() not in blob
