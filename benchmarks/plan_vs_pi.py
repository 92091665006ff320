#!/usr/bin/env python3
"""Benchmark: `session-studio plan --fields cut,contextTokens` against pi's own open + plan.

Both run as whole processes, alternately, on the same generated `--size huge`
session (~110 MB, 100k entries); prints the best wall time and peak RSS of each
and the ratios (ours / pi). Goal ≤ 0.25, acceptable ≤ 0.5.

    python benchmarks/plan_vs_pi.py [--file F.jsonl] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "oracle"
WORK = ROOT / "benchmarks" / "_work"


def huge_session() -> Path:
    f = WORK / "huge-s5-000-v3.jsonl"
    if not f.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        print("generating a huge session (~20 s)…", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                str(ORACLE / "gen_sessions.py"),
                "--seed",
                "5",
                "--count",
                "1",
                "--size",
                "huge",
                "--out",
                str(WORK),
            ],
            check=True,
            capture_output=True,
        )
    return f


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall time and peak RSS (bytes; the largest of the process and its own children) of one run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise SystemExit(f"{cmd[0]} failed with status {status}")
    return dt, ru.ru_maxrss * 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    f = a.file or huge_session()
    env = dict(os.environ, TZ="UTC")
    env.setdefault("PI_ORACLE_HOME", str(Path.home() / ".cache" / "pi-oracle-0.80.2"))
    subprocess.run(["bash", str(ORACLE / "install.sh")], check=True, capture_output=True, env=env)
    ours_cmd = [sys.executable, "-m", "session_studio.cli", "plan", str(f), "--fields", "cut,contextTokens"]
    pi_cmd = ["node", str(ORACLE / "pi-bench.mjs"), str(f)]
    cold_env = dict(env, SESSION_STUDIO_NO_INDEX_CACHE="1")
    warm_env = dict(env, SESSION_STUDIO_CACHE_DIR=str(WORK / "cache"))
    run(ours_cmd, warm_env)  # prime the index cache
    ours, warm, pi = [], [], []
    for _ in range(a.repeat):
        pi.append(run(pi_cmd, env))
        ours.append(run(ours_cmd, cold_env))
        warm.append(run(ours_cmd, warm_env))

    def best(runs: list[tuple[float, int]]) -> tuple[float, int]:
        return min(t for t, _ in runs), max(m for _, m in runs)

    def fig(t: float, m: int) -> dict[str, float]:
        return {"seconds": round(t, 3), "peakRssMB": round(m / 2**20, 1)}

    (o_t, o_m), (w_t, w_m), (p_t, p_m) = best(ours), best(warm), best(pi)
    result = {
        "file": str(f),
        "bytes": f.stat().st_size,
        "ours_cold": fig(o_t, o_m),
        "ours_cached_index": fig(w_t, w_m),
        "pi": fig(p_t, p_m),
        "ratio_cold": {"time": round(o_t / p_t, 3), "rss": round(o_m / p_m, 3)},
        "ratio_cached_index": {"time": round(w_t / p_t, 3), "rss": round(w_m / p_m, 3)},
        "goal": 0.25,
        "acceptable": 0.5,
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
