"""Request framing and merge rules (spec §7.2, §7.4, §8.4; conformance cases 54, 55, 56, 59, 63)."""

from __future__ import annotations

from session_studio.llm import (
    BRANCH_SUMMARY_PREAMBLE,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    Prompts,
    branch_request,
    extract_text,
    history_request,
    merge_split_turn,
    turn_prefix_request,
)
from session_studio.llm.requests import reasoning_option, summary_max_tokens

P = Prompts()


def test_case_59_update_request_with_focus_and_reasoning() -> None:
    req = history_request("[User]: hello world", "PREV SUMMARY", "focus on X", 16384, 8192, True, "medium", P)
    assert req.kind == "update"
    assert req.prompt_text == (
        "<conversation>\n[User]: hello world\n</conversation>\n\n"
        "<previous-summary>\nPREV SUMMARY\n</previous-summary>\n\n"
        + P.update
        + "\n\nAdditional focus: focus on X"
    )
    assert req.system_prompt == P.system
    assert req.max_tokens == 8192
    assert req.reasoning == "medium"


def test_case_59_non_reasoning_model_without_limit() -> None:
    req = history_request("[User]: hello world", None, None, 16384, 0, False, "high", P)
    assert req.kind == "history"
    assert req.max_tokens == 13107
    assert req.reasoning is None
    assert req.prompt_text == "<conversation>\n[User]: hello world\n</conversation>\n\n" + P.history


def test_case_59_response_text_blocks() -> None:
    blocks = [
        {"type": "text", "text": "A"},
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "B"},
    ]
    assert extract_text(blocks) == "A\nB"
    assert extract_text([]) == ""
    assert extract_text([{"type": "toolCall", "name": "x"}]) == ""
    assert extract_text([{"type": "text", "text": ""}, {"type": "text", "text": "x"}]) == "\nx"


def test_case_56_split_turn_budgets_and_merge() -> None:
    history = history_request("[User]: a", None, None, 16384, 100000, False, None, P)
    prefix = turn_prefix_request("[User]: b", 16384, 100000, False, None, P)
    assert history.max_tokens == 13107
    assert prefix.max_tokens == 8192
    assert prefix.kind == "turn_prefix"
    assert prefix.prompt_text == "<conversation>\n[User]: b\n</conversation>\n\n" + P.turn_prefix
    assert merge_split_turn("H", "P") == "H\n\n---\n\n**Turn Context (split turn):**\n\nP"


def test_turn_prefix_ignores_previous_summary_and_focus_but_keeps_reasoning() -> None:
    prefix = turn_prefix_request("[User]: b", 10000, 3000, True, "low", P)
    assert prefix.max_tokens == 3000  # min(5000, 3000)
    assert prefix.reasoning == "low"
    assert "<previous-summary>" not in prefix.prompt_text
    assert "Additional focus" not in prefix.prompt_text


def test_case_54_split_turn_with_empty_history() -> None:
    assert (
        merge_split_turn(None, "PFX") == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPFX"
    )
    assert NO_PRIOR_HISTORY == "No prior history."
    assert SPLIT_TURN_SEPARATOR == "\n\n---\n\n**Turn Context (split turn):**\n\n"


def test_case_55_previous_summary_is_lost_when_history_is_empty() -> None:
    prefix = turn_prefix_request("[User]: u\n\n[Assistant]: a", 16384, 0, False, None, P)
    merged = merge_split_turn(None, "PREFIX TEXT")
    assert "PREV" not in prefix.prompt_text
    assert "PREV" not in merged
    assert merged.startswith("No prior history.")


def test_empty_model_answer_is_kept_like_pi() -> None:
    assert merge_split_turn("", "P") == SPLIT_TURN_SEPARATOR + "P"


def test_case_63_branch_request() -> None:
    conv = '[User]: hello\n\n[Assistant tool calls]: read(path="p.ts")'
    req = branch_request(conv, "CI", False, P)
    assert req.kind == "branch"
    assert req.max_tokens == 2048
    assert req.reasoning is None
    assert req.prompt_text.startswith(
        '<conversation>\n[User]: hello\n\n[Assistant tool calls]: read(path="p.ts")\n</conversation>\n\n'
    )
    assert req.prompt_text.endswith("\n\nAdditional focus: CI")
    assert (
        req.prompt_text
        == "<conversation>\n" + conv + "\n</conversation>\n\n" + P.branch + "\n\nAdditional focus: CI"
    )
    # LLM answer "X" → the stored summary starts with pi's preamble (file lists are appended by the core).
    summary = BRANCH_SUMMARY_PREAMBLE + "X" + "\n\n<read-files>\np.ts\n</read-files>"
    assert summary == (
        "The user explored a different conversation branch before returning here.\n"
        "Summary of that exploration:\n\nX\n\n<read-files>\np.ts\n</read-files>"
    )


def test_case_63_branch_replace_instructions() -> None:
    req = branch_request("[User]: hello", "ONLY THIS", True, P)
    assert req.prompt_text == "<conversation>\n[User]: hello\n</conversation>\n\nONLY THIS"
    # replace without instructions falls back to the branch prompt
    assert branch_request("[User]: hello", None, True, P).prompt_text.endswith(P.branch)
    assert branch_request("[User]: hello", "", False, P).prompt_text.endswith(P.branch)


def test_max_tokens_and_reasoning_rules() -> None:
    assert summary_max_tokens(16384, 0.8, 0) == 13107
    assert summary_max_tokens(16384, 0.8, 8192) == 8192
    assert summary_max_tokens(16384, 0.8, -1) == 13107
    assert summary_max_tokens(16384, 0.5, 100000) == 8192
    assert summary_max_tokens(1, 0.8, 0) == 0
    assert summary_max_tokens(10, 0.8, 0) == 8
    assert reasoning_option(True, "off") is None
    assert reasoning_option(True, "") is None
    assert reasoning_option(True, None) is None
    assert reasoning_option(False, "high") is None
    assert reasoning_option(True, "xhigh") == "xhigh"


def test_custom_prompts_are_used() -> None:
    custom = Prompts(system="SYS", history="HIST", update="UPD", turn_prefix="TP", branch="BR")
    assert history_request("c", None, None, 100, 0, False, None, custom).prompt_text.endswith("HIST")
    assert history_request("c", "p", "f", 100, 0, False, None, custom).prompt_text.endswith(
        "UPD\n\nAdditional focus: f"
    )
    assert turn_prefix_request("c", 100, 0, False, None, custom).system_prompt == "SYS"
    assert branch_request("c", None, False, custom).prompt_text.endswith("BR")
