"""The JSON of the pi-oracle (`plan`, `context`, `branch`), built from the core.

This is the contract of `shared/oracle/SCHEMA.md`: the same fields, computed the
same way, with a field pi would throw on reported in `errors` instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .branch_summary import collect_entries_for_branch_summary, prepare_branch_entries
from .context import SessionContext, build_session_context
from .cut_points import CutPoint
from .defaults import DEFAULT_CONTEXT_WINDOW, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS
from .errors import EntryNotFoundError
from .file_ops import compute_file_lists, format_file_operations
from .ids import now_iso, uuidv7
from .jsvalue import UNDEFINED, JsTypeError, js_string
from .messages import convert_to_llm
from .preparation import Boundary, CompactionPlan, plan_compaction
from .profile import PROFILE_0_80_2, PiProfile
from .projected_plan import ProjectedCompactionPlan, plan_projected_compaction
from .projection import Projection, build_session_projection
from .serialize import serialize_conversation
from .session import Session
from .tokens import estimate_tokens_16, should_compact

__all__ = ["OPT_IN_PLAN_FIELDS", "PLAN_FIELDS", "branch_output", "context_output", "plan_output"]

SCHEMA_VERSION = 1
PLAN_FIELDS = [
    "settings",
    "sourceVersion",
    "migrated",
    "sessionReset",
    "header",
    "entryCount",
    "migratedEntries",
    "leafId",
    "pathIds",
    "entryTokens",
    "context",
    "llmMessages",
    "contextTokens",
    "contextTokensPlain",
    "shouldCompact",
    "projectedEntryIds",
    "cut",
    "rawCut",
    "sweep",
    "preparation",
]
#: the 1.6.0 oracle's extra fields (its README): printed under the 1.6.0 profile only, as the
#: 0.80.2 oracle knows none of them
#: the fields of `branch` (the oracle's names, in its order)
BRANCH_FIELDS = (
    "commonAncestorId",
    "entryIds",
    "entries",
    "messages",
    "llmMessages",
    "serialized",
    "fileOps",
    "readFiles",
    "modifiedFiles",
    "fileOpsFormatted",
    "totalTokens",
)
#: fields printed only when asked for by name (not the oracle's): a preparation's counts
OPT_IN_PLAN_FIELDS = ("prepared",)
PI16_PLAN_FIELDS = frozenset({"contextTokensPlain", "projectedEntryIds", "rawCut"})
DEFAULT_RESERVE = DEFAULT_RESERVE_TOKENS
DEFAULT_KEEP_RECENT = DEFAULT_KEEP_RECENT_TOKENS
DEFAULT_SWEEP_LIMIT = 20000


class _Fields:
    """Lazily computed fields; one that raises is recorded and re-raised to dependants."""

    def __init__(self, computers: dict[str, Callable[[], Any]]) -> None:
        self.computers = computers
        self.memo: dict[str, tuple[bool, Any]] = {}

    def get(self, name: str) -> Any:
        if name in self.memo:
            ok, v = self.memo[name]
            if not ok:
                raise v
            return v
        try:
            v = self.computers[name]()
        except (JsTypeError, EntryNotFoundError, RecursionError) as e:
            self.memo[name] = (False, e)
            raise
        self.memo[name] = (True, v)
        return v

    def collect(self, names: list[str], out: dict[str, Any]) -> dict[str, str]:
        errors: dict[str, str] = {}
        for n in names:
            try:
                out[n] = self.get(n)
            except (JsTypeError, EntryNotFoundError, RecursionError) as e:
                errors[n] = str(e)
        return errors


def _id_of(rec_id: Any) -> Any:
    return None if rec_id is UNDEFINED else rec_id


def reset_header() -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": uuidv7(), "timestamp": now_iso(), "cwd": os.getcwd()}


def _finish(out: dict[str, Any], errors: dict[str, str]) -> tuple[dict[str, Any], int]:
    if errors:
        out["error"] = next(iter(errors.values()))
        out["errors"] = errors
        return out, 3
    return out, 0


def _refusal(session: Session, profile: PiProfile) -> str | None:
    """1.6.0 refuses a non-empty file without a valid header (rule 8); 0.80.2 resets it."""
    if profile.refuses_headerless_files and session.reset and session.size > 0:
        return f"Session file is not a valid pi session: {session.path}"
    return None


def _common_fields(session: Session, leaf: Any) -> dict[str, Callable[[], Any]]:
    fields: dict[str, Callable[[], Any]] = {}
    fields["sourceVersion"] = lambda: session.source_version
    fields["migrated"] = lambda: session.migrated
    fields["sessionReset"] = lambda: session.reset
    header = session.header if session.header is not None else reset_header()
    fields["header"] = lambda: header
    fields["entryCount"] = lambda: len(session.records)
    fields["leafId"] = lambda: _id_of(leaf)
    return fields


def _leaf_for(session: Session, leaf: str | None) -> Any:
    if leaf is None:
        return session.leaf_id
    session.require(leaf)  # SessionManager.branch throws "Entry X not found"
    return leaf


def plan_output(
    session: Session,
    *,
    leaf: str | None = None,
    keep_recent: int = DEFAULT_KEEP_RECENT,
    reserve: int = DEFAULT_RESERVE,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    fields: list[str] | None = None,
    sweep_limit: int = DEFAULT_SWEEP_LIMIT,
    profile: PiProfile = PROFILE_0_80_2,
) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {"version": SCHEMA_VERSION, "piVersion": profile.version, "command": "plan"}
    refused = _refusal(session, profile)
    if refused is not None:
        out["error"] = refused
        return out, 3
    try:
        leaf_id = _leaf_for(session, leaf)
    except EntryNotFoundError as e:
        out["error"] = str(e)
        return out, 3
    recs = session.records
    f: dict[str, Callable[[], Any]] = _common_fields(session, leaf_id)
    memo = _Fields(f)

    def path() -> list[int]:
        return session.path_indices(session.leaf_index(leaf_id))

    def context() -> SessionContext | Projection:
        # a leaf that exists: buildSessionPath's path is getBranch's (walked once, not twice on a
        # big path); a missing one falls back to the last entry there, not here
        shared = memo.get("path") if session.leaf_index(leaf_id) is not None else None
        if profile.projection:
            return build_session_projection(session, leaf_id, path=shared)
        return build_session_context(session, leaf_id, path=shared)

    def entry_tokens() -> dict[str, Any]:
        res: dict[str, Any] = {}
        for i in memo.get("path"):
            r = recs[i]
            if r.type == "message":
                if profile.system_messages and r.role == "system":
                    res[js_string(r.id)] = estimate_tokens_16(session.value(i)["message"])
                else:
                    res[js_string(r.id)] = r.token_value()
        return res

    def _session_context() -> SessionContext:
        ctx = memo.get("ctx")
        assert isinstance(ctx, SessionContext)
        return ctx

    def context_tokens() -> dict[str, Any]:
        ctx: SessionContext | Projection = memo.get("ctx")
        if isinstance(ctx, Projection):
            return ctx.estimate_projected_context_tokens(memo.get("path")).to_json()
        return ctx.estimate_tokens().to_json()

    def plan() -> CompactionPlan | ProjectedCompactionPlan:
        if profile.projection:
            # the context's projection is over the same path when the leaf exists: built once
            shared = memo.get("ctx") if session.leaf_index(leaf_id) is not None else None
            assert shared is None or isinstance(shared, Projection)
            return plan_projected_compaction(session, memo.get("path"), shared)
        # the context's is prepareCompaction's buildSessionContext(pathEntries) when the leaf exists
        return plan_compaction(
            session, memo.get("path"), _session_context if session.leaf_index(leaf_id) is not None else None
        )

    def cut() -> dict[str, Any]:
        p = memo.get("plan")
        c = p.cut(keep_recent)
        if isinstance(p, ProjectedCompactionPlan):
            return _projected_cut_json(p, c)
        return _cut_json(p, c)

    def row_id(p: CompactionPlan | ProjectedCompactionPlan, k: int) -> Any:
        return p.source_id(k) if isinstance(p, ProjectedCompactionPlan) else _path_id(p, k)

    def sweep() -> Any:
        p = memo.get("plan")
        planner = p.planner
        n = len(planner.thresholds())
        if planner.stop_error is not None:
            raise planner.stop_error
        if sweep_limit > 0 and n > sweep_limit:
            return {
                "skipped": {"reason": "too many candidate thresholds", "candidates": n, "limit": sweep_limit}
            }
        rows = []
        for k, c in planner.sweep():
            rows.append(
                {
                    "keepRecentTokens": k,
                    "firstKeptEntryId": row_id(p, c.first_kept_index),
                    "isSplitTurn": c.is_split_turn,
                    "turnStartEntryId": row_id(p, c.turn_start_index) if c.turn_start_index >= 0 else None,
                }
            )
        return rows

    def preparation() -> Any:
        p = memo.get("plan")
        prep = p.prepare(keep_recent)
        return None if prep is None else prep.to_json()

    def prepared() -> Any:
        prep = memo.get("plan").prepare(keep_recent)
        return None if prep is None else prep.counts_json()

    def projected_plan() -> ProjectedCompactionPlan:
        p = memo.get("plan")
        assert isinstance(p, ProjectedCompactionPlan)  # only asked for under the 1.6.0 profile
        return p

    def raw_cut() -> dict[str, Any]:
        p = projected_plan()
        c, b = p.raw_cut(keep_recent)
        return _path_cut_json(session, p.path, b, c)

    f.update(
        {
            "settings": lambda: {
                "enabled": True,
                "reserveTokens": reserve,
                "keepRecentTokens": keep_recent,
                "contextWindow": context_window,
                "leaf": leaf,
            },
            "migratedEntries": session.entries,
            "path": path,
            "pathIds": lambda: [_id_of(recs[i].id) for i in memo.get("path")],
            "entryTokens": entry_tokens,
            "ctx": context,
            "context": lambda: memo.get("ctx").to_json(),
            "llmMessages": lambda: convert_to_llm(memo.get("ctx").messages(), profile),
            "contextTokens": context_tokens,
            # estimateContextTokens of the context messages, from the projection the plan built
            "contextTokensPlain": lambda: projected_plan().projection.estimate_context_tokens().to_json(),
            "projectedEntryIds": lambda: projected_plan().projection.source_ids(),
            "rawCut": raw_cut,
            "shouldCompact": lambda: should_compact(
                memo.get("contextTokens")["tokens"], context_window, reserve
            ),
            "plan": plan,
            "cut": cut,
            "sweep": sweep,
            "preparation": preparation,
            "prepared": prepared,
        }
    )
    known = PLAN_FIELDS if profile.projection else [x for x in PLAN_FIELDS if x not in PI16_PLAN_FIELDS]
    wanted = known if not fields else [x for x in [*known, *OPT_IN_PLAN_FIELDS] if x in fields]
    errors = memo.collect(wanted, out)
    if "sweep" in out and isinstance(out["sweep"], dict) and "skipped" in out["sweep"]:
        out["sweepSkipped"] = out["sweep"]["skipped"]
        out["sweep"] = None
    return _finish(out, errors)


def _path_id(p: CompactionPlan, k: int) -> Any:
    return _id_at(p.session, p.path, k)


def _id_at(session: Session, path: list[int], k: int) -> Any:
    if 0 <= k < len(path):
        return _id_of(session.records[path[k]].id)
    return None


def _cut_json(p: CompactionPlan, c: CutPoint) -> dict[str, Any]:
    return _path_cut_json(p.session, p.path, p.boundary, c)


def _path_cut_json(session: Session, path: list[int], boundary: Boundary, c: CutPoint) -> dict[str, Any]:
    """A cut in path indices (0.80.2's `cut`, 1.6.0's `rawCut`)."""
    return {
        "firstKeptEntryIndex": c.first_kept_index,
        "firstKeptEntryId": _id_at(session, path, c.first_kept_index),
        "turnStartIndex": c.turn_start_index,
        "turnStartEntryId": _id_at(session, path, c.turn_start_index) if c.turn_start_index >= 0 else None,
        "isSplitTurn": c.is_split_turn,
        "boundaryStart": boundary.start,
        "boundaryEnd": boundary.end,
    }


def _projected_cut_json(p: ProjectedCompactionPlan, c: CutPoint) -> dict[str, Any]:
    """The 1.6.0 oracle's cut: projected indices mapped back to the path, and the projected ones."""
    return {
        "firstKeptEntryIndex": p.path_index(c.first_kept_index),
        "firstKeptEntryId": p.source_id(c.first_kept_index),
        "turnStartIndex": p.path_index(c.turn_start_index),
        "turnStartEntryId": p.source_id(c.turn_start_index) if c.turn_start_index >= 0 else None,
        "isSplitTurn": c.is_split_turn,
        "boundaryStart": p.path_index(p.boundary.start),
        "boundaryEnd": len(p.path),
        "projected": {
            "firstKeptEntryIndex": c.first_kept_index,
            "turnStartIndex": c.turn_start_index,
            "boundaryStart": p.boundary.start,
            "boundaryEnd": p.boundary.end,
        },
    }


def context_output(
    session: Session, *, leaf: str | None = None, profile: PiProfile = PROFILE_0_80_2
) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {"version": SCHEMA_VERSION, "piVersion": profile.version, "command": "context"}
    refused = _refusal(session, profile)
    if refused is not None:
        out["error"] = refused
        return out, 3
    try:
        leaf_id = _leaf_for(session, leaf)
    except EntryNotFoundError as e:
        out["error"] = str(e)
        return out, 3
    f = _common_fields(session, leaf_id)
    memo = _Fields(f)
    f["pathIds"] = lambda: [
        _id_of(session.records[i].id) for i in session.path_indices(session.leaf_index(leaf_id))
    ]
    f["ctx"] = lambda: (
        build_session_projection(session, leaf_id)
        if profile.projection
        else build_session_context(session, leaf_id)
    )
    f["context"] = lambda: memo.get("ctx").to_json()
    f["llmMessages"] = lambda: convert_to_llm(memo.get("ctx").messages(), profile)
    names = [
        "sourceVersion",
        "migrated",
        "sessionReset",
        "header",
        "entryCount",
        "leafId",
        "pathIds",
        "context",
        "llmMessages",
    ]
    return _finish(out, memo.collect(names, out))


def branch_output(
    session: Session, from_id: str, to_id: str, budget: int = 0, profile: PiProfile = PROFILE_0_80_2
) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "piVersion": profile.version,
        "command": "branch",
        "fromId": from_id,
        "targetId": to_id,
        "budget": budget,
    }
    refused = _refusal(session, profile)
    if refused is not None:
        out["error"] = refused
        return out, 3
    f: dict[str, Callable[[], Any]] = {}
    memo = _Fields(f)
    f["collected"] = lambda: collect_entries_for_branch_summary(session, from_id, to_id)
    f["commonAncestorId"] = lambda: _id_of(memo.get("collected").common_ancestor_id)
    f["entryIds"] = lambda: [_id_of(session.records[i].id) for i in memo.get("collected").indices]
    f["entries"] = lambda: session.values(memo.get("collected").indices)
    f["prepared"] = lambda: prepare_branch_entries(session, memo.get("collected").indices, budget, profile)
    f["messages"] = lambda: memo.get("prepared").messages
    f["llmMessages"] = lambda: convert_to_llm(memo.get("prepared").messages, profile)
    f["serialized"] = lambda: serialize_conversation(memo.get("llmMessages"), profile)
    f["fileOps"] = lambda: memo.get("prepared").file_ops.to_json()
    f["fileLists"] = lambda: compute_file_lists(memo.get("prepared").file_ops)
    f["readFiles"] = lambda: memo.get("fileLists")[0]
    f["modifiedFiles"] = lambda: memo.get("fileLists")[1]
    f["fileOpsFormatted"] = lambda: format_file_operations(memo.get("readFiles"), memo.get("modifiedFiles"))
    f["totalTokens"] = lambda: memo.get("prepared").total_tokens
    return _finish(out, memo.collect(list(BRANCH_FIELDS), out))
