"""`session-studio` command line: the desktop app, and headless commands over the core."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .cli_common import profile_for, settings_for, whole_number
from .cli_output import err, out, terminal_safe
from .core.allocator import HEAP_PAD, tune_allocator

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_PI_ERROR = 3
_READ_ONLY = frozenset({"plan", "context", "branch", "info", "export", "search"})
#: commands that import no module that logs: they start without importing logging (a test holds
#: them to it); the others route its records through cli_log's terminal-safe handler
_NEVER_LOG = frozenset({"plan", "context", "branch"})
#: short reads of one session. They run without Python's cyclic garbage collector: they make no
#: reference cycles to speak of (the same peak RSS with and without it on the 1 GB session's cold
#: plan and a 112 MB damaged one), while its passes over the ~100 modules they import and the
#: objects of a walk took 5-10% of their time (a cached plan's ~90 ms, a 1 GB cold one's 1.9 s).
#: And on a huge-page heap (core.allocator: page faults were a cold 1 GB plan's 0.8 s of system time)
_SHORT_READS = frozenset({"plan", "context", "branch"})
#: `plan --fields` names outside the oracle's schema (never in the default output: they load a tokenizer)
_OPT_IN_PLAN_FIELDS = ("tokens",)


def _write_json(obj: Any) -> None:
    """``JSON.stringify(obj)`` and a newline to stdout, written as it is made: `plan` of a 100 MB
    session prints ~110 MB, which held at once (its pieces, the text, its UTF-8) took 1.4 GB."""
    from .core.jsvalue import js_stringify_to

    stream = sys.stdout.buffer

    def write(text: str) -> None:
        stream.write(text.encode("utf-8", "surrogatepass"))

    if not js_stringify_to(obj, write):
        write("null")
    stream.write(b"\n")
    stream.flush()


def _open(path: str, *, keep_values: bool | None = None) -> Any:
    from .core import Session

    return Session.open(path, keep_values=keep_values)


def _cmd_plan(a: argparse.Namespace) -> int:
    from .core.oracle_schema import OPT_IN_PLAN_FIELDS, PLAN_FIELDS, plan_output

    fields = [f.strip() for f in a.fields.split(",") if f.strip()] if a.fields and a.fields != "all" else None
    if fields:
        known = [*PLAN_FIELDS, *OPT_IN_PLAN_FIELDS, *_OPT_IN_PLAN_FIELDS]
        bad = [f for f in fields if f not in known]
        if bad:
            err(f"session-studio plan: unknown field(s) {', '.join(bad)}; known: {','.join(known)}")
            return EXIT_USAGE
    heavy = {"migratedEntries", "context", "llmMessages", "preparation", "tokens"}
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
        profile=profile_for(session, a).profile,
    )
    if fields and "tokens" in fields and "error" not in out:
        from .core.plan import PlanParams
        from .core.real_tokens import plan_tokens_json

        params = PlanParams(a.keep_recent, a.reserve, a.context_window)
        leaf = session.leaf_id if a.leaf is None else a.leaf
        out["tokens"] = plan_tokens_json(session, leaf, params, profile_for(session, a).profile)
    _write_json(out)
    return code


def _cmd_context(a: argparse.Namespace) -> int:
    from .core.oracle_schema import context_output

    session = _open(a.session)
    out, code = context_output(session, leaf=a.leaf, profile=profile_for(session, a).profile)
    _write_json(out)
    return code


def _cmd_branch(a: argparse.Namespace) -> int:
    from .core.oracle_schema import branch_output

    session = _open(a.session)
    out, code = branch_output(session, a.from_id, a.to_id, a.budget, profile_for(session, a).profile)
    _write_json(out)
    return code


def _cmd_info(a: argparse.Namespace) -> int:
    from .core.overview import render_overview
    from .engine.context_edits import recovery_plan

    session = _open(a.session)
    choice = profile_for(session, a)
    keep, reserve, window, source, auto, max_tokens = settings_for(session, a, choice.profile)
    if a.leaf is not None and session.get_index(a.leaf) is None:
        err(f"session-studio info: no entry {a.leaf!r} in {a.session}")
        return EXIT_FAILURE
    out(f"pi profile:  {choice.profile.version} ({choice.reason})")
    out(
        render_overview(
            session,
            keep_recent=keep,
            reserve=reserve,
            context_window=window,
            leaf=a.leaf,
            profile=choice.profile,
            auto_compaction=auto,
            model_max_tokens=max_tokens,
            recovery=recovery_plan,
        ),
        end="",
    )
    out(f"settings:    {source}")
    if a.tokens in ("real", "provider"):
        code = _print_real_tokens(session, a.leaf, keep, reserve, window, choice.profile)
        if a.tokens == "provider" and code == EXIT_OK:
            return _print_provider_tokens(a, session, keep, reserve, window, choice.profile)
        return code
    return EXIT_OK


def _print_provider_tokens(
    a: argparse.Namespace, session: Any, keep: int, reserve: int, window: int, profile: Any
) -> int:
    """`info --tokens provider`: the path counted by the configured provider (Anthropic's count_tokens)."""
    from .cli_actions import resolved_provider
    from .core.plan import PathPlanner, PlanParams
    from .engine.token_count import count_with_provider
    from .llm.errors import LlmError

    leaf_index = None if a.leaf is None else session.require(a.leaf)
    state = PathPlanner(session, leaf_index, profile=profile).plan(PlanParams(keep, reserve, window))
    try:
        got = count_with_provider(state, resolved_provider(a, session))
    except LlmError as e:
        err(f"session-studio info: {e.user_message}")
        return EXIT_FAILURE
    drift = got.tokens - got.estimate
    pct = f" ({drift / got.estimate:+.1%})" if got.estimate else ""
    out(
        f"provider:    {got.tokens:,} tokens by {got.provider}'s count_tokens ({got.model}) vs pi estimate "
        f"{got.estimate:,.0f}: drift {drift:+,.0f}{pct} (the provider adds a few tokens per message)"
    )
    return EXIT_OK


def _print_real_tokens(
    session: Any, leaf: str | None, keep: int, reserve: int, window: int, profile: Any
) -> int:
    """`info --tokens real`: real counts next to pi's estimate, and the decisions they change."""
    from .core.errors import EntryNotFoundError
    from .core.plan import PathPlanner, PlanParams
    from .core.real_tokens import TokenizerUnavailableError, measure

    try:
        leaf_index = None if leaf is None else session.require(leaf)
    except EntryNotFoundError:
        return EXIT_PI_ERROR  # the overview has said so
    planner = PathPlanner(session, leaf_index, profile=profile)
    if planner.error is not None:
        out(f"real tokens: not counted, {planner.error}")
        return EXIT_OK
    try:
        result = measure(planner, PlanParams(keep, reserve, window))
    except TokenizerUnavailableError as e:
        err(f"session-studio info: {e}")
        return EXIT_FAILURE
    for line in result.describe():
        out(line)
    return EXIT_OK


def _add_plan_options(p: argparse.ArgumentParser, *, pi_defaults: bool = False) -> None:
    """The planning options; `pi_defaults`: unset options come from pi's settings and the model."""
    if pi_defaults:
        p.add_argument("--leaf", metavar="ID", help="plan for this entry instead of the session's leaf")
        p.add_argument(
            "--keep-recent",
            type=whole_number(0),
            metavar="N",
            help="keepRecentTokens (default: pi's settings)",
        )
        p.add_argument(
            "--reserve", type=whole_number(0), metavar="N", help="reserveTokens (default: pi's settings)"
        )
        p.add_argument(
            "--context-window", type=whole_number(1), metavar="N", help="default: the session model's window"
        )
        return
    p.add_argument("--leaf", metavar="ID", help="plan for this entry instead of the session's leaf")
    from .core.defaults import DEFAULT_CONTEXT_WINDOW, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS

    p.add_argument(
        "--keep-recent",
        type=whole_number(0),
        default=DEFAULT_KEEP_RECENT_TOKENS,
        metavar="N",
        help=f"keepRecentTokens (default {DEFAULT_KEEP_RECENT_TOKENS}, pi's own: this command answers as "
        "the pi-oracle does and does not read settings.json; info and compact do)",
    )
    p.add_argument(
        "--reserve",
        type=whole_number(0),
        default=DEFAULT_RESERVE_TOKENS,
        metavar="N",
        help=f"reserveTokens (default {DEFAULT_RESERVE_TOKENS})",
    )
    p.add_argument(
        "--context-window",
        type=whole_number(1),
        default=DEFAULT_CONTEXT_WINDOW,
        metavar="N",
        help=f"the model's context window (default {DEFAULT_CONTEXT_WINDOW})",
    )


def _help_width() -> int:
    """The width argparse's help uses by default (``shutil.get_terminal_size().columns - 2``),
    without importing shutil: argparse makes a formatter for each option it adds, and the first
    one imported shutil (bz2, lzma, fnmatch with it), ~4 ms of each command's start."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class _HelpFormatter(argparse.HelpFormatter):
    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, _help_width() if width is None else width)


class _ArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser (the commands' too) whose help formatter does not import shutil."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; `command`: only that command's parser is built (a command's
    start needs no other: the ~100 other options took ~8 ms of each run), None: all of them."""
    parser = _ArgumentParser(
        prog="session-studio",
        description="See, plan and commit compactions of pi coding-agent sessions. "
        "Without a command, opens the desktop app (on FILE if given).",
        epilog="the desktop app: session-studio [FILE.jsonl] [--theme light|dark|system] "
        "[--size WxH] [--screenshot OUT.png] (session-studio FILE.jsonl --help says more)",
    )
    parser.add_argument("--version", action="version", version=f"session-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    parsers: dict[str, Callable[[Any, Any], None]] = {
        "plan": _plan_parser,
        "context": _context_parser,
        "branch": _branch_parser,
        "info": _info_parser,
        "search": _search_parser,
    }
    if command not in parsers:  # the writing commands' module (and the LLM limits it names): ~10 ms
        from .cli_actions import ACTION_PARSERS

        parsers.update(ACTION_PARSERS)
    for name, add in parsers.items():
        if command is None or name == command:
            add(sub, _add_plan_options)
    from .core.profile import PIN_SETTINGS

    for command_parser in sub.choices.values():
        command_parser.add_argument(
            "--pi-version",
            choices=PIN_SETTINGS,
            default="auto",
            help="read the file as this pi does (default auto: 1.6.0 when the file has 1.6.0 "
            "entries, else the pi installed here, else the newest)",
        )
    return parser


def _plan_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("plan", help="the compaction plan as JSON (the pi-oracle's plan schema)")
    p.add_argument("session")
    plan_options(p)
    p.add_argument("--fields", metavar="a,b", help="only these fields (comma-separated)")
    p.add_argument(
        "--sweep-limit",
        type=whole_number(0),
        default=20000,
        metavar="N",
        help="skip the sweep above this many thresholds (default 20000)",
    )
    p.set_defaults(func=_cmd_plan)


def _context_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("context", help="what the LLM sees for a leaf, as JSON")
    p.add_argument("session")
    p.add_argument("--leaf", metavar="ID")
    p.set_defaults(func=_cmd_context)


def _branch_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("branch", help="the entries a branch summary would cover, as JSON")
    p.add_argument("session")
    p.add_argument("--from", dest="from_id", required=True, metavar="ID", help="the leaf being left")
    p.add_argument("--to", dest="to_id", required=True, metavar="ID", help="the navigation target")
    p.add_argument(
        "--budget", type=whole_number(0), default=0, metavar="N", help="token budget (0 = unlimited)"
    )
    p.set_defaults(func=_cmd_branch)


def _info_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("info", help="a human-readable overview of a session")
    p.add_argument("session")
    plan_options(p, pi_defaults=True)
    p.add_argument(
        "--tokens",
        choices=("estimate", "real", "provider"),
        default="estimate",
        help="real: also count the context with a real tokenizer (o200k/cl100k) next to pi's chars/4; "
        "provider: and send it to the configured Anthropic provider's count_tokens endpoint",
    )
    from .cli_actions import add_provider_options

    add_provider_options(p)
    p.set_defaults(func=_cmd_info)


def _search_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser(
        "search",
        help="the entries that hold a text anywhere in their content (a tool's output, a call's "
        "arguments, a summary), upper and lower case alike",
    )
    p.add_argument("session", help="a session file, or a folder: its sessions that hold the text")
    p.add_argument("text")
    p.add_argument("--json", action="store_true", help="the matches as JSON")
    p.add_argument(
        "--max", type=whole_number(0), default=0, metavar="N", help="print at most N matches (0: all)"
    )
    p.set_defaults(func=_cmd_search)


def _search_folder(a: argparse.Namespace) -> int:
    """`search FOLDER TEXT`: the session files under it (pi's sessions folder: one folder per
    project) that hold the text, newest first, as the session browser's In content finds them."""
    from .core.content_search import file_holds_text

    files = []
    for root, _dirs, names in os.walk(a.session):
        files += [os.path.join(root, n) for n in names if n.endswith(".jsonl")]
    files.sort(key=lambda f: os.stat(f).st_mtime, reverse=True)
    found = []
    for f in files:
        try:
            if file_holds_text(f, a.text):
                found.append(f)
        except OSError as e:
            err(f"session-studio search: {f}: {e.strerror or e}")
        if a.max > 0 and len(found) >= a.max:
            break
    if a.json:
        _write_json({"version": 1, "command": "search", "query": a.text, "files": found})
    else:
        for f in found:
            out(f)
        err(f"{len(found):,} of {len(files):,} session files hold “{a.text}”")
    return EXIT_OK if found else EXIT_FAILURE


def _cmd_search(a: argparse.Namespace) -> int:
    """Like grep: status 0 with matches, 1 without; each match's line, id ("-": none, or a version
    1 file's, made anew by each open), kind and an excerpt."""
    from .core.content_search import content_matches, match_excerpt
    from .core.jsvalue import UNDEFINED

    if not a.text:
        err("session-studio search: the text to find is empty; every entry would match")
        return EXIT_USAGE
    if os.path.isdir(a.session):
        return _search_folder(a)
    session = _open(a.session)
    hits = content_matches(session, a.text)
    shown = hits[: a.max] if a.max > 0 else hits
    needle = a.text.lower()
    rows = []
    for i, value in zip(shown, session.values(shown), strict=True):
        r = session.records[i]
        kind = "?" if r.type is UNDEFINED else str(r.type)
        if r.type == "message" and r.role is not UNDEFINED:
            kind += f"/{r.role}"
        # a version 1 file's ids are made anew by every open (ours and pi's): not worth printing
        rid = None if r.id is UNDEFINED or session.id_made_on_open(i) else r.id
        rows.append((r.line, rid, kind, match_excerpt(value, needle) or ""))
    if a.json:
        _write_json(
            {
                "version": 1,
                "command": "search",
                "query": a.text,
                "count": len(hits),
                "matches": [
                    {"line": line, "id": rid, "kind": kind, "excerpt": excerpt}
                    for line, rid, kind, excerpt in rows
                ],
            }
        )
    else:
        for line, rid, kind, excerpt in rows:
            out(
                f"line {line}  {'-' if rid is None else rid}  {kind}  {terminal_safe(excerpt, one_line=True)}"
            )
        more = f" (the first {len(shown):,} printed)" if len(shown) < len(hits) else ""
        what = "1 entry holds" if len(hits) == 1 else f"{len(hits):,} entries hold"
        err(f"{what} “{a.text}”{more}")
    return EXIT_OK if hits else EXIT_FAILURE


COMMANDS = frozenset(
    {
        "plan",
        "context",
        "branch",
        "info",
        "search",
        "compact",
        "branch-to",
        "fork",
        "label",
        "omit-attempt",
        "rename",
        "upgrade",
        "repair",
        "export",
    }
)


def opens_window(argv: Sequence[str]) -> bool:
    """Whether these arguments start the desktop app rather than a command (scripts/run asks too)."""
    first = argv[0] if argv else ""
    return first not in COMMANDS and first not in ("-h", "--help", "--version")


def _mistyped_command(first: str) -> str | None:
    """The command ``first`` is a near miss of ("infoo": "info"), when it is no file to open."""
    if first.startswith("-") or os.sep in first or os.path.exists(first):
        return None
    import difflib

    close = difflib.get_close_matches(first, COMMANDS, n=1, cutoff=0.75)
    return close[0] if close else None


def _short_read(args: Sequence[str]) -> bool:
    return bool(args) and args[0] in _SHORT_READS


def heap_pad_for(args: Sequence[str]) -> int:
    """core.allocator's huge-page heap for the short reads, none for the window and the rest."""
    return HEAP_PAD if _short_read(args) else 0


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # this process is ours (not a test calling main)
        tune_allocator(heap_pad=heap_pad_for(sys.argv[1:]))
        if _short_read(sys.argv[1:]):
            gc.disable()
    writer = sys.modules.get("session_studio.core.writer")  # not imported yet: nothing written yet
    mark = writer.writes_so_far() if writer is not None else 0
    try:
        return _main(argv)
    except KeyboardInterrupt:  # also before the command runs (a Ctrl+C at once printed a traceback)
        writer = sys.modules.get("session_studio.core.writer")
        done = writer.writes_done(mark) if writer is not None else []  # this command's writes
        if done:  # the interrupt came after a write, which is whole (see core.writer)
            err(
                f"session-studio: interrupted after it wrote {'; '.join(done)}; that is complete, and nothing else was written"
            )
        else:
            err("session-studio: interrupted (nothing was written)")
        return 130


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if opens_window(args_list):
        typo = _mistyped_command(args_list[0]) if args_list else None
        if typo is not None:
            err(f"session-studio: unknown command {args_list[0]!r}; did you mean {typo!r}? (see --help)")
            return EXIT_USAGE
        from .ui.launch import launch_gui  # the desktop app: FILE, --screenshot, --size, --theme

        return launch_gui(args_list)
    parser = build_parser(args_list[0] if args_list and args_list[0] in COMMANDS else None)
    a = parser.parse_args(args_list)
    if a.command is None:
        parser.print_help()
        return EXIT_USAGE
    if argv is None and a.command not in _NEVER_LOG:
        from .cli_log import install_log_handler

        install_log_handler()
    try:
        code = int(a.func(a))
        if argv is None and a.command in _READ_ONLY:
            # read-only commands on big files: skip freeing 100k index objects at exit
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # every failure ends in one line; a traceback only on request
        return _report_failure(a, e)


_DEBUG_ENV = "SESSION_STUDIO_DEBUG"


def _report_failure(a: argparse.Namespace, e: Exception) -> int:
    """Map a failure to one line on stderr (or pi's JSON error shape) and an exit code."""
    from .core.errors import EntryNotFoundError, SessionFileError, SessionLoadError, SessionStudioError
    from .core.jsvalue import JsTypeError
    from .llm.errors import LlmError

    pi_json = a.command in ("plan", "context", "branch")
    if isinstance(e, LlmError):
        err(f"session-studio: {e.user_message} (nothing was written)")
        if a.command == "compact" and getattr(a, "json", False):
            # a script reading --json's stdout gets an answer too, not an empty stream
            _write_json({"entry": None, "error": e.user_message, "written": False})
        return EXIT_FAILURE
    if isinstance(e, (EntryNotFoundError, SessionLoadError, JsTypeError, RecursionError)) and pi_json:
        version = _failed_profile_version(a)
        _write_json({"version": 1, "piVersion": version, "command": a.command, "error": _pi_message(e)})
        return EXIT_PI_ERROR
    if isinstance(e, EntryNotFoundError):
        err(f"session-studio: {e}")
        return EXIT_FAILURE
    if isinstance(e, SessionLoadError):
        where = f" (line {e.line})" if e.line else ""
        err(f"session-studio: pi cannot open this file{where}: {e}")
        return EXIT_PI_ERROR
    if isinstance(e, (JsTypeError, RecursionError)):
        err(f"session-studio: pi would throw on this session: {_pi_message(e)} (nothing was written)")
        return EXIT_PI_ERROR
    if isinstance(e, (SessionFileError, SessionStudioError)):
        err(f"session-studio: {e}")
        return EXIT_FAILURE
    if isinstance(e, OSError):
        err(f"session-studio: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
        return EXIT_FAILURE
    if os.environ.get(_DEBUG_ENV):
        import traceback

        err("".join(traceback.format_exception(e)), end="")
    else:
        detail = terminal_safe(str(e), one_line=True)[:500]
        err(
            f"session-studio: internal error ({type(e).__name__}: {detail}). "
            f"Please report it (run again with {_DEBUG_ENV}=1 for the details)."
        )
    return EXIT_FAILURE


def _failed_profile_version(a: argparse.Namespace) -> str:
    """The pi profile of a failed command: the one chosen for its file (`profile_for`), else (the
    file could not even be read) the pinned `--pi-version`, or what auto picks for a plain file."""
    from .core.profile import default_choice, profile_named

    used = getattr(a, "pi_profile_used", None)
    if used is not None:
        return str(used.version)
    setting = getattr(a, "pi_version", "auto")
    return (profile_named(setting) if setting != "auto" else default_choice().profile).version


def _pi_message(e: BaseException) -> str:
    if isinstance(e, RecursionError):
        return "Maximum call stack size exceeded"
    return str(e)


if __name__ == "__main__":
    sys.exit(main())
