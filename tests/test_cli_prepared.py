"""`plan --fields prepared`: a preparation's figures (counts, file lists, cut) without its messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_studio.cli import main

ORACLE = Path(__file__).resolve().parent / "oracle"
SESSIONS = [
    ORACLE / "fixtures" / "before-compaction.jsonl",
    ORACLE / "fixtures" / "large-session.jsonl",
    *sorted((ORACLE / "pi-1.6.0" / "cases").glob("*.jsonl")),
]


@pytest.fixture(autouse=True)
def _no_pi_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "no-pi"))


def _plan(capsys: pytest.CaptureFixture[str], session: Path, version: str, fields: str) -> dict[str, object]:
    main(["plan", str(session), "--pi-version", version, "--fields", fields, "--keep-recent", "3000"])
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize("version", ["0.80.2", "1.6.0"])
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.name)
def test_prepared_is_the_preparations_figures(
    session: Path, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every figure equals what the oracle-checked `preparation` field says (None where pi's
    prepareCompaction returns undefined), and nothing else is printed."""
    # one run: a legacy file's migration gives its entries fresh random ids, as pi's does
    both = _plan(capsys, session, version, "preparation,prepared")
    got = _plan(capsys, session, version, "prepared")
    assert set(got) <= {"version", "piVersion", "command", "prepared", "error"}
    if "error" in got:  # a file this pi refuses: refused the same way either way
        assert both["error"] == got["error"]
        return
    whole = both["preparation"]
    if whole is None:
        assert both["prepared"] is None and got["prepared"] is None
        return
    assert isinstance(whole, dict)
    assert both["prepared"] == {
        "firstKeptEntryId": whole["firstKeptEntryId"],
        "isSplitTurn": whole["isSplitTurn"],
        "tokensBefore": whole["tokensBefore"],
        "previousSummary": whole["previousSummary"] is not None,
        "messagesToSummarize": len(whole["messagesToSummarize"]),
        "turnPrefixMessages": len(whole["turnPrefixMessages"]),
        "readFiles": whole["readFiles"],
        "modifiedFiles": whole["modifiedFiles"],
    }


def test_prepared_is_opt_in(capsys: pytest.CaptureFixture[str]) -> None:
    """The oracle's schema stays as it is: `plan` alone does not print it."""
    assert main(["plan", str(SESSIONS[0])]) == 0
    assert "prepared" not in json.loads(capsys.readouterr().out)
