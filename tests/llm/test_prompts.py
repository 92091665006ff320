"""Prompts: exact headings (spec §7.3), our own wording, user overrides."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from session_studio.llm import (
    BRANCH_HEADINGS,
    BRANCH_PROMPT,
    HISTORY_HEADINGS,
    HISTORY_PROMPT,
    SYSTEM_PROMPT,
    TURN_PREFIX_HEADINGS,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    Prompts,
    load_prompt_overrides,
)
from session_studio.llm.prompts import missing_headings

from .support import PI_HOME


def _heading_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#")]


def test_heading_sets_match_the_spec() -> None:
    assert HISTORY_HEADINGS == (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    )
    assert TURN_PREFIX_HEADINGS == ("## Original Request", "## Early Progress", "## Context for Suffix")
    assert HISTORY_HEADINGS[:-1] == BRANCH_HEADINGS


@pytest.mark.parametrize(
    ("prompt", "headings"),
    [
        (HISTORY_PROMPT, HISTORY_HEADINGS),
        (UPDATE_PROMPT, HISTORY_HEADINGS),
        (TURN_PREFIX_PROMPT, TURN_PREFIX_HEADINGS),
        (BRANCH_PROMPT, BRANCH_HEADINGS),
    ],
)
def test_prompts_contain_exactly_the_headings_in_order(prompt: str, headings: tuple[str, ...]) -> None:
    assert tuple(_heading_lines(prompt)) == headings
    assert "EXACT format" in prompt


def test_prompt_openings_follow_the_spec() -> None:
    assert HISTORY_PROMPT.startswith("Summarize the conversation above")
    assert UPDATE_PROMPT.startswith("The conversation above holds only NEW messages")
    assert "<previous-summary>" in UPDATE_PROMPT
    assert "PREFIX" in TURN_PREFIX_PROMPT and "SUFFIX" in TURN_PREFIX_PROMPT
    assert "above" not in BRANCH_PROMPT.split(".")[0]
    assert "## Critical Context" not in BRANCH_PROMPT
    assert len([p for p in SYSTEM_PROMPT.split("\n\n") if p.strip()]) == 2
    for prompt in (HISTORY_PROMPT, UPDATE_PROMPT, TURN_PREFIX_PROMPT, BRANCH_PROMPT, SYSTEM_PROMPT):
        assert prompt == prompt.rstrip()  # framing appends "\n\nAdditional focus: …" directly


def test_prompts_are_not_copied_from_pi() -> None:
    """No sentence-sized piece of our prompt bodies appears in pi's shipped prompt sources."""
    pi_dir = PI_HOME / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "core" / "compaction"
    if not pi_dir.is_dir():
        pytest.skip("pi install not found")
    pi_text = "".join(p.read_text(encoding="utf-8") for p in pi_dir.glob("*.js"))
    pi_text = pi_text.replace("\\n", "\n")
    ours = [SYSTEM_PROMPT, HISTORY_PROMPT, UPDATE_PROMPT, TURN_PREFIX_PROMPT, BRANCH_PROMPT]
    for prompt in ours:
        for sentence in re.split(r"(?<=[.!?])\s+|\n", prompt):
            sentence = sentence.strip()
            if len(sentence) < 30 or sentence.startswith("#"):
                continue
            assert sentence not in pi_text, sentence


def test_overrides_from_files(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "system.md").write_text("My system prompt.\n\n", encoding="utf-8")
    (tmp_path / "turn-prefix.md").write_text(
        "Summarize.\n## Original Request\n## Early Progress\n## Context for Suffix\n", encoding="utf-8"
    )
    (tmp_path / "branch.md").write_text("Just summarize, no headings\n", encoding="utf-8")
    (tmp_path / "history.md").write_text("   \n", encoding="utf-8")  # empty: ignored
    with caplog.at_level(logging.WARNING, logger="session_studio.llm.prompts"):
        prompts = load_prompt_overrides(tmp_path)
    assert prompts.system == "My system prompt."
    assert prompts.turn_prefix.endswith("## Context for Suffix")
    assert prompts.branch == "Just summarize, no headings"
    assert prompts.history == HISTORY_PROMPT
    assert prompts.update == UPDATE_PROMPT
    assert any("branch.md lacks" in r.getMessage() for r in caplog.records)
    assert any("history.md is empty" in r.getMessage() for r in caplog.records)


def test_overrides_missing_directory_and_bad_files(tmp_path: Path) -> None:
    assert load_prompt_overrides(tmp_path / "nope") == Prompts()
    (tmp_path / "update.md").write_bytes(b"\xff\xfe not utf-8")
    assert load_prompt_overrides(tmp_path).update == UPDATE_PROMPT
    base = Prompts(system="S")
    assert load_prompt_overrides(tmp_path, base).system == "S"


def test_missing_headings() -> None:
    assert missing_headings("history", HISTORY_PROMPT) == []
    assert missing_headings("branch", "## Goal") == list(BRANCH_HEADINGS[1:])
    assert missing_headings("system", "") == []
