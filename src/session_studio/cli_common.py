"""What the command-line modules share (`cli` and `cli_actions` both import this; it imports neither)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["settings_for"]


def settings_for(session: Any, a: argparse.Namespace) -> tuple[int, int, int, str]:
    """keepRecentTokens, reserveTokens, context window: the options, else pi's settings and model."""
    from pathlib import Path

    from .core.context import build_session_context
    from .llm.config import compaction_settings, model_info

    cwd_s = (session.header or {}).get("cwd") if session.header else None
    cwd = Path(cwd_s) if isinstance(cwd_s, str) and cwd_s and Path(cwd_s).is_dir() else None
    pi = compaction_settings(cwd)
    keep = a.keep_recent if a.keep_recent is not None else pi.keep_recent_tokens
    reserve = a.reserve if a.reserve is not None else pi.reserve_tokens
    notes = [
        "keepRecentTokens/reserveTokens "
        + ("from the options" if a.keep_recent or a.reserve else "from pi's settings")
    ]
    window = a.context_window
    if window is None:
        window = 200000
        try:
            model = build_session_context(session).model
        except Exception:  # a damaged path: the overview reports it
            model = None
        info = (
            model_info(str(model.get("provider")), str(model.get("modelId")))
            if isinstance(model, dict)
            else None
        )
        if info is not None and info.context_window:
            window = info.context_window
            notes.append(f"context window of {model['provider']}/{model['modelId']}")
        else:
            notes.append("context window 200,000 (model unknown; use --context-window)")
    return keep, reserve, window, "; ".join(notes)
