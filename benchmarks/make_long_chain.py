#!/usr/bin/env python3
"""Make a long session pi has not compacted yet: one chain of turns, no compaction, no branch.

The two scale files (the 110 MB generated session and its 1 GB copies) are planned over the short
tail after their last compaction; a session before its first compaction is planned over its whole
path, which is a different cost (README "Performance": a long path before its first compaction).
This writes such a path: ENTRIES entries in turns of a user prompt, an assistant tool call, its
tool result and an assistant answer with usage, each a few hundred characters, 8-hex ids as pi
writes them, timestamps a second apart. The calls are a coding agent's: read, edit and write (file
operations the preparation lists, on a few hundred files) and bash. Seeded: the same file every
time. (Until 2026-12-02 every call was bash: no file operation at all.)

    python benchmarks/make_long_chain.py [--entries 100000] [--out /tmp/chain] [--seed 1]

Prints the file's path; then e.g. `python benchmarks/plan_vs_pi.py --file PATH --pi 1.6.0`.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

WORDS = (
    "read the file then run the tests again before the next edit keep the change small and check "
    "what the compaction keeps when the context window fills up with tool output from the shell"
).split()
START = datetime(2026, 11, 20, 9, 0, 0, tzinfo=UTC)
#: the tool of turn t's call: TOOLS[t % len(TOOLS)] (30% read, edit, bash each, 10% write)
TOOLS = ("read", "bash", "edit", "read", "bash", "write", "read", "edit", "bash", "edit")


def _call(turn: int, rng: random.Random) -> tuple[str, dict[str, object]]:
    """The name and arguments of turn ``turn``'s tool call."""
    name = TOOLS[turn % len(TOOLS)]
    if name == "bash":
        return name, {"command": _text(rng, 4)}
    file = turn * 7919 % 400  # one of ~200 paths (the words repeat), as a project's files
    path = f"src/{WORDS[file % len(WORDS)]}/{WORDS[file // len(WORDS)]}.py"
    if name == "read":
        return name, {"path": path}
    if name == "edit":
        return name, {"path": path, "oldText": _text(rng, 3), "newText": _text(rng, 3)}
    return name, {"path": path, "content": _text(rng, 6)}


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _stamp(k: int) -> str:
    return (START + timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%S.") + "000Z"


def _message(rng: random.Random, k: int, context: int) -> dict[str, object]:
    """Entry k's message: the turn's k % 4-th step (`context`: the tokens the last answer reports)."""
    ms = int((START + timedelta(seconds=k)).timestamp() * 1000)
    step = k % 4
    if step == 0:
        return {"role": "user", "content": [{"type": "text", "text": _text(rng, 30)}], "timestamp": ms}
    if step == 2:
        return {
            "role": "toolResult",
            "toolCallId": f"call{k - 1}",
            "toolName": TOOLS[(k // 4) % len(TOOLS)],
            "content": [{"type": "text", "text": _text(rng, 60)}],
            "isError": False,
            "timestamp": ms,
        }
    usage = {
        "input": context,
        "output": 40,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": context + 40,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    content: list[dict[str, object]]
    if step == 1:
        name, arguments = _call(k // 4, rng)
        content = [{"type": "toolCall", "id": f"call{k}", "name": name, "arguments": arguments}]
    else:
        content = [{"type": "text", "text": _text(rng, 40)}]
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-opus-4-5",
        "usage": usage,
        "stopReason": "toolUse" if step == 1 else "stop",
        "timestamp": ms,
    }


def write_chain(out: Path, entries: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"long-chain-{entries}.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": f"{seed:08x}-0000-4000-8000-000000000000",
        "timestamp": _stamp(0),
        "cwd": "/srv/code/webapp",
    }
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header, separators=(",", ":")) + "\n")
        parent = None
        for k in range(entries):
            entry_id = f"{k + 1:08x}"
            # an answer reports the context so far: ~120 tokens a turn, never compacted
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": _stamp(k),
                "message": _message(rng, k, 2000 + 30 * k),
            }
            fh.write(json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n")
            parent = entry_id
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/chain"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(write_chain(a.out, a.entries, a.seed))


if __name__ == "__main__":
    main()
