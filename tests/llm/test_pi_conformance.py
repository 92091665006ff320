"""Differential tests against the real pi 0.80.2: request bodies and the final merged summary.

``pi-oracle.mjs compact`` runs pi's own ``compact()`` against a mock that answers with the same
rule as ``mock-llm.mjs`` and records the request bodies pi sent. We rebuild each request with our
framing functions from the conversation pi serialized, check that everything but the prompt prose
is identical (framing, options, body fields), send it with our OpenAI-compatible summarizer to
the mock, merge like pi, and compare with the summary pi produced.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_studio.llm import (
    OpenAICompatibleSummarizer,
    Prompts,
    SummaryRequest,
    history_request,
    merge_split_turn,
    turn_prefix_request,
)

from .conftest import MockServer
from .support import FIXTURES, ORACLE_DIR

pytestmark = pytest.mark.oracle

P = Prompts()
ORACLE_MODEL_MAX_TOKENS = 32000  # pi-oracle.mjs default (--max-tokens)


def _between(text: str, open_tag: str, close_tag: str) -> str | None:
    a = text.find(open_tag)
    if a < 0:
        return None
    b = text.find(close_tag, a + len(open_tag))
    return None if b < 0 else text[a + len(open_tag) : b]


def _without_prose(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    out["messages"] = [
        {**m, "content": "<system prompt>"}
        if m["role"] in ("system", "developer")
        else {**m, "content": "<user text>"}
        for m in body["messages"]
    ]
    return out


def _instructions(req: SummaryRequest, prompts: Prompts) -> str:
    base = {"history": prompts.history, "update": prompts.update, "turn_prefix": prompts.turn_prefix}[
        req.kind
    ]
    return req.prompt_text[req.prompt_text.index(base) :]


@pytest.fixture(scope="module")
def generated_sessions(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("sessions")
    subprocess.run(
        [
            sys.executable,
            str(ORACLE_DIR / "gen_sessions.py"),
            "--seed",
            "3",
            "--count",
            "4",
            "--size",
            "medium",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    files = sorted(out.glob("*.jsonl"))
    return [files[1], files[3]]  # a fresh split turn, and one with a previous compaction (update)


def _cases(generated: list[Path]) -> list[tuple[Path, list[str], str | None]]:
    return [
        (FIXTURES / "large-session.jsonl", ["--keep-recent", "8000"], None),
        (
            FIXTURES / "before-compaction.jsonl",
            ["--keep-recent", "8000", "--instructions", "focus on tests"],
            "focus on tests",
        ),
        (generated[0], ["--keep-recent", "3000"], None),
        (
            generated[1],
            ["--keep-recent", "3000", "--reserve", "10000", "--instructions", "keep paths"],
            "keep paths",
        ),
    ]


def test_requests_and_summary_match_pi(
    pi_oracle: Callable[..., dict[str, Any]], llm_mock: MockServer, generated_sessions: list[Path]
) -> None:
    kinds_seen: set[str] = set()
    for session, args, instructions in _cases(generated_sessions):
        data = pi_oracle("compact", str(session), *args)
        reserve = int(data["settings"]["reserveTokens"])
        prep = data["preparation"]
        texts: dict[str, str] = {}
        for record in data["requests"]:
            body = record["body"]
            pi_text = body["messages"][1]["content"][0]["text"]
            conversation = _between(pi_text, "<conversation>\n", "\n</conversation>")
            assert conversation is not None
            previous = _between(pi_text, "<previous-summary>\n", "\n</previous-summary>")
            if record["kind"] == "turn-prefix":
                ours = turn_prefix_request(conversation, reserve, ORACLE_MODEL_MAX_TOKENS, False, "medium", P)
            else:
                ours = history_request(
                    conversation, previous, instructions, reserve, ORACLE_MODEL_MAX_TOKENS, False, "medium", P
                )
                assert ours.kind == record["kind"]
            kinds_seen.add(ours.kind)
            # Same framing up to the instructions, same "Additional focus" suffix.
            frame = ours.prompt_text[: len(ours.prompt_text) - len(_instructions(ours, P))]
            assert pi_text.startswith(frame), session.name
            if instructions and ours.kind != "turn_prefix":
                assert pi_text.endswith("\n\nAdditional focus: " + instructions)
                assert ours.prompt_text.endswith("\n\nAdditional focus: " + instructions)
            else:
                assert "Additional focus" not in pi_text[len(frame) :]
            # Same body apart from the prompt prose (model, roles, stream options, store, max tokens).
            with OpenAICompatibleSummarizer(llm_mock.openai_url, body["model"], "sk-conformance-key") as s:
                assert _without_prose(s.request_body(ours)) == _without_prose(body)
                result = s.summarize(ours)
            assert result.text == record["response"]
            texts[record["kind"]] = result.text
        history = texts.get("history", texts.get("update"))
        if prep["isSplitTurn"] and prep["turnPrefixMessagesCount"] > 0:
            merged = merge_split_turn(
                history if prep["messagesToSummarizeCount"] else None, texts["turn-prefix"]
            )
        else:
            assert history is not None
            merged = history
        summary = data["result"]["summary"]
        assert summary == merged or summary.startswith(merged + "\n\n<"), session.name
    assert kinds_seen == {"history", "update", "turn_prefix"}
