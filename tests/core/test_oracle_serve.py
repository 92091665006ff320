"""`pi-oracle.mjs serve` (what the oracle fixtures and compare.py use) answers each request exactly as
a run of its own: the same JSON, exit code and stderr, also for legacy files whose migrated ids come
from the oracle's deterministic counter (which must restart for every request)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Oracle, generate
from tests.oracle.oracle_serve import OracleServer

pytestmark = pytest.mark.oracle


def _requests(tmp_path: Path) -> list[list[str]]:
    legacy = generate(tmp_path / "legacy", "--seed", "103", "--count", "2", "--legacy")
    damaged = generate(tmp_path / "damaged", "--seed", "104", "--count", "1", "--damaged")
    v1 = str(legacy[0])
    return [
        ["plan", v1],
        ["plan", v1, "--keep-recent", "500"],  # a second migration of the same file: ids from 1 again
        ["context", str(legacy[1])],
        ["plan", str(damaged[0]), "--fields", "migratedEntries,cut"],
        ["plan", v1, "--leaf", "no-such-entry"],  # pi throws: exit 3 with an error object
        ["plan", str(tmp_path / "missing.jsonl")],
        ["plan", v1, "--bogus"],  # usage error: exit 2, no JSON, the usage on stderr
        ["branch", str(next(FIXTURES.glob("*.jsonl"))), "--from", "x", "--to", "y"],
    ]


@pytest.mark.parametrize("which", ["0.80.2", "1.6.0"])
def test_serve_answers_like_a_run_of_its_own(
    which: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    runner: Oracle = request.getfixturevalue("oracle" if which == "0.80.2" else "oracle16")
    assert (runner.script.parent.name == "pi-1.6.0") == (which == "1.6.0")
    server = OracleServer(str(runner.script), env=runner.env)
    try:
        for argv in _requests(tmp_path):
            alone = subprocess.run(
                ["node", str(runner.script), *argv], capture_output=True, env=runner.env, timeout=300
            )
            served = server.run(argv, timeout=300)
            assert served.exit_code == alone.returncode, argv
            assert served.stdout == alone.stdout.rstrip(b"\n"), argv
            assert served.stderr == alone.stderr.decode(), argv
    finally:
        server.close()


def test_serve_refuses_what_it_does_not_answer(oracle: Oracle) -> None:
    server = OracleServer(str(oracle.script), env=oracle.env)
    with pytest.raises(ValueError, match="serve answers"):
        server.run(["compact", "x.jsonl"])
    server.close()
