""" "pi would compact now" against pi's own check: tests/oracle/threshold-check.mjs runs the real
``AgentSession._checkCompaction`` of pi 0.80.2 and of pi 1.6.0 (the threshold case) on a session.

For each session and pi, what our check weighs (``PlanState.checked_tokens``) is pinned by two
windows: pi must compact with the threshold one below it and must not at it. Where we say pi does
not check at all, pi must not compact even at a threshold of 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import profile_named
from tests.conftest import (
    ORACLE16_DIR,
    ORACLE_DIR,
    Oracle,
    Oracle16,
    generate,
    generate_scenarios,
    pi_check_job,
    pi_checks,
)

pytestmark = pytest.mark.oracle

RESERVE = 1000
CASES = sorted((ORACLE16_DIR / "cases").glob("*.jsonl"))


def _threshold_job(path: Path, threshold: int) -> list[str | Path | int]:
    """pi's check of the session on another model than the answer's, whose window puts pi's
    threshold at ``threshold``: the threshold case alone."""
    return pi_check_job(path, threshold + RESERVE, RESERVE)


def _compacts(answer: Any) -> bool:
    assert answer in (None, "threshold"), answer
    return bool(answer == "threshold")


def _disagreements(env: dict[str, str], files: list[Path], version: str) -> list[str]:
    # our check first, for every file; then pi's checks that pin it, all in one run of pi
    pinned: list[tuple[Path, Any, tuple[int, int] | None]] = []
    jobs = []
    for path in files:
        planner = PathPlanner(Session.open(str(path)), profile=profile_named(version))
        check = planner.plan(PlanParams(reserve_tokens=RESERVE)).threshold_check
        if check is None:  # no path, or pi would throw planning it
            continue
        tokens = check.tokens
        if tokens is None:  # we say pi does not check: it must not compact even at a threshold of 0
            pinned.append((path, check, None))
            jobs.append(_threshold_job(path, 0))
            continue
        if tokens != tokens or tokens < 1 or tokens > 1e15:  # NaN, 0 or Infinity: nothing to pin
            continue
        below, at = int(tokens) - 1 if tokens == int(tokens) else int(tokens), int(tokens)
        pinned.append((path, check, (below, at)))
        jobs += [_threshold_job(path, below), _threshold_job(path, at)]
    answers = iter(pi_checks(env, version, jobs))
    wrong = []
    for path, check, bounds in pinned:
        if bounds is None:
            if _compacts(next(answers)):
                wrong.append(f"{path.name} under pi {version}: we say no check ({check.basis}), pi compacts")
            continue
        compacts_below, compacts_at = _compacts(next(answers)), _compacts(next(answers))
        if not compacts_below or compacts_at:
            wrong.append(
                f"{path.name} under pi {version}: we weigh {check.tokens:,} ({check.basis}), pi does not"
            )
    return wrong


@pytest.mark.parametrize("version", ["0.80.2", "1.6.0"])
def test_the_seven_cases_and_the_fixture(oracle: Oracle, oracle16: Oracle16, version: str) -> None:
    env = {**oracle.env, **oracle16.env}
    files = [*CASES, ORACLE_DIR / "fixtures" / "before-compaction.jsonl"]
    assert not _disagreements(env, files, version)


def test_the_1_6_0_scenarios(oracle16: Oracle16, tmp_path: Path) -> None:
    files = generate_scenarios(tmp_path, oracle16.env)
    wrong = _disagreements(oracle16.env, files, "1.6.0")
    assert not wrong, "\n".join(wrong)


def _answer(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    message = entry.get("message") if isinstance(entry, dict) else None
    return message if isinstance(message, dict) and message.get("role") == "assistant" else None


def _lines_and_answers(path: Path) -> tuple[list[bytes], list[int]]:
    """The session's lines (with their ends) and the numbers of those that are assistant answers."""
    lines = path.read_bytes().splitlines(keepends=True)
    return lines, [i for i, line in enumerate(lines) if _answer(line)]


def _ending_at_answers(files: list[Path], out: Path) -> list[Path]:
    """Copies of each session that end where pi's check takes its other ways: at an answer that
    failed (``stopReason: "error"``: the last one, one halfway) or whose usage adds up to 0 (the
    last one, and the first after each compaction: the usage before it may predate the compaction)."""
    out.mkdir()
    made = []
    for path in files:
        lines, answers = _lines_and_answers(path)
        if not answers:
            continue
        after_compactions = [
            next((k for k in answers if k > i), None)
            for i, line in enumerate(lines)
            if b'"type":"compaction"' in line.replace(b" ", b"")
        ]
        endings = [(answers[-1], "zero"), (answers[-1], "error"), (answers[len(answers) // 2], "error")]
        endings += [(k, "zero") for k in after_compactions[:2] if k is not None]
        for n, (end, change) in enumerate(endings):
            kept = lines[: end + 1]
            entry = json.loads(kept[end])
            if change == "zero":
                entry["message"]["usage"] = dict.fromkeys(
                    ("input", "output", "cacheRead", "cacheWrite", "totalTokens"), 0
                )
            else:
                entry["message"]["stopReason"] = "error"
            kept[end] = json.dumps(entry).encode() + b"\n"
            made.append(out / f"{path.stem}-{n}-{change}.jsonl")
            made[-1].write_bytes(b"".join(kept))
    return made


@pytest.mark.parametrize("version", ["0.80.2", "1.6.0"])
def test_generated_sessions(oracle: Oracle, oracle16: Oracle16, tmp_path: Path, version: str) -> None:
    """Generated sessions (failed and aborted answers, compactions, branches, damaged lines), and
    copies of them that end at a failed answer or at an answer without usage."""
    files = generate(tmp_path / "plain", "--seed", "7301", "--count", "6", "--size", "small")
    files += generate(tmp_path / "damaged", "--seed", "7302", "--count", "2", "--size", "small", "--damaged")
    files += _ending_at_answers(files, tmp_path / "endings")
    wrong = _disagreements({**oracle.env, **oracle16.env}, files, version)
    assert not wrong, "\n".join(wrong)


#: how a copy's last answer is made an overflow, or almost one (the window is WINDOW)
WINDOW = 50_000
ENDINGS: dict[str, dict[str, Any]] = {
    "overflow-error": {
        "stopReason": "error",
        "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
    },
    "zai-error": {
        "stopReason": "error",
        "errorMessage": '{"code":"1261","message":"Prompt too long"}',
    },  # 1.6.0 only
    "rate-limit": {"stopReason": "error", "errorMessage": "rate limit: too many tokens"},
    "other-error": {"stopReason": "error", "errorMessage": "Internal server error"},
    "input-over": {"stopReason": "stop", "usage": {"input": WINDOW - 100, "cacheRead": 101, "output": 9}},
    "input-at": {"stopReason": "stop", "usage": {"input": WINDOW - 100, "cacheRead": 100, "output": 9}},
    "length-full": {
        "stopReason": "length",
        "usage": {"input": int(WINDOW * 0.99), "cacheRead": 0, "output": 0},
    },
    "length-short": {
        "stopReason": "length",
        "usage": {"input": int(WINDOW * 0.99) - 1, "cacheRead": 0, "output": 0},
    },
    # pi 1.6.0's recoverable length: a length stop below the model's output limit (MAX_TOKENS)
    "length-truncated": {"stopReason": "length", "usage": {"input": 900, "cacheRead": 0, "output": 4000}},
    "length-at-limit": {
        "stopReason": "length",
        "usage": {"input": 900, "cacheRead": 0, "output": 8192},
    },
    "length-string-output": {"stopReason": "length", "usage": {"input": 900, "output": "8191"}},
    "length-no-output": {"stopReason": "length", "usage": {"input": 900, "cacheRead": 0, "output": None}},
}
#: the output limit of the answer's model (--max-tokens), which the truncated endings stop under
MAX_TOKENS = 8192


def _ending_at_overflows(
    files: list[Path], out: Path, endings: tuple[str, ...] = tuple(ENDINGS)
) -> list[Path]:
    """Copies of each session whose last answer is made each of ``endings`` (ENDINGS' names; its
    usage's other fields kept), at the end of the file."""
    out.mkdir()
    made = []
    for path in files:
        lines, answers = _lines_and_answers(path)
        if not answers:
            continue
        for name in endings:
            change = ENDINGS[name]
            kept = lines[: answers[-1] + 1]
            entry = json.loads(kept[-1])
            message = entry["message"]
            message.update({k: v for k, v in change.items() if k != "usage"})
            if "usage" in change:
                message["usage"] = {**(message.get("usage") or {}), **change["usage"]}
                message["usage"]["totalTokens"] = sum(
                    n
                    for k in ("input", "output", "cacheRead", "cacheWrite")
                    if type(n := message["usage"].get(k, 0)) is int
                )
            kept[-1] = json.dumps(entry).encode() + b"\n"
            made.append(out / f"{path.stem}-{name}.jsonl")
            made[-1].write_bytes(b"".join(kept))
    return made


def _overflow_disagreements(
    env: dict[str, str], files: list[Path], version: str
) -> tuple[list[str], list[bool]]:
    """Where ``PlanState.overflow`` and pi's own check on the answer's model (one run of pi for all
    files) disagree on whether pi compacts for an overflow; and ours for each file."""
    states = [
        PathPlanner(Session.open(str(path)), profile=profile_named(version)).plan(
            PlanParams(reserve_tokens=RESERVE, context_window=WINDOW, model_max_tokens=MAX_TOKENS)
        )
        for path in files
    ]
    jobs = [
        pi_check_job(path, WINDOW, RESERVE, "--same-model", "--max-tokens", str(MAX_TOKENS)) for path in files
    ]
    wrong, found = [], []
    for path, state, answer in zip(files, states, pi_checks(env, version, jobs), strict=True):
        ours = state.overflow is not None
        found.append(ours)
        if ours != (answer == "overflow"):
            wrong.append(
                f"{path.name} under pi {version}: we say {state.overflow}, pi does {'not ' * ours}compact for it"
            )
    return wrong, found


@pytest.mark.parametrize("version", ["0.80.2", "1.6.0"])
def test_the_overflow_case_before_the_threshold(
    oracle: Oracle, oracle16: Oracle16, tmp_path: Path, version: str
) -> None:
    """pi's check takes an answer for a context overflow before any threshold (an overflow error,
    a completed answer whose input passes the window, a length stop with no output and a full
    window; pi 1.6.0 a length stop below the model's output limit too): ``PlanState.overflow``
    says so exactly where pi's own check, on the answer's model, compacts for "overflow"."""
    env = {**oracle.env, **oracle16.env}
    files = generate(tmp_path / "plain", "--seed", "7303", "--count", "3", "--size", "small")
    files = _ending_at_overflows(files, tmp_path / "overflows")
    if version == "1.6.0":
        files += _ending_at_overflows(
            generate_scenarios(tmp_path / "sc", oracle16.env)[:6], tmp_path / "sc-overflows"
        )
    wrong, found = _overflow_disagreements(env, files, version)
    assert not wrong, "\n".join(wrong)
    assert sum(found) >= len(files) // 4  # overflows and near misses both


def _entry(kind: str, n: int, parent: str, stamp: str, **fields: Any) -> bytes:
    return (
        json.dumps(
            {"type": kind, "id": f"f000000{n}", "parentId": parent, "timestamp": stamp, **fields}
        ).encode()
        + b"\n"
    )


#: what is appended after the last answer (its id ANSWER): pi 1.6.0 takes an overflow by usage
#: only with no context edit after the answer, an overflow error unless a compaction (or an edit
#: omitting it) follows it too, a recoverable length stop whatever follows
FOLLOWERS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "nothing": [],
    "edit-of-the-answer": [
        (
            "context_edit",
            {"targetId": "ANSWER", "replacement": {"content": [{"type": "text", "text": "edited"}]}},
        )
    ],
    "edit-of-another": [("context_edit", {"targetId": "FIRST", "replacement": {"content": "first, edited"}})],
    "compaction-and-edit": [
        ("compaction", {"summary": "s", "firstKeptEntryId": "ANSWER", "tokensBefore": 10, "details": {}}),
        ("context_edit", {"targetId": "ANSWER", "replacement": {"content": [{"type": "text", "text": "e"}]}}),
    ],
    "compaction-alone": [
        ("compaction", {"summary": "s", "firstKeptEntryId": "ANSWER", "tokensBefore": 10, "details": {}}),
    ],
}


#: one ending of each overflow case, the followers' subjects
FOLLOWED_ENDINGS = ("overflow-error", "input-over", "length-full", "length-truncated")


def _followed(files: list[Path], out: Path) -> list[Path]:
    """Copies of each session ending at an overflow (each of ENDINGS) and then each of FOLLOWERS,
    their timestamps older than the answer's (so pi's check does not take the answer for stale)."""
    out.mkdir()
    made = []
    for path in _ending_at_overflows(files, out / "endings", FOLLOWED_ENDINGS):
        lines = path.read_bytes().splitlines(keepends=True)
        last = json.loads(lines[-1])
        first = next(
            (json.loads(x)["id"] for x in lines[1:] if b'"role":"user"' in x.replace(b" ", b"")), None
        )
        if first is None:
            continue
        for name, followers in FOLLOWERS.items():
            kept, parent = list(lines), last["id"]
            for n, (kind, fields) in enumerate(followers):
                ids = {"ANSWER": last["id"], "FIRST": first}
                fields = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in fields.items()}
                kept.append(_entry(kind, n, parent, "2000-01-01T00:00:00.000Z", **fields))
                parent = f"f000000{n}"
            made.append(out / f"{path.stem}-then-{name}.jsonl")
            made[-1].write_bytes(b"".join(kept))
    return made


def test_what_follows_the_answer_under_1_6_0(oracle16: Oracle16, tmp_path: Path) -> None:
    """pi 1.6.0's overflow case reads what follows the answer on the path (its
    hasPostAssistantContextEdit and assistantRetainedForExplicitRecovery): ``PlanState.overflow``
    agrees with pi's own check on answers followed by context edits and compactions."""
    files = _followed(
        [*generate_scenarios(tmp_path / "sc", oracle16.env)[:2], CASES[0]], tmp_path / "followed"
    )
    wrong, ours_each = _overflow_disagreements(oracle16.env, files, "1.6.0")
    found = {(path.stem.rsplit("-then-", 1)[1], ours) for path, ours in zip(files, ours_each, strict=True)}
    assert not wrong, "\n".join(wrong)
    # each follower lets some overflow stand; the edits after the answer take some away
    assert {name for name, ours in found if ours} == set(FOLLOWERS)
    assert {name for name, ours in found if not ours} == {name for name in FOLLOWERS if "edit" in name}
