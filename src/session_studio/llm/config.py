"""Provider configuration: which summarizer to use, with which model, key and limits.

Resolution order (first hit wins, field by field):

1. explicit values: the :class:`ProviderConfig` the application passes (its own settings, CLI flags);
2. pi's files in the agent directory (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``):
   ``settings.json`` (global, deep-merged with the project's ``<cwd>/.pi/settings.json`` the way
   pi merges them: nested objects are merged one level deep, other values replaced),
   ``auth.json`` (``{"<provider>": {"type": "api_key", "key": "…"}}``; ``$VAR``/``${VAR}``
   templates are expanded, ``!command`` keys run only if ``allow_key_commands``; OAuth logins are
   not used) and ``models.json`` (custom providers/models: ``baseUrl``, ``apiKey``, ``headers``,
   ``compat``, ``contextWindow``, ``maxTokens``, ``reasoning``, ``thinkingLevelMap``, and
   ``modelOverrides`` for built-in models; ``//`` comments and trailing commas allowed);
3. environment variables (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``OPENROUTER_API_KEY``, …).

With nothing configured (``config=None``) pi's ``defaultProvider``/``defaultModel`` are used when
they are usable; otherwise the :class:`~session_studio.llm.offline.OfflineSummarizer`.

Secrets: :class:`ProviderConfig` may hold an ``api_key`` in memory, but it is excluded from
``model_dump()``/JSON, so saving the config never writes it. Keys are never logged.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from session_studio.core.listing import default_agent_dir
from session_studio.llm.anthropic import AnthropicSummarizer
from session_studio.llm.base import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_SUMMARY_CHARS,
    RequestLimits,
    Summarizer,
)
from session_studio.llm.errors import NO_MODEL_MESSAGE, LlmConfigError, redact, register_secret
from session_studio.llm.limits import DEFAULT_DEADLINE_S, DEFAULT_IDLE_TIMEOUT_S
from session_studio.llm.offline import OfflineSummarizer
from session_studio.llm.openai import OpenAICompatibleSummarizer, detect_openai_compat
from session_studio.llm.pi_settings import (
    _CUSTOM_DEFAULT_CONTEXT,
    _CUSTOM_DEFAULT_MAX_TOKENS,
    CompactionSettings,
    ModelInfo,
    PiPlanningDefaults,
    _custom_model,
    _dict,
    _norm_url,
    compaction_settings,
    is_project_trusted,
    load_auth_json,
    load_models_json,
    load_pi_settings,
    model_info,
    pi_default_model,
    pi_planning_defaults,
)

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "PROVIDER_PRESETS",
    "CompactionSettings",
    "ModelInfo",
    "PiPlanningDefaults",
    "ProviderConfig",
    "ProviderKind",
    "ProviderPreset",
    "ResolvedProvider",
    "compaction_settings",
    "default_agent_dir",
    "insecure_key_warning",
    "is_loopback_host",
    "is_project_trusted",
    "load_auth_json",
    "load_models_json",
    "load_pi_settings",
    "make_summarizer",
    "model_info",
    "pi_planning_defaults",
    "resolve_config_value",
    "resolve_provider",
]

logger = logging.getLogger(__name__)

ProviderKind = Literal["offline", "openai", "anthropic"]
DEFAULT_THINKING_LEVEL: Final[str] = "medium"


# ---------------------------------------------------------------------------------------------
# Presets and the model catalogue


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    """How to reach a well-known provider (pi provider id → API kind, base URL, key variables)."""

    kind: Literal["openai", "anthropic"]
    base_url: str
    env_vars: tuple[str, ...]
    label: str
    needs_key: bool = True


PROVIDER_PRESETS: Final[Mapping[str, ProviderPreset]] = {
    "anthropic": ProviderPreset(
        "anthropic", "https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "Anthropic"
    ),
    "openai": ProviderPreset("openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), "OpenAI"),
    "openrouter": ProviderPreset(
        "openai", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), "OpenRouter"
    ),
    "google": ProviderPreset(
        "openai",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        ("GEMINI_API_KEY",),
        "Google Gemini",
    ),
    "groq": ProviderPreset("openai", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",), "Groq"),
    "cerebras": ProviderPreset("openai", "https://api.cerebras.ai/v1", ("CEREBRAS_API_KEY",), "Cerebras"),
    "xai": ProviderPreset("openai", "https://api.x.ai/v1", ("XAI_API_KEY",), "xAI"),
    "deepseek": ProviderPreset("openai", "https://api.deepseek.com", ("DEEPSEEK_API_KEY",), "DeepSeek"),
    "mistral": ProviderPreset("openai", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",), "Mistral"),
    "together": ProviderPreset("openai", "https://api.together.ai/v1", ("TOGETHER_API_KEY",), "Together AI"),
    "fireworks": ProviderPreset(
        "openai", "https://api.fireworks.ai/inference/v1", ("FIREWORKS_API_KEY",), "Fireworks"
    ),
    "huggingface": ProviderPreset(
        "openai", "https://router.huggingface.co/v1", ("HF_TOKEN",), "Hugging Face"
    ),
    "moonshotai": ProviderPreset(
        "openai", "https://api.moonshot.ai/v1", ("MOONSHOT_API_KEY",), "Moonshot AI"
    ),
    "nvidia": ProviderPreset("openai", "https://integrate.api.nvidia.com/v1", ("NVIDIA_API_KEY",), "NVIDIA"),
    "zai": ProviderPreset("openai", "https://api.z.ai/api/coding/paas/v4", ("ZAI_API_KEY",), "Z.ai"),
    "ollama": ProviderPreset("openai", "http://localhost:11434/v1", (), "Ollama", needs_key=False),
    "lmstudio": ProviderPreset("openai", "http://localhost:1234/v1", (), "LM Studio", needs_key=False),
    "llama.cpp": ProviderPreset(
        "openai", "http://localhost:8080/v1", (), "llama.cpp server", needs_key=False
    ),
    "vllm": ProviderPreset("openai", "http://localhost:8000/v1", (), "vLLM", needs_key=False),
}


# ---------------------------------------------------------------------------------------------
# Config values ($VAR templates, !commands)

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def resolve_config_value(
    value: str,
    env: Mapping[str, str],
    *,
    extra_env: Mapping[str, str] | None = None,
    allow_commands: bool = False,
) -> str | None:
    """pi's ``resolveConfigValue``: ``$VAR``/``${VAR}`` expansion (``$$`` → ``$``, ``$!`` → ``!``).

    A value starting with ``!`` is a shell command whose trimmed stdout is the value; it runs only
    if ``allow_commands`` (10 s timeout). Returns ``None`` if a variable is unset or the command fails.
    """
    if value.startswith("!"):
        if not allow_commands:
            return None
        try:
            done = subprocess.run(
                value[1:], shell=True, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        out = done.stdout.strip() if done.returncode == 0 else ""
        return out or None

    def lookup(name: str) -> str | None:
        return (extra_env or {}).get(name) or env.get(name) or None

    out_parts: list[str] = []
    i = 0
    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            out_parts.append(value[i:])
            break
        out_parts.append(value[i:dollar])
        nxt = value[dollar + 1 : dollar + 2]
        if nxt in ("$", "!"):
            out_parts.append(nxt)
            i = dollar + 2
            continue
        if nxt == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                out_parts.append("$")
                i = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _ENV_NAME.fullmatch(name):
                resolved = lookup(name)
                if resolved is None:
                    return None
                out_parts.append(resolved)
            else:
                out_parts.append(value[dollar : end + 1])
            i = end + 1
            continue
        m = _ENV_NAME.match(value, dollar + 1)
        if m:
            resolved = lookup(m.group(0))
            if resolved is None:
                return None
            out_parts.append(resolved)
            i = m.end()
            continue
        out_parts.append("$")
        i = dollar + 1
    return "".join(out_parts)


# ---------------------------------------------------------------------------------------------
# Provider configuration


class ProviderConfig(BaseModel):
    """What the application stores about the LLM provider (never the key itself).

    ``provider`` is the API kind; ``pi_provider`` pi's provider id (``anthropic``, ``openrouter``,
    a custom name from ``models.json``…) used to find credentials and model data in pi's files.
    ``api_key`` is accepted for in-memory use only: it is excluded from ``model_dump``/JSON.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: ProviderKind = "offline"
    pi_provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    #: the overall deadline of one summary call (connection, retries, the whole stream)
    timeout_s: float = Field(default=DEFAULT_DEADLINE_S, gt=0)
    #: the longest silence from the server (before the first byte and between two pieces)
    idle_timeout_s: float = Field(default=DEFAULT_IDLE_TIMEOUT_S, gt=0)
    connect_timeout_s: float = Field(default=DEFAULT_CONNECT_TIMEOUT_S, gt=0)
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, gt=0)
    max_summary_chars: int = Field(default=DEFAULT_MAX_SUMMARY_CHARS, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    max_retry_delay_s: float = Field(default=30.0, ge=0)
    extra_headers: dict[str, str] = Field(default_factory=dict, repr=False)
    thinking_level: str | None = None
    context_window: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    reasoning: bool | None = None
    compat: dict[str, Any] | None = None

    def limits(self) -> RequestLimits:
        """The time and size limits of every summary call made with this configuration."""
        return RequestLimits(
            deadline_s=self.timeout_s,
            idle_timeout_s=self.idle_timeout_s,
            connect_timeout_s=self.connect_timeout_s,
            max_response_bytes=self.max_response_bytes,
            max_summary_chars=self.max_summary_chars,
        )


@dataclass(frozen=True, slots=True)
class ResolvedProvider:
    """A fully resolved provider: everything needed to build a summarizer, plus how it was found.

    ``api_key`` and ``headers`` are secrets held in memory (hidden from ``repr``);
    ``api_key_source`` says where the key came from (e.g. ``environment variable OPENAI_API_KEY``).
    ``notes`` are human-readable remarks about the resolution (fallbacks, ignored entries).
    """

    provider: ProviderKind
    pi_provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_source: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    model_info: ModelInfo | None = None
    thinking_level: str | None = None
    compat: Mapping[str, Any] | None = None
    limits: RequestLimits = field(default_factory=RequestLimits)
    max_retries: int = 2
    max_retry_delay_s: float = 30.0
    notes: tuple[str, ...] = ()
    #: what the user must hear before anything is sent (a key withheld, a key over plain http)
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """A one-line description without secrets, e.g. for a status bar."""
        if self.provider == "offline":
            return "Offline draft (no LLM)"
        preset = PROVIDER_PRESETS.get(self.pi_provider or "")
        label = preset.label if preset is not None else (self.pi_provider or self.provider)
        key = f"key from {self.api_key_source}" if self.api_key_source else "no API key"
        return f"{label} · {self.model} · {redact(self.base_url or '')} · {key}"


def _model_api_kind(api: Any) -> Literal["openai", "anthropic"] | None:
    if api in ("openai-completions", "openai-responses"):
        return "openai"
    if api == "anthropic-messages":
        return "anthropic"
    return None


def _host(url: str | None) -> str:
    """The lower-cased host of ``url`` ("" when it has none or cannot be parsed)."""
    if not url or "://" not in url:
        return ""
    try:
        return (httpx.URL(url.strip()).host or "").lower()
    except (httpx.InvalidURL, TypeError, ValueError):
        return ""


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): traffic never leaves the machine."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _provider_hosts(pi_provider: str, pcfg: Mapping[str, Any], mdef: Mapping[str, Any] | None) -> set[str]:
    """The hosts a pi provider's credentials belong to: its official host and the URLs pi's files give it."""
    urls: list[Any] = [pcfg.get("baseUrl"), (mdef or {}).get("baseUrl")]
    preset = PROVIDER_PRESETS.get(pi_provider)
    if preset is not None:
        urls.append(preset.base_url)
    models = pcfg.get("models")
    for model_def in models if isinstance(models, list) else []:
        if isinstance(model_def, Mapping):
            urls.append(model_def.get("baseUrl"))
    return {h for h in (_host(u) for u in urls if isinstance(u, str)) if h}


def insecure_key_warning(resolved: ResolvedProvider) -> str | None:
    """A warning when a credential would travel over plain http to a host off this machine."""
    if not (resolved.api_key or resolved.headers) or resolved.provider == "offline":
        return None
    url = resolved.base_url or ""
    if not url.lower().startswith("http://"):
        return None
    host = _host(url)
    if not host or is_loopback_host(host):
        return None
    what = f"the API key from {resolved.api_key_source}" if resolved.api_key else "credential headers"
    return (
        f"warning: {what} is sent in clear text over http to {host}; "
        "use https, or a key only this server accepts"
    )


def _guess_pi_provider(kind: ProviderKind, base_url: str | None) -> str | None:
    if kind == "anthropic":
        if not base_url:
            return "anthropic"
        return "anthropic" if _host(base_url) == _host(PROVIDER_PRESETS["anthropic"].base_url) else None
    if not base_url:
        return "openai"
    norm = _norm_url(base_url)
    for name, preset in PROVIDER_PRESETS.items():
        if preset.kind == kind and _norm_url(preset.base_url) == norm:
            return name
    host = _host(base_url)
    for name, preset in PROVIDER_PRESETS.items():
        if preset.kind == kind and preset.needs_key and host and host == _host(preset.base_url):
            return name
    return None


def _resolve_headers(
    raw: Mapping[str, Any], env: Mapping[str, str], extra_env: Mapping[str, str], allow_commands: bool
) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            resolved = resolve_config_value(value, env, extra_env=extra_env, allow_commands=allow_commands)
            if resolved:
                out[str(key)] = resolved
                register_secret(resolved)
    return out


def resolve_provider(
    config: ProviderConfig | None = None,
    *,
    cwd: Path | None = None,
    agent_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    allow_key_commands: bool = False,
    project_trusted: bool = True,
    limits: RequestLimits | None = None,
) -> ResolvedProvider:
    """Resolve ``config`` against pi's files and the environment (see the module documentation).

    ``limits`` (deadline, idle timeout, size caps) win over the config's, and apply as well when
    the provider comes from pi's settings (``config=None``).

    ``config=None`` means "nothing configured in the application": pi's ``defaultProvider`` and
    ``defaultModel`` are used if they name a usable provider, else the offline summarizer.
    ``env`` defaults to ``os.environ``. Never raises for missing data: problems are reported in
    ``notes`` and by :func:`make_summarizer`.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    directory = agent_dir or default_agent_dir(environ)
    settings = load_pi_settings(cwd, agent_dir=directory, project_trusted=project_trusted)
    notes: list[str] = []

    if config is None:
        return _resolve_from_pi_defaults(
            settings, cwd, directory, environ, allow_key_commands, project_trusted, limits
        )
    if config.provider == "offline":
        return ResolvedProvider(provider="offline", notes=("offline summarizer selected",))

    models_json = load_models_json(directory)
    auth = load_auth_json(directory)
    kind: ProviderKind = config.provider
    guessed = _guess_pi_provider(kind, config.base_url)
    pi_provider = config.pi_provider
    model = config.model
    if not model and (pi_provider or guessed) == settings.get("defaultProvider"):
        default_model = settings.get("defaultModel")
        if isinstance(default_model, str) and default_model:
            model = default_model
            notes.append(f"model {model!r} taken from pi's defaultModel")
    if not pi_provider and model:
        # A model defined in models.json identifies its provider (preferring one whose URL matches).
        found = _custom_model(models_json, None, model, config.base_url)
        if found is not None and found[2] is not None:
            url = found[2].get("baseUrl") or found[1].get("baseUrl")
            if not config.base_url or _norm_url(url) == _norm_url(config.base_url):
                pi_provider = found[0]
    pi_provider = pi_provider or guessed
    custom = _custom_model(models_json, pi_provider, model, config.base_url) if model else None
    pcfg: dict[str, Any] = custom[1] if custom else {}
    mdef: dict[str, Any] | None = custom[2] if custom else None
    if pi_provider and not custom:
        pcfg = _dict(_dict(models_json.get("providers")).get(pi_provider))
    preset = PROVIDER_PRESETS.get(pi_provider or "")

    # Base URL: explicit → models.json (model, provider) → preset.
    base_url = config.base_url
    if not base_url:
        for candidate in ((mdef or {}).get("baseUrl"), pcfg.get("baseUrl")):
            if isinstance(candidate, str) and candidate:
                base_url = candidate
                notes.append("base URL taken from pi's models.json")
                break
    if not base_url and preset is not None and preset.kind == kind:
        base_url = preset.base_url
    if mdef is not None:
        api_kind = _model_api_kind(mdef.get("api") or pcfg.get("api"))
        if api_kind is not None and api_kind != kind:
            notes.append(f"models.json says {model!r} uses the {api_kind} API, but {kind} was selected")

    # API key: explicit → named variable → auth.json → models.json apiKey → the provider's variables.
    # A pi provider's credentials (auth.json, models.json, its standard variables) go only to the
    # hosts they belong to: never to a base URL the user typed for another server.
    api_key: str | None = None
    source: str | None = None
    cred_env: dict[str, str] = {}
    if config.api_key is not None and config.api_key.get_secret_value():
        api_key, source = config.api_key.get_secret_value(), "the application settings"
    if api_key is None and config.api_key_env:
        value = environ.get(config.api_key_env)
        if value:
            api_key, source = value, f"environment variable {config.api_key_env}"
        else:
            notes.append(f"environment variable {config.api_key_env} is not set")
    warnings: list[str] = []
    if pi_provider and _host(base_url) not in _provider_hosts(pi_provider, pcfg, mdef):
        warnings.append(
            f"{redact(base_url or '(no URL)')} is not a host of pi's provider {pi_provider!r}: "
            "its credentials are not sent there (name a key with --api-key-env)"
        )
        pi_provider_credentials = False
    else:
        pi_provider_credentials = bool(pi_provider)
    if pi_provider and pi_provider_credentials:
        cred = _dict(auth.get(pi_provider))
        cred_env = {str(k): str(v) for k, v in _dict(cred.get("env")).items() if isinstance(v, str)}
        if api_key is None and cred.get("type") == "api_key" and isinstance(cred.get("key"), str):
            value = resolve_config_value(
                cred["key"], environ, extra_env=cred_env, allow_commands=allow_key_commands
            )
            if value:
                api_key, source = value, f"{directory / 'auth.json'}"
            elif cred["key"].startswith("!") and not allow_key_commands:
                notes.append(f"auth.json key for {pi_provider} is a shell command, which is disabled")
        elif api_key is None and cred.get("type") == "oauth":
            notes.append(f"pi's OAuth login for {pi_provider} cannot be used; use an API key")
        if api_key is None and isinstance(pcfg.get("apiKey"), str):
            value = resolve_config_value(
                pcfg["apiKey"], environ, extra_env=cred_env, allow_commands=allow_key_commands
            )
            if value:
                api_key, source = value, f"{directory / 'models.json'}"
    if api_key is None and pi_provider_credentials and preset is not None:
        for name in preset.env_vars:
            if environ.get(name):
                api_key, source = environ[name], f"environment variable {name}"
                break
    if api_key is None and not pi_provider_credentials:
        ambient = [
            name
            for preset_any in PROVIDER_PRESETS.values()
            if preset_any.kind == kind
            for name in preset_any.env_vars
            if environ.get(name)
        ]
        if ambient and not config.api_key_env:
            warnings.append(
                f"{ambient[0]} is not sent to {redact(base_url or '(no URL)')}, which is not its "
                "provider's host: name the key for this server with --api-key-env"
            )
    register_secret(api_key)

    provider_headers = (
        {
            **_resolve_headers(_dict(pcfg.get("headers")), environ, cred_env, allow_key_commands),
            **_resolve_headers(_dict((mdef or {}).get("headers")), environ, cred_env, allow_key_commands),
        }
        if pi_provider_credentials
        else {}
    )
    headers = {**provider_headers, **config.extra_headers}
    if pi_provider_credentials and pcfg.get("authHeader") is True and api_key:
        headers["Authorization"] = f"Bearer {api_key}"

    info = model_info(pi_provider or kind, model, models_json=models_json) if model else None
    if config.context_window or config.max_tokens or config.reasoning is not None:
        base_info = info or ModelInfo(_CUSTOM_DEFAULT_CONTEXT, _CUSTOM_DEFAULT_MAX_TOKENS, False)
        info = ModelInfo(
            context_window=config.context_window or base_info.context_window,
            max_tokens=config.max_tokens or base_info.max_tokens,
            reasoning=base_info.reasoning if config.reasoning is None else config.reasoning,
            adaptive_thinking=base_info.adaptive_thinking,
            thinking_level_map=base_info.thinking_level_map,
        )
    compat = {
        **_dict(pcfg.get("compat")),
        **_dict((mdef or {}).get("compat")),
        **(config.compat or {}),
    } or None
    thinking = config.thinking_level
    if thinking is None and isinstance(settings.get("defaultThinkingLevel"), str):
        thinking = settings["defaultThinkingLevel"]
    resolved = ResolvedProvider(
        provider=kind,
        pi_provider=pi_provider,
        base_url=base_url,
        model=model,
        api_key=api_key,
        api_key_source=source,
        headers=headers,
        model_info=info,
        thinking_level=thinking or DEFAULT_THINKING_LEVEL,
        compat=compat,
        limits=limits or config.limits(),
        max_retries=config.max_retries,
        max_retry_delay_s=config.max_retry_delay_s,
        notes=tuple(notes),
    )
    insecure = insecure_key_warning(resolved)
    if insecure is not None:
        warnings.append(insecure)
    if warnings:
        resolved = dataclasses.replace(resolved, warnings=tuple(warnings))
    logger.debug("resolved provider: %s", resolved.describe())
    return resolved


def _resolve_from_pi_defaults(
    settings: Mapping[str, Any],
    cwd: Path | None,
    directory: Path,
    environ: Mapping[str, str],
    allow_key_commands: bool,
    project_trusted: bool,
    limits: RequestLimits | None,
) -> ResolvedProvider:
    named = pi_default_model(settings)
    if named is None:
        return ResolvedProvider(
            provider="offline", notes=("no provider configured; using the offline summarizer",)
        )
    provider, model = named
    models_json = load_models_json(directory)
    custom = _custom_model(models_json, provider, model, None)
    kind: Literal["openai", "anthropic"] | None = None
    if custom is not None:
        pcfg, mdef = custom[1], custom[2]
        kind = _model_api_kind((mdef or {}).get("api") or pcfg.get("api"))
    if kind is None and provider in PROVIDER_PRESETS:
        kind = PROVIDER_PRESETS[provider].kind
    if kind is None:
        return ResolvedProvider(
            provider="offline",
            notes=(
                f"pi's default provider {provider!r} is not supported here; using the offline summarizer",
            ),
        )
    resolved = resolve_provider(
        ProviderConfig(provider=kind, pi_provider=provider, model=model),
        cwd=cwd,
        agent_dir=directory,
        env=environ,
        allow_key_commands=allow_key_commands,
        project_trusted=project_trusted,
        limits=limits,
    )
    preset = PROVIDER_PRESETS.get(provider)
    needs_key = kind == "anthropic" or (preset.needs_key if preset is not None else False)
    if needs_key and not resolved.api_key:
        return ResolvedProvider(
            provider="offline",
            notes=(f"pi's default provider {provider!r} has no API key; using the offline summarizer",),
        )
    if not resolved.base_url:
        return ResolvedProvider(
            provider="offline",
            notes=(
                f"no base URL known for pi's default provider {provider!r}; using the offline summarizer",
            ),
        )
    return ResolvedProvider(
        provider=resolved.provider,
        pi_provider=resolved.pi_provider,
        base_url=resolved.base_url,
        model=resolved.model,
        api_key=resolved.api_key,
        api_key_source=resolved.api_key_source,
        headers=resolved.headers,
        model_info=resolved.model_info,
        thinking_level=resolved.thinking_level,
        compat=resolved.compat,
        limits=resolved.limits,
        max_retries=resolved.max_retries,
        max_retry_delay_s=resolved.max_retry_delay_s,
        notes=(f"using pi's default model {provider}/{model}", *resolved.notes),
        warnings=resolved.warnings,
    )


def make_summarizer(
    config: ProviderConfig | ResolvedProvider | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    cwd: Path | None = None,
    agent_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    allow_key_commands: bool = False,
) -> Summarizer:
    """Build the summarizer for ``config`` (resolving a :class:`ProviderConfig` first).

    Raises :class:`~session_studio.llm.errors.LlmConfigError` when a network provider lacks a
    model, a usable base URL or (for Anthropic) an API key.
    """
    resolved = (
        config
        if isinstance(config, ResolvedProvider)
        else resolve_provider(
            config, cwd=cwd, agent_dir=agent_dir, env=env, allow_key_commands=allow_key_commands
        )
    )
    for note in resolved.notes:
        logger.info("provider: %s", note)
    if not isinstance(config, ResolvedProvider):
        # resolved here: nobody has shown the warnings yet (callers that resolve first show them)
        for warning in resolved.warnings:
            logger.warning("provider: %s", warning)
    if resolved.provider == "offline":
        return OfflineSummarizer()
    if not resolved.model:
        raise LlmConfigError(
            f"{resolved.provider}: no model configured",
            user_message=NO_MODEL_MESSAGE,
        )
    if not resolved.base_url:
        raise LlmConfigError(
            f"{resolved.provider}: no base URL configured",
            user_message="No base URL is configured for this provider: enter one in the provider settings.",
        )
    info = resolved.model_info
    hint = resolved.api_key_source or "the provider settings"
    if resolved.provider == "anthropic":
        return AnthropicSummarizer(
            resolved.base_url,
            resolved.model,
            resolved.api_key,
            limits=resolved.limits,
            transport=transport,
            max_retries=resolved.max_retries,
            extra_headers=resolved.headers,
            reasoning_model=info.reasoning if info else False,
            model_max_tokens=info.max_tokens if info else None,
            adaptive_thinking=info.adaptive_thinking if info else False,
            thinking_level_map=info.thinking_level_map if info else None,
            provider=resolved.pi_provider if resolved.pi_provider not in (None, "anthropic") else None,
            max_retry_delay_s=resolved.max_retry_delay_s,
            key_hint=hint,
        )
    compat = detect_openai_compat(resolved.base_url, resolved.model, resolved.pi_provider).with_pi_overrides(
        resolved.compat
    )
    return OpenAICompatibleSummarizer(
        resolved.base_url,
        resolved.model,
        resolved.api_key,
        limits=resolved.limits,
        transport=transport,
        max_retries=resolved.max_retries,
        extra_headers=resolved.headers,
        reasoning_model=info.reasoning if info else False,
        thinking_level_map=info.thinking_level_map if info else None,
        compat=compat,
        provider=resolved.pi_provider,
        max_retry_delay_s=resolved.max_retry_delay_s,
        key_hint=hint,
    )
