"""Tree edits pi knows how to persist: branch summaries, labels, names; forks and upgrades."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.branch_summary import collect_entries_for_branch_summary, prepare_branch_entries
from ..core.entries import BranchSummaryEntry, FileDetails, LabelEntry, SessionHeader, SessionInfoEntry
from ..core.errors import EntryNotFoundError, StaleSessionError, WriteError
from ..core.file_ops import compute_file_lists, format_file_operations
from ..core.ids import now_iso, uuidv7
from ..core.jsvalue import UNDEFINED, js_key, js_stringify
from ..core.messages import convert_to_llm
from ..core.profile import PROFILE_0_80_2, PiProfile
from ..core.serialize import serialize_conversation
from ..core.session import Session
from ..core.writer import rewrite_file, write_new_file
from ..llm.base import CancelToken, Summarizer
from ..llm.errors import LlmSummaryError
from ..llm.prompts import Prompts
from ..llm.requests import BRANCH_SUMMARY_PREAMBLE, answer_failure, branch_request
from .common import append_entry, ensure_appendable, fresh_id, loaded_fingerprint
from .compaction import combined_usage

__all__ = [
    "NO_CONTENT_SUMMARY",
    "BranchOutcome",
    "NavigationTarget",
    "append_label",
    "append_session_name",
    "branch_to",
    "default_fork_target",
    "fork_to_file",
    "navigation_target",
    "repair_torn_tail",
    "session_file_name",
    "upgrade_legacy_file",
]

NO_CONTENT_SUMMARY = "No content to summarize"
DEFAULT_BRANCH_CONTEXT_WINDOW = 128000
DEFAULT_BRANCH_RESERVE = 16384


@dataclass(frozen=True)
class NavigationTarget:
    """Where pi's /tree navigation puts the leaf for a target (spec §2.8 step 6)."""

    target_id: str
    new_leaf_id: str | None  # None: before the first entry (a new root follows)
    editor_text: str | None  # the user text pi puts back in the editor, for user/custom targets


def _text_of(content: Any, sep: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def navigation_target(session: Session, target_id: str) -> NavigationTarget:
    i = session.require(target_id)
    rec = session.records[i]
    v = session.value(i)
    parent = rec.parent_id if isinstance(rec.parent_id, str) else None
    if rec.type == "message" and rec.role == "user":
        return NavigationTarget(target_id, parent, _text_of(v["message"].get("content"), ""))
    if rec.type == "custom_message":
        return NavigationTarget(target_id, parent, _text_of(v.get("content"), ""))
    return NavigationTarget(target_id, target_id, None)


@dataclass
class BranchOutcome:
    navigation: NavigationTarget
    summary: str | None  # the branch summary text written (None: no summary requested)
    entry: dict[str, Any] | None  # the entry appended (branch_summary or label), None if nothing persisted
    summarized_ids: list[Any]
    note: str


def branch_to(
    session: Session,
    target_id: str,
    *,
    summarize: bool = False,
    summarizer: Summarizer | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
    context_window: int | None = None,
    reserve_tokens: int = DEFAULT_BRANCH_RESERVE,
    prompts: Prompts | None = None,
    summary_override: str | None = None,
    on_text: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
    dry_run: bool = False,
    from_leaf_id: str | None = None,
    refresh: bool = True,
    profile: PiProfile = PROFILE_0_80_2,
    model_reasoning: bool = False,
    thinking_level: str | None = None,
) -> BranchOutcome:
    """pi's navigateTree from the session's leaf to `target_id`, persisted as pi persists it.

    With a summary, a `branch_summary` entry is appended under the new leaf. Without
    one pi writes nothing (the leaf is not saved) unless a label is attached; we say so.
    `from_leaf_id`: the leaf being left (pi's in-memory leaf; default: the file's leaf).
    `profile`: which pi's summary is written. pi 1.6.0 (rule 41) applies the segment's context
    edits, sends no output cap (and the thinking level to a reasoning model), rejects an answer
    cut at the cap or calling a tool, stores the call's `usage`, and its `fromId` is the leaf
    being left (0.80.2: the new leaf).
    """
    ensure_appendable(session)
    fp = loaded_fingerprint(session)
    nav = navigation_target(session, target_id)
    old_leaf = session.leaf_id if from_leaf_id is None else from_leaf_id
    if js_key(old_leaf) == js_key(target_id):
        return BranchOutcome(nav, None, None, [], "the target is already the leaf; nothing to do")
    pi16 = profile.projection
    summary: str | None = None
    usage: dict[str, Any] | None = None
    summarized: list[Any] = []
    details = FileDetails()
    if summarize:
        collected = collect_entries_for_branch_summary(session, old_leaf, target_id)
        summarized = [session.records[i].id for i in collected.indices]
        if summary_override is not None:
            summary = summary_override
        elif not collected.indices:
            summary = None  # nothing abandoned: pi writes no summary
        else:
            window = context_window or DEFAULT_BRANCH_CONTEXT_WINDOW
            prepared = prepare_branch_entries(session, collected.indices, window - reserve_tokens, profile)
            read, modified = compute_file_lists(prepared.file_ops)
            if not prepared.messages:
                summary = NO_CONTENT_SUMMARY
            else:
                if summarizer is None:
                    raise WriteError("a summarizer is needed to write a branch summary")
                conv = serialize_conversation(convert_to_llm(prepared.messages, profile), profile)
                req = branch_request(
                    conv,
                    custom_instructions,
                    replace_instructions,
                    prompts or Prompts(),
                    profile,
                    model_reasoning,
                    thinking_level,
                )
                result = summarizer.summarize(req, on_text=on_text, cancel=cancel)
                failure = answer_failure(req, result, pi16)
                if failure is not None:
                    raise LlmSummaryError(failure[0], user_message=failure[1])
                summary = BRANCH_SUMMARY_PREAMBLE + result.text + format_file_operations(read, modified)
                details = FileDetails(read_files=read, modified_files=modified)
                usage = combined_usage([result.usage]) if pi16 else None
    if dry_run:
        return BranchOutcome(nav, summary, None, summarized, "dry run: nothing written")
    if summary is not None:
        entry = BranchSummaryEntry(
            id=fresh_id(session),
            parent_id=nav.new_leaf_id,
            from_id=_from_id(old_leaf if pi16 else nav.new_leaf_id),
            summary=summary,
            details=details,
            usage=usage,
            from_hook=False,
        ).to_json_dict()
        done = append_entry(session, entry, fp, refresh=False)
        note = "branch summary appended; it is the new leaf"
        if label:
            lab = LabelEntry(
                id=fresh_id(session, {entry["id"]}), parent_id=entry["id"], target_id=entry["id"], label=label
            )
            try:
                append_entry(session, lab.to_json_dict(), done.after, refresh=False)
            except (StaleSessionError, WriteError) as e:  # the summary is in the file: never "nothing"
                why = str(e).replace(" Nothing was written.", "").replace("; nothing was written", "")
                raise WriteError(
                    f"the branch summary {entry['id']} was appended and is the new leaf, but its label "
                    f"was not: {why}"
                ) from e
        if refresh:
            session.refresh()
        return BranchOutcome(nav, summary, entry, summarized, note)
    if label and nav.new_leaf_id is not None:
        # pi: branch(newLeaf) then appendLabelChange(target): the label entry is the new leaf
        lab = LabelEntry(id=fresh_id(session), parent_id=nav.new_leaf_id, target_id=target_id, label=label)
        entry = lab.to_json_dict()
        append_entry(session, entry, fp, refresh=refresh)
        return BranchOutcome(nav, None, entry, [], "label appended under the new leaf; pi reopens there")
    return BranchOutcome(
        nav,
        None,
        None,
        [],
        "pi does not save a leaf move by itself: nothing was written, and the file's leaf is unchanged "
        "(pi reopens there, and the next command appends there). Add --summarize or --label to persist "
        "the move.",
    )


def _from_id(leaf: Any) -> str:
    """`leafId ?? "root"` (pi 1.6.0: the leaf being left; 0.80.2: the new leaf)."""
    return leaf if isinstance(leaf, str) else "root"


def append_label(
    session: Session, target_id: str, label: str | None, *, refresh: bool = True
) -> dict[str, Any]:
    """pi's appendLabelChange: a label entry under the current leaf (an empty label clears)."""
    ensure_appendable(session)
    if session.get_index(target_id) is None:
        raise EntryNotFoundError(target_id)
    leaf = session.leaf_id if isinstance(session.leaf_id, str) else None
    entry = LabelEntry(
        id=fresh_id(session), parent_id=leaf, target_id=target_id, label=label or None
    ).to_json_dict()
    append_entry(session, entry, refresh=refresh)
    return entry


def append_session_name(session: Session, name: str, *, refresh: bool = True) -> dict[str, Any]:
    """pi's appendSessionInfo: runs of CR/LF become one space, then trimmed."""
    ensure_appendable(session)
    import re

    clean = re.sub(r"[\r\n]+", " ", name).strip()
    leaf = session.leaf_id if isinstance(session.leaf_id, str) else None
    entry = SessionInfoEntry(id=fresh_id(session), parent_id=leaf, name=clean).to_json_dict()
    append_entry(session, entry, refresh=refresh)
    return entry


def session_file_name(timestamp: str, session_id: str) -> str:
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def default_fork_target(session: Session) -> tuple[Path, str, str]:
    """(path, session id, timestamp) pi would use for a new session next to this one."""
    new_id, ts = uuidv7(), now_iso()
    return Path(session.path).parent / session_file_name(ts, new_id), new_id, ts


def fork_to_file(
    session: Session,
    leaf_id: str,
    out: str | os.PathLike[str] | None = None,
    *,
    session_id: str | None = None,
    timestamp: str | None = None,
    profile: PiProfile = PROFILE_0_80_2,
) -> Path:
    """pi's createBranchedSession: the path to `leaf_id` as a new session file.

    Labels are dropped from the path and the rest re-chained; labels of path
    entries are re-created at the end (with their original timestamps); the new
    header names this file as `parentSession`. Written atomically, never over an
    existing file. pi 1.6.0 also re-points a compaction whose firstKeptEntryId is
    a dropped label to the entry after it (spec §10.1 rule 7); 0.80.2 leaves it
    pointing at the label, and pi then finds no kept entry (see
    :func:`fork_loses_kept_entries`).
    """
    start = session.require(leaf_id)
    loaded_fingerprint(session)  # the values below may be re-read from the file
    path = session.path_indices(start)
    values = session.values(path)
    retained: list[dict[str, Any]] = []
    parent: Any = None
    pending_labels: list[Any] = []  # labels dropped since the last retained entry
    replacement: dict[tuple[str, Any], Any] = {}  # a dropped label's id → the entry after it (1.6.0)
    for rec_i, v in zip(path, values, strict=True):
        if session.records[rec_i].type == "label":
            pending_labels.append(v.get("id"))
            continue
        for label_id in pending_labels:
            key = _map_key(label_id)
            if key is not None:
                replacement[key] = v.get("id")
        pending_labels.clear()
        copy = dict(v)
        copy["parentId"] = parent
        if profile.projection and v.get("type") == "compaction":
            kept = v.get("firstKeptEntryId", UNDEFINED)
            key = _map_key(kept)
            if key is not None and key != ("nan", None) and key == _map_key(v.get("id", UNDEFINED)):
                pass  # === its own id (a retain-none compaction): kept as it is
            elif key is not None and key in replacement:
                copy["firstKeptEntryId"] = replacement[key]
        retained.append(copy)
        parent = v.get("id")
    new_id = session_id or uuidv7()
    ts = timestamp or now_iso()
    header = SessionHeader(
        id=new_id,
        timestamp=ts,
        cwd=str((session.header or {}).get("cwd", "") or ""),
        parent_session=os.path.abspath(session.path),
    ).to_json_dict()
    in_path = {js_key(v.get("id")) for v in retained}
    labels: list[dict[str, Any]] = []
    taken: set[str] = set()
    for key, (label, label_ts) in session.labels.items():
        if key in in_path:
            target = next(v["id"] for v in retained if js_key(v.get("id")) == key)
            lid = fresh_id(session, taken)
            taken.add(lid)
            e: dict[str, Any] = {
                "type": "label",
                "id": lid,
                "parentId": parent,
                "timestamp": label_ts,
                "targetId": target,
                "label": label,
            }
            if label_ts is UNDEFINED:
                del e["timestamp"]
            labels.append(e)
            parent = lid
    lines = [js_stringify(x) + "\n" for x in [header, *retained, *labels]]  # type: ignore[operator]
    target_path = Path(out) if out else Path(session.path).parent / session_file_name(ts, new_id)
    loaded_fingerprint(session)  # still the file the values were read from
    st = os.stat(session.path)
    write_new_file(target_path, lines, mode=st.st_mode & 0o777, owner=(st.st_uid, st.st_gid))
    return target_path


def _map_key(v: Any) -> tuple[str, Any] | None:
    """``v`` as a JavaScript Map key (SameValueZero): a string and a number never match, 1 and 1.0
    do; an object parsed from JSON matches nothing but itself (None: no key to look up)."""
    if type(v) is str:
        return ("s", v)
    if type(v) is bool:
        return ("b", v)
    if type(v) in (int, float):
        return ("n", float(v)) if v == v else ("nan", None)
    if v is None:
        return ("null", None)
    return None


def fork_loses_kept_entries(session: Session, leaf_id: str) -> list[str]:
    """The ids of the compactions on the path to ``leaf_id`` whose firstKeptEntryId is a label
    entry on that path: a fork drops labels, so under pi 0.80.2 the forked compaction keeps no
    entry (pi's own fork loses them too); 1.6.0 re-points it (see :func:`fork_to_file`)."""
    path = session.path_indices(session.require(leaf_id))
    recs = session.records
    labels = {js_key(recs[i].id) for i in path if recs[i].type == "label"}
    if not labels:
        return []
    lost = []
    for i in path:
        if recs[i].type == "compaction":
            v = session.value(i)
            if isinstance(v, dict) and js_key(v.get("firstKeptEntryId")) in labels:
                lost.append(str(recs[i].id))
    return lost


def fork_warning(lost: list[str], profile: PiProfile) -> str:
    """What a fork under ``profile`` does to the compactions :func:`fork_loses_kept_entries` names."""
    if not lost:
        return ""
    which = ", ".join(lost)
    if profile.projection:
        return (
            f"the compaction{'s' if len(lost) > 1 else ''} {which} kept from a label, which a fork drops; "
            "as pi 1.6.0 does, the fork keeps from the entry after it"
        )
    return (
        f"the compaction{'s' if len(lost) > 1 else ''} {which} kept from a label, which a fork drops: "
        "in the fork pi 0.80.2 finds no kept entry and drops the messages that compaction kept "
        "(its own fork does the same; pi 1.6.0 keeps them)"
    )


def upgrade_legacy_file(session: Session, backup_suffix: str | None = None) -> tuple[Path, Path]:
    """Rewrite a v1/v2 file as pi would on open (migrated, version 3), keeping a backup.

    This is the only in-place rewrite Session Studio does, and only on request.
    Returns (file, backup).
    """
    if session.reset:  # (a file without a header is not "migrated" either: say what it is)
        raise WriteError("this file has no valid header; it cannot be upgraded")
    if not session.migrated:
        raise WriteError("this file is already version 3; nothing to upgrade")
    src = Path(session.path)
    fp = loaded_fingerprint(session)
    version = "1" if session.source_version is None else str(session.source_version)
    stamp = now_iso()[:19].replace(":", "")
    backup = src.with_name(src.name + (backup_suffix or f".v{version}-backup-{stamp}"))
    if backup_suffix is None:  # a second upgrade in the same second: a name of its own, never a refusal
        n = 1
        while backup.exists() or backup.is_symlink():
            n += 1
            backup = src.with_name(f"{src.name}.v{version}-backup-{stamp}-{n}")
    values = [session.header, *_with_extra_headers(session)]
    lines = [js_stringify(v) + "\n" for v in values]  # type: ignore[operator]
    rewrite_file(src, lines, fp, backup)
    return src, backup


def _with_extra_headers(session: Session) -> list[Any]:
    """The entries in file order with any later session header between them, as pi's own migration
    rewrites the file: it keeps every line it parsed and sets each header's version (we ignore those
    headers as pi's tree does, so the upgrade dropped them and differed from pi's rewrite)."""
    extra = [i for i in session.issues if i.kind == "extra_header"]
    entries = session.entries()
    if not extra:
        return entries
    from ..core.reader import parse_line

    placed = [(rec.line, v) for rec, v in zip(session.records, entries, strict=True)]
    with open(session.path, "rb") as fh:
        for issue in extra:
            fh.seek(issue.offset)
            value, _kind, _msg = parse_line(fh.readline().rstrip(b"\r\n"))
            if isinstance(value, dict):
                value["version"] = 3  # migrateV1ToV2 / migrateV2ToV3 on every "session" entry
                placed.append((issue.line, value))
    placed.sort(key=lambda item: item[0])
    return [v for _, v in placed]


def repair_torn_tail(session: Session) -> str:
    """Cut off the line Session Studio was appending when it was interrupted (see core.journal).

    Only that line, only if the file is still what `session` read; returns what was done.
    """
    from ..core.journal import cut_torn_tail

    if session.torn_tail is None or session.fingerprint is None:
        raise WriteError(
            f"{session.path} does not end with an interrupted append of Session Studio's; nothing to repair"
        )
    torn = cut_torn_tail(session.path, session.fingerprint)
    return (
        f"cut {torn.size - torn.start:,} bytes of an interrupted append off {session.path}; "
        f"it is back to its {torn.start:,} bytes"
    )
