"""A deterministic summarizer that needs no network: the default when no provider is configured.

It reads the request's ``prompt_text`` the way an LLM would: the ``<conversation>`` block (pi's
serialized form, spec §7.1: ``[User]: …``, ``[Assistant]: …``, ``[Assistant thinking]: …``,
``[Assistant tool calls]: name(k=v, …); …``, ``[Tool result]: …`` parts separated by blank
lines), the optional ``<previous-summary>`` block and an optional ``Additional focus:`` line. It
fills the headings of the requested kind with what it can extract mechanically:

* Goal – the user's requests (first line of each, de-duplicated, trimmed);
* Constraints & Preferences – user sentences with "must", "don't", "never", "prefer", …;
* Done / In Progress / Blocked – tool calls paired with their results (``- [x] edit(path=a.py)``),
  calls without a result yet, and calls whose result looks like an error (unless a later identical
  call succeeded);
* Key Decisions – assistant sentences that state a choice (with the "because …" part as reason);
* Next Steps – blockers to resolve, pending calls, the assistant's stated next step, the last ask;
* Critical Context – files modified/read, exact error messages, paths the user mentioned, the
  requested focus.

Earlier summaries are merged: a ``<previous-summary>`` (``update`` requests) and compaction or
branch summaries that appear inside the conversation keep their items (Done items stay, finished
In Progress items move to Done, resolved blockers are dropped, file lists are combined).

The first line under the first heading says it is an offline draft. The text is streamed to
``on_text`` one section at a time.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from session_studio.llm.base import CancelToken, SummaryRequest, SummaryResult
from session_studio.llm.prompts import TURN_PREFIX_CONTINUATION_HEADINGS, TURN_PREFIX_HEADINGS
from session_studio.llm.requests import BRANCH_SUMMARY_PREAMBLE, NO_PRIOR_HISTORY

__all__ = ["OFFLINE_MODEL", "OFFLINE_NOTE", "OfflineSummarizer", "is_offline_draft"]

logger = logging.getLogger(__name__)

OFFLINE_NOTE: Final[str] = "_(offline draft — generated without an LLM)_"
OFFLINE_MODEL: Final[str] = "offline"


def is_offline_draft(summary: str) -> bool:
    """Whether ``summary`` holds (a part made by) the offline drafter: its note is still in it."""
    return OFFLINE_NOTE in summary


_COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
_BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
_PART_SPLIT = re.compile(
    r"\n\n(?=\[(?:User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: )"
)
_PART_LABEL = re.compile(r"\[(User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: ")
_TOOL_NAME = re.compile(r"\s*([^\s(;,][^(;]*?)\(")
_ARG_KEY = re.compile(r"([^=,()]+)=")
_BASH_RUN = re.compile(r"\ARan `(?P<cmd>[^\n]*)`\n(?P<rest>.*)\Z", re.S)
_EXIT_CODE = re.compile(r"(?:Command exited with code|exit(?:ed)? (?:with )?(?:code|status))\s+(-?\d+)", re.I)
_ERROR_START = re.compile(
    r"(?i)^(?:error|fatal|panic|exception|traceback|failed|failure|cannot|can't|could not|couldn't|unable to|"
    r"no such file|permission denied|command not found|enoent|eacces|invalid|missing)\b"
)
_ERROR_ANYWHERE = re.compile(
    r"(?:\bENOENT\b|\bEACCES\b|No such file or directory|Permission denied|command not found|"
    r"Traceback \(most recent call last\)|^\w*(?:Error|Exception): )",
    re.M,
)
_EXCEPTION_LINE = re.compile(r"\b[A-Za-z_][\w.]*(?:Error|Exception)\b:")
_TRIVIAL_USER = re.compile(
    r"(?i)^(?:ok(?:ay)?|yes|yep|yeah|no|nope|y|n|thanks?(?: you)?|thx|continue|go on|go ahead|sure|great|"
    r"nice|cool|perfect|lgtm|do it|proceed|please continue|keep going|next)[\s.!?]*$"
)
_CONSTRAINT = re.compile(
    r"(?i)\b(?:must|mustn't|shouldn't|should not|instead of|without|required|requirement|important|"
    r"preferably|i (?:want|prefer|need) (?:you )?to|make sure|no need to)\b"
)
_IMPERATIVE = re.compile(
    r"(?i)(?:^|[,;:]\s*)(?:please\s+)?(?:don't|do not|never|always|avoid|prefer|only use|keep|stick to|use)\b"
)
_DECISION = re.compile(
    r"(?i)\b(?:decided|decision|instead of|rather than|chose|choose|opted|going with|switch(?:ed|ing)? to|"
    r"the fix is|root cause|the problem (?:is|was)|because|so that)\b"
)
_SPECULATION = re.compile(r"(?i)^(?:if|maybe|perhaps|i bet|i think|it seems|probably|let me|wait|hmm)\b")
_SEARCH_COMMAND = re.compile(r"^\s*(?:\S+=\S+\s+)*(?:grep|egrep|fgrep|rg|ag|ack|git grep|diff|cmp|test|\[)\b")
_REASON_SPLIT = re.compile(
    r"(?i)\s*(?:,\s*)?\b(?:because|since|so that|to avoid|as it|as this|given that)\b\s*"
)
_NEXT_INTENT = re.compile(
    r"(?i)\b(?:next,? (?:i'll|i will|we'll|we should)|then i'll|now i'll|i'll now|remaining|still need to|"
    r"todo|to do next)\b"
)
_PATH_TOKEN = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,7}(?![\w/])")
_FILES_LINE = re.compile(r"^- Files (modified|read): (.*)$")
_ITEM_PREFIX = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")
_PENDING_SUFFIX = " (no result yet)"
_ERROR_PREFIX = "- Error: "
_MENTIONED_PREFIX = "- Paths mentioned by the user: "
_FOCUS_PREFIX = "- Requested focus: "
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")

_PRIMARY_KEYS: Final[tuple[str, ...]] = (
    "path",
    "file_path",
    "filePath",
    "file",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "glob",
    "directory",
    "dir",
)
_READ_TOOLS: Final[frozenset[str]] = frozenset({"read", "read_file", "view", "cat"})
_WRITE_TOOLS: Final[frozenset[str]] = frozenset(
    {"write", "edit", "write_file", "edit_file", "apply_patch", "multiedit"}
)

_MAX_ITEM = 200
_MAX_GOALS = 5
_MAX_DONE = 14
_MAX_LIST = 6
_MAX_FILES = 20


# ---------------------------------------------------------------------------------------------
# Small text helpers


def _shorten(text: str, limit: int = _MAX_ITEM, *, exact: bool = False) -> str:
    """Trim ``text`` to ``limit`` characters at a word boundary; whitespace is collapsed unless ``exact``."""
    flat = text.strip().replace("\n", " ") if exact else " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


_DISPLAY_SUFFIX = re.compile(r"(?: ×\d+| \(run by the user\)| \(no result yet\))+$")


def _norm(item: str) -> str:
    text = _DISPLAY_SUFFIX.sub("", _ITEM_PREFIX.sub("", item.strip()))
    return " ".join(text.lower().split())


class _OrderedSet:
    """Insertion-ordered set of display strings, keyed by their normalized form."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._items: dict[str, str] = {}
        for item in items:
            self.add(item)

    def add(self, item: str) -> None:
        key = _norm(item)
        if key and key not in self._items and key != "(none)":
            self._items[key] = item

    def discard_key(self, key: str) -> None:
        self._items.pop(key, None)

    def keys(self) -> list[str]:
        return list(self._items)

    def values(self) -> list[str]:
        return list(self._items.values())

    def __contains__(self, item: str) -> bool:
        return _norm(item) in self._items

    def __len__(self) -> int:
        return len(self._items)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for raw in _SENTENCE_SPLIT.split(text):
        s = raw.strip().strip("-*• ").strip()
        if 8 <= len(s) <= 400 and not s.startswith(("```", "|", ">")):
            out.append(s)
    return out


# ---------------------------------------------------------------------------------------------
# Parsing the serialized conversation


@dataclass(slots=True)
class _Call:
    name: str
    args: list[tuple[str, Any]]
    raw: str
    parsed: bool = True
    result: str | None = None
    error: str | None = None
    user_run: bool = False

    @property
    def label(self) -> str:
        if not self.parsed:
            return _shorten(self.raw, 100)
        shown = [f"{key}={_fmt_value(value)}" for key, value in self.args if key in _PRIMARY_KEYS][:2]
        if not shown and self.args:
            key, value = self.args[0]
            shown.append(f"{key}={_fmt_value(value)}")
        return f"{self.name}({', '.join(shown)})"

    @property
    def path(self) -> str | None:
        for key in ("path", "file_path", "filePath", "file"):
            for a, v in self.args:
                if a == key and isinstance(v, str) and v:
                    return v
        return None


def _fmt_value(value: Any) -> str:
    if isinstance(value, str):
        return _shorten(value.replace("\n", " ⏎ "), 70)
    return _shorten(json.dumps(value, ensure_ascii=False, separators=(",", ":")), 70)


def _parse_tool_calls(text: str) -> list[_Call]:
    decoder = json.JSONDecoder()
    calls: list[_Call] = []
    i = 0
    n = len(text)
    while i < n:
        start = i
        m = _TOOL_NAME.match(text, i)
        if not m:
            break
        name = m.group(1).strip()
        i = m.end()
        args: list[tuple[str, Any]] = []
        ok = True
        if text.startswith(")", i):
            i += 1
        else:
            while True:
                km = _ARG_KEY.match(text, i)
                if not km:
                    ok = False
                    break
                key = km.group(1).strip()
                try:
                    value, i = decoder.raw_decode(text, km.end())
                except json.JSONDecodeError:
                    ok = False
                    break
                args.append((key, value))
                if text.startswith(", ", i):
                    i += 2
                    continue
                if text.startswith(")", i):
                    i += 1
                    break
                ok = False
                break
        if not ok:
            # Unparseable arguments: keep the rest verbatim as one call.
            raw = text[start:].strip()
            calls.append(_Call(name=name, args=[], raw=raw, parsed=False))
            return calls
        calls.append(_Call(name=name, args=args, raw=text[start:i].strip()))
        if text.startswith("; ", i):
            i += 2
        else:
            break
    if i < n and text[i:].strip():
        calls.append(_Call(name="?", args=[], raw=text[i:].strip(), parsed=False))
    return calls


def _error_of(result: str) -> str | None:
    """The most telling error line of a tool result, or None if it does not look like a failure."""
    stripped = result.strip()
    if not stripped:
        return None
    lines = [ln.strip() for ln in stripped.splitlines() if ln.strip()]
    exit_line = next((ln for ln in lines[-3:] if (m := _EXIT_CODE.search(ln)) and m.group(1) != "0"), None)
    if exit_line is not None or "Traceback (most recent call last)" in stripped:
        for candidate in lines:
            looks_bad = _ERROR_START.match(candidate) or _ERROR_ANYWHERE.search(candidate)
            if looks_bad and "Traceback (most recent call last)" not in candidate:
                return _shorten(candidate, exact=True)
        exceptions = [ln for ln in lines if _EXCEPTION_LINE.search(ln)]
        if exceptions:
            return _shorten(exceptions[-1], exact=True)
        loose = [
            ln for ln in lines if re.search(r"(?i)\b(?:error|failed|failure|fatal)\b", ln) and ln != exit_line
        ]
        if loose:
            return _shorten(loose[0], exact=True)
        return _shorten(exit_line or lines[-1], exact=True)
    for line in lines[:2]:
        if _ERROR_START.match(line) or _ERROR_ANYWHERE.search(line):
            return _shorten(line, exact=True)
    return None


@dataclass(slots=True)
class _Conversation:
    user_texts: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    thinking_texts: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    embedded_summaries: list[str] = field(default_factory=list)
    saw_results: bool = False
    last_role: str | None = None


def _parse_conversation(text: str) -> _Conversation:
    conv = _Conversation()
    pending: list[_Call] = []
    for part in _PART_SPLIT.split(text):
        m = _PART_LABEL.match(part)
        if not m:
            if part.strip():
                conv.user_texts.append(part.strip())
            continue
        label = m.group(1)
        body = part[m.end() :]
        if label == "User":
            _settle(pending)
            _handle_user(body, conv)
            conv.last_role = "user"
        elif label == "Assistant":
            _settle(pending)
            if body.strip():
                conv.assistant_texts.append(body.strip())
            conv.last_role = "assistant"
        elif label == "Assistant thinking":
            _settle(pending)
            if body.strip():
                conv.thinking_texts.append(body.strip())
        elif label == "Assistant tool calls":
            _settle(pending)
            calls = _parse_tool_calls(body)
            conv.calls.extend(calls)
            pending = list(calls)
            conv.last_role = "tools"
        else:  # Tool result
            conv.saw_results = True
            if pending:
                call = pending.pop(0)
                call.result = body
                call.error = _error_of(body)
            conv.last_role = "result"
    return conv


def _settle(pending: list[_Call]) -> None:
    """The conversation went on: calls still waiting for a result finished without output."""
    for call in pending:
        if call.result is None:
            call.result = ""
    pending.clear()


def _handle_user(body: str, conv: _Conversation) -> None:
    if body.startswith(_COMPACTION_PREFIX):
        inner = body[len(_COMPACTION_PREFIX) :]
        end = inner.rfind("\n</summary>")
        conv.embedded_summaries.append(inner[:end] if end >= 0 else inner)
        return
    if body.startswith(_BRANCH_PREFIX):
        inner = body[len(_BRANCH_PREFIX) :]
        end = inner.rfind("</summary>")
        inner = inner[:end] if end >= 0 else inner
        if inner.startswith(BRANCH_SUMMARY_PREAMBLE):
            inner = inner[len(BRANCH_SUMMARY_PREAMBLE) :]
        conv.embedded_summaries.append(inner)
        return
    bash = _BASH_RUN.match(body)
    if bash:
        rest = bash.group("rest")
        output = ""
        fence = re.match(r"```\n(.*?)\n```", rest, re.S)
        if fence:
            output = fence.group(1)
        call = _Call(name="bash", args=[("command", bash.group("cmd"))], raw=body, user_run=True)
        call.result = rest
        code = re.search(r"Command exited with code (-?\d+)", rest)
        if code and code.group(1) != "0":
            call.error = _error_of(output + "\n" + code.group(0)) or _shorten(code.group(0))
        elif "(command cancelled)" in rest:
            call.error = "command cancelled"
        conv.calls.append(call)
        conv.saw_results = True
        return
    if body.strip():
        conv.user_texts.append(body.strip())


# ---------------------------------------------------------------------------------------------
# Parsing earlier summaries


@dataclass(slots=True)
class _Sections:
    goal: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)


_HEADING_TARGET: Final[dict[str, str]] = {
    "goal": "goal",
    "original request": "goal",
    "constraints & preferences": "constraints",
    "done": "done",
    "early progress": "done",
    "in progress": "in_progress",
    "blocked": "blocked",
    "key decisions": "decisions",
    "next steps": "next_steps",
    "critical context": "context",
    "context for suffix": "context",
}


def _parse_summary(text: str) -> _Sections:
    sections = _Sections()
    target: str | None = "context"
    in_files: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if stripped in ("<read-files>", "<modified-files>"):
            in_files = stripped[1:-1]
            continue
        if stripped in ("</read-files>", "</modified-files>"):
            in_files = None
            continue
        if in_files is not None:
            if stripped:
                (sections.read_files if in_files == "read-files" else sections.modified_files).append(
                    stripped
                )
            continue
        heading = re.match(r"^#{1,6}\s+(.*)$", stripped)
        if heading:
            name = heading.group(1).strip().lower()
            target = _HEADING_TARGET.get(name, None if name != "progress" else "done")
            continue
        if (
            not stripped
            or stripped == OFFLINE_NOTE
            or stripped in ("---", "**Turn Context (split turn):**", NO_PRIOR_HISTORY)
            or _norm(stripped) == "(none)"
        ):
            continue
        files = _FILES_LINE.match(stripped)
        if files:
            names = [f.strip() for f in files.group(2).split(", ") if f.strip() and not f.startswith("(+")]
            (sections.modified_files if files.group(1) == "modified" else sections.read_files).extend(names)
            continue
        if target is None:
            continue
        getattr(sections, target).append(stripped)
    # Turn-prefix "Early Progress" bullets are plain; show them as done items.
    sections.done = [d if d.startswith("- [") else "- [x] " + _ITEM_PREFIX.sub("", d) for d in sections.done]
    sections.in_progress = [
        d if d.startswith("- [") else "- [ ] " + _ITEM_PREFIX.sub("", d) for d in sections.in_progress
    ]
    return sections


# ---------------------------------------------------------------------------------------------
# Building the summary


@dataclass(slots=True)
class _Draft:
    goal: _OrderedSet
    constraints: _OrderedSet
    done: _OrderedSet
    in_progress: _OrderedSet
    blocked: _OrderedSet
    decisions: _OrderedSet
    next_steps: _OrderedSet
    context: _OrderedSet
    modified: _OrderedSet
    read: _OrderedSet
    errors: list[str]
    original_request: str | None
    focus: str | None


def _is_request(line: str) -> bool:
    if not line or _TRIVIAL_USER.match(line):
        return False
    return not re.fullmatch(r"/\S+", line)  # a bare slash command such as "/model"


def _goal_items(user_texts: list[str]) -> list[str]:
    goals: list[str] = []
    for text in user_texts:
        line = _first_line(text)
        if not _is_request(line):
            continue
        goals.append("- " + _shorten(line))
    unique = _OrderedSet(goals).values()
    if len(unique) > _MAX_GOALS:
        unique = [*unique[:2], f"- … ({len(unique) - 4} more requests)", *unique[-2:]]
    return unique


def _constraint_items(user_texts: list[str]) -> list[str]:
    found = _OrderedSet()
    for text in user_texts:
        for sentence in _sentences(text):
            if sentence.endswith("?") or len(sentence) > 240:
                continue
            if _CONSTRAINT.search(sentence) or _IMPERATIVE.search(sentence):
                found.add("- " + _shorten(sentence))
    values = found.values()
    return values[:_MAX_LIST]


def _decision_items(texts: list[str]) -> list[str]:
    found = _OrderedSet()
    for text in texts:
        for sentence in _sentences(text):
            if not _DECISION.search(sentence) or sentence.endswith("?") or _SPECULATION.match(sentence):
                continue
            if len(sentence) > 260:
                continue
            parts = _REASON_SPLIT.split(sentence, maxsplit=1)
            decision = parts[0].strip(" ,.;:")
            reason = parts[1].strip(" ,.;:") if len(parts) > 1 else ""
            if len(decision) < 6:
                decision, reason = sentence.rstrip("."), ""
            found.add(
                f"- **{_shorten(decision, 120)}**: {_shorten(reason, 120) if reason else 'as stated in the session'}"
            )
    values = found.values()
    return values[-_MAX_LIST:]


_RECENT_CALLS = 8


def _is_no_match(call: _Call, error: str) -> bool:
    """``grep``-like commands exit with 1 when nothing matched: that is not a failure."""
    command = next((v for k, v in call.args if k in ("command", "cmd") and isinstance(v, str)), "")
    searching = bool(_SEARCH_COMMAND.match(command) or re.search(r"\|\s*(?:grep|egrep|rg)\b[^|]*$", command))
    return searching and bool(re.fullmatch(r"(?i)(?:Command )?exited with code 1\.?", error))


def _progress_items(
    calls: list[_Call], saw_results: bool
) -> tuple[list[str], list[str], list[str], list[tuple[str, str]]]:
    """(done lines, done labels, in-progress lines, [(blocked label, error)]).

    A failure counts as blocking if it is the latest attempt of that call and either a file was
    being modified (and no later write to the same path succeeded) or it happened among the last
    few calls; older failures of other tools were evidently worked around.
    """
    last_status: dict[str, str | None] = {}  # label -> error of the latest attempt ("" = pending)
    last_index: dict[str, int] = {}
    order: dict[str, _Call] = {}
    counts: dict[str, int] = {}
    written_ok: dict[str, int] = {}  # path -> index of the last successful write/edit
    for index, call in enumerate(calls):
        label = call.label
        order.setdefault(label, call)
        counts[label] = counts.get(label, 0) + 1
        last_index[label] = index
        status: str | None = "" if call.result is None and saw_results else call.error
        if status and call.name == "bash" and _is_no_match(call, status):
            status = None
        last_status[label] = status
        if status is None and call.name in _WRITE_TOOLS and call.path:
            written_ok[call.path] = index
    recent_from = len(calls) - _RECENT_CALLS
    done_labels = [lb for lb in order if last_status[lb] is None]
    pending = [lb for lb in order if last_status[lb] == ""]
    blocked: list[tuple[str, str]] = []
    for label in order:
        error = last_status[label]
        if not error:
            continue
        call = order[label]
        path = call.path
        if call.name in _WRITE_TOOLS and path:
            if written_ok.get(path, -1) < last_index[label]:
                blocked.append((label, error))
        elif last_index[label] >= recent_from:
            blocked.append((label, error))

    reads = [lb for lb in done_labels if order[lb].name in _READ_TOOLS and order[lb].path]
    others = [lb for lb in done_labels if lb not in reads]
    if len(others) > _MAX_DONE:
        writes = [lb for lb in others if order[lb].name in _WRITE_TOOLS][: _MAX_DONE - 1]
        room = _MAX_DONE - 1 - len(writes)
        rest = [lb for lb in others if lb not in writes][: max(0, room)]
        kept = set(writes) | set(rest)
        hidden = [lb for lb in others if lb not in kept]
        others = [lb for lb in others if lb in kept]
    else:
        hidden = []
    lines: list[str] = []
    for label in others:
        suffix = f" ×{counts[label]}" if counts[label] > 1 else ""
        who = " (run by the user)" if order[label].user_run else ""
        lines.append(f"- [x] {label}{suffix}{who}")
    if hidden:
        per_tool: dict[str, int] = {}
        for label in hidden:
            per_tool[order[label].name] = per_tool.get(order[label].name, 0) + counts[label]
        detail = ", ".join(
            f"{name} ×{n}" for name, n in sorted(per_tool.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        lines.append(f"- [x] … and {sum(per_tool.values())} more tool calls ({detail})")
    if reads:
        paths = [p for p in (order[lb].path for lb in reads) if p]
        shown = ", ".join(paths[:8]) + (f", … (+{len(paths) - 8})" if len(paths) > 8 else "")
        lines.insert(0, f"- [x] read {len(paths)} file{'s' if len(paths) != 1 else ''}: {shown}")
    return lines, done_labels, [f"- [ ] {lb}{_PENDING_SUFFIX}" for lb in pending], blocked


def _mentioned_paths(texts: list[str]) -> list[str]:
    found: dict[str, None] = {}
    for text in texts:
        for match in _PATH_TOKEN.finditer(text):
            token = match.group(0).rstrip(".")
            if "/" in token or re.search(
                r"\.(?:py|js|ts|tsx|jsx|md|json|toml|yaml|yml|rs|go|java|c|h|cpp|sh|txt)$", token
            ):
                found.setdefault(token, None)
    return list(found)


def _build_draft(conv: _Conversation, previous: list[_Sections], focus: str | None) -> _Draft:
    done_lines, done_labels, pending_lines, blocked_pairs = _progress_items(conv.calls, conv.saw_results)
    done = _OrderedSet()
    in_progress = _OrderedSet()
    blocked = _OrderedSet()
    goal = _OrderedSet()
    constraints = _OrderedSet()
    decisions = _OrderedSet()
    context = _OrderedSet()
    modified = _OrderedSet()
    read = _OrderedSet()

    new_done_keys = {_norm(label) for label in done_labels}
    new_blocked_keys = {_norm(label) for label, _ in blocked_pairs}

    def resolved(blocked_item: str) -> bool:
        key = _norm(blocked_item)
        fixed = any(key.startswith(d + ":") for d in new_done_keys)
        return fixed and not any(key.startswith(b + ":") for b in new_blocked_keys)

    previous_errors: list[str] = []
    previous_paths: list[str] = []
    for prev in previous:
        for item in prev.goal:
            goal.add(item if item.startswith(("- ", "* ")) else "- " + item)
        for item in prev.constraints:
            constraints.add(item)
        for item in prev.done:
            done.add(item)
        for item in prev.in_progress:
            if _norm(item) in new_done_keys:
                done.add("- [x] " + _ITEM_PREFIX.sub("", item).removesuffix(_PENDING_SUFFIX))
            else:
                in_progress.add(item)
        for item in prev.blocked:
            if not resolved(item):
                blocked.add(item)
        for item in prev.decisions:
            decisions.add(item)
        for item in prev.context:
            if item.startswith(_MENTIONED_PREFIX):
                previous_paths.extend(p.strip() for p in item[len(_MENTIONED_PREFIX) :].split(", "))
            elif item.startswith(_ERROR_PREFIX):
                previous_errors.append(item)
            elif not item.startswith(_FOCUS_PREFIX):  # the focus belongs to one request only
                context.add(item)
        for path in prev.modified_files:
            modified.add(path)
        for path in prev.read_files:
            read.add(path)

    for line in _goal_items(conv.user_texts):
        goal.add(line)
    for line in _constraint_items(conv.user_texts):
        constraints.add(line)
    for line in done_lines:
        done.add(line)
        in_progress.discard_key(_norm(line))
    for line in pending_lines:
        in_progress.add(line)
    for label, error in blocked_pairs:
        blocked.add(f"- {label}: {error}")
    decision_lines = _decision_items(conv.assistant_texts) or _decision_items(conv.thinking_texts)
    for line in decision_lines:
        decisions.add(line)

    for call in conv.calls:
        call_path = call.path
        if not call_path:
            continue
        if call.name in _WRITE_TOOLS:
            modified.add(call_path)
        elif call.name in _READ_TOOLS:
            read.add(call_path)
    for path in modified.values():
        read.discard_key(_norm(path))

    errors = list(dict.fromkeys(error for _, error in blocked_pairs))
    next_steps = _OrderedSet()
    asks = [t for t in conv.user_texts if _is_request(_first_line(t))]
    if asks:
        next_steps.add("Pick up from the latest request: " + _shorten(_first_line(asks[-1])))
    for label, error in blocked_pairs[-2:]:
        next_steps.add(f"Resolve the failure of {label}: {error}")
    for line in pending_lines:
        next_steps.add(f"Check the result of {_ITEM_PREFIX.sub('', line).removesuffix(_PENDING_SUFFIX)}")
    if conv.assistant_texts:
        for sentence in _sentences(conv.assistant_texts[-1]):
            if _NEXT_INTENT.search(sentence):
                next_steps.add(_shorten(sentence))
    if not len(next_steps):
        for prev in reversed(previous):
            if prev.next_steps:
                for item in prev.next_steps:
                    next_steps.add(_ITEM_PREFIX.sub("", item))
                break

    # Earlier error lines stay only while their blocker is unresolved.
    blocked_text = "\n".join(blocked.values())
    for item in previous_errors:
        message = item[len(_ERROR_PREFIX) :].strip("`")
        if message and message in blocked_text:
            context.add(item)
    for error in errors[-4:]:
        context.add(f"{_ERROR_PREFIX}`{error}`")
    mentioned = [
        p
        for p in dict.fromkeys([*previous_paths, *_mentioned_paths(conv.user_texts)])
        if p and p not in modified and p not in read
    ]
    if mentioned:
        context.add(_MENTIONED_PREFIX + ", ".join(mentioned[-10:]))
    if focus:
        context.add(_FOCUS_PREFIX + _shorten(focus, 300))

    original = None
    if conv.user_texts:
        original = _shorten(conv.user_texts[0], 500)
    return _Draft(
        goal=goal,
        constraints=constraints,
        done=done,
        in_progress=in_progress,
        blocked=blocked,
        decisions=decisions,
        next_steps=next_steps,
        context=context,
        modified=modified,
        read=read,
        errors=errors,
        original_request=original,
        focus=focus,
    )


def _bullets(items: list[str], empty: str = "(none)") -> list[str]:
    return items if items else [empty]


def _file_lines(draft: _Draft) -> list[str]:
    lines: list[str] = []
    for title, files in (("modified", draft.modified.values()), ("read", draft.read.values())):
        if files:
            shown = ", ".join(files[:_MAX_FILES]) + (
                f", (+{len(files) - _MAX_FILES} more)" if len(files) > _MAX_FILES else ""
            )
            lines.append(f"- Files {title}: {shown}")
    return lines


def _render_history(draft: _Draft, *, with_context: bool) -> list[str]:
    steps = [f"{i}. {step}" for i, step in enumerate(draft.next_steps.values()[:_MAX_LIST], start=1)]
    sections = [
        "\n".join(
            ["## Goal", OFFLINE_NOTE, *_bullets(draft.goal.values(), "- (no explicit request in this part)")]
        ),
        "\n".join(["## Constraints & Preferences", *_bullets(draft.constraints.values()[: _MAX_LIST * 2])]),
        "\n".join(["## Progress", "### Done", *_bullets(draft.done.values())]),
        "\n".join(["### In Progress", *_bullets(draft.in_progress.values())]),
        "\n".join(["### Blocked", *_bullets(draft.blocked.values())]),
        "\n".join(["## Key Decisions", *_bullets(draft.decisions.values()[-_MAX_LIST * 2 :])]),
        "\n".join(["## Next Steps", *_bullets(steps)]),
    ]
    if with_context:
        context = [*_file_lines(draft), *draft.context.values()]
        sections.append("\n".join(["## Critical Context", *_bullets(context)]))
    return sections


def _render_turn_prefix(draft: _Draft, conv: _Conversation, headings: tuple[str, ...]) -> list[str]:
    request = draft.original_request or "(the request that started this turn is not part of this excerpt)"
    early = [
        *(_ITEM_PREFIX.sub("- ", line, count=1) for line in draft.done.values()),
        *(f"- Decision: {_ITEM_PREFIX.sub('', d)}" for d in draft.decisions.values()),
    ]
    context = [
        *_file_lines(draft),
        *(
            f"- Still running when the kept part begins: {_ITEM_PREFIX.sub('', p).removesuffix(_PENDING_SUFFIX)}"
            for p in draft.in_progress.values()
        ),
        *(f"- Failed: {_ITEM_PREFIX.sub('', b)}" for b in draft.blocked.values()),
        *(c for c in draft.context.values() if not c.startswith("- Error:")),
    ]
    if conv.assistant_texts:
        context.append(
            "- Last assistant message before the kept part: " + _shorten(conv.assistant_texts[-1], 300)
        )
    original, progress, needed = headings
    return [
        "\n".join([original, OFFLINE_NOTE, request]),
        "\n".join([progress, *_bullets(early)]),
        "\n".join([needed, *_bullets(context)]),
    ]


def _between(text: str, open_tag: str, close_tag: str, start: int = 0) -> tuple[str | None, int]:
    a = text.find(open_tag, start)
    if a < 0:
        return None, start
    b = text.rfind(close_tag)
    if b < a + len(open_tag):
        return None, start
    return text[a + len(open_tag) : b], b + len(close_tag)


_MARKDOWN_CONVERSATION = "# Conversation\n"
_MARKDOWN_INSTRUCTIONS = "\n\n# Instructions\n"


def _split_prompt(prompt_text: str) -> tuple[str, str | None, str | None]:
    """(conversation, previous summary, additional focus) from a framed prompt."""
    if prompt_text.startswith(_MARKDOWN_CONVERSATION):
        # pi 1.6.0's turn prefix (rule 39): "# Conversation" … "# Instructions" and the prompt, which
        # comes last (a user's text may hold the same heading: the last one is the prompt's)
        end = prompt_text.rfind(_MARKDOWN_INSTRUCTIONS)
        if end >= len(_MARKDOWN_CONVERSATION):
            return prompt_text[len(_MARKDOWN_CONVERSATION) : end], None, None
    prev_open = prompt_text.find("\n</conversation>\n\n<previous-summary>\n")
    if prev_open >= 0 and prompt_text.startswith("<conversation>\n"):
        conversation = prompt_text[len("<conversation>\n") : prev_open]
        rest_start = prev_open + len("\n</conversation>\n\n")
        previous, end = _between(prompt_text, "<previous-summary>\n", "\n</previous-summary>", rest_start)
    else:
        conv, end = _between(prompt_text, "<conversation>\n", "\n</conversation>")
        conversation = conv if conv is not None else prompt_text
        previous = None
        if conv is None:
            end = len(prompt_text)
    tail = prompt_text[end:]
    focus_at = tail.rfind("\n\nAdditional focus: ")
    focus = tail[focus_at + len("\n\nAdditional focus: ") :].strip() if focus_at >= 0 else None
    return conversation, previous, focus or None


class OfflineSummarizer:
    """Deterministic, network-free summarizer (see the module documentation).

    ``chunk_delay_s`` pauses between streamed sections (0 = none), to let a UI show the text
    growing; the pause is interrupted by cancellation.
    """

    def __init__(self, *, chunk_delay_s: float = 0.0) -> None:
        self.chunk_delay_s = max(0.0, chunk_delay_s)
        self.model = OFFLINE_MODEL

    def __repr__(self) -> str:
        return "OfflineSummarizer()"

    def draft(self, request: SummaryRequest) -> str:
        """The full summary text for ``request`` (what :meth:`summarize` streams)."""
        return "\n\n".join(self._sections(request))

    def _sections(self, request: SummaryRequest) -> list[str]:
        conversation_text, previous_text, focus = _split_prompt(request.prompt_text)
        conv = _parse_conversation(conversation_text)
        previous = [_parse_summary(s) for s in conv.embedded_summaries]
        if request.kind == "update" and previous_text:
            previous.insert(0, _parse_summary(previous_text))
        draft = _build_draft(conv, previous, focus)
        if request.kind == "turn_prefix":
            # the headings the prompt asks for: pi 1.6.0's continuation checkpoint names them differently
            asked = {line.rstrip() for line in request.prompt_text.splitlines()}
            continuation = all(h in asked for h in TURN_PREFIX_CONTINUATION_HEADINGS)
            headings = TURN_PREFIX_CONTINUATION_HEADINGS if continuation else TURN_PREFIX_HEADINGS
            return _render_turn_prefix(draft, conv, headings)
        return _render_history(draft, with_context=request.kind != "branch")

    def summarize(
        self,
        request: SummaryRequest,
        *,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> SummaryResult:
        """Build the draft and stream it section by section."""
        token = cancel if cancel is not None else CancelToken()
        token.raise_if_cancelled()
        sections = self._sections(request)
        logger.debug("offline summary (%s): %d sections", request.kind, len(sections))
        pieces = [s if i == 0 else "\n\n" + s for i, s in enumerate(sections)]
        for i, piece in enumerate(pieces):
            token.raise_if_cancelled()
            if on_text is not None:
                on_text(piece)
            if self.chunk_delay_s and i < len(pieces) - 1 and token.wait(self.chunk_delay_s):
                token.raise_if_cancelled()
        token.raise_if_cancelled()
        return SummaryResult(text="".join(pieces), stop_reason="stop", usage=None, model=OFFLINE_MODEL)
