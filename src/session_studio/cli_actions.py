"""The CLI's writing commands: compact, branch-to, fork, label, rename, upgrade, repair, export."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .cli_common import whole_number
from .cli_output import err, out
from .llm.limits import DEFAULT_DEADLINE_S, DEFAULT_IDLE_TIMEOUT_S

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ACTION_PARSERS", "add_provider_options"]


def _summary_from_file(path: Path) -> str:
    """A summary the user wrote (--summary-file): UTF-8 text with something in it. An empty one
    would be committed as an empty summary, which pi stores and then shows nothing in the history's
    place (the window refuses it too); bytes that are not UTF-8 were an internal error."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read the summary file {path}: {e.strerror}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"the summary file {path} is not UTF-8 text (at byte {e.start:,})") from e
    if not text.strip():
        raise ValueError(
            f"the summary file {path} is empty: pi would put an empty summary in the history's place"
        )
    return text


def _path(text: str) -> Path:
    """argparse's `type` for file options: pathlib is imported when one is given, not by every command."""
    from pathlib import Path

    return Path(text)


def _print(msg: str) -> None:
    err(msg)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def add_provider_options(p: argparse.ArgumentParser) -> None:
    """The summarizer's provider options (also `info --tokens provider`'s)."""
    _add_provider_options(p)


def _add_provider_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("summarizer")
    g.add_argument(
        "--provider",
        choices=["offline", "openai", "anthropic"],
        help="offline (default when nothing is configured), an OpenAI-compatible server, or Anthropic",
    )
    g.add_argument(
        "--base-url", metavar="URL", help="API base URL (OpenAI-compatible servers, proxies, mocks)"
    )
    g.add_argument("--model", metavar="ID", help="model id")
    g.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="read the API key from this environment variable (needed for a --base-url that is not the "
        "provider's own host: OPENAI_API_KEY etc. go only to their providers)",
    )
    g.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_DEADLINE_S,
        metavar="SEC",
        help=f"overall deadline of each LLM call, retries included (default {DEFAULT_DEADLINE_S:g})",
    )
    g.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=DEFAULT_IDLE_TIMEOUT_S,
        metavar="SEC",
        help=f"give up when the server sends nothing for this long (default {DEFAULT_IDLE_TIMEOUT_S:g})",
    )
    g.add_argument(
        "--prompts",
        type=_path,
        metavar="DIR",
        help="override prompt texts from DIR (system.md, history.md, update.md, turn-prefix.md, branch.md)",
    )


def _summarizer(a: argparse.Namespace, session: Any) -> tuple[Any, Any]:
    from .llm.config import make_summarizer

    resolved = resolved_provider(a, session)
    summarizer = make_summarizer(resolved)
    if hasattr(summarizer, "retry_note"):  # an HTTP summarizer: its retries said as they happen
        summarizer.retry_note = lambda text: err(f"session-studio: {text}")
    return summarizer, resolved


def resolved_provider(a: argparse.Namespace, session: Any) -> Any:
    """The provider from the summarizer options, else pi's settings (warnings printed)."""
    from pathlib import Path

    from .llm.base import RequestLimits
    from .llm.config import ProviderConfig, resolve_provider

    cwd = Path(str((session.header or {}).get("cwd") or ".")) if session.header else None
    config = None
    if a.provider or a.base_url or a.model or a.api_key_env:
        config = ProviderConfig(
            provider=a.provider or ("openai" if a.base_url else "offline"),
            base_url=a.base_url,
            model=a.model,
            api_key_env=a.api_key_env,
        )
    # the limits apply whichever way the provider is found (flags, or pi's settings.json)
    limits = RequestLimits(deadline_s=a.timeout, idle_timeout_s=a.idle_timeout)
    resolved = resolve_provider(config, cwd=cwd if cwd and cwd.is_dir() else None, limits=limits)
    for warning in resolved.warnings:
        _print(f"session-studio: {warning}")
    return resolved


def _can_ask() -> bool:
    return bool(sys.stdin) and sys.stdin.isatty()


def _cannot_ask(dry_run: bool) -> str:
    """What to do when there is no terminal to answer; ``dry_run``: the command has --dry-run."""
    return "not a terminal: add --yes to write" + (", or --dry-run to only preview" if dry_run else "")


def _confirm(question: str, yes: bool, *, dry_run: bool = False) -> bool:
    """``dry_run``: the command has --dry-run (the hint names it)."""
    if yes:
        return True
    if not _can_ask():
        _print(_cannot_ask(dry_run))
        return False
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _cmd_compact(a: argparse.Namespace) -> int:
    from .cli_common import profile_for, settings_for
    from .core import Session
    from .core.context import build_session_context
    from .core.jsvalue import js_stringify
    from .core.messages import convert_to_llm
    from .engine.compaction import commit_compaction, draft_compaction, summarize_draft

    session = Session.open(a.session)  # a file that is not there is said first
    if not (a.yes or a.dry_run or a.json or _can_ask()):
        # asked before the model is paid for the summary the answer would throw away
        _print(_cannot_ask(dry_run=True) + "; nothing was sent or written")
        return 1
    profile = profile_for(session, a).profile
    settings = settings_for(session, a, profile)
    a.keep_recent, a.reserve = settings.keep_recent, settings.reserve
    summarizer, resolved = _summarizer(a, session)
    info = resolved.model_info
    prompts = _prompts(a)
    ctx = build_session_context(session) if a.leaf is None else build_session_context(session, a.leaf)
    thinking = ctx.thinking_level if isinstance(ctx.thinking_level, str) else None
    draft = draft_compaction(
        session,
        leaf_id=a.leaf,
        keep_recent_tokens=a.keep_recent,
        reserve_tokens=a.reserve,
        cut_entry_id=a.cut,
        custom_instructions=a.instructions,
        model_max_tokens=(info.max_tokens if info and info.max_tokens else 0),
        model_reasoning=bool(info and info.reasoning),
        thinking_level=thinking,
        prompts=prompts,
        profile=profile,
    )
    if not a.json:
        _print_recovery_note(draft, settings)
        _print(
            f"compacting {len(draft.preparation.messages_to_summarize)} message(s)"
            + (
                f" + turn prefix of {len(draft.preparation.turn_prefix_messages)}"
                if draft.cut.is_split_turn
                else ""
            )
            + f", keeping from {draft.first_kept_entry_id} ({resolved.provider}"
            + (f" {resolved.model}" if resolved.model else "")
            + ") …"
        )

    mid_line = [False]  # the streamed text left the cursor inside a line

    def on_text(i: int, text: str) -> None:
        if not a.json and a.stream and text:
            err(text, end="")
            mid_line[0] = not text.endswith("\n")

    if a.expect_cut is not None and draft.first_kept_entry_id != a.expect_cut:
        # the summary was made for another plan (pi appended, compacted or moved the leaf since):
        # written against this cut, the entries between the two cuts would be neither summarised nor kept
        _print(
            f"session-studio compact: the plan now keeps from {draft.first_kept_entry_id}, not from "
            f"{a.expect_cut} (--expect-cut): the session changed since that plan; nothing was sent or "
            "written. Make the summary again (--dry-run) for this plan."
        )
        return 1
    if a.summary_file is not None:
        from .engine.compaction import CompactionOutcome

        if a.expect_cut is None and not a.json:
            _print(
                f"note: the summary in {a.summary_file} is written for the cut at "
                f"{draft.first_kept_entry_id}; if it was made for another cut, pass that one as "
                "--expect-cut to refuse instead"
            )
        try:
            text = _summary_from_file(a.summary_file)
        except ValueError as e:
            err(f"session-studio: {e}; nothing was written")
            return 1
        outcome = CompactionOutcome(draft, text)
    else:
        try:
            outcome = summarize_draft(draft, summarizer, on_text=on_text)
        finally:
            if mid_line[0]:
                err("")  # what comes next (an error, Ctrl+C, the preview) on a line of its own
            close = getattr(summarizer, "close", None)
            if close:
                close()
    if a.edit:
        outcome.summary = _edit_text(outcome.summary)
    after = outcome.context_after()
    preview = _compaction_preview(draft, outcome, resolved.provider, resolved.model)
    if not a.json:
        _show_preview(preview)
    entry = None
    if not a.dry_run:
        if _confirm(f"Append this compaction to {a.session}?", a.yes, dry_run=True):
            entry = commit_compaction(outcome)
            _print_notes(session)
            if not a.json:
                _print(f"appended compaction {entry['id']} at the end of {a.session}")
        elif not a.json:
            _print("nothing written")
            return 1
    elif not a.json:
        _print(
            "dry run: nothing written. To commit this summary after editing it: --summary-file FILE "
            f"--expect-cut {draft.first_kept_entry_id} (refuses if the session changed the plan)"
        )
    if a.json:
        result = {
            "entry": entry,
            "preview": preview,
            "context": after.to_json(),
            "llmMessages": convert_to_llm(after.messages(), draft.profile),
        }
        sys.stdout.buffer.write((js_stringify(result) or "null").encode("utf-8", "surrogatepass") + b"\n")
    return 0


def _compaction_preview(draft: Any, outcome: Any, provider: str, model: str | None) -> dict[str, Any]:
    """What the compaction would do, as the JSON preview (the human-readable one prints the same)."""
    from .core.cut_points import cut_point_reason
    from .core.overview import explain_cut

    session = draft.session
    recs = session.records
    prep = draft.preparation
    first_kept = recs[draft.path[draft.cut.first_kept_index]]
    if draft.manual:
        planner = getattr(draft.plan, "planner", None)
        reason = (
            planner.reason(draft.cut.first_kept_index)
            if draft.profile.projection and planner is not None
            else cut_point_reason(first_kept)
        )
        why = [f"manual cut (--cut) at {first_kept.id}: {reason}"]
    else:
        why = explain_cut(session, draft.path, draft.keep_recent_tokens, draft.profile)
    split = bool(draft.cut.is_split_turn)
    turn_start = recs[draft.path[draft.cut.turn_start_index]].id if split else None
    read, modified = draft.file_lists()
    return {
        "firstKeptEntryId": draft.first_kept_entry_id,
        "cutReason": why,
        "isSplitTurn": split,
        "turnStartEntryId": turn_start,
        "manualCut": draft.manual,
        "tokensBefore": prep.tokens_before,
        "estimatedTokensAfter": outcome.estimated_tokens_after(),
        "summary": outcome.summary,
        "readFiles": read,
        "modifiedFiles": modified,
        "messagesToSummarizeCount": len(prep.messages_to_summarize),
        "turnPrefixMessagesCount": len(prep.turn_prefix_messages),
        "requests": [
            {"kind": r.kind, "maxTokens": r.max_tokens, "reasoning": r.reasoning} for r in draft.requests
        ],
        "provider": provider,
        "model": model,
        "piVersion": draft.profile.version,
    }


def _show_preview(preview: dict[str, Any]) -> None:
    """The preview for a person: the facts on stderr, the summary alone on stdout (to save or edit)."""
    from .core.explain import fmt_count

    def files(names: list[Any]) -> str:
        return ", ".join(str(n) for n in names) if names else "(none)"

    kind = "manual cut" if preview["manualCut"] else "automatic cut (keepRecentTokens)"
    _print(f"cut: keep from entry {preview['firstKeptEntryId']} — {kind}")
    for line in preview["cutReason"]:
        _print(f"  {line}")
    if preview["isSplitTurn"] and not preview["turnPrefixMessagesCount"]:
        _print("split turn: yes, with an empty prefix (one history request, as for an unsplit cut)")
    elif preview["isSplitTurn"]:
        _print(
            f"split turn: yes — the turn started at entry {preview['turnStartEntryId']}; its prefix of "
            f"{preview['turnPrefixMessagesCount']} message(s) is summarised separately"
        )
    else:
        _print("split turn: no")
    _print(f"summarised: {preview['messagesToSummarizeCount']} message(s)")
    model = f" {preview['model']}" if preview.get("model") else ""
    _print(f"summary by: {preview['provider']}{model}")
    _print(f"read files: {files(preview['readFiles'])}")
    _print(f"modified files: {files(preview['modifiedFiles'])}")
    # counts as the cut's lines above print them (core.explain)
    before, after = fmt_count(preview["tokensBefore"]), fmt_count(preview["estimatedTokensAfter"])
    _print(f"tokens: {before} before → ~{after} after")
    _print("summary (on stdout):")
    sys.stderr.flush()
    out(preview["summary"])
    sys.stdout.flush()


def _print_notes(session: Any) -> None:
    """What the writer found out about where entries landed (e.g. after lines pi appended meanwhile)."""
    for note in session.notes:
        _print(f"note: {note}")


def _prompts(a: argparse.Namespace) -> Any:
    from .llm.prompts import Prompts, load_prompt_overrides

    return load_prompt_overrides(a.prompts) if a.prompts else Prompts()


def _edit_text(text: str) -> str:
    """Let the user edit `text` in $VISUAL / $EDITOR (as git does)."""
    import os
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as fh:
        fh.write(text)
        name = fh.name
    try:
        try:
            subprocess.run([*shlex.split(editor), name], check=True)
        except (OSError, ValueError, subprocess.CalledProcessError) as exc:
            from .core.errors import SessionStudioError

            raise SessionStudioError(f"the editor {editor!r} failed ({exc}); nothing was written") from exc
        with open(name, encoding="utf-8") as fh:
            return fh.read()
    finally:
        os.unlink(name)


def _cmd_branch_to(a: argparse.Namespace) -> int:
    from .cli_common import branch_budget_for, profile_for
    from .core import Session
    from .core.context import build_session_context
    from .engine.edits import branch_to

    session = Session.open(a.session)
    profile = profile_for(session, a).profile
    window, reserve, source = branch_budget_for(session, a, profile)
    if a.summarize:
        _print(f"branch summary budget: {window - reserve:,} tokens ({source})")
    summarizer, resolved = _summarizer(a, session) if a.summarize else (None, None)
    info = resolved.model_info if resolved is not None else None
    thinking = build_session_context(session).thinking_level if a.summarize else None
    outcome = branch_to(
        session,
        a.entry_id,
        summarize=a.summarize,
        summarizer=summarizer,
        custom_instructions=a.instructions,
        label=a.label,
        context_window=window,
        reserve_tokens=reserve,
        dry_run=a.dry_run,
        prompts=_prompts(a),
        profile=profile,
        model_reasoning=bool(info and info.reasoning),
        thinking_level=thinking if isinstance(thinking, str) else None,
    )
    _print(outcome.note)
    _print_notes(session)
    if outcome.navigation.editor_text:
        _print(f"(pi would put this back in the editor: {outcome.navigation.editor_text[:200]!r})")
    if outcome.summary:
        out(outcome.summary)
    return 0


def _cmd_fork(a: argparse.Namespace) -> int:
    from .cli_common import profile_for
    from .core import Session
    from .engine.edits import fork_loses_kept_entries, fork_to_file, fork_warning

    session = Session.open(a.session)
    leaf = a.leaf if a.leaf is not None else session.leaf_id
    if not isinstance(leaf, str):
        _print("session-studio fork: the session has no leaf entry to fork from; nothing written")
        return 1
    profile = profile_for(session, a).profile
    written = fork_to_file(session, leaf, a.out, profile=profile)
    warning = fork_warning(fork_loses_kept_entries(session, leaf), profile)
    if warning:
        _print(f"session-studio fork: {warning}")
    out(str(written))
    return 0


def _cmd_label(a: argparse.Namespace) -> int:
    from .core import Session
    from .engine.edits import append_label

    session = Session.open(a.session)
    text = (a.text or "").strip() or None  # as pi's /tree label box (and the window) take it
    entry = append_label(session, a.entry_id, text)
    _print_notes(session)
    _print(("label set" if text else "label cleared") + f" (entry {entry['id']})")
    return 0


def _print_recovery_note(draft: Any, settings: Any) -> None:
    """A manual compaction (pi's /compact) keeps a failed last answer; pi 1.6.0's automatic
    recovery omits it first (engine.context_edits): say so where that differs."""
    from .core.errors import WriteError
    from .core.explain import planned_recovery, recovery_text
    from .engine.context_edits import recovery_omission, recovery_plan

    if draft.planner is None or not draft.profile.projection:
        return
    state = draft.planner.plan(settings.plan_params())
    try:
        omitted = recovery_omission(state)
    except WriteError:
        return
    recovery = planned_recovery(state, recovery_plan) if omitted else None
    if omitted and recovery is not None:
        ids = ", ".join(str(draft.session.records[r].id) for r in omitted)
        then = recovery_text(state, recovery)
        _print(
            f"note: pi 1.6.0's own recovery from the failed last answer would first take {ids} out of the "
            f"context (session-studio omit-attempt does that), then compact: {then}. "
            "This compacts as pi's /compact does, with them"
        )


def _cmd_omit_attempt(a: argparse.Namespace) -> int:
    from .cli_common import profile_for, settings_for
    from .core import Session
    from .core.explain import overflow_text, planned_recovery, recovery_text
    from .core.plan import PathPlanner
    from .engine.context_edits import append_omissions, recovery_omission, recovery_plan

    session = Session.open(a.session)
    choice = profile_for(session, a)
    if not choice.profile.projection:
        _print(
            f"session-studio omit-attempt: this file is read as pi {choice.profile.version} ({choice.reason}); "
            "context edits are pi 1.6.0's, and pi 0.80.2 would not read them. Pass --pi-version 1.6.0 "
            "if pi 1.6.0 runs this session. Nothing was written."
        )
        return 2
    settings = settings_for(session, a, choice.profile)
    state = PathPlanner(session, profile=choice.profile).plan(settings.plan_params())
    if state.error is not None:
        _print(f"session-studio omit-attempt: {state.error}. Nothing was written.")
        return 1
    targets = recovery_omission(state)
    if not targets:
        found = state.overflow
        why = (
            "its last answer is no context overflow and no length stop pi 1.6.0 recovers from"
            if found is None
            else f"{overflow_text(state)}; it keeps that answer"
        )
        _print(f"session-studio omit-attempt: nothing to omit: {why}. Nothing was written.")
        return 1
    ids = [session.records[r].id for r in targets]
    if a.dry_run:
        recovery = planned_recovery(state, recovery_plan)
        assert recovery is not None  # (there are targets)
        _print(
            f"would omit {', '.join(map(str, ids))} from the context (dry run: nothing written); then, "
            f"{recovery_text(state, recovery)}"
        )
        return 0
    written = append_omissions(session, ids)
    _print_notes(session)
    _print(
        f"omitted {', '.join(map(str, ids))} from the context with {len(written)} context edit"
        f"{'s' if len(written) != 1 else ''} ({written[-1]['id']} is the new leaf), as pi 1.6.0's "
        "recovery does before it compacts: plan the compaction now (session-studio compact)"
        + (
            ""
            if settings.auto_compaction
            else "; pi itself would not have: automatic compaction is off in its settings"
        )
    )
    return 0


def _cmd_rename(a: argparse.Namespace) -> int:
    from .core import Session
    from .engine.edits import append_session_name

    session = Session.open(a.session)
    if not a.name.strip():  # pi's /name writes nothing for a blank name
        _print("session-studio rename: the name is blank; nothing written")
        return 2
    entry = append_session_name(session, a.name)
    _print_notes(session)
    _print(f"session name set to {entry['name']!r}")
    return 0


def _cmd_upgrade(a: argparse.Namespace) -> int:
    from .core import Session
    from .engine.edits import upgrade_legacy_file

    session = Session.open(a.session)
    if not _confirm(f"Rewrite {a.session} as version 3 (a backup is kept)?", a.yes):
        return 1
    path, backup = upgrade_legacy_file(session)
    _print(f"upgraded {path}; the original is kept as {backup}")
    return 0


def _cmd_repair(a: argparse.Namespace) -> int:
    from .core import Session
    from .engine.edits import repair_torn_tail

    session = Session.open(a.session)
    if session.torn_tail is None:
        _print(f"{a.session} does not end with an interrupted append of Session Studio's; nothing to repair")
        return 1
    _print(repair_torn_tail(session))
    return 0


def _cmd_export(a: argparse.Namespace) -> int:
    """A report of the path, the plan or the context (Markdown or one HTML file), from the same
    PathPlanner as `plan` and the window."""
    import io

    from .cli_common import profile_for, settings_for
    from .core import Session
    from .core.plan import PathPlanner
    from .engine.context_edits import recovery_plan
    from .export import ExportOptions, export_report, write_report

    # as --help says: HTML for .html/.htm, else Markdown (a report.txt is text, not a web page)
    fmt = a.format or ("html" if a.out and a.out.lower().endswith((".html", ".htm")) else "md")
    session = Session.open(a.session)
    profile = profile_for(session, a).profile
    settings = settings_for(session, a, profile)
    leaf = session.require(a.leaf) if a.leaf is not None else None
    planner = PathPlanner(session, leaf, profile=profile)
    manual = None
    if a.cut is not None:
        manual = planner.positions.get(session.require(a.cut))
        why = "this entry is not on the path" if manual is None else planner.manual_cut_error(manual)
        if why is not None:
            err(f"session-studio: cannot cut at {a.cut}: {why}")
            return 1
    try:
        summary = _summary_from_file(a.summary_file) if a.summary_file is not None else None
    except ValueError as e:
        err(f"session-studio: {e}")
        return 1
    summary_tokens = float(-(-len(summary) // 4)) if summary else None
    params = settings.plan_params(manual, summary_tokens)
    options = ExportOptions(what=a.what, fmt=fmt, summary=summary, recovery=recovery_plan)
    if not a.out or a.out == "-":
        stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogatepass", newline="\n")
        try:
            write_report(stream, planner, params, options)
            stream.flush()
        finally:
            stream.detach()
        return 0
    written = export_report(a.out, planner, params, options)
    _print(f"wrote {written} ({written.stat().st_size:,} bytes, {a.what} report as {fmt})")
    return 0


def _compact_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("compact", help="summarise and append a CompactionEntry (previews first)")
    p.add_argument("session")
    plan_options(p, pi_defaults=True)
    p.add_argument("--cut", metavar="ENTRY_ID", help="a manual cut: keep from this valid cut point")
    p.add_argument("--instructions", metavar="TEXT", help="extra focus for the summary (pi's /compact TEXT)")
    _add_provider_options(p)
    p.add_argument("--dry-run", action="store_true", help="preview only; write nothing")
    p.add_argument("--yes", action="store_true", help="append without asking")
    p.add_argument("--json", action="store_true", help="print entry, preview and the context after as JSON")
    p.add_argument("--stream", action="store_true", help="show the summary on stderr as it streams")
    p.add_argument("--edit", action="store_true", help="edit the summary in $EDITOR before it is written")
    p.add_argument(
        "--summary-file",
        type=_path,
        metavar="FILE",
        help="use this text as the summary (e.g. an edited --dry-run preview) instead of calling the LLM",
    )
    p.add_argument(
        "--expect-cut",
        metavar="ENTRY_ID",
        help="refuse unless the plan keeps from this entry: the firstKeptEntryId of the --dry-run the "
        "summary file came from (pi may have changed the plan since)",
    )
    p.set_defaults(func=_cmd_compact)


def _branch_to_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser(
        "branch-to", help="move to an entry as pi's /tree does, optionally with a branch summary"
    )
    p.add_argument("session")
    p.add_argument("entry_id")
    p.add_argument(
        "--summarize", action="store_true", help="summarise the abandoned branch (writes a branch_summary)"
    )
    p.add_argument("--instructions", metavar="TEXT")
    p.add_argument("--label", metavar="TEXT", help="label to attach (persists the move)")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument(
        "--context-window",
        type=whole_number(1),
        metavar="N",
        help="the branch summary's budget is this minus branchSummary.reserveTokens (default: the "
        "session model's window, else 128000 as pi)",
    )
    _add_provider_options(p)
    p.set_defaults(func=_cmd_branch_to)


def _fork_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("fork", help="write the path to an entry as a new session file")
    p.add_argument("session")
    p.add_argument(
        "--leaf",
        metavar="ID",
        help="the entry whose path is written (default: the session's leaf; a version 1 file's ids "
        "are made anew on every open, so fork its leaf this way)",
    )
    p.add_argument(
        "--out", metavar="NEW.jsonl", help="default: a new file next to SESSION, named as pi names them"
    )
    p.set_defaults(func=_cmd_fork)


def _label_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("label", help="set (or clear, with an empty TEXT) an entry's label")
    p.add_argument("session")
    p.add_argument("entry_id")
    p.add_argument("text", nargs="?", default="")
    p.set_defaults(func=_cmd_label)


def _omit_attempt_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser(
        "omit-attempt",
        help="take the failed last answer (and its tool results) out of the context with context edits, "
        "as pi 1.6.0 does before it compacts for an overflow",
    )
    p.add_argument("session")
    p.add_argument(
        "--context-window", type=whole_number(1), metavar="N", help="default: the session model's window"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be omitted and where pi's compaction after it would cut; write nothing",
    )
    p.set_defaults(func=_cmd_omit_attempt, keep_recent=None, reserve=None, leaf=None)


def _rename_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("rename", help="set the session's display name")
    p.add_argument("session")
    p.add_argument("name")
    p.set_defaults(func=_cmd_rename)


def _upgrade_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser("upgrade", help="rewrite a version 1/2 file as version 3, keeping a backup")
    p.add_argument("session")
    p.add_argument("--yes", action="store_true")
    p.set_defaults(func=_cmd_upgrade)


def _export_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser(
        "export", help="a shareable report: the path, the plan or the context, as Markdown or one HTML file"
    )
    p.add_argument("session")
    plan_options(p, pi_defaults=True)
    p.add_argument(
        "--what",
        choices=["path", "plan", "context"],
        default="plan",
        help="path: every entry with its content; plan: the token bar, the cut and why, files, quirks; "
        "context: what the LLM sees now and after the planned compaction (default plan)",
    )
    p.add_argument(
        "--format", choices=["md", "html"], help="default: from OUT's extension (.html/.md), else md"
    )
    p.add_argument("-o", "--out", metavar="OUT", help="the report file (default: stdout)")
    p.add_argument("--cut", metavar="ENTRY_ID", help="a manual cut: plan with this valid cut point")
    p.add_argument(
        "--summary-file",
        type=_path,
        metavar="FILE",
        help="a summary for the context after compaction (default: a placeholder)",
    )
    p.set_defaults(func=_cmd_export)


def _repair_parser(sub: Any, plan_options: Any) -> None:
    p = sub.add_parser(
        "repair", help="cut off a line Session Studio was appending when it was interrupted (kill, crash)"
    )
    p.add_argument("session")
    p.set_defaults(func=_cmd_repair)


#: each writing command's parser, by name: a command builds only its own (cli.build_parser)
ACTION_PARSERS: dict[str, Callable[[Any, Any], None]] = {
    "compact": _compact_parser,
    "branch-to": _branch_to_parser,
    "fork": _fork_parser,
    "label": _label_parser,
    "omit-attempt": _omit_attempt_parser,
    "rename": _rename_parser,
    "upgrade": _upgrade_parser,
    "export": _export_parser,
    "repair": _repair_parser,
}
