"""The branch summary request and entry under pi 1.6.0 (rule 41), without node: the framing sent,
answers pi rejects, and the entry's `usage` and `fromId`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.engine.edits import branch_to
from session_studio.llm.base import CancelToken, SummaryRequest, SummaryResult
from session_studio.llm.errors import LlmSummaryError

CASE = Path(__file__).resolve().parent.parent / "oracle" / "pi-1.6.0" / "cases" / "m2-edit-null.jsonl"
USAGE = {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120}


class Recording:
    """A summarizer that answers with `stop_reason` and keeps the requests it got."""

    def __init__(self, stop_reason: str = "stop") -> None:
        self.stop_reason = stop_reason
        self.requests: list[SummaryRequest] = []

    def summarize(
        self,
        request: SummaryRequest,
        *,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> SummaryResult:
        self.requests.append(request)
        return SummaryResult("## Goal\nx", self.stop_reason, dict(USAGE), "m")


def _branch(tmp_path: Path, profile: PiProfile, summarizer: Recording, **kw: Any) -> tuple[Path, Any]:
    work = tmp_path / "s.jsonl"
    shutil.copy(CASE, work)
    s = Session.open(work)
    path = s.path_indices(s.leaf_index())
    target = s.records[path[len(path) // 2]].id
    out = branch_to(s, target, summarize=True, summarizer=summarizer, profile=profile, **kw)
    return work, out


def test_1_6_0_sends_no_cap_and_the_thinking_level_and_stores_usage(tmp_path: Path) -> None:
    rec = Recording()
    old_leaf = json.loads(CASE.read_bytes().splitlines()[-1])["id"]
    work, out = _branch(tmp_path, PROFILE_1_6_0, rec, model_reasoning=True, thinking_level="high")
    (req,) = rec.requests
    assert req.kind == "branch" and req.max_tokens is None and req.reasoning == "high"
    entry = json.loads(work.read_bytes().splitlines()[-1])
    assert entry == out.entry and entry["fromId"] == old_leaf
    assert {k: entry["usage"][k] for k in USAGE} == USAGE
    assert list(entry) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "fromId",
        "summary",
        "details",
        "usage",
        "fromHook",
    ]


def test_0_80_2_keeps_its_2048_cap_no_reasoning_and_no_usage(tmp_path: Path) -> None:
    rec = Recording()
    work, _ = _branch(tmp_path, PROFILE_0_80_2, rec, model_reasoning=True, thinking_level="high")
    (req,) = rec.requests
    assert req.max_tokens == 2048 and req.reasoning is None
    entry = json.loads(work.read_bytes().splitlines()[-1])
    assert "usage" not in entry and entry["fromId"] == entry["parentId"]


@pytest.mark.parametrize(
    ("stop", "message"),
    [
        ("length", "Branch summarization failed: generation hit the token cap and the summary is incomplete"),
        ("toolUse", "Branch summarization attempted to call a tool"),
    ],
)
def test_1_6_0_rejects_a_cut_or_tool_calling_answer_and_writes_nothing(
    tmp_path: Path, stop: str, message: str
) -> None:
    with pytest.raises(LlmSummaryError) as failed:
        _branch(tmp_path, PROFILE_1_6_0, Recording(stop))
    assert str(failed.value).endswith(message) and failed.value.user_message.startswith(message)
    assert (tmp_path / "s.jsonl").read_bytes() == CASE.read_bytes()
