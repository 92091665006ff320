"""Provider configuration: pi's settings/auth/models files, environment, model table, factory."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from session_studio.llm import (
    AnthropicSummarizer,
    CompactionSettings,
    LlmConfigError,
    ModelInfo,
    OfflineSummarizer,
    OpenAICompatibleSummarizer,
    ProviderConfig,
    compaction_settings,
    default_agent_dir,
    load_pi_settings,
    make_summarizer,
    model_info,
    resolve_provider,
)
from session_studio.llm.config import resolve_config_value


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "agent"
    directory.mkdir()
    return directory


@pytest.fixture
def project(tmp_path: Path, agent_dir: Path) -> Path:
    """A project the user trusted in pi (pi reads a project's .pi/settings.json only then)."""
    directory = tmp_path / "project"
    directory.mkdir()
    write(agent_dir / "trust.json", {os.path.realpath(directory): True})
    return directory


# ---------------------------------------------------------------------------------------------
# settings.json


def test_compaction_defaults(agent_dir: Path, project: Path) -> None:
    assert compaction_settings(project, agent_dir=agent_dir) == CompactionSettings(
        True, 16384, 20000, 16384, False
    )


def test_project_settings_override_global_one_level_deep(agent_dir: Path, project: Path) -> None:
    write(
        agent_dir / "settings.json",
        {
            "compaction": {"reserveTokens": 30000, "keepRecentTokens": 5000},
            "branchSummary": {"reserveTokens": 1000, "skipPrompt": True},
            "defaultProvider": "anthropic",
        },
    )
    write(project / ".pi" / "settings.json", {"compaction": {"reserveTokens": 8000, "enabled": False}})
    settings = compaction_settings(project, agent_dir=agent_dir)
    assert settings == CompactionSettings(
        enabled=False,
        reserve_tokens=8000,
        keep_recent_tokens=5000,
        branch_reserve_tokens=1000,
        branch_skip_prompt=True,
    )
    # untrusted projects are not read
    assert compaction_settings(project, agent_dir=agent_dir, project_trusted=False).reserve_tokens == 30000
    merged = load_pi_settings(project, agent_dir=agent_dir)
    assert merged["defaultProvider"] == "anthropic"


def test_project_settings_need_pi_trust(agent_dir: Path, tmp_path: Path) -> None:
    # pi 0.80.2 loads <cwd>/.pi/settings.json only if trust.json trusts cwd or an ancestor
    write(agent_dir / "settings.json", {"compaction": {"reserveTokens": 30000}})
    outer = tmp_path / "work"
    inner = outer / "repo"
    write(inner / ".pi" / "settings.json", {"compaction": {"reserveTokens": 8000}})
    assert compaction_settings(inner, agent_dir=agent_dir).reserve_tokens == 30000
    write(agent_dir / "trust.json", {os.path.realpath(outer): True})
    assert compaction_settings(inner, agent_dir=agent_dir).reserve_tokens == 8000
    write(agent_dir / "trust.json", {os.path.realpath(outer): True, os.path.realpath(inner): False})
    assert compaction_settings(inner, agent_dir=agent_dir).reserve_tokens == 30000


@pytest.mark.parametrize(
    ("text", "keep", "reserve"),
    [
        # JSON numbers: 30000.0 is the number 30000 for pi
        ('{"compaction": {"keepRecentTokens": 30000.0, "reserveTokens": 8000}}', 30000, 8000),
        # pi reads settings.json with JSON.parse: a byte-order mark or a comment makes the file
        # unreadable and pi falls back to its defaults
        ('\ufeff{"compaction": {"keepRecentTokens": 30000, "reserveTokens": 8000}}', 20000, 16384),
        ('{\n// mine\n"compaction": {"keepRecentTokens": 30000}}', 20000, 16384),
    ],
)
def test_settings_read_as_pi_reads_them(agent_dir: Path, text: str, keep: int, reserve: int) -> None:
    write(agent_dir / "settings.json", text)
    settings = compaction_settings(None, agent_dir=agent_dir)
    assert (settings.keep_recent_tokens, settings.reserve_tokens) == (keep, reserve)


def test_settings_bom_per_profile(agent_dir: Path) -> None:
    """pi 1.6.0 strips a byte-order mark before JSON.parse (settings-manager.js); 0.80.2 does not and
    falls back to its defaults."""
    from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
    from session_studio.llm.config import pi_planning_defaults

    write(
        agent_dir / "settings.json",
        '\ufeff{"compaction": {"keepRecentTokens": 30000, "reserveTokens": 8000}}',
    )
    new = compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_1_6_0)
    old = compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_0_80_2)
    assert (new.keep_recent_tokens, new.reserve_tokens) == (30000, 8000)
    assert (old.keep_recent_tokens, old.reserve_tokens) == (20000, 16384)
    assert (
        pi_planning_defaults(None, None, agent_dir=agent_dir, profile=PROFILE_1_6_0).keep_recent_tokens
        == 30000
    )
    assert (
        pi_planning_defaults(None, None, agent_dir=agent_dir, profile=PROFILE_0_80_2).keep_recent_tokens
        == 20000
    )


def test_model_overrides_apply_under_1_6_0_only(agent_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0

    write(
        agent_dir / "settings.json",
        {
            "compaction": {
                "keepRecentTokens": 30000,
                "modelOverrides": {
                    "anthropic/claude-x": {"keepRecentTokens": 5000},
                    "openai/bad": {"keepRecentTokens": -1, "reserveTokens": 9000},
                },
            }
        },
    )
    model = {"provider": "anthropic", "modelId": "claude-x"}
    assert (
        compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_1_6_0, model=model).keep_recent_tokens
        == 5000
    )
    assert (
        compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_0_80_2, model=model).keep_recent_tokens
        == 30000
    )
    other = {"provider": "anthropic", "modelId": "claude-y"}
    assert (
        compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_1_6_0, model=other).keep_recent_tokens
        == 30000
    )
    bad = {"provider": "openai", "modelId": "bad"}
    with caplog.at_level(logging.WARNING):
        got = compaction_settings(None, agent_dir=agent_dir, profile=PROFILE_1_6_0, model=bad)
    assert (got.keep_recent_tokens, got.reserve_tokens) == (30000, 9000)
    assert any("would refuse" in r.getMessage() for r in caplog.records)


def test_nested_objects_merge_only_one_level(agent_dir: Path, project: Path) -> None:
    write(agent_dir / "settings.json", {"retry": {"provider": {"a": 1, "b": 2}}})
    write(project / ".pi" / "settings.json", {"retry": {"provider": {"b": 3}}})
    assert load_pi_settings(project, agent_dir=agent_dir)["retry"] == {"provider": {"b": 3}}


def test_bad_settings_are_ignored(agent_dir: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(agent_dir / "settings.json", "{ not json")
    write(
        project / ".pi" / "settings.json",
        {"compaction": {"reserveTokens": None, "keepRecentTokens": "lots", "enabled": 0}},
    )
    with caplog.at_level(logging.WARNING):
        settings = compaction_settings(project, agent_dir=agent_dir)
    assert settings.reserve_tokens == 16384
    assert settings.keep_recent_tokens == 20000
    assert settings.enabled is False
    assert any("not valid JSON" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("value", "enabled"),
    [(0, False), ("", False), ([], True), ({}, True), ("false", True), (1, True), (None, True)],
)
def test_a_non_boolean_setting_is_read_as_javascript_tests_it(
    agent_dir: Path, project: Path, value: object, enabled: bool
) -> None:
    """pi reads `compaction.enabled ?? true` and tests it as JavaScript does: an empty list or
    object is true (Python's bool() said false), "false" is a non-empty string, null is the default."""
    write(agent_dir / "settings.json", {"compaction": {"enabled": value}})
    assert compaction_settings(project, agent_dir=agent_dir).enabled is enabled


def test_default_agent_dir(tmp_path: Path) -> None:
    assert default_agent_dir({"PI_CODING_AGENT_DIR": str(tmp_path)}) == tmp_path
    assert default_agent_dir({}) == Path.home() / ".pi" / "agent"
    assert default_agent_dir({"PI_CODING_AGENT_DIR": "~/x"}) == Path.home() / "x"


# ---------------------------------------------------------------------------------------------
# keys


def test_key_resolution_order(agent_dir: Path) -> None:
    config = ProviderConfig(provider="anthropic", model="claude-sonnet-4-5")
    env = {"ANTHROPIC_API_KEY": "sk-ant-from-env-123456"}
    r = resolve_provider(config, agent_dir=agent_dir, env=env)
    assert r.api_key == "sk-ant-from-env-123456"
    assert r.api_key_source == "environment variable ANTHROPIC_API_KEY"
    assert r.base_url == "https://api.anthropic.com"
    assert r.model_info == ModelInfo(200000, 64000, True)
    write(agent_dir / "auth.json", {"anthropic": {"type": "api_key", "key": "sk-ant-from-auth-123456"}})
    r = resolve_provider(config, agent_dir=agent_dir, env=env)
    assert r.api_key == "sk-ant-from-auth-123456"
    assert r.api_key_source == str(agent_dir / "auth.json")
    r = resolve_provider(
        config.model_copy(update={"api_key_env": "MY_KEY"}),
        agent_dir=agent_dir,
        env={**env, "MY_KEY": "sk-ant-named-123456"},
    )
    assert r.api_key == "sk-ant-named-123456"
    explicit = ProviderConfig.model_validate({**config.model_dump(), "api_key": "sk-ant-explicit-123456"})
    r = resolve_provider(explicit, agent_dir=agent_dir, env=env)
    assert r.api_key == "sk-ant-explicit-123456" and r.api_key_source == "the application settings"


def test_auth_json_templates_commands_and_oauth(agent_dir: Path) -> None:
    write(
        agent_dir / "auth.json",
        {
            "openai": {"type": "api_key", "key": "${BASE}-$SUFFIX", "env": {"SUFFIX": "tail123"}},
            "openrouter": {"type": "api_key", "key": "!echo sk-or-from-command-42"},
            "anthropic": {"type": "oauth", "access": "sk-ant-oat01-xyz", "refresh": "r", "expires": 1},
        },
    )
    env = {"BASE": "sk-base"}
    r = resolve_provider(ProviderConfig(provider="openai", model="gpt-4o"), agent_dir=agent_dir, env=env)
    assert r.api_key == "sk-base-tail123"
    r = resolve_provider(
        ProviderConfig(provider="openai", pi_provider="openrouter", model="x/y"), agent_dir=agent_dir, env={}
    )
    assert r.api_key is None
    assert any("shell command" in n for n in r.notes)
    assert r.base_url == "https://openrouter.ai/api/v1"
    r = resolve_provider(
        ProviderConfig(provider="openai", pi_provider="openrouter", model="x/y"),
        agent_dir=agent_dir,
        env={},
        allow_key_commands=True,
    )
    assert r.api_key == "sk-or-from-command-42"
    r = resolve_provider(
        ProviderConfig(provider="anthropic", model="claude-haiku-4-5"), agent_dir=agent_dir, env={}
    )
    assert r.api_key is None and any("OAuth" in n for n in r.notes)


def test_resolve_config_value() -> None:
    env = {"A": "1", "B": "2"}
    assert resolve_config_value("plain", env) == "plain"
    assert resolve_config_value("$A-${B}", env) == "1-2"
    assert resolve_config_value("$$A $!x", env) == "$A !x"
    assert resolve_config_value("$MISSING", env) is None
    assert resolve_config_value("${not a name}", env) == "${not a name}"
    assert resolve_config_value("cost $5", env) == "cost $5"
    assert resolve_config_value("!echo hi", env) is None
    assert resolve_config_value("!echo hi", env, allow_commands=True) == "hi"
    assert resolve_config_value("!exit 3", env, allow_commands=True) is None
    assert resolve_config_value("$A", env, extra_env={"A": "override"}) == "override"


def test_secrets_are_not_serialized() -> None:
    config = ProviderConfig.model_validate(
        {"provider": "openai", "model": "m", "api_key": "sk-never-store-me-123"}
    )
    assert config.api_key is not None and config.api_key.get_secret_value() == "sk-never-store-me-123"
    assert "api_key" not in config.model_dump()
    assert "sk-never-store-me" not in config.model_dump_json()
    assert "sk-never-store-me" not in repr(config)
    resolved = resolve_provider(config, env={})
    assert "sk-never-store-me" not in repr(resolved)
    assert "sk-never-store-me" not in resolved.describe()
    with pytest.raises(ValueError):
        ProviderConfig.model_validate({"provider": "gemini"})


# ---------------------------------------------------------------------------------------------
# models.json


MODELS_JSON = """{
  // local models
  "providers": {
    "local": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "$LOCAL_KEY",
      "headers": {"X-Team": "${TEAM}"},
      "compat": {"maxTokensField": "max_tokens", "supportsDeveloperRole": false},
      "models": [
        {"id": "qwen3:32b", "contextWindow": 32768, "maxTokens": 4096, "reasoning": true,},
        {"id": "tiny"},
      ],
    },
    "anthropic": {
      "modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 1000000, "thinkingLevelMap": {"xhigh": "high"}}}
    },
    "proxy": {"baseUrl": "https://proxy.example/v1", "api": "anthropic-messages", "authHeader": true,
              "apiKey": "sk-proxy-key-123456", "models": [{"id": "claude-proxy", "maxTokens": 9000}]}
  }
}"""


def test_models_json_custom_provider(agent_dir: Path) -> None:
    write(agent_dir / "models.json", MODELS_JSON)
    config = ProviderConfig(provider="openai", pi_provider="local", model="qwen3:32b")
    r = resolve_provider(config, agent_dir=agent_dir, env={"LOCAL_KEY": "sk-local-123456", "TEAM": "red"})
    assert r.base_url == "http://localhost:11434/v1"
    assert r.api_key == "sk-local-123456"
    assert r.headers == {"X-Team": "red"}
    assert r.model_info == ModelInfo(32768, 4096, True)
    summarizer = make_summarizer(r)
    assert isinstance(summarizer, OpenAICompatibleSummarizer)
    assert summarizer.compat.max_tokens_field == "max_tokens"
    assert summarizer.compat.supports_developer_role is False
    assert summarizer.reasoning_model is True
    summarizer.close()
    # pi's defaults for custom models
    tiny = resolve_provider(
        ProviderConfig(provider="openai", pi_provider="local", model="tiny"), agent_dir=agent_dir, env={}
    )
    assert tiny.model_info == ModelInfo(128000, 16384, False)
    # found without naming the pi provider
    found = resolve_provider(
        ProviderConfig(provider="openai", model="qwen3:32b"), agent_dir=agent_dir, env={}
    )
    assert found.pi_provider == "local" and found.base_url == "http://localhost:11434/v1"


def test_models_json_overrides_and_auth_header(agent_dir: Path) -> None:
    write(agent_dir / "models.json", MODELS_JSON)
    r = resolve_provider(
        ProviderConfig(provider="anthropic", model="claude-sonnet-4-5"),
        agent_dir=agent_dir,
        env={"ANTHROPIC_API_KEY": "sk-ant-env-123456"},
    )
    assert r.model_info is not None
    assert r.model_info.context_window == 1000000 and r.model_info.max_tokens == 64000
    assert r.model_info.thinking_level_map == {"xhigh": "high"}
    proxy = resolve_provider(
        ProviderConfig(provider="anthropic", pi_provider="proxy", model="claude-proxy"),
        agent_dir=agent_dir,
        env={},
    )
    assert proxy.base_url == "https://proxy.example/v1"
    assert proxy.headers["Authorization"] == "Bearer sk-proxy-key-123456"
    summarizer = make_summarizer(proxy)
    assert isinstance(summarizer, AnthropicSummarizer)
    assert summarizer.base_url == "https://proxy.example"
    assert summarizer.model_max_tokens == 9000
    summarizer.close()


def test_explicit_model_limits_win(agent_dir: Path) -> None:
    config = ProviderConfig(
        provider="openai", base_url="http://127.0.0.1:9/v1", model="mystery", max_tokens=1234, reasoning=True
    )
    r = resolve_provider(config, agent_dir=agent_dir, env={})
    assert r.model_info == ModelInfo(128000, 1234, True)
    assert r.pi_provider is None and r.api_key is None


def test_invalid_models_json_is_ignored(agent_dir: Path) -> None:
    write(agent_dir / "models.json", "{ broken")
    r = resolve_provider(
        ProviderConfig(provider="openai", model="gpt-4o"),
        agent_dir=agent_dir,
        env={"OPENAI_API_KEY": "sk-openai-123456"},
    )
    assert r.base_url == "https://api.openai.com/v1" and r.model_info == ModelInfo(128000, 16384, False)


# ---------------------------------------------------------------------------------------------
# model table


def test_model_table() -> None:
    assert model_info("anthropic", "claude-sonnet-4-5") == ModelInfo(200000, 64000, True)
    opus = model_info("anthropic", "claude-opus-4-6")
    assert opus is not None and opus.adaptive_thinking and opus.thinking_level_map == {"xhigh": "max"}
    assert model_info("openai", "gpt-4o") == ModelInfo(128000, 16384, False)
    gpt5 = model_info("openai", "gpt-5")
    assert gpt5 is not None and gpt5.reasoning and gpt5.context_window == 400000
    assert model_info("openai", "o3-mini") == ModelInfo(200000, 100000, True)
    assert model_info("google", "gemini-2.5-pro") == ModelInfo(1048576, 65536, True)
    assert model_info("openrouter", "anthropic/claude-sonnet-4.5") == ModelInfo(200000, 64000, True)
    assert model_info("openai", "gpt-4.1-2025-04-14") == model_info("openai", "gpt-4.1")
    assert model_info("ollama", "gpt-oss:20b") is not None
    assert model_info(None, "llama-3.3-70b-versatile") is not None
    assert model_info("openai", "no-such-model") is None


# ---------------------------------------------------------------------------------------------
# defaults and factory


def test_nothing_configured_is_offline(agent_dir: Path) -> None:
    r = resolve_provider(None, agent_dir=agent_dir, env={"OPENAI_API_KEY": "sk-whatever-123456"})
    assert r.provider == "offline"
    assert isinstance(make_summarizer(None, agent_dir=agent_dir, env={}), OfflineSummarizer)
    assert isinstance(make_summarizer(ProviderConfig()), OfflineSummarizer)
    assert resolve_provider(ProviderConfig(provider="offline")).describe() == "Offline draft (no LLM)"


def test_pi_default_model_is_used_when_usable(agent_dir: Path, project: Path) -> None:
    write(
        agent_dir / "settings.json",
        {"defaultProvider": "anthropic", "defaultModel": "claude-haiku-4-5", "defaultThinkingLevel": "high"},
    )
    r = resolve_provider(None, cwd=project, agent_dir=agent_dir, env={})
    assert r.provider == "offline" and any("no API key" in n for n in r.notes)
    r = resolve_provider(
        None, cwd=project, agent_dir=agent_dir, env={"ANTHROPIC_API_KEY": "sk-ant-123456789"}
    )
    assert r.provider == "anthropic" and r.model == "claude-haiku-4-5" and r.thinking_level == "high"
    assert "sk-ant-123456789" not in r.describe()
    assert "environment variable ANTHROPIC_API_KEY" in r.describe()
    summarizer = make_summarizer(r)
    assert isinstance(summarizer, AnthropicSummarizer)
    summarizer.close()
    write(agent_dir / "settings.json", {"defaultProvider": "amazon-bedrock", "defaultModel": "x"})
    assert resolve_provider(None, agent_dir=agent_dir, env={}).provider == "offline"
    # a provider chosen in the app but no model: pi's default model for that provider is used
    write(agent_dir / "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-4.1"})
    r = resolve_provider(ProviderConfig(provider="openai"), agent_dir=agent_dir, env={})
    assert r.model == "gpt-4.1"


def test_make_summarizer_errors(agent_dir: Path) -> None:
    with pytest.raises(LlmConfigError):
        make_summarizer(
            ProviderConfig(provider="openai", base_url="http://localhost:1/v1"), agent_dir=agent_dir, env={}
        )
    with pytest.raises(LlmConfigError) as info:
        make_summarizer(
            ProviderConfig(provider="anthropic", model="claude-sonnet-4-5"), agent_dir=agent_dir, env={}
        )
    assert "API key" in info.value.user_message
    with pytest.raises(LlmConfigError):
        make_summarizer(
            ProviderConfig(provider="openai", model="m", base_url="not a url"), agent_dir=agent_dir, env={}
        )
    local = make_summarizer(
        ProviderConfig(provider="openai", pi_provider="ollama", model="llama3.1"), agent_dir=agent_dir, env={}
    )
    assert isinstance(local, OpenAICompatibleSummarizer)
    assert local.base_url == "http://localhost:11434/v1"
    local.close()
