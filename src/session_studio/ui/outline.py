"""Session tree → display rows, the way pi's ``/tree`` shows it (no Qt here).

Single-child chains are flattened: a chain of entries is listed at one level and
only a branch point (an entry with several visible children) opens a nested group
whose rows are the chains of each child, one after another. The active path is
never indented: at a branch point it continues at the same level and only the
side branches open a nested group under the branch point. Each row knows its
group and its row number, so the Qt model's ``parent()`` and ``index()`` are O(1).

Filters hide entries; a hidden entry's children hang off its nearest visible
ancestor, so the branch structure stays readable with any filter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from session_studio.core.jsdate import js_date_ms
from session_studio.core.jsvalue import UNDEFINED, JsTypeError, js_key, js_truthy
from session_studio.core.session import Session

from .pi16 import is_retain_none

__all__ = ["FILTERS", "ROOT", "Outline", "build_outline", "entry_visible"]

#: The group key of the top level.
ROOT = -1

#: pi's /tree filter modes (label → key).
FILTERS: dict[str, str] = {
    "default": "Default",
    "no-tools": "No tools",
    "user-only": "User only",
    "labeled-only": "Labeled only",
    "usage": "Default + usage entries",
    "all": "All entries",
}

#: pi 1.6.0 keeps `usage` entries out of its tree (spec §10.1 rule 1): only the "usage" filter shows them
_DEFAULT_HIDDEN = frozenset({"label", "custom", "session_info", "usage"})


def entry_visible(session: Session, index: int, mode: str) -> bool:
    """Whether pi's /tree filter ``mode`` shows the entry."""
    rec = session.records[index]
    if mode == "all":
        return True
    if mode == "labeled-only":
        return session.label_of(rec.id) is not None
    if mode == "user-only":
        return rec.type == "message" and bool(rec.role == "user")
    if rec.type == "usage":
        return mode == "usage"
    if rec.type in _DEFAULT_HIDDEN:
        return False
    return not (mode == "no-tools" and rec.type == "message" and rec.role == "toolResult")


@dataclass
class Outline:
    """Display rows of a session tree (record indices), grouped by branch point."""

    groups: dict[int, list[int]] = field(default_factory=dict)  # group key → records in row order
    group_of: dict[int, int] = field(default_factory=dict)  # record → group key
    row_of: dict[int, int] = field(default_factory=dict)  # record → row in its group
    heads: set[int] = field(default_factory=set)  # first row of a child chain
    last_chain: set[int] = field(default_factory=set)  # rows in the last chain of their group
    active: set[int] = field(default_factory=set)  # records on the active path

    def __len__(self) -> int:
        return len(self.group_of)

    def rows(self, group: int) -> list[int]:
        return self.groups.get(group, [])

    def contains(self, record: int) -> bool:
        return record in self.group_of

    def nearest_shown(self, session: Session, record: int) -> int | None:
        """``record`` if shown, else its nearest shown ancestor (for keeping a selection)."""
        seen = set()
        cur: int | None = record
        while cur is not None and cur not in seen:
            if cur in self.group_of:
                return cur
            seen.add(cur)
            pid = session.records[cur].parent_id
            cur = session.get_index(pid) if js_truthy(pid) else None
        return None


def _date_ms(value: Any) -> float | None:
    try:
        return js_date_ms(value)
    except JsTypeError:
        return None


def _ts_cmp(records: Any, a: int, b: int) -> int:
    """pi's comparator ``getTime(a) - getTime(b)``: a NaN difference counts as equal."""
    x, y = _date_ms(records[a].timestamp), _date_ms(records[b].timestamp)
    if x is None or y is None or x == y:
        return 0
    return -1 if x < y else 1


def build_outline(
    session: Session,
    mode: str = "default",
    match: Callable[[int], bool] | None = None,
    active_path: Collection[int] | None = None,
) -> Outline:
    """Flattened display rows of every branch. Iterative: paths can be 100k deep."""
    records = session.records
    n = len(records)
    # children in file order first, then sorted by timestamp like pi's getTree (roots are not sorted)
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    by_id = session.by_id
    for r in records:
        pid = r.parent_id
        if pid is None or not js_truthy(pid) or js_key(pid) == js_key(r.id):
            roots.append(r.index)
            continue
        p = by_id.get(js_key(pid))
        if p is None or p == r.index:
            roots.append(r.index)
        else:
            kids.setdefault(p, []).append(r.index)

    # pi's getTree: children sorted by `new Date(timestamp).getTime()` ascending (stable; NaN compares equal)
    def by_time(a: int, b: int) -> int:
        return _ts_cmp(records, a, b)

    for lst in kids.values():
        if len(lst) > 1:
            lst.sort(key=cmp_to_key(by_time))

    def shown(i: int) -> bool:
        return entry_visible(session, i, mode) and (match is None or match(i))

    # visible children of each visible node (hidden nodes pass their children up)
    vis_kids: dict[int, list[int]] = {}
    vis_roots: list[int] = []
    seen = bytearray(n)
    # stack of (record, nearest visible ancestor or ROOT); reversed pushes keep file order
    stack: list[tuple[int, int]] = [(r, ROOT) for r in reversed(roots)]
    while stack:
        i, anc = stack.pop()
        if seen[i]:
            continue
        seen[i] = 1
        if shown(i):
            (vis_roots if anc == ROOT else vis_kids.setdefault(anc, [])).append(i)
            anc = i
        for c in reversed(kids.get(i, ())):
            stack.append((c, anc))

    out = Outline()
    if active_path:
        out.active = set(active_path)
    # groups: the top level and every visible node with ≥ 2 visible children
    pending: list[tuple[int, list[int]]] = [(ROOT, vis_roots)]
    while pending:
        key, heads = pending.pop()
        rows: list[int] = []
        multi = len(heads) > 1 or key != ROOT
        for h_no, head in enumerate(heads):
            last = h_no == len(heads) - 1
            cur: int | None = head
            first = True
            while cur is not None:
                out.group_of[cur] = key
                out.row_of[cur] = len(rows)
                rows.append(cur)
                if first and multi:
                    out.heads.add(cur)
                if last:
                    out.last_chain.add(cur)
                first = False
                ch = vis_kids.get(cur, ())
                if len(ch) == 1:
                    cur = ch[0]
                elif len(ch) > 1:
                    # the active path continues at this level; only side branches are indented
                    act = next((c for c in ch if c in out.active), None)
                    if act is not None:
                        pending.append((cur, [c for c in ch if c != act]))
                        cur = act
                    else:
                        pending.append((cur, list(ch)))
                        cur = None
                else:
                    cur = None
        out.groups[key] = rows
    return out


def preview_text(value: Any, limit: int = 160) -> str:
    """A one-line preview of an entry value (first text of the message, or what it is)."""
    if type(value) is not dict:
        return repr(value)[:limit]
    t = value.get("type")
    text = ""
    if t == "message":
        m = value.get("message")
        if type(m) is not dict:
            return "(damaged message)"
        role = m.get("role")
        if role == "bashExecution":
            text = "$ " + str(m.get("command", ""))
        elif role == "system":
            text = system_preview(m)
        else:
            c = m.get("content")
            if type(c) is str:
                text = c
            elif type(c) is list:
                parts = []
                for b in c:
                    if type(b) is not dict:
                        continue
                    bt = b.get("type")
                    if bt == "text" and isinstance(b.get("text"), str):
                        parts.append(b["text"])
                    elif bt == "toolCall":
                        args = b.get("arguments")
                        arg = ""
                        if type(args) is dict and args:
                            k, v = next(iter(args.items()))
                            arg = f" {k}={str(v)[:60]}"
                        parts.append(f"→ {b.get('name', '?')}{arg}")
                    elif bt == "image":
                        parts.append("[image]")
                    elif bt == "thinking" and not parts:
                        continue
                text = "  ".join(parts)
                if not text and any(type(b) is dict and b.get("type") == "thinking" for b in c):
                    text = "(thinking only)"
            if role == "toolResult":
                text = f"{m.get('toolName', 'tool')}: {text}"
    elif t == "compaction":
        text = f"compaction · {value.get('tokensBefore', '?')} tokens before · "
        if is_retain_none(value):
            text += "retain-none (keeps no entry) · "
        if value.get("systemMessage"):
            text += "system snapshot · "
        text += str(value.get("summary", ""))
    elif t == "usage":
        text = usage_preview(value)
    elif t == "context_edit":
        text = context_edit_preview(value)
    elif t == "branch_summary":
        text = "branch summary · " + str(value.get("summary", ""))
    elif t == "model_change":
        text = f"model → {value.get('provider', '?')}/{value.get('modelId', '?')}"
    elif t == "thinking_level_change":
        text = f"thinking level → {value.get('thinkingLevel', '?')}"
    elif t == "label":
        text = f"label {value.get('label')!r} on {value.get('targetId')}"
    elif t == "session_info":
        text = f"session name → {value.get('name', '')!r}"
    elif t == "custom_message":
        c = value.get("content")
        text = f"[{value.get('customType', 'custom')}] " + (
            c
            if isinstance(c, str)
            else " ".join(b.get("text", "") for b in c if type(b) is dict)
            if isinstance(c, list)
            else ""
        )
    elif t == "custom":
        text = f"custom state [{value.get('customType', '?')}]"
    else:
        text = str(t)
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def _names(items: Any, limit: int = 4) -> str:
    names = [str(t.get("name", "?")) if type(t) is dict else "?" for t in items]
    more = f", +{len(names) - limit}" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def system_preview(m: dict[str, Any]) -> str:
    """A pi 1.6.0 system message in one line: its prompt sections and tool changes."""
    parts = ["system"]
    c = m.get("content")
    text = (
        c
        if type(c) is str
        else " ".join(b["text"] for b in c if type(b) is dict and isinstance(b.get("text"), str))
        if type(c) is list
        else ""
    )
    secs = m.get("sections")
    if type(secs) is dict and secs:
        set_ = [str(k) for k, v in secs.items() if v is not None]
        removed = [str(k) for k, v in secs.items() if v is None]
        if set_:
            parts.append(f"sections {', '.join(set_)}")
        if removed:
            parts.append(f"removes section {', '.join(removed)}")
    added, removed_tools = m.get("toolsAdded"), m.get("toolsRemoved")
    if type(added) is list and added:
        parts.append(f"+{len(added)} tool{'s' * (len(added) != 1)} ({_names(added)})")
    if type(removed_tools) is list and removed_tools:
        parts.append(f"−{len(removed_tools)} tool{'s' * (len(removed_tools) != 1)} ({_names(removed_tools)})")
    if text.strip():
        parts.append(text)
    return " · ".join(parts)


def usage_preview(value: dict[str, Any]) -> str:
    """A pi 1.6.0 `usage` entry in one line: what, which model, how much."""
    u = value.get("usage")
    total = u.get("totalTokens", "?") if type(u) is dict else "?"
    cost = u.get("cost") if type(u) is dict else None
    money = cost.get("total") if type(cost) is dict else None
    text = f"usage · {value.get('kind', '?')} · {value.get('provider', '?')}/{value.get('model', '?')}"
    text += f" · {total:,} tokens" if type(total) is int else f" · {total} tokens"
    if type(money) in (int, float):
        text += f" · ${money:g}"
    return text


def context_edit_preview(value: dict[str, Any]) -> str:
    """A pi 1.6.0 `context_edit` entry in one line: what it does to which entry."""
    target = value.get("targetId", "?")
    rep = value.get("replacement", UNDEFINED)
    if rep is UNDEFINED:
        return f"context edit · on {target}, without a replacement"
    if rep is None:
        return f"context edit · hides {target} from the LLM"
    c = rep.get("content") if type(rep) is dict else None
    text = (
        c
        if type(c) is str
        else " ".join(b["text"] for b in c if type(b) is dict and isinstance(b.get("text"), str))
        if type(c) is list
        else ""
    )
    return f"context edit · replaces the content of {target}: {text}"
