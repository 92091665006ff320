"""A small pi 1.6.0 session with every new shape (spec §10.1), for the window's tests and the
docs screenshots: a system message (sections, tools), a compaction with a system snapshot and
usage, `usage` entries, a context edit that hides a tool result and one that replaces another,
and a later system message that removes a tool and a section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import write_session

TOOLS = [
    {
        "name": "read",
        "description": "Read a file from the workspace.\nReturns its text with line numbers.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "bash",
        "description": "Run a shell command in the project directory.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
]
BASE = """You are pi, a coding agent working in the user's repository.
Work in small, verified steps: read before you edit, run the tests after every change.
Prefer the project's own tools and conventions over new dependencies.
Explain what you changed and why, briefly, when a step is done.
Never run destructive commands without asking first.
When a command fails, read its output before trying something else.
Keep answers short unless the user asks for detail.
"""
PROJECT = """Project notes (AGENTS.md):
- the webshop is a Python 3.12 package under shop/, tested with pytest;
- money is stored in cents (int), never as float;
- run `make check` before proposing a commit.
"""

SYSTEM = {
    "role": "system",
    "content": "",
    "sections": {"base": BASE, "project": PROJECT},
    "toolsAdded": TOOLS,
    "timestamp": 1_735_725_600_000,
}
SUMMARY_USAGE = {
    "input": 5200,
    "output": 640,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 5840,
    "cost": {"input": 0.0156, "output": 0.0096, "cacheRead": 0, "cacheWrite": 0, "total": 0.0252},
}


def usage_entry(total: int, cost: float) -> dict[str, Any]:
    return {
        "type": "usage",
        "kind": "cache_warm",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 10,
            "output": 1,
            "cacheRead": total - 11,
            "cacheWrite": 0,
            "totalTokens": total,
            "cost": {"total": cost},
        },
    }


# ids are e0000, e0001, … in this order (conftest.write_session)
SPEC: list[Any] = [
    {"type": "message", "message": SYSTEM},  # e0000
    ("user", 400),  # e0001
    ("assistant", 600),  # e0002
    ("user", 300),  # e0003
    ("assistant", 500),  # e0004
    {
        "type": "compaction",
        "summary": "## Goal\nShip the webshop checkout.\n\n## Progress\n- cart totals fixed",
        "firstKeptEntryId": "e0003",
        "tokensBefore": 4800,
        "details": {"readFiles": ["shop/cart.py"], "modifiedFiles": []},
        "usage": SUMMARY_USAGE,
        "fromHook": False,
        "systemMessage": {**SYSTEM, "timestamp": 1_735_725_605_000},
    },  # e0005
    ("user", 200),  # e0006
    ("assistant", 300),  # e0007
    ("toolResult", 3000),  # e0008: hidden by e0013
    usage_entry(40_011, 0.0125),  # e0009
    ("assistant", 300),  # e0010
    ("toolResult", 2000),  # e0011: replaced by e0014
    ("assistant", 400),  # e0012
    {"type": "context_edit", "targetId": "e0008", "replacement": None},  # e0013
    {
        "type": "context_edit",
        "targetId": "e0011",
        "replacement": {"content": [{"type": "text", "text": "[tool output pruned: 8000 chars]"}]},
    },  # e0014
    {
        "type": "message",
        "message": {
            "role": "system",
            "content": "",
            "sections": {"project": None},
            "toolsRemoved": [{"name": "bash"}],
            "timestamp": 1_735_725_615_000,
        },
    },  # e0015
    ("user", 250),  # e0016
    ("assistant", 350),  # e0017
    usage_entry(41_000, 0.0131),  # e0018
]


def write_pi16_session(path: Path) -> Path:
    return write_session(path, SPEC, cwd="/home/dev/projects/webshop")
