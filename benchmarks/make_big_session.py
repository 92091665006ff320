#!/usr/bin/env python3
"""Make the ~1 GB session of the scale benchmark: chained copies of one generated huge session.

Copy k (k = 0 … copies-1) of every entry gets a fresh id (8 hex digits, as pi's, unique
in the whole file); every reference to an id is mapped to the copy's own ids (`parentId`,
a compaction's `firstKeptEntryId`, a label's `targetId`, a branch summary's `fromId`); the
roots of copy k (parentId null) hang under the last entry of copy k-1, so the result is one
tree whose leaf is the last line; timestamps move by k times the source's time span so the
file stays chronological. Only the first copy's session header is written.

    python benchmarks/make_big_session.py [--source F.jsonl] [--copies 9] [--out /tmp/big]

Without --source it uses /tmp/huge/huge-s1-000-v3.jsonl, generating it first if missing
(`tests/oracle/gen_sessions.py --seed 1 --count 1 --size huge --out /tmp/huge`).
Lines are written with the generator's own serialiser (JSON.stringify's compact form), so
copy 0 is byte-identical to the source.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "tests" / "oracle" / "gen_sessions.py"
DEFAULT_SOURCE = Path("/tmp/huge/huge-s1-000-v3.jsonl")
#: the top-level fields that name another entry
ID_REFERENCES = ("firstKeptEntryId", "targetId", "fromId")


def _parse_ts(s: str) -> datetime | None:
    """pi's own timestamp form; None for the odd ones the generator also writes (kept as they are)."""
    try:
        return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _format_ts(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def ensure_source(source: Path | None) -> Path:
    if source is not None:
        return source
    if not DEFAULT_SOURCE.exists():
        print(f"generating {DEFAULT_SOURCE} (~30 s)…", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                str(GENERATOR),
                "--seed",
                "1",
                "--count",
                "1",
                "--size",
                "huge",
                "--out",
                str(DEFAULT_SOURCE.parent),
            ],
            check=True,
        )
    return DEFAULT_SOURCE


def make_big(source: Path, copies: int, out: Path) -> Path:
    sys.path.insert(0, str(GENERATOR.parent))
    from gen_sessions import dumps

    lines = source.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    header = json.loads(lines[0])
    if header.get("type") != "session":
        raise SystemExit(f"{source}: the first line is not a session header")
    entries = [json.loads(b) for b in lines[1:]]
    stamps = [d for e in entries if isinstance(e.get("timestamp"), str) and (d := _parse_ts(e["timestamp"]))]
    span = (max(stamps) - min(stamps)) + timedelta(minutes=1) if stamps else timedelta()
    rng = random.Random(20251130)
    used: set[str] = {str(header.get("id"))}
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"big-{copies}x-{source.stem}.jsonl"
    tmp = target.with_suffix(".tmp")
    previous_leaf: str | None = None
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(lines[0].decode("utf-8") + "\n")
        for k in range(copies):
            shift = span * k
            ids: dict[str, str] = {}
            for e in entries:
                old = e.get("id")
                if isinstance(old, str):
                    if k == 0:
                        new = old
                    else:
                        new = f"{rng.getrandbits(32):08x}"
                        while new in used:
                            new = f"{rng.getrandbits(32):08x}"
                    used.add(new)
                    ids[old] = new
            last_id = previous_leaf
            for e in entries:
                if k == 0:
                    fh.write(dumps(e) + "\n")
                    if isinstance(e.get("id"), str):
                        last_id = e["id"]
                    continue
                c = dict(e)
                if isinstance(c.get("id"), str):
                    c["id"] = ids[c["id"]]
                pid = c.get("parentId")
                c["parentId"] = previous_leaf if pid is None else ids.get(pid, pid)
                for key in ID_REFERENCES:
                    ref = c.get(key)
                    if isinstance(ref, str):
                        c[key] = ids.get(ref, ref)
                ts = c.get("timestamp")
                when = _parse_ts(ts) if isinstance(ts, str) else None
                if when is not None:
                    c["timestamp"] = _format_ts(when + shift)
                msg = c.get("message")
                if isinstance(msg, dict) and isinstance(msg.get("timestamp"), int):
                    msg = dict(msg, timestamp=msg["timestamp"] + int(shift.total_seconds() * 1000))
                    c["message"] = msg
                fh.write(dumps(c) + "\n")
                if isinstance(c.get("id"), str):
                    last_id = c["id"]
            previous_leaf = last_id
            print(f"copy {k + 1}/{copies} written", file=sys.stderr)
    tmp.replace(target)
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path)
    ap.add_argument("--copies", type=int, default=9)
    ap.add_argument("--out", type=Path, default=Path("/tmp/big"))
    a = ap.parse_args()
    target = make_big(ensure_source(a.source), a.copies, a.out)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
