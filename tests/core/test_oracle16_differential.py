"""Fidelity under the 1.6.0 profile: our `plan` against the real pi 1.6.0 (tests/oracle/pi-1.6.0).

The seven minimal cases (each isolating one 1.6.0 rule, planned with their
keepRecentTokens), the 28 hand-built 1.6.0 scenarios and 1.6.0 entries injected
into generated sessions must agree field by field with the 1.6.0 oracle.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.jsvalue import js_stringify
from session_studio.core.oracle_schema import PLAN_FIELDS, plan_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, detect_profile
from session_studio.core.session import Session
from tests.conftest import (
    ORACLE16_DIR,
    ORACLE_DIR,
    Oracle16,
    generate,
    generate_injected,
    generate_scenarios,
    oracle_compare_module,
)

pytestmark = pytest.mark.oracle

CASES_DIR = ORACLE16_DIR / "cases"


COMPARE = oracle_compare_module()


def _ours(path: Path, keep: int | None = None, keep_values: bool | None = None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {} if keep is None else {"keep_recent": keep}
    out, _ = plan_output(Session.open(path, keep_values=keep_values), profile=PROFILE_1_6_0, **kwargs)
    text = js_stringify(out)
    assert text is not None
    return json.loads(text)


def _differences(oracle: Oracle16, path: Path, tmp: Path, keep: int | None = None) -> list[str]:
    """Every PLAN_FIELD where our plan differs from pi 1.6.0's (each run on its own copy)."""
    theirs_file, ours_file = tmp / ("oracle-" + path.name), tmp / path.name
    shutil.copyfile(path, theirs_file)
    shutil.copyfile(path, ours_file)
    args = ["plan", str(theirs_file), "--fields", ",".join(PLAN_FIELDS)]
    if keep is not None:
        args += ["--keep-recent", str(keep)]
    theirs = oracle.run(*args)
    diffs = []
    # ours twice: with the values in memory (a small file's way) and on disk (a big file's: the
    # index's columns, values re-read on demand, summaries ruled out by their bytes)
    for mode, keep_values in (("", None), (" (values on disk)", False)):
        ours = _ours(ours_file, keep, keep_values)
        assert theirs.get("piVersion") == ours["piVersion"] == "1.6.0"
        COMPARE.normalise(theirs, ours)
        for f in PLAN_FIELDS:
            te, oe = COMPARE.field_errored(theirs, f), COMPARE.field_errored(ours, f)
            if te is not None or oe is not None:
                if (te is None) != (oe is None):
                    diffs.append(f"{path.name}{mode} {f}: pi raised {te!r}, we raised {oe!r}")
                continue
            d = COMPARE.first_diff(theirs[f], ours[f], f"$.{f}")
            if d is not None:
                diffs.append(
                    f"{path.name}{mode} {d[0]}: pi {COMPARE._short(d[1])} ours {COMPARE._short(d[2])}"
                )
    return diffs


def test_seven_cases_agree(oracle16: Oracle16, tmp_path: Path) -> None:
    keeps = json.loads((CASES_DIR / "cases.json").read_text())
    assert len(keeps) == 7
    diffs = [
        d for name, keep in keeps.items() for d in _differences(oracle16, CASES_DIR / name, tmp_path, keep)
    ]
    assert not diffs, "\n".join(diffs)


def test_the_oracles_extra_fields_agree(oracle16: Oracle16) -> None:
    """`contextTokensPlain`, `projectedEntryIds` and `rawCut` (the 1.6.0 oracle's extra fields) are
    in our 1.6.0 plan and equal pi's; where the raw-entry cut ignores the context edits (m2, m6) it
    is not the cut prepareCompaction uses. The 0.80.2 profile prints none of them, as its oracle."""
    keeps = json.loads((CASES_DIR / "cases.json").read_text())
    extra = ["contextTokensPlain", "projectedEntryIds", "rawCut"]
    raw_differs = set()
    for name, keep in keeps.items():
        path = CASES_DIR / name
        theirs = oracle16.run(
            "plan", str(path), "--keep-recent", str(keep), "--fields", ",".join([*extra, "cut"])
        )
        ours = _ours(path, keep)
        for f in extra:
            assert f in ours and COMPARE.first_diff(theirs[f], ours[f], f"$.{f}") is None, (name, f)
        if ours["rawCut"]["firstKeptEntryId"] != ours["cut"]["firstKeptEntryId"]:
            raw_differs.add(name)
    assert raw_differs == {"m2-edit-null.jsonl", "m6-recovery.jsonl"}
    plain, _ = plan_output(Session.open(CASES_DIR / "m1-system-first.jsonl"), profile=PROFILE_0_80_2)
    assert not set(extra) & set(plain)


def _scenarios(oracle16: Oracle16, out: Path) -> list[Path]:
    return generate_scenarios(out, oracle16.env)


def test_scenarios_agree(oracle16: Oracle16, tmp_path: Path) -> None:
    diffs = [d for f in _scenarios(oracle16, tmp_path / "sc") for d in _differences(oracle16, f, tmp_path)]
    assert not diffs, "\n".join(diffs)


def test_auto_reads_every_scenario_as_1_6_0(oracle16: Oracle16, tmp_path: Path, monkeypatch) -> None:
    """With no pi on the machine, auto reads every scenario as 1.6.0; plain ones follow the setting."""
    from session_studio.core import profile

    monkeypatch.setattr(profile, "installed_pi_version", lambda: None)
    plain_files = []
    for f in _scenarios(oracle16, tmp_path / "sc"):
        session = Session.open(f)
        assert detect_profile(session, "auto").profile is PROFILE_1_6_0, f.name
        # a big file's way finds the same marker (it rules summaries out by their bytes first)
        assert profile.pi16_marker(Session.open(f, keep_values=False)) == profile.pi16_marker(session), f.name
        if profile.pi16_marker(session) is None:
            plain_files.append(f.name)
            assert detect_profile(session, "auto", plain="0.80.2").profile.version == "0.80.2"
        else:
            assert detect_profile(session, "auto", plain="0.80.2").profile is PROFILE_1_6_0
    assert plain_files  # the scenarios include 0.80.2-shaped files (examples D, E, G)


@pytest.mark.parametrize(
    ("seed", "size"), [(11, "small"), (12, "medium"), (13, "large")], ids=["small", "medium", "large"]
)
def test_injected_sessions_agree(oracle16: Oracle16, tmp_path: Path, seed: int, size: str) -> None:
    files = generate_injected(
        tmp_path, oracle16.env, seed, "--count", "1" if size == "large" else "3", "--size", size
    )
    assert files
    diffs = [d for f in files for d in _differences(oracle16, f, tmp_path)]
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize(
    ("seed", "gen_args"),
    [(14, []), (15, ["--legacy"]), (16, ["--damaged"]), (17, ["--legacy", "--damaged"])],
    ids=["plain", "legacy", "damaged", "legacy-damaged"],
)
def test_plain_sessions_agree(oracle16: Oracle16, tmp_path: Path, seed: int, gen_args: list[str]) -> None:
    """0.80.2-shaped files read by pi 1.6.0 (rules 26-29 change cuts even there)."""
    files = generate(tmp_path / "gen", "--seed", str(seed), "--count", "5", *gen_args)
    diffs = [d for f in files for d in _differences(oracle16, f, tmp_path)]
    assert not diffs, "\n".join(diffs)


def test_cli_plan_takes_pi_version(oracle16: Oracle16, tmp_path: Path) -> None:
    """The command line reports the profile it used, as the oracle does."""
    case = CASES_DIR / "m1-system-first.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ORACLE_DIR.parent.parent / "src"))
    for setting, want in (("auto", "1.6.0"), ("1.6.0", "1.6.0"), ("0.80.2", "0.80.2")):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "session_studio.cli",
                "plan",
                str(case),
                "--fields",
                "cut",
                "--pi-version",
                setting,
            ],
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert json.loads(r.stdout)["piVersion"] == want


@pytest.mark.parametrize(
    ("scenario", "keep"),
    [("sc-sys-updates.jsonl", 2000), ("sc-compaction-sysmsg.jsonl", 2000), ("sc-sys-basic.jsonl", 1000)],
)
def test_compaction_entry_with_system_snapshot_is_pi_1_6_0s(
    oracle16: Oracle16, tmp_path: Path, scenario: str, keep: int
) -> None:
    """Our CompactionEntry bytes, with the systemMessage snapshot, equal what pi 1.6.0's compact appends
    (given its summary, id, time and usage: the snapshot and the key order are ours)."""
    from session_studio.core.entries import CompactionEntry, FileDetails
    from session_studio.core.projection import system_message_snapshot
    from session_studio.core.session import CURRENT_LEAF

    src = _scenarios(oracle16, tmp_path / "sc")
    original = next(f for f in src if f.name == scenario)
    out = tmp_path / "compacted.jsonl"
    oracle16.run("compact", str(original), "--keep-recent", str(keep), "--out", str(out))
    theirs_line = out.read_text(encoding="utf-8").rstrip("\n").split("\n")[-1]
    theirs = json.loads(theirs_line)
    assert theirs["type"] == "compaction" and "systemMessage" in theirs

    session = Session.open(original)
    ours = CompactionEntry(
        id=theirs["id"],
        parentId=theirs["parentId"],
        timestamp=theirs["timestamp"],
        summary=theirs["summary"],
        firstKeptEntryId=theirs["firstKeptEntryId"],
        tokensBefore=theirs["tokensBefore"],
        details=FileDetails(**theirs["details"]),
        usage=theirs.get("usage"),
        fromHook=theirs["fromHook"],
        systemMessage=system_message_snapshot(session, CURRENT_LEAF, theirs["timestamp"]),
    )
    assert ours.to_json_line() == theirs_line + "\n"
    # and the plan's preparation is the one pi compacted with
    prep = _ours(original, keep)["preparation"]
    assert prep["firstKeptEntryId"] == theirs["firstKeptEntryId"]
    assert prep["tokensBefore"] == theirs["tokensBefore"]


def test_context_command_agrees(oracle16: Oracle16, tmp_path: Path) -> None:
    """`context --pi-version 1.6.0` equals pi 1.6.0's buildSessionContext + convertToLlm."""
    from session_studio.core.oracle_schema import context_output

    wanted = {
        "sc-sys-updates.jsonl",
        "sc-edit-content.jsonl",
        "sc-compaction-sysmsg.jsonl",
        "sc-retain-none.jsonl",
    }
    files = [f for f in _scenarios(oracle16, tmp_path / "sc") if f.name in wanted]
    assert len(files) == len(wanted)
    for f in files:
        theirs = oracle16.run("context", str(f))
        out, _ = context_output(Session.open(f), profile=PROFILE_1_6_0)
        text = js_stringify(out)
        assert text is not None
        ours = json.loads(text)
        for k in ("piVersion", "context", "llmMessages", "pathIds", "leafId", "entryCount"):
            assert COMPARE.first_diff(theirs[k], ours[k]) is None, (f.name, k)
