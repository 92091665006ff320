"""Damaged input never crashes: arbitrary byte edits of a real session load, and every plan
field either has a value or the TypeError pi itself would throw."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_studio.core import Session, SessionLoadError
from session_studio.core.oracle_schema import PI16_PLAN_FIELDS, PLAN_FIELDS, plan_output
from tests.conftest import FIXTURES

SAMPLE = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "session_studio"
    / "resources"
    / "samples"
    / "sample-small-a.jsonl"
)
BASE = SAMPLE.read_bytes() if SAMPLE.exists() else next(FIXTURES.glob("*.jsonl")).read_bytes()[:200_000]

edit = st.tuples(st.integers(0, len(BASE)), st.integers(0, 40), st.binary(max_size=40))


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=6))
def test_mutated_sessions_never_crash(edits) -> None:
    data = bytearray(BASE)
    for at, cut, insert in edits:
        data[at : at + cut] = insert
    try:
        session = Session.from_bytes(bytes(data))
    except SessionLoadError:
        return  # pi throws opening this file too (e.g. a primitive line in a v1 file)
    out, code = plan_output(session, keep_recent=2000)
    for field in _fields_of(out):
        assert field in out or field in out.get("errors", {}), field
    assert code in (0, 3)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)
FIELDS = [
    "type",
    "id",
    "parentId",
    "message",
    "role",
    "content",
    "usage",
    "stopReason",
    "arguments",
    "text",
    "summary",
    "firstKeptEntryId",
    "timestamp",
    "label",
    "targetId",
    "details",
    "command",
    "output",
]


def _set_deep(value, key: str, new) -> bool:
    """Replace the first occurrence of `key` anywhere inside `value`."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if key in x:
                x[key] = new
                return True
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
def _fields_of(out: dict[str, object]) -> list[str]:
    """The plan fields of the output's profile: pi 1.6.0's extra ones only under 1.6.0."""
    pi16 = out.get("piVersion") == "1.6.0"
    return [f for f in PLAN_FIELDS if pi16 or f not in PI16_PLAN_FIELDS]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(1, 10**6), st.sampled_from(FIELDS), json_values), min_size=1, max_size=5)
)
def test_type_confused_entries_never_crash(changes) -> None:
    import orjson

    lines = [orjson.loads(x) for x in BASE.split(b"\n") if x.strip()]
    for pos, key, new in changes:
        _set_deep(lines[pos % len(lines)], key, new)
    data = b"".join(orjson.dumps(v) + b"\n" for v in lines)
    try:
        session = Session.from_bytes(data)
    except SessionLoadError:
        return
    out, _ = plan_output(session, keep_recent=2000)
    for field in _fields_of(out):
        assert field in out or field in out.get("errors", {}), field


ODD_VALUES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2.5,
    "",
    "x",
    "assistant",
    "user",
    "toolResult",
    "bashExecution",
    "custom",
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "label",
    [],
    [1, "a"],
    {},
    {"a": 1},
    {"type": "text", "text": 5},
    [{"type": "toolCall", "name": "read"}],
    [{"type": "text"}],
    [None],
    1e16,
    "2025-13-45",
    {"totalTokens": "5"},
    {"input": "3", "output": 4},
]


def type_confused_files(out: Path, seed: int, count: int) -> list[Path]:
    import random

    import orjson

    rnd = random.Random(seed)
    lines = [orjson.loads(x) for x in BASE.split(b"\n") if x.strip()]
    files = []
    for k in range(count):
        values = [orjson.loads(orjson.dumps(v)) for v in lines]
        for _ in range(rnd.randint(1, 5)):
            _set_deep(values[rnd.randrange(1, len(values))], rnd.choice(FIELDS), rnd.choice(ODD_VALUES))
        f = out / f"confused-{seed}-{k:02d}.jsonl"
        f.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in values))
        files.append(f)
    return files


@pytest.mark.oracle
def test_type_confused_entries_agree_with_pi(oracle, tmp_path: Path) -> None:
    """Wrong types in every field pi reads: we compute (or throw for) exactly what pi does."""
    import os
    import subprocess
    import sys

    from tests.conftest import ORACLE_DIR

    files = type_confused_files(tmp_path, 6, 16)
    env = dict(oracle.env)
    env["PYTHONPATH"] = os.pathsep.join([str(ORACLE_DIR.parent.parent / "src"), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [
            sys.executable,
            str(ORACLE_DIR / "compare.py"),
            "--impl",
            f"{sys.executable} -m session_studio.cli plan {{session}} {{args}} --pi-version 0.80.2",
            "--files",
            *map(str, files),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert "RESULT: PASS" in r.stdout, r.stdout[-5000:]
