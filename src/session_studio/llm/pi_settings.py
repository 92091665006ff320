"""pi's settings and model limits as a pi profile reads them: ``settings.json`` (global and the
project's), ``models.json``, pi-ai's model catalogue, the compaction settings, and the planning
defaults that the window, the CLI and the engine start from.

Split from :mod:`session_studio.llm.config` so that planning a file does not import the HTTP client
and the provider models (pydantic, httpx: ~0.3 s the window's first load waited for).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from session_studio.core.defaults import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
)
from session_studio.core.jsvalue import js_truthy
from session_studio.core.listing import default_agent_dir
from session_studio.core.profile import PROFILE_0_80_2, PiProfile
from session_studio.llm._catalog import CATALOG_ROWS

logger = logging.getLogger("session_studio.llm.config")

_CUSTOM_DEFAULT_CONTEXT = 128000
_CUSTOM_DEFAULT_MAX_TOKENS = 16384


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What pi knows about a model: context window, output limit, reasoning support."""

    context_window: int
    max_tokens: int
    reasoning: bool
    adaptive_thinking: bool = False
    thinking_level_map: Mapping[str, str | None] | None = field(default=None, compare=True)


_CATALOG: Final[dict[tuple[str, str], ModelInfo]] = {
    (row[0], row[1]): ModelInfo(row[2], row[3], row[4], row[5], row[6]) for row in CATALOG_ROWS
}
_CATALOG_BY_ID: Final[dict[str, ModelInfo]] = {}
for (_provider, _model_id), _info in _CATALOG.items():
    _CATALOG_BY_ID.setdefault(_model_id, _info)
    _CATALOG_BY_ID.setdefault(_model_id.rsplit("/", 1)[-1], _info)


def _id_candidates(model_id: str) -> list[str]:
    """Spellings to try: as given, without a vendor prefix, Ollama tag ``a:b`` → ``a-b``, dots → dashes."""
    out = [model_id]
    base = model_id.rsplit("/", 1)[-1]
    out.append(base)
    out.append(base.replace(":", "-"))
    out.append(re.sub(r"(?<=\d)\.(?=\d)", "-", base))  # openrouter "claude-sonnet-4.5" → "claude-sonnet-4-5"
    out.append(re.sub(r"-\d{4}-\d{2}-\d{2}$", "", base))  # "gpt-4.1-2025-04-14" → "gpt-4.1"
    return list(dict.fromkeys(out))


def model_info(
    provider: str | None, model_id: str, *, models_json: Mapping[str, Any] | None = None
) -> ModelInfo | None:
    """Limits of ``model_id``: ``models.json`` (custom model or override) first, then the shipped table.

    ``provider`` is pi's provider id (``anthropic``, ``openai``, ``openrouter``…) or our provider
    kind; an unknown model yields ``None``.
    """
    base: ModelInfo | None = None
    if provider:
        base = _CATALOG.get((provider, model_id))
    if base is None:
        for candidate in _id_candidates(model_id):
            base = _CATALOG_BY_ID.get(candidate)
            if base is not None:
                break
    if models_json:
        custom = _custom_model(models_json, provider, model_id, None)
        if custom is not None:
            _name, pcfg, mdef = custom
            if mdef is not None:
                return _info_from_model_def(mdef)
            override = _dict(_dict(pcfg.get("modelOverrides")).get(model_id))
            if override and base is not None:
                return _apply_override(base, override)
    return base


def _info_from_model_def(mdef: Mapping[str, Any]) -> ModelInfo:
    compat = _dict(mdef.get("compat"))
    tlm = mdef.get("thinkingLevelMap")
    return ModelInfo(
        context_window=_pos_int(mdef.get("contextWindow"), _CUSTOM_DEFAULT_CONTEXT),
        max_tokens=_pos_int(mdef.get("maxTokens"), _CUSTOM_DEFAULT_MAX_TOKENS),
        reasoning=mdef.get("reasoning") is True,
        adaptive_thinking=compat.get("forceAdaptiveThinking") is True,
        thinking_level_map=_level_map(tlm),
    )


def _apply_override(base: ModelInfo, override: Mapping[str, Any]) -> ModelInfo:
    tlm = _level_map(override.get("thinkingLevelMap"))
    merged_map = {**(base.thinking_level_map or {}), **(tlm or {})} if tlm else base.thinking_level_map
    compat = _dict(override.get("compat"))
    return ModelInfo(
        context_window=_pos_int(override.get("contextWindow"), base.context_window),
        max_tokens=_pos_int(override.get("maxTokens"), base.max_tokens),
        reasoning=override["reasoning"] if isinstance(override.get("reasoning"), bool) else base.reasoning,
        adaptive_thinking=(
            compat["forceAdaptiveThinking"]
            if isinstance(compat.get("forceAdaptiveThinking"), bool)
            else base.adaptive_thinking
        ),
        thinking_level_map=merged_map,
    )


def _level_map(value: Any) -> dict[str, str | None] | None:
    if not isinstance(value, Mapping):
        return None
    return {
        str(k): (v if isinstance(v, str) else None)
        for k, v in value.items()
        if v is None or isinstance(v, str)
    }


def _pos_int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return int(value) if value > 0 else default


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


# ---------------------------------------------------------------------------------------------
# pi's files


def _read_json(path: Path, *, comments: bool = False) -> tuple[Any, str | None]:
    try:
        raw = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {exc}"
    if not raw.strip():
        return None, None
    if comments:
        raw = _strip_json_comments(raw)
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        return None, f"{path} is not valid JSON: {exc}"


_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])')


def _strip_json_comments(text: str) -> str:
    """pi's ``stripJsonComments``: drop ``//`` comments and trailing commas outside strings."""
    text = _STRING_OR_COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


def _deep_merge_settings(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """pi's ``deepMergeSettings``: nested objects merge one level deep, everything else is replaced."""
    result = dict(base)
    for key, value in overrides.items():
        current = base.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            result[key] = {**current, **value}
        else:
            result[key] = value
    return result


def _read_settings_json(path: Path, profile: PiProfile = PROFILE_0_80_2) -> tuple[Any, str | None]:
    """A settings file as pi reads it: UTF-8 text through ``JSON.parse`` (no comments). pi 1.6.0
    strips a byte-order mark first; for 0.80.2 it is a parse error, so pi uses no settings from
    that file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {exc}"
    if not raw:
        return None, None
    if raw.startswith("\ufeff"):
        if not profile.strips_settings_bom:
            return (
                None,
                f"{path} is not valid JSON for pi {profile.version}: it starts with a byte-order mark",
            )
        raw = raw[1:]
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        return None, f"{path} is not valid JSON: {exc}"


def is_project_trusted(cwd: Path, *, agent_dir: Path | None = None) -> bool:
    """Whether pi loads ``<cwd>/.pi/settings.json``: a project with such a file needs trust, which
    pi keeps in ``<agent dir>/trust.json`` (the nearest of cwd and its ancestors decides). Without a
    saved decision pi would ask; we do not assume a yes."""
    if not (cwd / ".pi" / "settings.json").exists():
        return True
    data, _error = _read_json((agent_dir or default_agent_dir()) / "trust.json")
    if not isinstance(data, dict):
        return False
    current = Path(os.path.realpath(cwd))
    while True:
        decision = data.get(str(current))
        if isinstance(decision, bool):
            return decision
        if current.parent == current:
            return False
        current = current.parent


def load_pi_settings(
    cwd: Path | None = None,
    *,
    agent_dir: Path | None = None,
    project_trusted: bool | None = None,
    profile: PiProfile = PROFILE_0_80_2,
) -> dict[str, Any]:
    """pi's effective settings: global ``settings.json`` merged with ``<cwd>/.pi/settings.json``,
    each file read as the `profile`'s pi reads it.

    pi reads project settings only for trusted projects (``project_trusted=None``: as pi's trust
    store decides). A file that cannot be parsed counts as empty (with a warning), as in pi.
    """
    directory = agent_dir or default_agent_dir()
    merged: dict[str, Any] = {}
    paths = [directory / "settings.json"]
    if cwd is not None:
        trusted = is_project_trusted(cwd, agent_dir=directory) if project_trusted is None else project_trusted
        if trusted:
            paths.append(cwd / ".pi" / "settings.json")
    for path in paths:
        data, error = _read_settings_json(path, profile)
        if error:
            logger.warning("ignoring pi settings: %s", error)
            continue
        if data is None:
            continue
        if not isinstance(data, dict):
            logger.warning("ignoring pi settings %s: not a JSON object", path)
            continue
        merged = _deep_merge_settings(merged, data)
    return merged


def load_auth_json(agent_dir: Path | None = None) -> dict[str, Any]:
    """The parsed ``auth.json`` (empty if missing or invalid). Values are secrets: never log them."""
    path = (agent_dir or default_agent_dir()) / "auth.json"
    data, error = _read_json(path)
    if error:
        logger.warning("ignoring pi credentials file: %s", error.split(":", 1)[0])
        return {}
    return data if isinstance(data, dict) else {}


def load_models_json(agent_dir: Path | None = None) -> dict[str, Any]:
    """The parsed ``models.json`` (``{"providers": {…}}``; empty if missing or invalid)."""
    path = (agent_dir or default_agent_dir()) / "models.json"
    data, error = _read_json(path, comments=True)
    if error:
        logger.warning("ignoring pi models file: %s", error)
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("providers"), dict):
        if data is not None:
            logger.warning('ignoring pi models file %s: no "providers" object', path)
        return {}
    return data


# ---------------------------------------------------------------------------------------------
# Compaction settings


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """pi's compaction and branch-summary settings (spec §4.5) with pi's defaults."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    branch_reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    branch_skip_prompt: bool = False


def _with_model_override(compaction: dict[str, Any], model: Any) -> dict[str, Any]:
    """pi 1.6.0's getCompactionTokenSetting: the model's override, then the ordinary setting.

    pi throws on an override that is not a non-negative safe integer; we warn and ignore it."""
    if not isinstance(model, dict):
        return compaction
    key = f"{model.get('provider')}/{model.get('modelId')}"
    overrides = compaction.get("modelOverrides")
    entry = overrides.get(key) if isinstance(overrides, dict) else None
    if not isinstance(entry, dict):
        return compaction
    out = dict(compaction)
    for field_name in ("keepRecentTokens", "reserveTokens"):
        value = entry.get(field_name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**53 - 1:
            logger.warning(
                "pi 1.6.0 would refuse compaction.modelOverrides[%r].%s=%r (not a non-negative safe integer)",
                key,
                field_name,
                value,
            )
            continue
        out[field_name] = value
    return out


def _setting_int(block: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = block.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        logger.warning("pi setting %s.%s=%r is not a number; using %d", where, key, value, default)
        return default
    if isinstance(value, float) and not value.is_integer():
        logger.warning("pi setting %s.%s=%r is not an integer; using %d", where, key, value, int(value))
    return int(value)


def _setting_bool(block: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = block.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        # pi reads `settings.x ?? default` and tests it as JavaScript does: [] and {} are true
        truthy = js_truthy(value)
        logger.warning("pi setting %s.%s=%r is not true/false; pi takes it as %s", where, key, value, truthy)
        return truthy
    return value


def compaction_settings(
    cwd: Path | None = None,
    *,
    agent_dir: Path | None = None,
    project_trusted: bool | None = None,
    profile: PiProfile = PROFILE_0_80_2,
    model: Any = None,
) -> CompactionSettings:
    """The compaction settings pi would use in ``cwd`` (``compaction`` and ``branchSummary`` blocks).

    Missing or ``null`` values take pi's defaults. pi does not validate values; we fall back to the
    default (with a warning) for non-numbers, so the result is always well typed. Under pi 1.6.0 a
    ``compaction.modelOverrides["<provider>/<modelId>"]`` entry for `model` comes first (rule 24).
    """
    settings = load_pi_settings(cwd, agent_dir=agent_dir, project_trusted=project_trusted, profile=profile)
    return _compaction_settings_of(settings, profile, model)


def _compaction_settings_of(
    settings: Mapping[str, Any], profile: PiProfile, model: Any
) -> CompactionSettings:
    """:func:`compaction_settings` from pi's effective ``settings``."""
    compaction = _dict(settings.get("compaction"))
    if profile.compaction_model_overrides:
        compaction = _with_model_override(compaction, model)
    branch = _dict(settings.get("branchSummary"))
    defaults = CompactionSettings()
    return CompactionSettings(
        enabled=_setting_bool(compaction, "enabled", defaults.enabled, "compaction"),
        reserve_tokens=_setting_int(compaction, "reserveTokens", defaults.reserve_tokens, "compaction"),
        keep_recent_tokens=_setting_int(
            compaction, "keepRecentTokens", defaults.keep_recent_tokens, "compaction"
        ),
        branch_reserve_tokens=_setting_int(
            branch, "reserveTokens", defaults.branch_reserve_tokens, "branchSummary"
        ),
        branch_skip_prompt=_setting_bool(branch, "skipPrompt", defaults.branch_skip_prompt, "branchSummary"),
    )


@dataclass(frozen=True, slots=True)
class PiPlanningDefaults:
    """What the planner starts from for one session: pi's compaction settings and the model's limits."""

    keep_recent_tokens: int
    reserve_tokens: int
    enabled: bool
    context_window: int
    window_known: bool  # False: the model is unknown, pi's default window is assumed
    max_tokens: int
    source: str  # where the numbers come from, in words
    #: settings.json ``branchSummary.reserveTokens``: the branch summary's budget is window − this (§8.4)
    branch_reserve_tokens: int = 16384
    #: ``provider/model`` from settings.json's defaultProvider and defaultModel (None: not both set):
    #: the summariser pi and ``session-studio compact`` use when nothing else is chosen
    default_model: str | None = None


def pi_default_model(settings: Mapping[str, Any]) -> tuple[str, str] | None:
    """(provider, model) when pi's ``settings`` name both a defaultProvider and a defaultModel."""
    provider, model = settings.get("defaultProvider"), settings.get("defaultModel")
    if isinstance(provider, str) and isinstance(model, str) and provider and model:
        return provider, model
    return None


def pi_planning_defaults(
    cwd: str | None,
    model: Any,
    *,
    agent_dir: Path | None = None,
    profile: PiProfile = PROFILE_0_80_2,
) -> PiPlanningDefaults:
    """pi's settings for a session started in ``cwd`` and the limits of its ``{provider, modelId}``
    model (``models.json`` first, then pi-ai's catalogue), as the `profile`'s pi reads them. The
    window, the CLI and the engine all start from this."""
    directory = agent_dir or default_agent_dir()
    cwd_path = Path(cwd) if isinstance(cwd, str) and cwd and Path(cwd).is_dir() else None
    pi_settings = load_pi_settings(cwd_path, agent_dir=directory, profile=profile)
    settings = _compaction_settings_of(pi_settings, profile, model)
    notes = ["keepRecentTokens/reserveTokens from pi's settings"]
    info = None
    if isinstance(model, dict) and isinstance(model.get("modelId"), str):
        provider = model.get("provider")
        info = model_info(
            provider if isinstance(provider, str) else None,
            model["modelId"],
            models_json=load_models_json(directory),
        )
    if info is not None and info.context_window:
        notes.append(f"context window of {model.get('provider')}/{model.get('modelId')}")
        window, known, max_tokens = info.context_window, True, info.max_tokens
    else:
        notes.append(
            f"context window {DEFAULT_CONTEXT_WINDOW:,} (model unknown: set it in the Context window box, or with --context-window)"
        )
        window, known, max_tokens = DEFAULT_CONTEXT_WINDOW, False, 0
    return PiPlanningDefaults(
        settings.keep_recent_tokens,
        settings.reserve_tokens,
        settings.enabled,
        window,
        known,
        max_tokens,
        "; ".join(notes),
        settings.branch_reserve_tokens,
        "/".join(named) if (named := pi_default_model(pi_settings)) else None,
    )


def _norm_url(url: str | None) -> str:
    return (url or "").strip().rstrip("/").lower()


def _custom_model(
    models_json: Mapping[str, Any], pi_provider: str | None, model_id: str, base_url: str | None
) -> tuple[str, dict[str, Any], dict[str, Any] | None] | None:
    """Find (provider name, provider config, model definition or None) in ``models.json``."""
    providers = _dict(models_json.get("providers"))
    names = [pi_provider] if pi_provider and pi_provider in providers else []
    if not names and not pi_provider:
        names = list(providers)
    candidates: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
    for name in names:
        pcfg = _dict(providers.get(name))
        models = pcfg.get("models")
        for mdef in models if isinstance(models, list) else []:
            if isinstance(mdef, dict) and mdef.get("id") == model_id:
                candidates.append((name, pcfg, mdef))
        if pi_provider and not candidates:
            candidates.append((name, pcfg, None))
    if not candidates:
        return None
    if base_url and len(candidates) > 1:
        for name, pcfg, mdef in candidates:
            url = (mdef or {}).get("baseUrl") or pcfg.get("baseUrl")
            if _norm_url(url) == _norm_url(base_url):
                return name, pcfg, mdef
    return candidates[0]
