"""Entry → AgentMessage conversion and `convertToLlm` (spec §3.2, §3.3).

The wrapper strings are part of what the LLM receives and are reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .jsdate import js_date_ms
from .jsvalue import UNDEFINED, get, js_string, js_truthy
from .profile import PROFILE_0_80_2, PiProfile

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "bash_execution_to_text",
    "branch_summary_message",
    "compaction_summary_message",
    "convert_to_llm",
    "custom_message",
]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


def _ms(timestamp: Any) -> Any:
    return js_date_ms(timestamp)  # None stands for NaN (JSON null)


def custom_message(entry: dict[str, Any], profile: PiProfile = PROFILE_0_80_2) -> dict[str, Any]:
    """createCustomMessage from a `custom_message` entry (`details` key always present).

    1.6.0 reads missing or null content as `[]` (rule 19)."""
    content = entry.get("content", UNDEFINED)
    if profile.projection and (content is None or content is UNDEFINED):
        content = []
    return {
        "role": "custom",
        "customType": entry.get("customType", UNDEFINED),
        "content": content,
        "display": entry.get("display", UNDEFINED),
        "details": entry.get("details", UNDEFINED),
        "timestamp": _ms(entry.get("timestamp", UNDEFINED)),
    }


def branch_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "branchSummary",
        "summary": entry.get("summary", UNDEFINED),
        "fromId": entry.get("fromId", UNDEFINED),
        "timestamp": _ms(entry.get("timestamp", UNDEFINED)),
    }


def compaction_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "compactionSummary",
        "summary": entry.get("summary", UNDEFINED),
        "tokensBefore": entry.get("tokensBefore", UNDEFINED),
        "timestamp": _ms(entry.get("timestamp", UNDEFINED)),
    }


def bash_execution_to_text(m: dict[str, Any]) -> str:
    text = "Ran `" + js_string(get(m, "command")) + "`\n"
    output = get(m, "output")
    if js_truthy(output):
        text += "```\n" + js_string(output) + "\n```"
    else:
        text += "(no output)"
    exit_code = get(m, "exitCode")
    if js_truthy(get(m, "cancelled")):
        text += "\n\n(command cancelled)"
    elif (
        exit_code is not None
        and exit_code is not UNDEFINED
        and not (type(exit_code) in (int, float) and exit_code == 0)
    ):
        text += "\n\nCommand exited with code " + js_string(exit_code)
    if js_truthy(get(m, "truncated")) and js_truthy(get(m, "fullOutputPath")):
        text += "\n\n[Output truncated. Full output: " + js_string(get(m, "fullOutputPath")) + "]"
    return text


def _role(m: Any) -> Any:
    if type(m) is dict:
        return m.get("role", UNDEFINED)
    if m is None or m is UNDEFINED:
        from .jsvalue import JsTypeError

        raise JsTypeError("Cannot read properties of undefined (reading 'role')")
    return UNDEFINED


_LLM_ROLES = ("user", "assistant", "toolResult")


def convert_to_llm(messages: Iterable[Any], profile: PiProfile = PROFILE_0_80_2) -> list[Any]:
    """pi's `convertToLlm`: only user / assistant / toolResult roles reach the LLM
    (and `system` under 1.6.0, rule 20)."""
    passed = ("system", "user", "assistant", "toolResult") if profile.system_messages else _LLM_ROLES
    out: list[Any] = []
    for m in messages:
        role = _role(m)
        if role == "bashExecution":
            if js_truthy(m.get("excludeFromContext", UNDEFINED)):
                continue
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": bash_execution_to_text(m)}],
                    "timestamp": m.get("timestamp", UNDEFINED),
                }
            )
        elif role == "custom":
            content = m.get("content", UNDEFINED)
            if type(content) is str:
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp", UNDEFINED)})
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + js_string(m.get("summary", UNDEFINED)) + BRANCH_SUMMARY_SUFFIX
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": m.get("timestamp", UNDEFINED),
                }
            )
        elif role == "compactionSummary":
            text = (
                COMPACTION_SUMMARY_PREFIX + js_string(m.get("summary", UNDEFINED)) + COMPACTION_SUMMARY_SUFFIX
            )
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": m.get("timestamp", UNDEFINED),
                }
            )
        elif type(role) is str and role in passed:
            out.append(m)
    return out
