"""Fidelity: the oracle's own compare.py, our `plan` against the real pi 0.80.2.

Each case generates sessions with the oracle's generator (deterministic seeds)
and requires zero differing fields across every `plan` field.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ORACLE_DIR, Oracle

pytestmark = pytest.mark.oracle

IMPL = f"{sys.executable} -m session_studio.cli plan {{session}} {{args}} --pi-version 0.80.2"

CASES = [
    ("small", ["--seed", "101", "--count", "8"]),
    ("medium-large", ["--seed", "102", "--count", "3", "--size", "medium,large"]),
    ("legacy", ["--seed", "103", "--count", "8", "--legacy"]),
    ("damaged", ["--seed", "104", "--count", "19", "--damaged"]),
    ("legacy-damaged", ["--seed", "105", "--count", "8", "--legacy", "--damaged"]),
    ("fixtures", ["--files", *sorted(str(p) for p in FIXTURES.glob("*.jsonl"))]),
]


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_compare_plan_with_pi(oracle: Oracle, name: str, args: list[str], tmp_path) -> None:
    env = dict(oracle.env)
    env["PYTHONPATH"] = os.pathsep.join([str(ORACLE_DIR.parent.parent / "src"), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [
            sys.executable,
            str(ORACLE_DIR / "compare.py"),
            "--impl",
            IMPL,
            *args,
            "--jobs",
            "2",
            "--report",
            str(tmp_path / "report.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert "RESULT: PASS" in r.stdout, r.stdout[-6000:] + r.stderr[-2000:]
    assert r.returncode == 0


def _ours(*args: str) -> dict:
    import json

    r = subprocess.run(
        [sys.executable, "-m", "session_studio.cli", *args, "--pi-version", "0.80.2"],
        capture_output=True,
        timeout=300,
    )
    return json.loads(r.stdout)


# one test per generated file, so the oracle stage's workers share the ~100 process pairs
@pytest.mark.parametrize("index", range(4))
def test_context_and_branch_agree(oracle: Oracle, tmp_path, index: int) -> None:
    """`context` and `branch` outputs equal pi's on generated trees (every leaf pair sampled)."""
    import json

    from tests.conftest import generate

    files = generate(tmp_path / "gen", "--seed", "106", "--count", "4", "--size", "small")
    assert len(files) == 4
    for f in files[index : index + 1]:
        pi = oracle.run("context", str(f))
        ours = _ours("context", str(f))
        for k in ("context", "llmMessages", "pathIds", "leafId", "header", "entryCount"):
            assert ours.get(k) == pi.get(k), (f.name, k)
        entries = [json.loads(line) for line in f.read_text().split("\n")[1:] if line.strip()]
        ids = [e["id"] for e in entries if isinstance(e, dict) and "id" in e]
        leaves = [i for i in ids if not any(e.get("parentId") == i for e in entries)]
        pairs = [(a, b) for a in leaves for b in ids[:: max(1, len(ids) // 4)]][:6]
        for a, b in pairs:
            for budget in ("0", "400"):
                pi = oracle.run("branch", str(f), "--from", a, "--to", b, "--budget", budget)
                ours = _ours("branch", str(f), "--from", a, "--to", b, "--budget", budget)
                for k in (
                    "entryIds",
                    "commonAncestorId",
                    "messages",
                    "llmMessages",
                    "serialized",
                    "fileOps",
                    "readFiles",
                    "modifiedFiles",
                    "fileOpsFormatted",
                    "totalTokens",
                ):
                    assert ours.get(k) == pi.get(k), (f.name, a, b, budget, k)
