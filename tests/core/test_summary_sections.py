"""What a summary kept: the requested sections present/empty/missing, and the file lists."""

from __future__ import annotations

from session_studio.core.file_ops import format_file_operations
from session_studio.core.summary_sections import analyze_summary, summary_tokens

HISTORY = (
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
PREFIX = ("## Original Request", "## Early Progress", "## Context for Suffix")

FULL = """## Goal
Port the parser to Rust.

## Constraints & Preferences
- (none)

## Progress
### Done
- [x] read src/parse.py

### In Progress
- [ ] write src/parse.rs

### Blocked
- (none)

## Key Decisions
- **Keep the AST**: the tests rely on it

## Next Steps
1. Run cargo test

## Critical Context
- error: E0308 mismatched types"""


def _status(kept: object) -> dict[str, str]:
    return {s.heading: s.status for s in kept.sections}  # type: ignore[attr-defined]


def test_every_section_of_a_full_summary_is_present_or_empty() -> None:
    text = FULL + format_file_operations(["src/parse.py"], ["src/parse.rs"])
    kept = analyze_summary(text, HISTORY, ["src/parse.py"], ["src/parse.rs"])
    assert _status(kept) == {
        "## Goal": "present",
        "## Constraints & Preferences": "empty",  # only "(none)"
        "## Progress": "present",  # through its sub-sections
        "### Done": "present",
        "### In Progress": "present",
        "### Blocked": "empty",
        "## Key Decisions": "present",
        "## Next Steps": "present",
        "## Critical Context": "present",  # the file blocks after it are not its content
    }
    assert kept.read_files.written == ("src/parse.py",) and kept.read_files.intact
    assert kept.modified_files.intact and kept.complete
    assert kept.empty_sections == ("## Constraints & Preferences", "### Blocked")


def test_a_dropped_heading_is_missing_and_a_lost_file_block_is_reported() -> None:
    text = FULL.replace("## Key Decisions\n- **Keep the AST**: the tests rely on it\n\n", "")
    text += "\n\n<read-files>\nsrc/other.py\n</read-files>"
    kept = analyze_summary(text, HISTORY, ["src/parse.py"], ["src/parse.rs"])
    assert kept.missing_sections == ("## Key Decisions",)
    assert kept.read_files.missing == ("src/parse.py",) and kept.read_files.extra == ("src/other.py",)
    assert kept.modified_files.written is None and kept.modified_files.missing == ("src/parse.rs",)
    assert not kept.complete


def test_decorated_headings_count_and_a_lower_level_heading_does_not() -> None:
    text = "## **Goal**:\nShip it\n\n### Next Steps\n1. deploy\n"
    kept = analyze_summary(text, ("## Goal", "## Next Steps"), [], [])
    assert _status(kept) == {"## Goal": "present", "## Next Steps": "missing"}
    # no file to list and none written: intact
    assert kept.read_files.intact and kept.modified_files.intact


def test_a_heading_with_nothing_under_it_is_empty() -> None:
    kept = analyze_summary("## Goal\n\n## Next Steps\n- \n", ("## Goal", "## Next Steps"), [], [])
    assert _status(kept) == {"## Goal": "empty", "## Next Steps": "empty"}


def test_the_split_turn_separator_ends_the_history_sections() -> None:
    text = (
        "## Critical Context\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\nfix the bug\n\n## Early Progress\n- looked at main.py\n\n## Context for Suffix\n"
    )
    kept = analyze_summary(text, ("## Critical Context", *PREFIX), [], [])
    assert _status(kept) == {
        "## Critical Context": "empty",
        "## Original Request": "present",
        "## Early Progress": "present",
        "## Context for Suffix": "empty",
    }


def test_files_not_in_the_plan_are_compared_as_pi_writes_them() -> None:
    # pi writes a non-string entry of the list with JavaScript's String()
    text = "## Goal\nx" + format_file_operations([7], [])
    kept = analyze_summary(text, ("## Goal",), [7], [])
    assert kept.read_files.expected == ("7",) and kept.read_files.intact


def test_the_size_is_pis_estimate_of_the_summary_message() -> None:
    assert summary_tokens("abcd") == 1
    assert summary_tokens("abcde") == 2
    assert summary_tokens("😀😀") == 1  # UTF-16 units: 4
    assert analyze_summary("x" * 41, (), [], []).tokens == 11
