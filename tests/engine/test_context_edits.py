"""pi 1.6.0's context edits that omit entries, without an LLM (the oracle's side:
tests/engine/test_omission16.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session, WriteError
from session_studio.core.errors import EntryNotFoundError, StaleSessionError
from session_studio.core.explain import RecoveryCut, recovery_text
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.engine.context_edits import (
    append_omissions,
    omission_refusal,
    recovery_omission,
    recovery_plan,
)
from tests.core.util import A, T, U, chain, to_bytes

OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 300000 tokens > 200000 maximum"}


def _failed(*, blocks: list[Any] | None = None) -> dict[str, Any]:
    answer = A("", blocks=blocks)
    answer["message"].update(OVERFLOW)
    return answer


def _write(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(*entries)))
    return p


def _result(call: str) -> dict[str, Any]:
    t = T("out")
    t["message"]["toolCallId"] = call
    return t


def test_the_failed_answer_and_its_tool_results_are_omitted_as_pi_writes_them(tmp_path: Path) -> None:
    calls = [{"type": "toolCall", "id": c, "name": "read", "arguments": {}} for c in ("c1", "c2")]
    # e0 U, e1 A, e2 U, e3 failed A (two calls), e4 result c1, e5 a result of another call, e6 result c2
    path = _write(
        tmp_path, U("q"), A("a"), U("q2"), _failed(blocks=calls), _result("c1"), _result("zz"), _result("c2")
    )
    session = Session.open(path)
    state = PathPlanner(session, profile=PROFILE_1_6_0).plan(PlanParams())
    assert state.overflow is not None and state.overflow.retries
    targets = recovery_omission(state)
    assert [session.records[r].id for r in targets] == ["e3", "e4", "e6"]
    before = path.read_bytes()
    written = append_omissions(session, ["e3", "e4", "e6"])
    assert [(e["parentId"], e["targetId"]) for e in written] == [
        ("e6", "e3"),
        (written[0]["id"], "e4"),
        (written[1]["id"], "e6"),
    ]
    after = path.read_bytes()
    assert after.startswith(before)  # appended, nothing else touched
    lines = after[len(before) :].decode().splitlines()
    assert lines[0] == (
        f'{{"type":"context_edit","id":"{written[0]["id"]}","parentId":"e6",'
        f'"timestamp":"{written[0]["timestamp"]}","targetId":"e3","replacement":null}}'
    )
    assert session.leaf_id == written[-1]["id"]
    # the plan now sees the context without the attempt: no answer failed, nothing to recover
    replanned = PathPlanner(session, profile=PROFILE_1_6_0).plan(PlanParams())
    assert replanned.overflow is None and recovery_omission(replanned) == []


def test_the_recovery_is_planned_without_the_failed_attempt_and_nothing_is_written(tmp_path: Path) -> None:
    """The failed answer's big tool call and its result fill the kept tail of this plan (a split
    turn at the answer); pi's recovery, without them, keeps from further back."""
    calls = [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"x": "y" * 4000}}]
    result = _result("c1")
    result["message"]["content"] = [{"type": "text", "text": "r" * 16000}]
    path = _write(tmp_path, U(4000), A(4000), U(3000), A(3000), U("q2"), _failed(blocks=calls), result)
    before = path.read_bytes()
    session = Session.open(path)
    params = PlanParams(keep_recent_tokens=1500)
    state = PathPlanner(session, profile=PROFILE_1_6_0).plan(params)
    recovery = recovery_plan(state, params)
    assert recovery is not None and recovery.cut is not None and state.cut is not None
    assert (state.cut.first_kept_index, state.cut.is_split_turn) == (5, True)
    assert (recovery.cut.first_kept_index, recovery.cut.is_split_turn) == (2, False)
    # the recovery's path is this one and then the two edits, in memory only
    assert recovery.path[: len(state.path)] == state.path and len(recovery.path) == len(state.path) + 2
    assert path.read_bytes() == before and session.leaf_id == "e6"
    said = RecoveryCut.of(recovery)
    assert said == RecoveryCut(2, None, recovery.kept_tokens, "#0…#1")  # the facts, not the plan's copy
    assert recovery_text(state, said) == (
        "without the failed attempt, pi's recovery keeps from path #2, ≈1,501 tokens, and summarises #0…#1; "
        "this plan keeps from #5"
    )
    # a cut chosen here is this plan's, not pi's: the recovery cuts where pi does
    manual = PathPlanner(session, profile=PROFILE_1_6_0).plan(
        PlanParams(keep_recent_tokens=1500, manual_cut=3)
    )
    by_hand = recovery_plan(manual, manual.params)
    assert by_hand is not None and by_hand.cut == recovery.cut and not by_hand.manual
    assert recovery_text(manual, RecoveryCut.of(by_hand)).endswith("; this cut keeps from #3")
    nothing = recovery_plan(state, PlanParams(keep_recent_tokens=20_000))
    assert nothing is not None and recovery_text(state, RecoveryCut.of(nothing)).startswith(
        "without the failed attempt, pi's cut leaves nothing to compact: pi appends the context edits"
    )
    assert recovery_plan(PathPlanner(session, profile=PROFILE_0_80_2).plan(params), params) is None
    # another leaf than the file's: pi recovers at the file's leaf only
    other = PathPlanner(session, session.get_index("e3"), profile=PROFILE_1_6_0).plan(params)
    assert recovery_plan(other, params) is None


def test_info_and_the_report_say_where_pi_s_recovery_cuts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from session_studio.cli import main

    test_the_recovery_is_planned_without_the_failed_attempt_and_nothing_is_written(tmp_path)
    path = tmp_path / "s.jsonl"
    said = (
        "whatever the threshold, then compacts and retries the request. Without the failed attempt, pi's "
        "recovery keeps from path #2, ≈1,501 tokens, and summarises #0…#1; this plan keeps from #5"
    )
    assert main(["info", str(path), "--pi-version", "1.6.0", "--keep-recent", "1500"]) == 0
    overflow = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("overflow:"))
    assert overflow.endswith(said)
    report = tmp_path / "plan.md"
    args = ["export", str(path), "--pi-version", "1.6.0", "--keep-recent", "1500", "--format", "md"]
    assert main([*args, "--out", str(report)]) == 0
    assert said in report.read_text()


def test_no_omission_where_pi_does_not_retry_or_is_0_80_2(tmp_path: Path) -> None:
    completed = A("done")
    completed["message"]["usage"].update(input=250_000, totalTokens=250_001)  # over the window: no retry
    for last, profile in (
        (A("fine"), PROFILE_1_6_0),
        (completed, PROFILE_1_6_0),
        (_failed(), PROFILE_0_80_2),
    ):
        state = PathPlanner(Session.open(_write(tmp_path, U("q"), last)), profile=profile).plan(PlanParams())
        assert recovery_omission(state) == []


def test_pi_s_own_recovery_fails_on_an_answer_without_blocks(tmp_path: Path) -> None:
    failed = _failed()
    failed["message"]["content"] = "text, not blocks"
    state = PathPlanner(Session.open(_write(tmp_path, U("q"), failed)), profile=PROFILE_1_6_0).plan(
        PlanParams()
    )
    with pytest.raises(WriteError, match="pi's own recovery fails on it too"):
        recovery_omission(state)


def test_what_pi_refuses_to_edit_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # e0 U, e1 A, e2 model_change, e3 U on a side branch from e0, e4 A (the leaf, from e2)
    path = _write(
        tmp_path,
        U("q"),
        A("a"),
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-test"},
        U("side", parentId="e0"),
        A("last", parentId="e2"),
    )
    session = Session.open(path)
    before = path.read_bytes()
    assert omission_refusal(session, "e1") is None
    assert "not on the active branch" in (omission_refusal(session, "e3") or "")
    assert "no content" in (omission_refusal(session, "e2") or "")
    with pytest.raises(WriteError, match="cannot omit e2"):
        append_omissions(session, ["e1", "e2"])  # the first is fine: still nothing written
    with pytest.raises(EntryNotFoundError):
        append_omissions(session, ["nope"])
    assert path.read_bytes() == before


def test_a_file_pi_changed_meanwhile_is_not_written(tmp_path: Path) -> None:
    path = _write(tmp_path, U("q"), _failed())
    session = Session.open(path)
    with path.open("ab") as f:  # pi appended after we read the file
        f.write(
            (
                json.dumps(
                    {"type": "label", "id": "zz", "parentId": "e1", "timestamp": "x", "targetId": "e0"}
                )
                + "\n"
            ).encode()
        )
    before = path.read_bytes()
    with pytest.raises((StaleSessionError, WriteError)):
        append_omissions(session, ["e1"])
    assert path.read_bytes() == before


def test_the_omit_attempt_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from session_studio.cli import main

    path = _write(tmp_path, U("q"), A("a"), U("q2"), _failed())
    before = path.read_bytes()
    assert main(["omit-attempt", str(path), "--pi-version", "0.80.2"]) == 2
    assert "context edits are pi 1.6.0's" in capsys.readouterr().err and path.read_bytes() == before
    assert main(["omit-attempt", str(path), "--pi-version", "1.6.0", "--dry-run"]) == 0
    said = capsys.readouterr().err
    assert "would omit e3 from the context" in said and path.read_bytes() == before
    assert "then, without the failed attempt, pi's cut leaves nothing to compact" in said
    assert main(["omit-attempt", str(path), "--pi-version", "1.6.0"]) == 0
    assert "omitted e3 from the context with 1 context edit" in capsys.readouterr().err
    edit = json.loads(path.read_bytes()[len(before) :])
    assert (edit["type"], edit["parentId"], edit["targetId"], edit["replacement"]) == (
        "context_edit",
        "e3",
        "e3",
        None,
    )
    # once omitted, the answer pi checks is the one before: nothing more to omit
    assert main(["omit-attempt", str(path)]) == 1  # auto: the file now has a 1.6.0 entry
    assert "nothing to omit" in capsys.readouterr().err


def test_compact_says_what_pi_s_recovery_would_omit_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from session_studio.cli import main

    path = _write(tmp_path, U(4000), A(4000), U("q2"), _failed())
    args = ["compact", str(path), "--dry-run", "--provider", "offline", "--keep-recent", "100"]
    assert main([*args, "--pi-version", "1.6.0"]) == 0
    said = capsys.readouterr().err
    assert "pi 1.6.0's own recovery from the failed last answer would first take e3 out" in said
    assert "then compact: without the failed attempt, pi's recovery keeps from path #" in said
    assert main([*args, "--pi-version", "0.80.2"]) == 0  # pi 0.80.2 omits nothing
    assert "recovery" not in capsys.readouterr().err
