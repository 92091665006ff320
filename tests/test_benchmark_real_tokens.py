"""benchmarks/real_tokens.py still runs: once on a small generated session (the huge run is on demand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import generate

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_real_tokens_benchmark_smoke(tmp_path: Path) -> None:
    (session,) = generate(tmp_path, "--seed", "5", "--count", "1", "--size", "small")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "real_tokens.py"), str(session)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["bytes"] == session.stat().st_size
    for stage in ("context", "path_entries_counted", "all_entries_counted"):
        assert out[stage]["seconds"] >= 0 and out[stage]["peakRssMB"] > 0
    assert out["context"]["real"] > 0
    assert out["all_entries_counted"]["real"] >= out["path_entries_counted"]["real"]
