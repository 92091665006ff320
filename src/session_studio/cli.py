"""`session-studio` command line: the desktop app, and headless commands over the core."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .cli_common import settings_for

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_PI_ERROR = 3
_READ_ONLY = frozenset({"plan", "context", "branch", "info"})


def _write_json(obj: Any) -> None:
    from .core.jsvalue import js_stringify

    text = js_stringify(obj) or "null"
    sys.stdout.buffer.write(text.encode("utf-8", "surrogatepass") + b"\n")
    sys.stdout.flush()


def _open(path: str, *, keep_values: bool | None = None) -> Any:
    from .core import Session

    return Session.open(path, keep_values=keep_values)


def _cmd_plan(a: argparse.Namespace) -> int:
    from .core.oracle_schema import PLAN_FIELDS, plan_output

    fields = [f.strip() for f in a.fields.split(",") if f.strip()] if a.fields and a.fields != "all" else None
    if fields:
        bad = [f for f in fields if f not in PLAN_FIELDS]
        if bad:
            print(
                f"session-studio plan: unknown field(s) {', '.join(bad)}; known: {','.join(PLAN_FIELDS)}",
                file=sys.stderr,
            )
            return EXIT_USAGE
    heavy = {"migratedEntries", "context", "llmMessages", "preparation"}
    keep = None if not fields or heavy & set(fields) else False
    session = _open(a.session, keep_values=keep)
    out, code = plan_output(
        session,
        leaf=a.leaf,
        keep_recent=a.keep_recent,
        reserve=a.reserve,
        context_window=a.context_window,
        fields=fields,
        sweep_limit=a.sweep_limit,
    )
    _write_json(out)
    return code


def _cmd_context(a: argparse.Namespace) -> int:
    from .core.oracle_schema import context_output

    out, code = context_output(_open(a.session), leaf=a.leaf)
    _write_json(out)
    return code


def _cmd_branch(a: argparse.Namespace) -> int:
    from .core.oracle_schema import branch_output

    out, code = branch_output(_open(a.session), a.from_id, a.to_id, a.budget)
    _write_json(out)
    return code


def _cmd_info(a: argparse.Namespace) -> int:
    from .core.overview import render_overview

    session = _open(a.session)
    keep, reserve, window, source = settings_for(session, a)
    sys.stdout.write(
        render_overview(session, keep_recent=keep, reserve=reserve, context_window=window, leaf=a.leaf)
    )
    sys.stdout.write(f"settings:    {source}\n")
    return EXIT_OK


def _add_plan_options(p: argparse.ArgumentParser, *, pi_defaults: bool = False) -> None:
    """The planning options; `pi_defaults`: unset options come from pi's settings and the model."""
    if pi_defaults:
        p.add_argument("--leaf", metavar="ID", help="plan for this entry instead of the session's leaf")
        p.add_argument(
            "--keep-recent", type=int, metavar="N", help="keepRecentTokens (default: pi's settings)"
        )
        p.add_argument("--reserve", type=int, metavar="N", help="reserveTokens (default: pi's settings)")
        p.add_argument("--context-window", type=int, metavar="N", help="default: the session model's window")
        return
    p.add_argument("--leaf", metavar="ID", help="plan for this entry instead of the session's leaf")
    p.add_argument(
        "--keep-recent", type=int, default=20000, metavar="N", help="keepRecentTokens (default 20000)"
    )
    p.add_argument("--reserve", type=int, default=16384, metavar="N", help="reserveTokens (default 16384)")
    p.add_argument(
        "--context-window",
        type=int,
        default=200000,
        metavar="N",
        help="the model's context window (default 200000)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="session-studio",
        description="See, plan and commit compactions of pi coding-agent sessions. "
        "Without a command, opens the desktop app (on FILE if given).",
    )
    parser.add_argument("--version", action="version", version=f"session-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("plan", help="the compaction plan as JSON (the pi-oracle's plan schema)")
    p.add_argument("session")
    _add_plan_options(p)
    p.add_argument("--fields", metavar="a,b", help="only these fields (comma-separated)")
    p.add_argument(
        "--sweep-limit",
        type=int,
        default=20000,
        metavar="N",
        help="skip the sweep above this many thresholds (default 20000)",
    )
    p.set_defaults(func=_cmd_plan)

    p = sub.add_parser("context", help="what the LLM sees for a leaf, as JSON")
    p.add_argument("session")
    p.add_argument("--leaf", metavar="ID")
    p.set_defaults(func=_cmd_context)

    p = sub.add_parser("branch", help="the entries a branch summary would cover, as JSON")
    p.add_argument("session")
    p.add_argument("--from", dest="from_id", required=True, metavar="ID", help="the leaf being left")
    p.add_argument("--to", dest="to_id", required=True, metavar="ID", help="the navigation target")
    p.add_argument("--budget", type=int, default=0, metavar="N", help="token budget (0 = unlimited)")
    p.set_defaults(func=_cmd_branch)

    p = sub.add_parser("info", help="a human-readable overview of a session")
    p.add_argument("session")
    _add_plan_options(p, pi_defaults=True)
    p.set_defaults(func=_cmd_info)

    from .cli_actions import add_action_parsers

    add_action_parsers(sub, _add_plan_options)
    return parser


COMMANDS = frozenset(
    {"plan", "context", "branch", "info", "compact", "branch-to", "fork", "label", "rename", "upgrade"}
)


def opens_window(argv: Sequence[str]) -> bool:
    """Whether these arguments start the desktop app rather than a command (scripts/run asks too)."""
    first = argv[0] if argv else ""
    return first not in COMMANDS and first not in ("-h", "--help", "--version")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if opens_window(args_list):
        from .ui.launch import launch_gui  # the desktop app: FILE, --screenshot, --size, --theme

        return launch_gui(args_list)
    a = parser.parse_args(args_list)
    if a.command is None:
        parser.print_help()
        return EXIT_USAGE
    from .core.errors import EntryNotFoundError, SessionFileError, SessionLoadError, SessionStudioError
    from .llm.errors import LlmError

    try:
        code = int(a.func(a))
        if argv is None and a.command in _READ_ONLY:
            # read-only commands on big files: skip freeing 100k index objects at exit
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    except LlmError as e:
        print(f"session-studio: {e.user_message} (nothing was written)", file=sys.stderr)
        return EXIT_FAILURE
    except EntryNotFoundError as e:
        if a.command in ("plan", "context", "branch"):
            _write_json({"version": 1, "piVersion": "0.80.2", "command": a.command, "error": str(e)})
            return EXIT_PI_ERROR
        print(f"session-studio: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except SessionFileError as e:
        print(f"session-studio: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except SessionLoadError as e:
        if a.command in ("plan", "context", "branch"):
            _write_json({"version": 1, "piVersion": "0.80.2", "command": a.command, "error": str(e)})
            return EXIT_PI_ERROR
        where = f" (line {e.line})" if e.line else ""
        print(f"session-studio: pi cannot open this file{where}: {e}", file=sys.stderr)
        return EXIT_PI_ERROR
    except SessionStudioError as e:
        print(f"session-studio: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:
        print(f"session-studio: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
