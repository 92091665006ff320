"""The failed attempt's omission against pi 1.6.0's own: tests/oracle/threshold-check.mjs runs pi's
``_checkCompaction`` and, where it retries for an overflow, pi's ``_omitRecoveryAttempt`` on a
copy (``--omit-out``); ``engine.context_edits`` must append the same edits (the same targets, in
the same order, each under the one before), and pi must load our file with the context its own
gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams, PlanState
from session_studio.core.profile import PROFILE_1_6_0
from session_studio.engine.context_edits import append_omissions, recovery_omission, recovery_plan
from tests.conftest import (
    Oracle16,
    as_js_json,
    generate,
    generate_scenarios,
    pi_check_job,
    pi_checks,
    plan_cut_fields,
)

pytestmark = pytest.mark.oracle

WINDOW, MAX_TOKENS = 50_000, 8192


def _lines(path: Path) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append(None)
    return out


def _failed_with_tools(files: list[Path], out: Path) -> list[Path]:
    """Copies of each session cut after the tool results of its last answer with tool calls, that
    answer made an overflow error (one copy) and a recoverable length stop (another), each also
    with a context edit after it that replaces the answer's content (its calls gone)."""
    out.mkdir()
    made = []
    for path in files:
        raw = path.read_bytes().splitlines(keepends=True)
        entries = _lines(path)
        calls = [
            i
            for i, e in enumerate(entries)
            if e
            and e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") == "assistant"
            and any(
                isinstance(b, dict) and b.get("type") == "toolCall" for b in e["message"].get("content") or []
            )
        ]
        if not calls:
            continue
        at = calls[-1]
        end = at + 1
        while (
            end < len(entries)
            and (e := entries[end])
            and (e.get("message") or {}).get("role") == "toolResult"
        ):
            end += 1
        for name, change in (
            (
                "error",
                {"stopReason": "error", "errorMessage": "prompt is too long: 60000 tokens > 50000 maximum"},
            ),
            ("length", {"stopReason": "length"}),
        ):
            entry = json.loads(raw[at])
            entry["message"].update(change)
            if name == "length":
                entry["message"]["usage"] = {**(entry["message"].get("usage") or {}), "output": 100}
            kept = [*raw[:at], json.dumps(entry).encode() + b"\n", *raw[at + 1 : end]]
            made.append(out / f"{path.stem}-{name}.jsonl")
            made[-1].write_bytes(b"".join(kept))
            # the answer's content replaced by a context edit: pi reads the projected copy's calls
            edit = {
                "type": "context_edit",
                "id": "f0000001",
                "parentId": json.loads(kept[-1])["id"],
                "timestamp": "2000-01-01T00:00:00.000Z",
                "targetId": entry["id"],
                "replacement": {"content": [{"type": "text", "text": "replaced"}]},
            }
            made.append(out / f"{path.stem}-{name}-replaced.jsonl")
            made[-1].write_bytes(b"".join([*kept, json.dumps(edit).encode() + b"\n"]))
    return made


def _pi_omits(env: dict[str, str], cases: list[Path]) -> list[Any]:
    """pi's check on each case's answer's model (one run of pi for all); where it retries for an
    overflow, its omission, into the case's ``.pi.jsonl`` copy."""
    jobs = [
        pi_check_job(
            case,
            WINDOW,
            1000,
            "--same-model",
            "--max-tokens",
            str(MAX_TOKENS),
            "--omit-out",
            str(_theirs(case)),
        )
        for case in cases
    ]
    return pi_checks(env, "1.6.0", jobs)


def _theirs(case: Path) -> Path:
    return case.with_suffix(".pi.jsonl")


def _appended(before: Path, after: Path) -> list[tuple[Any, Any, Any, Any]]:
    """(type, targetId, replacement, whether its parent is the entry before it) of each new line."""
    old = before.read_bytes().splitlines()
    new = [json.loads(x) for x in after.read_bytes().splitlines()[len(old) :]]
    parents = [json.loads(old[-1])["id"], *(e["id"] for e in new)]
    return [
        (e["type"], e["targetId"], e["replacement"], e["parentId"] == parents[k]) for k, e in enumerate(new)
    ]


#: the keepRecentTokens the recovery's compaction is planned with (small sessions: small keeps)
RECOVERY_KEEPS = (300, 2000)


def _plan_disagreements(state: PlanState, pi: dict[str, Any], where: str) -> list[str]:
    """Where ``state`` (ours) and pi's ``plan`` output (its cut and preparation) disagree."""
    assert state.session is not None and state.cut is not None, where
    theirs = pi["cut"]
    ours = plan_cut_fields(state)
    wrong = [f"{where} {k}: pi {theirs[k]!r}, ours {v!r}" for k, v in ours.items() if theirs[k] != v]
    prepared = state.prepare()
    if state.nothing_to_compact != (pi["preparation"] is None):
        wrong.append(
            f"{where}: we say nothing to compact {state.nothing_to_compact}, pi {pi['preparation'] is None}"
        )
    elif prepared is not None and as_js_json(prepared.to_json()) != pi["preparation"]:
        wrong.append(f"{where}: the preparation differs")
    return wrong


def test_the_recovery_omission_is_pi_s(oracle16: Oracle16, tmp_path: Path) -> None:
    files = generate(tmp_path / "gen", "--seed", "7304", "--count", "4", "--size", "small")
    files += generate_scenarios(tmp_path / "sc", oracle16.env)[::3]  # every third: their shapes, not all
    cases = _failed_with_tools(files, tmp_path / "failed")
    assert len(cases) >= 20
    wrong: list[str] = []
    with_results = planned = 0
    for case, compacts in zip(cases, _pi_omits(oracle16.env, cases), strict=True):
        theirs_file, ours_file = _theirs(case), case.with_suffix(".ours.jsonl")
        shutil.copyfile(case, ours_file)
        session = Session.open(str(ours_file))
        state = PathPlanner(session, profile=PROFILE_1_6_0).plan(
            PlanParams(reserve_tokens=1000, context_window=WINDOW, model_max_tokens=MAX_TOKENS)
        )
        targets = recovery_omission(state)
        if compacts != "overflow" or not targets:
            if bool(targets) != (compacts == "overflow"):
                wrong.append(f"{case.name}: we omit {targets}, pi's check says {compacts}")
            continue
        # the recovery's compaction, planned before anything is written, against pi's plan of its
        # own file once its omission is in it (what its _runAutoCompaction prepares)
        for keep in RECOVERY_KEEPS:
            preview = recovery_plan(
                state, PlanParams(reserve_tokens=1000, context_window=WINDOW, keep_recent_tokens=keep)
            )
            assert preview is not None
            wrong += _plan_disagreements(
                preview,
                oracle16.run(
                    "plan", str(theirs_file), "--keep-recent", str(keep), "--fields", "cut,preparation"
                ),
                f"{case.name} keep={keep}",
            )
            planned += not preview.nothing_to_compact
        append_omissions(session, [session.records[r].id for r in targets])
        ours, theirs = _appended(case, ours_file), _appended(case, theirs_file)
        with_results += len(theirs) > 1
        if ours != theirs:
            wrong.append(f"{case.name}: we append {ours}, pi {theirs}")
            continue
        # pi loads our file with the context its own omission leaves
        mine, pis = oracle16.run("context", str(ours_file)), oracle16.run("context", str(theirs_file))
        for k in ("context", "llmMessages"):  # (the edits' own ids and times differ)
            if mine[k] != pis[k]:
                wrong.append(f"{case.name}: pi's {k} of our file differs from its own omission's")
    assert not wrong, "\n".join(wrong)
    assert with_results >= 5  # answers whose tool results are omitted with them
    assert planned >= 10  # recoveries that compact something
