"""Real token counts on a huge session: time and memory of each stage the window and the CLI run.

    python benchmarks/real_tokens.py [SESSION.jsonl] [--profile 0.80.2|1.6.0]

Without a file the 100k-entry session /tmp/huge/huge-s1-000-v3.jsonl is used (generated with
gen_sessions.py --seed 1 --size huge when missing, ~20 s). Prints JSON with seconds and peak RSS:
opening the session (for reference), loading the tokenizer, counting the context (what the token
bar and ``info --tokens real`` need), counting every entry of the active path (what the window's
per-entry cache holds after a full pass) and every entry of the file.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from session_studio.core import Session  # noqa: E402
from session_studio.core import real_tokens as rt  # noqa: E402
from session_studio.core.plan import PathPlanner, PlanParams  # noqa: E402
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0  # noqa: E402

DEFAULT = Path("/tmp/huge/huge-s1-000-v3.jsonl")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _session_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if not DEFAULT.exists():
        generator = str(ROOT / "tests/oracle/gen_sessions.py")
        args = ["--seed", "1", "--count", "1", "--size", "huge", "--out", str(DEFAULT.parent)]
        subprocess.run([sys.executable, generator, *args], check=True, capture_output=True)
    return DEFAULT


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--profile", choices=("0.80.2", "1.6.0"), default="0.80.2")
    a = ap.parse_args(argv)
    path = _session_path(a.file)
    profile = PROFILE_1_6_0 if a.profile == "1.6.0" else PROFILE_0_80_2
    out: dict[str, object] = {"file": str(path), "bytes": path.stat().st_size, "profile": profile.version}

    t = time.perf_counter()
    session = Session.open(path, keep_values=False)
    planner = PathPlanner(session, profile=profile)
    state = planner.plan(PlanParams())
    out["open_and_plan"] = {"seconds": round(time.perf_counter() - t, 3), "peakRssMB": round(_rss_mb(), 1)}
    out["entries"] = len(session.records)
    out["path_entries"] = len(state.path)
    out["context_messages"] = len(state.item_tokens)

    choice = rt.tokenizer_for_model(planner.model)
    t = time.perf_counter()
    count = rt.load_counter(choice.encoding)
    out["tokenizer"] = {
        "label": choice.label(),
        "load_seconds": round(time.perf_counter() - t, 3),
        "peakRssMB": round(_rss_mb(), 1),
    }

    t = time.perf_counter()
    result = rt.real_path_tokens(state, rt.count_items(state, count), choice)
    out["context"] = {
        "seconds": round(time.perf_counter() - t, 3),
        "peakRssMB": round(_rss_mb(), 1),
        "estimate": result.estimate_total,
        "real": result.real_total,
        "notes": result.decision.notes() if result.decision else [],
    }

    t = time.perf_counter()
    path_counts = dict(rt.iter_entry_counts(session, state.path, count, profile))
    out["path_entries_counted"] = {
        "seconds": round(time.perf_counter() - t, 3),
        "peakRssMB": round(_rss_mb(), 1),
        "real": sum(c.tokens for c in path_counts.values()),
    }

    t = time.perf_counter()
    all_counts = dict(rt.iter_entry_counts(session, range(len(session.records)), count, profile))
    out["all_entries_counted"] = {
        "seconds": round(time.perf_counter() - t, 3),
        "peakRssMB": round(_rss_mb(), 1),
        "real": sum(c.tokens for c in all_counts.values()),
        "estimate": sum(
            r.tokens for r in session.records if r.type == "message" and isinstance(r.tokens, int | float)
        ),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
