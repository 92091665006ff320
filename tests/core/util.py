"""Build session files for tests (entries chained like pi's appends)."""

from __future__ import annotations

import json
from typing import Any

from session_studio.core import Session

HEADER = {
    "type": "session",
    "version": 3,
    "id": "sess-1",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/p",
}


def ts(n: int) -> str:
    return f"2025-01-01T00:00:{n % 60:02d}.{n // 60:03d}Z"


def U(text: str | int, **kw: Any) -> dict[str, Any]:
    t = "x" * text if isinstance(text, int) else text
    return {"type": "message", "message": {"role": "user", "content": t, "timestamp": 1}, **kw}


def A(
    text: str | int = "ok", total: int = 2, stop: str = "stop", blocks: list[Any] | None = None, **kw: Any
) -> dict[str, Any]:
    t = "x" * text if isinstance(text, int) else text
    msg = {
        "role": "assistant",
        "content": blocks if blocks is not None else [{"type": "text", "text": t}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": total,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": stop,
        "timestamp": 2,
    }
    return {"type": "message", "message": msg, **kw}


def T(text: str | int, **kw: Any) -> dict[str, Any]:
    t = "x" * text if isinstance(text, int) else text
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "content": [{"type": "text", "text": t}],
            "isError": False,
            "timestamp": 3,
        },
        **kw,
    }


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c", "name": name, "arguments": args}


def chain(*entries: dict[str, Any], header: dict[str, Any] | None = HEADER) -> list[dict[str, Any]]:
    """Give entries ids e0, e1, … and chain parentIds unless given."""
    out = []
    prev = None
    for n, e in enumerate(entries):
        e = dict(e)
        e.setdefault("id", f"e{n}")
        if "parentId" not in e:
            e["parentId"] = prev
        e.setdefault("timestamp", ts(n))
        ordered = {
            "type": e.pop("type"),
            "id": e.pop("id"),
            "parentId": e.pop("parentId"),
            "timestamp": e.pop("timestamp"),
            **e,
        }
        out.append(ordered)
        prev = ordered["id"]
    return ([header] if header else []) + out


def to_bytes(values: list[Any]) -> bytes:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode()


def session_of(*entries: dict[str, Any], header: dict[str, Any] | None = HEADER) -> Session:
    return Session.from_bytes(to_bytes(chain(*entries, header=header)))
