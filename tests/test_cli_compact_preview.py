"""Issue 9 #8: `compact --dry-run` shows the preview (cut and why, split turn, summary, files, tokens),
`--json` the same facts as JSON, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_support import run_cli
from tests.core.util import A, T, U, call, chain, to_bytes


def _split_turn_session(path: Path) -> Path:
    entries: list[dict[str, Any]] = [U(400), A(400), U("now edit the code")]
    for k in range(6):
        entries += [
            A(blocks=[{"type": "text", "text": f"step {k}"}, call("read", path=f"/src/m{k}.py")]),
            T(3000),
        ]
    entries += [
        A(blocks=[{"type": "text", "text": "writing"}, call("write", path="/src/out.py", content="x")])
    ]
    entries += [T("written"), A("done")]
    path.write_bytes(to_bytes(chain(*entries)))
    return path


def _lines(stderr: bytes) -> list[str]:
    return stderr.decode().splitlines()


def test_dry_run_prints_the_preview_and_writes_nothing(tmp_path: Path) -> None:
    session = _split_turn_session(tmp_path / "s.jsonl")
    before = session.read_bytes()
    args = ("compact", str(session), "--dry-run", "--keep-recent", "2000", "--provider", "offline")
    human = run_cli(*args)
    assert human.returncode == 0, human.stderr
    as_json = run_cli(*args, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert session.read_bytes() == before

    preview = json.loads(as_json.stdout)["preview"]
    assert json.loads(as_json.stdout)["entry"] is None
    err = _lines(human.stderr)
    kept = preview["firstKeptEntryId"]
    assert f"cut: keep from entry {kept} — automatic cut (keepRecentTokens)" in err
    assert preview["cutReason"] and all(f"  {line}" in err for line in preview["cutReason"])
    assert any(line.startswith("  accumulate: walking back from the newest entry") for line in err)
    assert preview["isSplitTurn"] is True and preview["turnStartEntryId"] == "e2"
    assert (
        f"split turn: yes — the turn started at entry e2; its prefix of {preview['turnPrefixMessagesCount']} "
        "message(s) is summarised separately"
    ) in err
    assert f"summarised: {preview['messagesToSummarizeCount']} message(s)" in err
    assert "summary by: offline" in err
    assert preview["readFiles"] and f"read files: {', '.join(preview['readFiles'])}" in err
    assert "/src/m0.py" in preview["readFiles"]
    assert f"modified files: {', '.join(preview['modifiedFiles']) or '(none)'}" in err
    # counts with thousands separators, as the cut's lines print them
    assert (
        f"tokens: {preview['tokensBefore']:,.0f} before → ~{preview['estimatedTokensAfter']:,.0f} after"
        in err
    )
    assert any(line.startswith("dry run: nothing written.") for line in err)
    # the summary alone on stdout, as the JSON has it (ready for --summary-file)
    assert human.stdout.decode() == preview["summary"] + "\n"
    assert "<read-files>" in preview["summary"]


def test_dry_run_names_a_manual_cut(tmp_path: Path) -> None:
    session = _split_turn_session(tmp_path / "s.jsonl")
    before = session.read_bytes()
    r = run_cli(
        "compact", str(session), "--dry-run", "--cut", "e2", "--keep-recent", "2000", "--provider", "offline"
    )
    assert r.returncode == 0, r.stderr
    err = _lines(r.stderr)
    assert "cut: keep from entry e2 — manual cut" in err
    # the profile (auto: the pi installed here) may add its rule number: "… valid cut point (rule 25)"
    assert any(line.startswith("  manual cut (--cut) at e2: user message: valid cut point") for line in err)
    assert "split turn: no" in err
    assert session.read_bytes() == before


def test_the_previews_token_counts_have_thousands_separators() -> None:
    from session_studio.core.explain import fmt_count  # the cut's lines' own formatting

    assert [fmt_count(12433), fmt_count(6316.4), fmt_count(999)] == ["12,433", "6,316", "999"]
    assert [fmt_count(float("nan")), fmt_count("12"), fmt_count(True)] == ["nan", "12", "True"]


def test_a_summary_file_made_for_another_cut_is_refused_with_expect_cut(tmp_path: Path) -> None:
    """pi appended after the dry-run: the plan moved, and the old summary written against the new
    cut would have left the entries between the two cuts neither summarised nor kept."""
    session = _split_turn_session(tmp_path / "s.jsonl")
    base = ("compact", str(session), "--keep-recent", "2000", "--provider", "offline")
    dry = run_cli(*base, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    summary = tmp_path / "summary.md"
    summary.write_bytes(dry.stdout)
    kept = json.loads(run_cli(*base, "--dry-run", "--json").stdout)["preview"]["firstKeptEntryId"]
    assert f"--expect-cut {kept}" in dry.stderr.decode()  # the dry run says how to commit it safely
    # pi appends three more exchanges: the cut moves on
    last = f"e{len(session.read_bytes().splitlines()) - 2}"  # chain's ids: e0 … after the header
    more: list[dict[str, Any]] = []
    for k in range(3):
        more += [{**U(2000), "id": f"p{2 * k}"}, {**A(2000), "id": f"p{2 * k + 1}"}]
    more[0]["parentId"] = last
    grown = to_bytes(chain(*more, header=None))
    with session.open("ab") as fh:
        fh.write(grown)
    before = session.read_bytes()
    r = run_cli(*base, "--summary-file", str(summary), "--expect-cut", kept, "--yes")
    assert r.returncode == 1 and f"not from {kept} (--expect-cut)" in r.stderr.decode()
    assert session.read_bytes() == before
    # without the guard it is written, with a note naming the cut it is written for
    r = run_cli(*base, "--summary-file", str(summary), "--yes")
    assert r.returncode == 0 and "--expect-cut to refuse instead" in r.stderr.decode()


@pytest.mark.parametrize(
    ("content", "said"),
    [(b"", "is empty"), (b"  \n\t\n", "is empty"), (b"## Goal\n\xff\xfe\n", "is not UTF-8 text (at byte 8)")],
)
def test_a_summary_file_that_is_empty_or_not_text_is_refused(
    tmp_path: Path, content: bytes, said: str
) -> None:
    """An empty --summary-file was committed as an empty summary (pi then shows nothing in the
    history's place; the window refuses it); bytes that are not UTF-8 were an internal error."""
    session = _split_turn_session(tmp_path / "s.jsonl")
    before = session.read_bytes()
    summary = tmp_path / "summary.md"
    summary.write_bytes(content)
    r = run_cli("compact", str(session), "--keep-recent", "2000", "--summary-file", str(summary), "--yes")
    assert r.returncode == 1, r.stderr
    assert said in r.stderr.decode() and "nothing was written" in r.stderr.decode()
    assert "internal error" not in r.stderr.decode()
    assert session.read_bytes() == before
