"""Which pi a session is read as: the 0.80.2 profile or the 1.6.0 profile (spec §10).

Both pis write on-disk version 3, but 1.6.0 gives a session another meaning
(projection-based context, system messages, context edits, cut rules 25–30).
A :class:`PiProfile` names the behaviours that differ; every computation that
differs takes one. :func:`detect_profile` picks it per file: a 1.6.0 marker in
the file decides, otherwise the user's setting, whose default is the pi
installed on this machine, else the newest profile.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from .jsvalue import UNDEFINED
from .migrate import version_name

if TYPE_CHECKING:
    from pathlib import Path

    from .session import Session

__all__ = [
    "PIN_SETTINGS",
    "PROFILES",
    "PROFILE_0_80_2",
    "PROFILE_1_6_0",
    "PiProfile",
    "ProfileChoice",
    "detect_profile",
    "headerless_verdict",
    "installed_pi_version",
    "pi16_marker",
    "profile_named",
]


class PiProfile(NamedTuple):
    """One pi release's session semantics."""

    version: str
    #: context = buildSessionProjection (context edits, compaction system snapshot), rules 16–19
    projection: bool
    #: `role: "system"` messages are estimated (rule 21) and kept by convertToLlm (rule 20)
    system_messages: bool
    #: a non-empty file without a valid header is refused instead of reset (rule 8)
    refuses_headerless_files: bool
    #: serializeConversation omits thinking, surrogate-safe truncation (rule 40)
    serializer_without_thinking: bool
    #: file operations also come from tool results' nested calls (rule 32)
    nested_file_ops: bool
    #: settings.json is parsed after stripping a byte-order mark (0.80.2: JSON.parse fails, no settings)
    strips_settings_bom: bool
    #: compaction.modelOverrides["<provider>/<id>"] overrides keepRecentTokens/reserveTokens (rule 24)
    compaction_model_overrides: bool


def headerless_verdict(profile: PiProfile, size: int) -> str:
    """What this pi does with a file that has no valid session header (rule 8), in words."""
    if profile.refuses_headerless_files and size > 0:
        return f"pi {profile.version} refuses to open it (it never truncates a non-empty file)"
    return f"pi {profile.version} would start a new session and overwrite this file"


PROFILE_0_80_2 = PiProfile(
    version="0.80.2",
    projection=False,
    system_messages=False,
    refuses_headerless_files=False,
    serializer_without_thinking=False,
    nested_file_ops=False,
    strips_settings_bom=False,
    compaction_model_overrides=False,
)
PROFILE_1_6_0 = PiProfile(
    version="1.6.0",
    projection=True,
    system_messages=True,
    refuses_headerless_files=True,
    serializer_without_thinking=True,
    nested_file_ops=True,
    strips_settings_bom=True,
    compaction_model_overrides=True,
)
PROFILES: dict[str, PiProfile] = {p.version: p for p in (PROFILE_0_80_2, PROFILE_1_6_0)}
NEWEST = PROFILE_1_6_0
#: the values of the `--pi-version` setting
PIN_SETTINGS = ("auto", *PROFILES)


def profile_named(version: str) -> PiProfile:
    try:
        return PROFILES[version]
    except KeyError:
        raise ValueError(f"unknown pi version {version!r}; known: {', '.join(PROFILES)}") from None


class ProfileChoice(NamedTuple):
    profile: PiProfile
    reason: str


def _compaction_marker(value: Any) -> str | None:
    if type(value) is not dict:
        return None
    if "systemMessage" in value:
        return "a compaction with a systemMessage snapshot"
    if "usage" in value:
        return "a compaction with usage"
    own_id = value.get("id", UNDEFINED)
    if type(own_id) is str and own_id and value.get("firstKeptEntryId", UNDEFINED) == own_id:
        return "a retain-none compaction (firstKeptEntryId = its own id)"
    return None


#: compaction/branch summary values read at once while looking for a 1.6.0 marker
_MARKER_BATCH = 256


def _may_mark(recs: Any, i: int, raw: bytes) -> bool:
    """Whether summary record `i`'s line can hold a 1.6.0 marker, from its bytes alone.

    A key "usage"/"systemMessage" shows as those quoted bytes, and firstKeptEntryId equal to the
    entry's own id means the quoted id twice; an escaped key or id (\\u…) is possible only with a
    backslash-u. A big session's thousand summaries are mostly ruled out without parsing them.
    """
    if b'"usage"' in raw or b"\\u" in raw:
        return True
    if recs.type_of(i) != "compaction":
        return False
    if b'"systemMessage"' in raw:
        return True
    own = recs.id_of(i)
    if i in recs.patches or type(own) is not str or not own.isascii() or not own.replace("-", "").isalnum():
        return True  # a migrated id, or one a writer may spell with escapes: read the value
    return raw.count(b'"' + own.encode() + b'"') >= 2


def pi16_marker(session: Session) -> str | None:
    """The first 1.6.0-only shape in the file, in words, or None for a plain v3 file.

    The answer is kept in `session.pi16_scan` (and by the index cache): asked again, only the
    records added since are read.
    """
    recs = session.records
    start = 0
    if session.pi16_scan is not None and session.pi16_scan[0] <= len(recs):
        start, known = session.pi16_scan
        if known is not None:
            return known
    marker = _pi16_marker_from(session, start)
    session.pi16_scan = (len(recs), marker)
    return marker


def _pi16_marker_from(session: Session, start: int) -> str | None:
    """pi16_marker when records before `start` hold no marker."""
    recs = session.records
    # the first usage/context_edit/system message from the columns; compactions and branch
    # summaries before it are read in batches (one sequential read each, not one open per value)
    firsts = [recs.first_of_type("usage"), recs.first_of_type("context_edit"), recs.first_with_role("system")]
    limit = min((i for i in firsts if i is not None), default=len(recs))
    candidates = [*recs.indices_of_types(("compaction", "branch_summary"), limit, start), limit]
    if recs.values is None:  # values on disk: rule summaries out by their bytes before parsing
        n = len(recs)
        stored = [i for i in candidates[:-1] if i < n and i not in recs.virtual_values]
        lines = dict(zip(stored, session.raw_lines(stored), strict=True))
        # `limit`, the last candidate, is a marker by its type or role: never ruled out (a system
        # message or a context edit has no "usage" in its bytes)
        candidates = [i for i in candidates[:-1] if i not in lines or _may_mark(recs, i, lines[i])] + [limit]
    for start in range(0, len(candidates), _MARKER_BATCH):
        batch = [i for i in candidates[start : start + _MARKER_BATCH] if i < len(recs)]
        for i, v in zip(batch, session.values(batch), strict=True):
            r = recs[i]
            t = r.type
            if t == "usage" or t == "context_edit":
                return f"a {t} entry (line {r.line})"
            if t == "message" and r.role == "system":
                return f'a role:"system" message (line {r.line})'
            if t == "compaction":
                what = _compaction_marker(v)
                if what is not None:
                    return f"{what} (line {r.line})"
            elif t == "branch_summary" and type(v) is dict and "usage" in v:
                return f"a branch summary with usage (line {r.line})"
    return None


def _version_from_package_json(path: Path) -> str | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    v = data.get("version") if isinstance(data, dict) else None
    return v if isinstance(v, str) else None


def _pi_package_json(pi: str) -> Path | None:
    """…/node_modules/<scope>/pi-coding-agent/package.json of the `pi` on PATH, if found."""
    from pathlib import Path  # here: a run with --pi-version set does without pathlib (~5 ms)

    real = Path(os.path.realpath(pi))
    for parent in real.parents:
        candidate = parent / "package.json"
        if candidate.is_file() and parent.name == "pi-coding-agent":
            return candidate
    return None


@functools.cache
def installed_pi_version() -> str | None:
    """The version of the pi installed on this machine (`pi` on PATH), or None. Cached."""
    import shutil  # here: a pinned --pi-version never looks for pi (shutil costs ~3 ms of a start)

    pi = shutil.which("pi")
    if pi is None:
        return None
    pkg = _pi_package_json(pi)
    if pkg is not None:
        v = _version_from_package_json(pkg)
        if v is not None:
            return v
    import subprocess  # only for a pi without its package.json beside it

    try:
        r = subprocess.run([pi, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    words = r.stdout.strip().split()
    return words[-1].lstrip("v") if r.returncode == 0 and words else None


def _profile_for_installed(version: str) -> PiProfile:
    """The profile nearest to an installed pi: 1.x reads like 1.6.0, 0.x like 0.80.2."""
    major = version.split(".", 1)[0]
    return PROFILE_0_80_2 if major == "0" else PROFILE_1_6_0


def default_choice(kind: str = "plain v3 file") -> ProfileChoice:
    """The setting's default: the pi found on this machine, else the newest profile.

    ``kind``: the file in words, for the reason (see :func:`plain_kind`)."""
    v = installed_pi_version()
    if v is not None:
        p = _profile_for_installed(v)
        return ProfileChoice(p, f"{kind}; pi {v} is installed on this machine")
    return ProfileChoice(NEWEST, f"{kind}; no pi found on this machine, newest profile {NEWEST.version}")


def plain_kind(session: Session) -> str:
    """A file without 1.6.0 entries, in words: a legacy file is read migrated, as pi reads it."""
    if session.migrated:
        return f"{version_name(session.source_version)} file without pi 1.6.0 entries"
    return "plain v3 file"


def detect_profile(
    session: Session, setting: str = "auto", plain: str | None = None, pinned_by: str | None = None
) -> ProfileChoice:
    """The profile for a file.

    `setting` (`--pi-version`): a version pins the profile; `auto` reads a file with a
    1.6.0 marker as 1.6.0 and a plain v3 file with `plain` (the user's preference), whose
    default is the pi installed on this machine, else the newest profile. ``pinned_by``: who
    pinned it, in words (default the CLI's option).
    """
    if setting != "auto":
        return ProfileChoice(profile_named(setting), f"pinned: {pinned_by or f'--pi-version {setting}'}")
    marker = pi16_marker(session)
    if marker is not None:
        return ProfileChoice(PROFILE_1_6_0, f"the file has {marker}")
    kind = plain_kind(session)
    if plain is not None and plain != "auto":
        return ProfileChoice(profile_named(plain), f"{kind}; your preference for such files is pi {plain}")
    return default_choice(kind)
