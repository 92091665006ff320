"""Branch summaries under the 1.6.0 profile: our `branch` JSON against the real pi 1.6.0.

What a branch summary covers, as pi 1.6.0's collectEntriesForBranchSummary + prepareBranchEntries
compute it (context edits applied, system messages estimated and kept by convertToLlm, the 1.6.0
serializer), on the 28 hand-built 1.6.0 scenarios and the seven cases: for each file the leaf is
left for the first entry, a middle entry and (where the tree branches) another leaf's entry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.jsvalue import js_stringify
from session_studio.core.oracle_schema import BRANCH_FIELDS, branch_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.session import Session
from tests.conftest import ORACLE16_DIR, ROOT, Oracle16, generate_scenarios

pytestmark = pytest.mark.oracle

CASES_DIR = ORACLE16_DIR / "cases"
#: what `branch` prints, and pi's error when it throws
FIELDS = (*BRANCH_FIELDS, "error")
#: files whose segment reads differently under 1.6.0 (context edits, system messages): the
#: comparison would pass for them with 0.80.2 semantics only if the check were blind
PROFILE_SENSITIVE = {
    "sc-edit-content.jsonl",
    "sc-edit-custom-message.jsonl",
    "sc-recovery-omission.jsonl",
    "sc-sys-updates.jsonl",
    "m6-recovery.jsonl",
}


def _js(out: dict[str, Any]) -> dict[str, Any]:
    text = js_stringify(out)
    assert text is not None
    return json.loads(text)


def _pairs(path: Path) -> list[tuple[str, str, int]]:
    """(leaf left, target, budget): the first entry, a middle one, another branch's entry."""
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[1:] if line.strip()]
    ids = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    parents = {e.get("parentId") for e in entries if isinstance(e, dict)}
    leaves = [i for i in ids if i not in parents]
    leaf = leaves[-1]
    pairs = [(leaf, ids[0], 0), (leaf, ids[len(ids) // 2], 1500)]
    if len(leaves) > 1:
        pairs.append((leaf, leaves[0], 0))
    return [p for p in pairs if p[0] != p[1]]


def _differences(oracle16: Oracle16, path: Path) -> list[str]:
    diffs = []
    session = Session.open(path)
    for old_leaf, target, budget in _pairs(path):
        theirs = oracle16.run(
            "branch", str(path), "--from", old_leaf, "--to", target, "--budget", str(budget)
        )
        ours = _js(branch_output(session, old_leaf, target, budget, PROFILE_1_6_0)[0])
        assert theirs["piVersion"] == ours["piVersion"] == "1.6.0"
        for k in FIELDS:
            if theirs.get(k) != ours.get(k):
                diffs.append(f"{path.name} {old_leaf}->{target} budget {budget}: {k} differs")
    return diffs


def _scenarios(oracle16: Oracle16, out: Path) -> list[Path]:
    return generate_scenarios(out, oracle16.env)


def test_branch_agrees_on_the_scenarios(oracle16: Oracle16, tmp_path: Path) -> None:
    files = _scenarios(oracle16, tmp_path / "sc")
    diffs = [d for f in files for d in _differences(oracle16, f)]
    assert not diffs, "\n".join(diffs)


def test_branch_agrees_on_the_cases(oracle16: Oracle16) -> None:
    files = sorted(CASES_DIR.glob("*.jsonl"))
    assert len(files) == 7
    diffs = [d for f in files for d in _differences(oracle16, f)]
    assert not diffs, "\n".join(diffs)


def test_the_profile_matters_where_the_check_says_so(oracle16: Oracle16, tmp_path: Path) -> None:
    """Guard against a blind comparison: on these files 0.80.2 semantics give another segment."""
    files = [f for f in _scenarios(oracle16, tmp_path / "sc") if f.name in PROFILE_SENSITIVE]
    files += [CASES_DIR / n for n in PROFILE_SENSITIVE if n.startswith("m")]
    assert len(files) == len(PROFILE_SENSITIVE)
    for f in files:
        old_leaf, target, budget = _pairs(f)[0]
        session = Session.open(f)
        pi16 = _js(branch_output(session, old_leaf, target, budget, PROFILE_1_6_0)[0])
        pi08 = _js(branch_output(session, old_leaf, target, budget, PROFILE_0_80_2)[0])
        assert pi16["llmMessages"] != pi08["llmMessages"], f.name


def test_cli_branch_follows_the_files_profile(oracle16: Oracle16) -> None:
    """`branch` reads a 1.6.0 file as 1.6.0 (auto) and as the pinned pi otherwise."""
    case = CASES_DIR / "m6-recovery.jsonl"
    old_leaf, target, _budget = _pairs(case)[0]
    theirs = oracle16.run("branch", str(case), "--from", old_leaf, "--to", target)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for setting, want in (("auto", "1.6.0"), ("1.6.0", "1.6.0"), ("0.80.2", "0.80.2")):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "session_studio.cli",
                "branch",
                str(case),
                "--from",
                old_leaf,
                "--to",
                target,
                "--pi-version",
                setting,
            ],
            capture_output=True,
            env=env,
            timeout=120,
        )
        ours = json.loads(r.stdout)
        assert ours["piVersion"] == want
        assert (ours["llmMessages"] == theirs["llmMessages"]) == (want == "1.6.0"), setting
