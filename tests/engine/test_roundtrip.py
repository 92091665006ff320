"""Issue acceptance: our compaction, written to disk, is what pi itself computes and loads.

For each session we run pi's own `compact` (the oracle, against its built-in mock LLM)
and ours (against mock-llm.mjs, which answers by the same rule), then require the
appended entries to agree (id and timestamp aside) and pi's reload of *our* file to
equal the context we previewed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from session_studio.core import Session
from session_studio.core.jsvalue import js_stringify
from session_studio.core.oracle_schema import plan_output
from session_studio.engine import commit_compaction, draft_compaction, summarize_draft
from session_studio.engine.edits import branch_to, fork_to_file, upgrade_legacy_file
from session_studio.llm import AnthropicSummarizer, OpenAICompatibleSummarizer
from tests.conftest import FIXTURES, Oracle, generate

pytestmark = pytest.mark.oracle

ENTRY_FIELDS = ("type", "parentId", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook")


def openai(mock: dict[str, str]) -> OpenAICompatibleSummarizer:
    return OpenAICompatibleSummarizer(
        mock["openaiBaseUrl"],
        "mock-model",
        "sk-test-SECRETKEY123",
        timeout=httpx.Timeout(10.0),
        max_retries=0,
    )


def middle_keep(path: Path) -> int | None:
    """The oracle's `keep` variant: the middle threshold of the sweep, if it prepares a compaction."""
    session = Session.open(path)
    out, _ = plan_output(session, fields=["sweep"])
    rows = out.get("sweep") or []
    if len(rows) < 2:
        return None
    keep = rows[len(rows) // 2]["keepRecentTokens"]
    prep, _ = plan_output(session, keep_recent=keep, fields=["preparation"])
    return keep if prep.get("preparation") else None


def compact_both(
    oracle: Oracle, mock: dict[str, str], src: Path, work: Path, keep: int, cut: str | None = None
):
    ours = work / f"{src.stem}-ours.jsonl"
    shutil.copy(src, ours)
    session = Session.open(ours)
    draft = draft_compaction(session, keep_recent_tokens=keep, cut_entry_id=cut)
    with openai(mock) as summarizer:
        outcome = summarize_draft(draft, summarizer)
    preview = outcome.context_after()
    preview_json = json.loads(js_stringify(preview.to_json()) or "null")
    entry = commit_compaction(outcome)
    pi = oracle.run(
        "compact", str(src), "--keep-recent", str(keep), "--out", str(work / f"{src.stem}-pi.jsonl")
    )
    return entry, preview_json, pi, ours


def assert_same_as_pi(oracle: Oracle, entry: dict, preview: dict, pi: dict, ours: Path) -> None:
    assert "error" not in pi, pi.get("error")
    for k in ENTRY_FIELDS:
        assert entry.get(k) == pi["appendedEntry"].get(k), k
    reloaded = oracle.run("context", str(ours))
    assert reloaded["leafId"] == entry["id"]
    assert reloaded["context"] == preview
    # and pi's own compaction yields the same context apart from the entry's timestamp
    ctx_pi = pi["contextAfter"]
    assert ctx_pi["messages"][1:] == preview["messages"][1:]
    assert ctx_pi["messages"][0]["summary"] == preview["messages"][0]["summary"]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("gen")
    return generate(out / "a", "--seed", "301", "--count", "6") + generate(
        out / "b", "--seed", "302", "--count", "2", "--size", "medium"
    )


def test_compaction_matches_pi(oracle: Oracle, mock_llm, sessions: list[Path], tmp_path: Path) -> None:
    done = 0
    split_seen = False
    for src in sessions:
        keep = middle_keep(src)
        if keep is None:
            continue
        s = Session.open(src)
        if s.migrated or s.reset:
            continue
        entry, preview, pi, ours = compact_both(oracle, mock_llm, src, tmp_path, keep)
        assert_same_as_pi(oracle, entry, preview, pi, ours)
        split_seen |= pi["preparation"]["isSplitTurn"]
        done += 1
    assert done >= 4


def test_second_and_third_compaction(oracle: Oracle, mock_llm, sessions: list[Path], tmp_path: Path) -> None:
    src = next(p for p in sessions if "medium" in p.name)
    current = tmp_path / "chain.jsonl"
    shutil.copy(src, current)
    for round_ in range(3):
        keep = middle_keep(current)
        if keep is None:
            break
        snapshot = tmp_path / f"round{round_}.jsonl"
        shutil.copy(current, snapshot)
        entry, preview, pi, ours = compact_both(oracle, mock_llm, snapshot, tmp_path, keep)
        assert_same_as_pi(oracle, entry, preview, pi, ours)
        current = ours
        # pi continues the conversation after a compaction; add a turn so the next round has work
        with open(current, "a") as fh:
            for n, (role, text) in enumerate([("user", "next step " * 200), ("assistant", "done " * 300)]):
                msg = (
                    {"role": role, "content": text, "timestamp": 1}
                    if role == "user"
                    else {
                        "role": role,
                        "content": [{"type": "text", "text": text}],
                        "provider": "p",
                        "model": "m",
                        "usage": {
                            "input": 1,
                            "output": 1,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "totalTokens": 50,
                        },
                        "stopReason": "stop",
                        "timestamp": 2,
                    }
                )
                parent = Session.open(current).leaf_id
                fh.write(
                    json.dumps(
                        {
                            "type": "message",
                            "id": f"r{round_}n{n}",
                            "parentId": parent,
                            "timestamp": "2026-01-01T00:00:00.000Z",
                            "message": msg,
                        }
                    )
                    + "\n"
                )
                fh.flush()


def test_manual_cut_equals_pi_at_that_threshold(
    oracle: Oracle, mock_llm, sessions: list[Path], tmp_path: Path
) -> None:
    """A manual cut at a candidate pi would choose for some keepRecentTokens gives pi's entry."""
    checked = 0
    for src in sessions:
        out, _ = plan_output(Session.open(src), fields=["sweep", "migrated"])
        rows = [r for r in (out.get("sweep") or []) if r["firstKeptEntryId"]]
        if out.get("migrated") or len(rows) < 3:
            continue
        row = rows[-2]
        prep, _ = plan_output(Session.open(src), keep_recent=row["keepRecentTokens"], fields=["preparation"])
        if not prep.get("preparation"):
            continue
        cut_id = row["firstKeptEntryId"]
        s = Session.open(src)
        rec = s.records[s.require(cut_id)]
        if rec.type != "message":  # metadata absorbed by the backward scan: not a user-chosen candidate
            continue
        entry, preview, pi, ours = compact_both(
            oracle, mock_llm, src, tmp_path, row["keepRecentTokens"], cut=cut_id
        )
        assert_same_as_pi(oracle, entry, preview, pi, ours)
        checked += 1
    assert checked >= 1


def test_real_fixtures_after_upgrade(oracle: Oracle, mock_llm, tmp_path: Path) -> None:
    for fx in sorted(FIXTURES.glob("*.jsonl")):
        work = tmp_path / fx.name
        shutil.copy(fx, work)
        path, backup = upgrade_legacy_file(Session.open(work))
        assert backup.read_bytes() == fx.read_bytes()
        up = Session.open(path)
        assert not up.migrated
        keep = middle_keep(path) or 20000
        entry, preview, pi, ours = compact_both(oracle, mock_llm, path, tmp_path, keep)
        assert_same_as_pi(oracle, entry, preview, pi, ours)


PI_MIGRATES = """
const [home, file] = process.argv.slice(1);
const sm = await import(`${home}/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js`);
sm.SessionManager.open(file, require("node:path").dirname(file));
"""


def test_an_upgrade_is_pi_s_own_migration_rewrite_byte_for_byte(oracle: Oracle, tmp_path: Path) -> None:
    """pi rewrites a version 2 file when it opens it, keeping every line it parsed: a second session
    header (version set to 3) too, which the upgrade dropped. Both rewrites must be the same bytes."""
    header = {
        "type": "session",
        "version": 2,
        "id": "s1",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/x",
    }
    second = {
        "type": "session",
        "id": "s2",
        "timestamp": "2025-01-01T00:00:02.000Z",
        "cwd": "/y",
        "version": 2,
    }
    user = {"role": "user", "content": "hi", "timestamp": 1}
    lines = [
        header,
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": user,
        },
        second,
        {
            "type": "message",
            "id": "a2",
            "parentId": "a1",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "message": user,
        },
        {**second, "id": "s3"},
    ]
    original = "".join(json.dumps(v) + "\n" for v in lines).encode()
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "pi" / "theirs.jsonl"
    theirs.parent.mkdir()
    ours.write_bytes(original)
    theirs.write_bytes(original)
    upgrade_legacy_file(Session.open(ours))
    home = oracle.env["PI_ORACLE_HOME"]
    subprocess.run(
        ["node", "--input-type=commonjs", "-e", f"(async () => {{ {PI_MIGRATES} }})()", home, str(theirs)],
        check=True,
        env=oracle.env,
        timeout=60,
    )
    assert ours.read_bytes() == theirs.read_bytes()


def test_branch_summary_and_fork_load_in_pi(
    oracle: Oracle, mock_llm, sessions: list[Path], tmp_path: Path
) -> None:
    src = next(p for p in sessions if "medium" in p.name)
    work = tmp_path / "b.jsonl"
    shutil.copy(src, work)
    s = Session.open(work)
    path = s.path_indices(s.leaf_index())
    target = s.records[path[len(path) // 2]].id
    with openai(mock_llm) as summarizer:
        out = branch_to(s, target, summarize=True, summarizer=summarizer)
    assert out.entry is not None and out.entry["type"] == "branch_summary"
    ours = json.loads(
        subprocess.run(
            [sys.executable, "-m", "session_studio.cli", "context", str(work), "--pi-version", "0.80.2"],
            capture_output=True,
            check=True,
        ).stdout
    )
    pi = oracle.run("context", str(work))
    assert pi["leafId"] == out.entry["id"] and pi["context"] == ours["context"]
    fork = fork_to_file(Session.open(work), out.entry["id"], tmp_path / "fork.jsonl")
    pi_fork = oracle.run("context", str(fork))
    assert pi_fork["context"]["messages"] == pi["context"]["messages"]
    assert pi_fork["header"]["parentSession"] == str(work)


@pytest.mark.parametrize(
    "kind", ["401", "429", "500", "529", "timeout", "reset", "broken", "garbage", "overflow"]
)
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_failures_write_nothing(kind: str, api: str, sessions: list[Path], tmp_path: Path) -> None:
    import socket

    src = next(p for p in sessions if middle_keep(p))
    work = tmp_path / "f.jsonl"
    shutil.copy(src, work)
    before = work.read_bytes()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            "node",
            str(Path(__file__).parents[1] / "oracle" / "mock-llm.mjs"),
            "--port",
            str(port),
            "--fail",
            f"*:{kind}",
            "--seconds",
            "60",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        urls = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        timeout = httpx.Timeout(2.0)
        summarizer = (
            OpenAICompatibleSummarizer(
                urls["openaiBaseUrl"],
                "m",
                "sk-SECRETKEY123",
                timeout=timeout,
                max_retries=1,
                max_retry_delay_s=0.2,
                retry_backoff_s=0.05,
            )
            if api == "openai"
            else AnthropicSummarizer(
                urls["anthropicBaseUrl"],
                "m",
                "sk-ant-SECRETKEY123",
                timeout=timeout,
                max_retries=1,
                max_retry_delay_s=0.2,
                retry_backoff_s=0.05,
            )
        )
        s = Session.open(work)
        draft = draft_compaction(s, keep_recent_tokens=middle_keep(work) or 20000)
        from session_studio.llm import LlmError

        with summarizer, pytest.raises(LlmError) as err:
            summarize_draft(draft, summarizer)
        assert "SECRETKEY123" not in str(err.value) and "SECRETKEY123" not in err.value.user_message
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
    assert work.read_bytes() == before


def test_edited_summary_is_what_pi_loads(oracle: Oracle, sessions: list[Path], tmp_path: Path) -> None:
    from session_studio.llm import OfflineSummarizer

    src = next(p for p in sessions if middle_keep(p))
    work = tmp_path / "edit.jsonl"
    shutil.copy(src, work)
    draft = draft_compaction(Session.open(work), keep_recent_tokens=middle_keep(work) or 0)
    outcome = summarize_draft(draft, OfflineSummarizer())
    outcome.summary = "## Goal\nEdited by a person ✍️\n" + outcome.summary
    preview = json.loads(js_stringify(outcome.context_after().to_json()) or "null")
    entry = commit_compaction(outcome)
    assert entry["summary"].startswith("## Goal\nEdited by a person ✍️\n")
    assert oracle.run("context", str(work))["context"] == preview
