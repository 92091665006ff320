"""The offline summarizer: deterministic, right headings per kind, tool-call parsing, merging."""

from __future__ import annotations

import re

import pytest

from session_studio.llm import (
    BRANCH_HEADINGS,
    BRANCH_SUMMARY_PREAMBLE,
    HISTORY_HEADINGS,
    OFFLINE_NOTE,
    TURN_PREFIX_HEADINGS,
    CancelToken,
    LlmCancelledError,
    OfflineSummarizer,
    Prompts,
    Summarizer,
    branch_request,
    history_request,
    merge_split_turn,
    turn_prefix_request,
)
from session_studio.llm.prompts import TURN_PREFIX_CONTINUATION_HEADINGS

P = Prompts()

CONVERSATION = "\n\n".join(
    [
        "[User]: Add a --verbose flag to the CLI in src/cli.py.\nIt should print every step.",
        "[Assistant thinking]: The flag belongs in the argument parser.",
        "[Assistant]: I'll use argparse instead of click because the project already depends on it.",
        '[Assistant tool calls]: read(path="src/cli.py"); bash(command="pytest -q tests/test_cli.py")',
        "[Tool result]: import argparse\n\ndef main(): ...",
        "[Tool result]: F\nE   AssertionError: expected 2 got 1\nCommand exited with code 1",
        '[Assistant tool calls]: edit(path="src/cli.py", oldText="a", newText="b\\nc")',
        "[Tool result]: Could not find the exact text in src/cli.py. The old text must match exactly.",
        '[Assistant tool calls]: edit(path="src/cli.py", oldText="x", newText="y")',
        "[Tool result]: Successfully replaced text in src/cli.py.",
        '[Assistant tool calls]: write(path="docs/usage.md", content="# Usage")',
        "[Tool result]: Successfully wrote 7 bytes to docs/usage.md",
        "[User]: Don't touch the tests. Please also update README.md.",
        '[Assistant tool calls]: grep(pattern="verbose", path="README.md")',
    ]
)


def _sections(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#")]


def _section(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(heading) + 1
    out: list[str] = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        if line:
            out.append(line)
    return out


def test_is_a_summarizer() -> None:
    assert isinstance(OfflineSummarizer(), Summarizer)


def test_history_draft_headings_and_note() -> None:
    req = history_request(CONVERSATION, None, None, 16384, 0, False, None, P)
    text = OfflineSummarizer().summarize(req).text
    assert tuple(_sections(text)) == HISTORY_HEADINGS
    assert text.startswith("## Goal\n" + OFFLINE_NOTE + "\n")
    assert text.count(OFFLINE_NOTE) == 1


def test_history_draft_content() -> None:
    req = history_request(CONVERSATION, None, "keep the output short", 16384, 0, False, None, P)
    text = OfflineSummarizer().draft(req)
    goal = _section(text, "## Goal")
    assert "- Add a --verbose flag to the CLI in src/cli.py." in goal
    assert "- Don't touch the tests. Please also update README.md." in goal
    constraints = _section(text, "## Constraints & Preferences")
    assert "- Don't touch the tests." in constraints
    done = _section(text, "### Done")
    assert "- [x] read 1 file: src/cli.py" in done
    assert "- [x] edit(path=src/cli.py) ×2" in done  # failed first, then succeeded: not blocked
    assert "- [x] write(path=docs/usage.md)" in done
    assert _section(text, "### In Progress") == [
        "- [ ] grep(pattern=verbose, path=README.md) (no result yet)"
    ]
    assert _section(text, "### Blocked") == [
        "- bash(command=pytest -q tests/test_cli.py): E   AssertionError: expected 2 got 1"
    ]
    decisions = _section(text, "## Key Decisions")
    assert decisions == [
        "- **I'll use argparse instead of click**: the project already depends on it",
    ]
    steps = _section(text, "## Next Steps")
    assert (
        steps[0] == "1. Pick up from the latest request: Don't touch the tests. Please also update README.md."
    )
    assert any("Resolve the failure of bash(command=pytest -q tests/test_cli.py)" in s for s in steps)
    assert any("Check the result of grep(pattern=verbose, path=README.md)" in s for s in steps)
    context = _section(text, "## Critical Context")
    assert "- Files modified: src/cli.py, docs/usage.md" in context
    assert "- Error: `E   AssertionError: expected 2 got 1`" in context
    assert "- Requested focus: keep the output short" in context
    assert any(c.startswith("- Paths mentioned by the user:") and "README.md" in c for c in context)


def test_deterministic() -> None:
    req = history_request(CONVERSATION, "## Goal\n- old goal", "f", 16384, 0, False, None, P)
    assert OfflineSummarizer().draft(req) == OfflineSummarizer().draft(req)


def test_streams_in_several_chunks() -> None:
    req = history_request(CONVERSATION, None, None, 16384, 0, False, None, P)
    chunks: list[str] = []
    result = OfflineSummarizer().summarize(req, on_text=chunks.append)
    assert len(chunks) >= 4
    assert "".join(chunks) == result.text
    assert result.stop_reason == "stop"
    assert result.usage is None
    assert result.model == "offline"


def test_cancellation() -> None:
    req = history_request(CONVERSATION, None, None, 16384, 0, False, None, P)
    token = CancelToken()
    chunks: list[str] = []

    def on_text(delta: str) -> None:
        chunks.append(delta)
        token.cancel()

    with pytest.raises(LlmCancelledError):
        OfflineSummarizer().summarize(req, on_text=on_text, cancel=token)
    assert len(chunks) == 1
    with pytest.raises(LlmCancelledError):
        OfflineSummarizer().summarize(req, cancel=token)
    slow = CancelToken()
    slow.cancel()
    with pytest.raises(LlmCancelledError):
        OfflineSummarizer(chunk_delay_s=5).summarize(req, cancel=slow)


def test_turn_prefix_headings() -> None:
    req = turn_prefix_request(CONVERSATION, 16384, 0, False, None, P)
    text = OfflineSummarizer().draft(req)
    assert tuple(_sections(text)) == TURN_PREFIX_HEADINGS
    assert text.startswith("## Original Request\n" + OFFLINE_NOTE + "\nAdd a --verbose flag")
    early = _section(text, "## Early Progress")
    assert "- edit(path=src/cli.py) ×2" in early
    assert any(e.startswith("- Decision: **I'll use argparse") for e in early)
    context = _section(text, "## Context for Suffix")
    assert "- Still running when the kept part begins: grep(pattern=verbose, path=README.md)" in context


def test_turn_prefix_of_pi_1_6_0_reads_the_users_request() -> None:
    """pi 1.6.0 frames the turn prefix as '# Conversation' … '# Instructions' (rule 39), not in
    <conversation> tags: the draft quoted the frame ('# Conversation [User]: …') as the request."""
    from session_studio.core.profile import PROFILE_1_6_0

    req = turn_prefix_request(CONVERSATION, 16384, 0, False, None, P, PROFILE_1_6_0)
    assert req.prompt_text.startswith("# Conversation\n")
    text = OfflineSummarizer().draft(req)
    assert tuple(_sections(text)) == TURN_PREFIX_CONTINUATION_HEADINGS
    assert "# Conversation" not in text and "# Instructions" not in text
    assert text.startswith("## Original Request\n" + OFFLINE_NOTE + "\nAdd a --verbose flag")


def test_branch_headings_without_tool_results() -> None:
    conv = '[User]: hello\n\n[Assistant tool calls]: read(path="p.ts"); edit(path="q.ts", oldText="1", newText="2")'
    text = OfflineSummarizer().draft(branch_request(conv, "CI", False, P))
    assert tuple(_sections(text)) == BRANCH_HEADINGS
    assert "## Critical Context" not in text
    done = _section(text, "### Done")
    # branch conversations carry no tool results (spec §8.2): the calls count as done
    assert done == ["- [x] read 1 file: p.ts", "- [x] edit(path=q.ts)"]
    assert _section(text, "### In Progress") == ["(none)"]


def test_update_merges_previous_summary() -> None:
    first = OfflineSummarizer().draft(history_request(CONVERSATION, None, None, 16384, 0, False, None, P))
    new_conv = "\n\n".join(
        [
            "[User]: Now add a --quiet flag too.",
            '[Assistant tool calls]: grep(pattern="verbose", path="README.md"); edit(path="src/main.py", oldText="q", newText="r")',
            "[Tool result]: README.md:3: --verbose",
            "[Tool result]: Successfully replaced text in src/main.py.",
            '[Assistant tool calls]: bash(command="pytest -q tests/test_cli.py")',
            "[Tool result]: 3 passed",
        ]
    )
    req = history_request(new_conv, first, None, 16384, 0, False, None, P)
    assert req.kind == "update"
    text = OfflineSummarizer().draft(req)
    assert tuple(_sections(text)) == HISTORY_HEADINGS
    assert text.count(OFFLINE_NOTE) == 1
    goal = _section(text, "## Goal")
    assert goal[1] == "- Add a --verbose flag to the CLI in src/cli.py."
    assert "- Now add a --quiet flag too." in goal
    done = _section(text, "### Done")
    assert "- [x] edit(path=src/cli.py) ×2" in done  # kept from the previous summary
    assert "- [x] edit(path=src/main.py)" in done  # new
    assert "- [x] grep(pattern=verbose, path=README.md)" in done  # moved from In Progress
    assert "- [x] bash(command=pytest -q tests/test_cli.py)" in done  # the failing test now passes
    assert _section(text, "### In Progress") == ["(none)"]
    assert _section(text, "### Blocked") == ["(none)"]  # resolved
    assert "- **I'll use argparse instead of click**: the project already depends on it" in _section(
        text, "## Key Decisions"
    )
    context = _section(text, "## Critical Context")
    assert "- Files modified: src/cli.py, docs/usage.md, src/main.py" in context
    assert not any(c.startswith("- Error:") for c in context)  # the failure was resolved
    assert (
        _section(text, "## Next Steps")[0]
        == "1. Pick up from the latest request: Now add a --quiet flag too."
    )


def test_repeated_updates_do_not_pile_up() -> None:
    summary = OfflineSummarizer().draft(
        history_request(CONVERSATION, None, "first focus", 16384, 0, False, None, P)
    )
    for i in range(4):
        conv = f"[User]: step {i} in lib/mod{i}.py\n\n[Assistant]: ok"
        summary = OfflineSummarizer().draft(
            history_request(conv, summary, f"focus {i}", 16384, 0, False, None, P)
        )
    context = _section(summary, "## Critical Context")
    assert [c for c in context if c.startswith("- Requested focus:")] == ["- Requested focus: focus 3"]
    assert len([c for c in context if c.startswith("- Paths mentioned by the user:")]) == 1
    assert "lib/mod0.py" in summary and "lib/mod3.py" in summary
    assert summary.count(OFFLINE_NOTE) == 1
    # the unresolved pytest failure from the first part is still reported exactly once
    assert context.count("- Error: `E   AssertionError: expected 2 got 1`") == 1
    assert _section(summary, "### Blocked") == [
        "- bash(command=pytest -q tests/test_cli.py): E   AssertionError: expected 2 got 1"
    ]


def test_update_with_an_llm_written_summary_and_file_lists() -> None:
    previous = (
        "## Goal\nRefactor the parser.\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n"
        "- [x] Split lexer.py\n\n### In Progress\n- [ ] Port tests\n\n### Blocked\n- (none)\n\n"
        "## Key Decisions\n- **Keep the AST**: compatibility\n\n## Next Steps\n1. Port tests\n\n"
        "## Critical Context\n- Python 3.11\n\n<read-files>\nREADME.md\n</read-files>\n\n"
        "<modified-files>\nsrc/lexer.py\n</modified-files>"
    )
    text = OfflineSummarizer().draft(
        history_request("[User]: thanks", previous, None, 16384, 0, False, None, P)
    )
    assert _section(text, "## Goal")[1:] == ["- Refactor the parser."]
    assert _section(text, "## Constraints & Preferences") == ["(none)"]
    assert _section(text, "### Done") == ["- [x] Split lexer.py"]
    assert _section(text, "### In Progress") == ["- [ ] Port tests"]
    assert _section(text, "## Key Decisions") == ["- **Keep the AST**: compatibility"]
    assert _section(text, "## Next Steps") == ["1. Port tests"]
    context = _section(text, "## Critical Context")
    assert context == ["- Files modified: src/lexer.py", "- Files read: README.md", "- Python 3.11"]


def test_embedded_compaction_and_branch_summaries_are_merged() -> None:
    compaction = (
        "[User]: The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
        + "## Goal\n- Ship 1.0\n\n## Progress\n### Done\n- [x] Wrote the changelog"
        + "\n</summary>"
    )
    branch = (
        "[User]: The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
        + BRANCH_SUMMARY_PREAMBLE
        + "## Goal\n- Try a Rust port\n\n## Key Decisions\n- **Abandon the port**: too slow to build"
        + "\n\n<modified-files>\nport/lib.rs\n</modified-files></summary>"
    )
    conv = "\n\n".join([compaction, branch, "[User]: Tag the release", "[Assistant]: Done."])
    text = OfflineSummarizer().draft(history_request(conv, None, None, 16384, 0, False, None, P))
    goal = _section(text, "## Goal")
    assert goal[1:] == ["- Ship 1.0", "- Try a Rust port", "- Tag the release"]
    assert "- [x] Wrote the changelog" in _section(text, "### Done")
    assert "- **Abandon the port**: too slow to build" in _section(text, "## Key Decisions")
    assert "- Files modified: port/lib.rs" in _section(text, "## Critical Context")


def test_split_turn_summary_can_be_updated() -> None:
    history = OfflineSummarizer().draft(history_request(CONVERSATION, None, None, 16384, 0, False, None, P))
    prefix = OfflineSummarizer().draft(
        turn_prefix_request("[User]: Rename the flag\n\n[Assistant]: Ok.", 16384, 0, False, None, P)
    )
    merged = merge_split_turn(history, prefix)
    text = OfflineSummarizer().draft(history_request("[User]: go on", merged, None, 16384, 0, False, None, P))
    assert tuple(_sections(text)) == HISTORY_HEADINGS
    assert "**Turn Context" not in text
    assert "- Rename the flag" in _section(text, "## Goal")
    merged_none = merge_split_turn(None, prefix)
    text2 = OfflineSummarizer().draft(
        history_request("[User]: go on", merged_none, None, 16384, 0, False, None, P)
    )
    assert "No prior history." not in text2


def test_user_bash_runs_and_tool_call_arguments() -> None:
    conv = "\n\n".join(
        [
            "[User]: Ran `make build`\n```\ncc: error: foo.c: No such file or directory\n```\n\nCommand exited with code 2",
            '[Assistant tool calls]: read(path="a\\"b.ts", offset=10, limit=20); custom_tool(obj={"a":[1,"x"]}, n=2.5)',
            "[Tool result]: ok",
            "[Tool result]: ok",
            "[Assistant tool calls]: weird(this is not parseable",
        ]
    )
    text = OfflineSummarizer().draft(history_request(conv, None, None, 16384, 0, False, None, P))
    done = _section(text, "### Done")
    assert '- [x] read 1 file: a"b.ts' in done
    assert '- [x] custom_tool(obj={"a":[1,"x"]})' in done
    blocked = _section(text, "### Blocked")
    assert blocked == ["- bash(command=make build): cc: error: foo.c: No such file or directory"]
    assert _section(text, "### In Progress") == ["- [ ] weird(this is not parseable (no result yet)"]


def test_grep_without_matches_is_not_a_failure() -> None:
    conv = "\n\n".join(
        [
            "[User]: find TODOs",
            '[Assistant tool calls]: bash(command="grep -rn TODO src")',
            "[Tool result]: (no output)\n\nCommand exited with code 1",
            "[Assistant]: There are no TODOs.",
        ]
    )
    text = OfflineSummarizer().draft(history_request(conv, None, None, 16384, 0, False, None, P))
    assert _section(text, "### Blocked") == ["(none)"]
    assert "- [x] bash(command=grep -rn TODO src)" in _section(text, "### Done")


def test_long_sessions_stay_compact() -> None:
    parts = ["[User]: Fix all the lint warnings in the repository, one file at a time."]
    for i in range(300):
        parts.append(f'[Assistant tool calls]: bash(command="ruff check src/m{i}.py")')
        parts.append("[Tool result]: All checks passed!")
        parts.append(f'[Assistant tool calls]: edit(path="src/m{i}.py", oldText="a", newText="b")')
        parts.append("[Tool result]: ok")
    parts.append("[User]: " + "x" * 5000)
    text = OfflineSummarizer().draft(
        history_request("\n\n".join(parts), None, None, 16384, 0, False, None, P)
    )
    done = _section(text, "### Done")
    assert len(done) <= 16
    assert re.match(r"- \[x\] … and \d+ more tool calls \(bash ×300, edit ×\d+\)", done[-1])
    assert len(text) < 12000
    assert all(len(line) < 2500 for line in text.splitlines())


def test_prompt_without_tags_and_empty_conversation() -> None:
    from session_studio.llm import SummaryRequest

    text = OfflineSummarizer().draft(SummaryRequest("history", "", "just text", None, None))
    assert tuple(_sections(text)) == HISTORY_HEADINGS
    empty = OfflineSummarizer().draft(history_request("", None, None, 100, 0, False, None, P))
    assert "- (no explicit request in this part)" in empty
    tp = OfflineSummarizer().draft(turn_prefix_request("[Assistant]: hi", 100, 0, False, None, P))
    assert "(the request that started this turn is not part of this excerpt)" in tp
