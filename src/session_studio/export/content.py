"""Entries and messages as report blocks: every shape pi 0.80.2 and 1.6.0 write.

Text stays text (a message that looks like HTML or Markdown is shown as written); tool calls and
thinking are collapsible; long text folds. Unknown shapes are shown as their JSON.
"""

from __future__ import annotations

from typing import Any

from ..core.jsvalue import UNDEFINED
from ..core.session import EntryRecord, Session
from .safe import json_text, visible
from .writer import ReportWriter

__all__ = ["entry_title", "render_entry", "render_message"]

_PREVIEW = 110


def _get(v: Any, key: str) -> Any:
    return v.get(key, UNDEFINED) if type(v) is dict else UNDEFINED


def _present(value: Any) -> bool:
    return value is not UNDEFINED and value is not None


def _preview(text: str) -> str:
    one = visible(" ".join(text.split()), one_line=True)
    return one if len(one) <= _PREVIEW else one[: _PREVIEW - 1] + "…"


def _usage_text(usage: Any) -> str:
    if type(usage) is not dict:
        return visible(usage)
    parts = [
        f"{name} {usage[name]:,}"
        for name in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
        if isinstance(usage.get(name), int | float) and not isinstance(usage.get(name), bool)
    ]
    cost = usage.get("cost")
    total = cost.get("total") if type(cost) is dict else None
    if isinstance(total, int | float) and not isinstance(total, bool):
        parts.append(f"cost ${total:.4f}")
    return ", ".join(parts) or json_text(usage, indent=False)


def _render_blocks(w: ReportWriter, content: Any) -> None:
    if isinstance(content, str):
        if content:
            w.text_block(content)
        return
    if type(content) is not list:
        if _present(content):
            w.text_block(json_text(content), label="content (not a list of blocks)")
        return
    for block in content:
        kind = _get(block, "type")
        if kind == "text":
            text = _get(block, "text")
            w.text_block(text if isinstance(text, str) else json_text(text))
        elif kind == "thinking":
            thinking = _get(block, "thinking")
            text = thinking if isinstance(thinking, str) else json_text(thinking)
            redacted = _get(block, "redacted") is True
            w.open_fold("(redacted)" if redacted else _preview(text) or "(empty)", kind="thinking")
            w.text_block(text)
            w.close_fold()
        elif kind == "toolCall":
            args = _get(block, "arguments")
            args_text = json_text(args) if _present(args) else ""
            w.open_fold(
                f"{visible(_get(block, 'name'), one_line=True)} {_preview(json_text(args, indent=False) if _present(args) else '')}",
                kind="toolCall",
            )
            w.facts([("tool call id", _get(block, "id")), ("tool", _get(block, "name"))])
            w.text_block(args_text, label="arguments")
            w.close_fold()
        elif kind == "image":
            w.image(block)
        else:
            w.text_block(json_text(block), label=f"block of type {visible(kind, one_line=True)}")


def render_message(w: ReportWriter, m: Any) -> None:
    """One AgentMessage (or an LLM message): its facts, then its content."""
    if type(m) is not dict:
        w.text_block(json_text(m), label="message (not an object)")
        return
    role = m.get("role", UNDEFINED)
    facts: list[tuple[str, Any]] = []
    if role == "assistant":
        for key, label in (("provider", "provider"), ("model", "model"), ("stopReason", "stop reason")):
            if _present(m.get(key, UNDEFINED)):
                facts.append((label, m[key]))
        if _present(m.get("usage", UNDEFINED)):
            facts.append(("usage", _usage_text(m["usage"])))
        if _present(m.get("errorMessage", UNDEFINED)):
            facts.append(("error", m["errorMessage"]))
    elif role == "toolResult":
        facts += [("tool", m.get("toolName", UNDEFINED)), ("tool call id", m.get("toolCallId", UNDEFINED))]
        if m.get("isError") is True:
            facts.append(("error", "the tool reported an error"))
    elif role == "custom":
        facts += [("custom type", m.get("customType", UNDEFINED)), ("display", m.get("display", UNDEFINED))]
    elif role == "bashExecution":
        facts += [("exit code", m.get("exitCode", UNDEFINED))]
        for flag in ("cancelled", "truncated", "excludeFromContext"):
            if m.get(flag) is True:
                facts.append((flag, True))
        if _present(m.get("fullOutputPath", UNDEFINED)):
            facts.append(("full output", m["fullOutputPath"]))
    elif role == "compactionSummary":
        facts.append(("tokens before", m.get("tokensBefore", UNDEFINED)))
    elif role == "branchSummary":
        facts.append(("from", m.get("fromId", UNDEFINED)))
    facts = [(k, "undefined" if v is UNDEFINED else v) for k, v in facts]
    if facts:
        w.facts(facts)
    if role == "bashExecution":
        w.text_block(visible(m.get("command", "")), label="command")
        output = m.get("output", UNDEFINED)
        w.text_block(output if isinstance(output, str) else json_text(output), label="output")
        return
    if role in ("compactionSummary", "branchSummary"):
        summary = m.get("summary", UNDEFINED)
        w.text_block(summary if isinstance(summary, str) else json_text(summary), label="summary")
        return
    if role == "system":
        _render_system(w, m)
        return
    if role == "toolResult" and _is_long_content(m.get("content")):
        w.open_fold(f"result of {visible(m.get('toolName'), one_line=True)}", kind="toolResult")
        _render_blocks(w, m.get("content", UNDEFINED))
        w.close_fold()
        return
    _render_blocks(w, m.get("content", UNDEFINED))


def _is_long_content(content: Any) -> bool:
    if isinstance(content, str):
        return len(content) > 400
    if type(content) is list:
        return sum(len(str(_get(b, "text"))) for b in content) > 400
    return False


def _render_system(w: ReportWriter, m: dict[str, Any]) -> None:
    """A pi 1.6.0 system message: its content, the sections it sets or removes, the tools."""
    _render_blocks(w, m.get("content", UNDEFINED))
    sections = m.get("sections", UNDEFINED)
    if type(sections) is dict:
        for name, text in sections.items():
            if text is None:
                w.para(f"section {visible(name, one_line=True)}: removed", tone="muted")
            else:
                w.text_block(text if isinstance(text, str) else json_text(text), label=f"section {name}")
    for key, what in (("toolsAdded", "tools added"), ("toolsRemoved", "tools removed")):
        tools = m.get(key, UNDEFINED)
        if type(tools) is list and tools:
            names = ", ".join(visible(_get(t, "name"), one_line=True) for t in tools)
            w.open_fold(f"{what}: {names}", kind="tools")
            w.text_block(json_text(tools))
            w.close_fold()


def entry_title(position: int, rec: EntryRecord) -> tuple[str, str]:
    """(title, kind classes) of an entry in a listing."""
    t = rec.type
    if t == "message":
        role = rec.role if isinstance(rec.role, str) else "message"
        return f"#{position} {visible(role, one_line=True)}", role
    name = visible(t, one_line=True) if isinstance(t, str) else "(no type)"
    return f"#{position} {name}", name if isinstance(t, str) else "damaged"


def entry_note(session: Session, rec: EntryRecord) -> str:
    parts = [f"id {visible(rec.id, one_line=True)}"]
    if isinstance(rec.timestamp, str):
        parts.append(visible(rec.timestamp, one_line=True))
    parts.append(f"line {rec.line:,}")
    if rec.type == "message" and isinstance(rec.tokens, int | float) and not isinstance(rec.tokens, bool):
        parts.append(f"~{rec.tokens:,.0f} tokens (chars/4)")
    label = session.label_of(rec.id) if rec.id is not UNDEFINED else None
    if label:
        parts.append(f"label: {visible(label, one_line=True)}")
    return " · ".join(parts)


def render_entry(
    w: ReportWriter, session: Session, position: int, rec: EntryRecord, v: Any, mark: str = ""
) -> None:
    """One path entry: a heading with its id, time and label, then its content."""
    title, kind = entry_title(position, rec)
    note = entry_note(session, rec)
    if mark:
        note = f"{note} · {mark}"
        kind += " cut" if mark.startswith("first kept") else ""
    w.open_entry(title, f"e{rec.index}", kind, note)
    try:
        _render_entry_body(w, rec, v)
    finally:
        w.close_entry()


def _render_entry_body(w: ReportWriter, rec: EntryRecord, v: Any) -> None:
    t = rec.type
    if type(v) is not dict:
        w.text_block(json_text(v), label="not an object")
        return
    g = v.get
    if t == "message":
        render_message(w, g("message", UNDEFINED))
    elif t == "compaction":
        facts: list[tuple[str, Any]] = [
            ("first kept entry", g("firstKeptEntryId", "undefined")),
            ("tokens before", g("tokensBefore", "undefined")),
        ]
        details = g("details")
        if type(details) is dict:
            for key, label in (("readFiles", "read files"), ("modifiedFiles", "modified files")):
                files = details.get(key)
                if type(files) is list:
                    facts.append((label, ", ".join(visible(f, one_line=True) for f in files) or "(none)"))
        if _present(g("usage", UNDEFINED)):
            facts.append(("usage of the summary", _usage_text(g("usage"))))
        if g("fromHook") is True:
            facts.append(("from an extension", True))
        w.facts(facts)
        summary = g("summary", "")
        w.text_block(summary if isinstance(summary, str) else json_text(summary), label="summary")
        snapshot = g("systemMessage", UNDEFINED)
        if type(snapshot) is dict:
            w.open_fold("system message snapshot", kind="system")
            _render_system(w, snapshot)
            w.close_fold()
    elif t == "branch_summary":
        facts = [("from", g("fromId", "undefined"))]
        if _present(g("usage", UNDEFINED)):
            facts.append(("usage of the summary", _usage_text(g("usage"))))
        w.facts(facts)
        summary = g("summary", "")
        w.text_block(summary if isinstance(summary, str) else json_text(summary), label="summary")
    elif t == "model_change":
        w.facts([("provider", g("provider", "undefined")), ("model", g("modelId", "undefined"))])
    elif t == "thinking_level_change":
        w.facts([("thinking level", g("thinkingLevel", "undefined"))])
    elif t == "label":
        label = g("label", UNDEFINED)
        w.facts([("target", g("targetId", "undefined")), ("label", label if label else "(cleared)")])
    elif t == "session_info":
        w.facts([("session name", g("name", "undefined"))])
    elif t == "custom_message":
        w.facts([("custom type", g("customType", "undefined")), ("display", g("display", "undefined"))])
        _render_blocks(w, g("content", UNDEFINED))
    elif t == "custom":
        w.facts([("custom type", g("customType", "undefined"))])
        w.open_fold("extension data (never sent to the LLM)", kind="data")
        w.text_block(json_text(g("data")) if "data" in v else "undefined")
        w.close_fold()
    elif t == "usage":
        w.facts(
            [
                ("kind", g("kind", "undefined")),
                ("provider", g("provider", "undefined")),
                ("model", g("model", "undefined")),
                ("usage", _usage_text(g("usage"))),
                *([("note", g("note"))] if "note" in v else []),
            ]
        )
    elif t == "context_edit":
        replacement = g("replacement", UNDEFINED)
        w.facts([("target", g("targetId", "undefined"))])
        if replacement is None:
            w.para("The target is omitted from the model's context (the entry itself is unchanged).")
        else:
            w.para("The target's content, as the model sees it from here on:")
            _render_blocks(w, _get(replacement, "content"))
    else:
        w.open_fold("entry JSON", kind="data")
        w.text_block(json_text(v))
        w.close_fold()
