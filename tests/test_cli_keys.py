"""Issue 12 #5: an API key goes only to the host it belongs to, whatever path configured the provider.

Each case runs the real ``compact --dry-run`` against a local server on 127.0.0.1 and checks which
key (``Authorization`` / ``x-api-key``) reached it, if any.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_studio.llm.config import ProviderConfig, resolve_provider
from tests.cli_support import llm_server, run_cli
from tests.core.util import A, T, U, chain, to_bytes

AMBIENT_OPENAI = "sk-ambient-openai-0123456789"
AMBIENT_ANTHROPIC = "sk-ant-ambient-0123456789"
AMBIENT_OPENROUTER = "sk-or-ambient-0123456789"
NAMED = "sk-named-for-this-server-0123456789"


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    entries = []
    for _ in range(6):
        entries += [U(800), A(800), T(800)]
    path.write_bytes(to_bytes(chain(*entries)))
    return path


def _env(agent_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        OPENAI_API_KEY=AMBIENT_OPENAI,
        ANTHROPIC_API_KEY=AMBIENT_ANTHROPIC,
        OPENROUTER_API_KEY=AMBIENT_OPENROUTER,
        **extra,
    )
    return env


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    d.mkdir()
    return d


def _compact(session: Path, env: dict[str, str], *flags: str) -> tuple[int, str]:
    r = run_cli("compact", str(session), "--dry-run", "--keep-recent", "600", *flags, env=env)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def test_ambient_openai_key_is_not_sent_to_a_typed_base_url(tmp_path: Path, agent_dir: Path) -> None:
    session = _session(tmp_path)
    before = session.read_bytes()
    with llm_server() as srv:
        code, err = _compact(
            session, _env(agent_dir), "--provider", "openai", "--base-url", srv.openai_url, "--model", "m"
        )
        assert code == 0, err
        assert srv.auth_headers() == [(None, None)]
        assert "OPENAI_API_KEY is not sent" in err
        # named for this server: sent, and loopback http needs no warning
        code, err = _compact(
            session,
            _env(agent_dir, MY_KEY=NAMED),
            "--provider",
            "openai",
            "--base-url",
            srv.openai_url,
            "--model",
            "m",
            "--api-key-env",
            "MY_KEY",
        )
        assert code == 0, err
        assert srv.auth_headers()[-1] == (f"Bearer {NAMED}", None)
        assert "clear text" not in err
    assert session.read_bytes() == before


def test_ambient_anthropic_key_is_not_sent_to_a_typed_base_url(tmp_path: Path, agent_dir: Path) -> None:
    session = _session(tmp_path)
    with llm_server() as srv:
        # the host name of Anthropic inside another URL does not make it Anthropic's host
        for url in (srv.anthropic_url, srv.anthropic_url + "/api.anthropic.com"):
            code, err = _compact(
                session, _env(agent_dir), "--provider", "anthropic", "--base-url", url, "--model", "m"
            )
            assert code == 1 and "No Anthropic API key" in err
        assert srv.requests == []
        code, err = _compact(
            session,
            _env(agent_dir, MY_KEY=NAMED),
            "--provider",
            "anthropic",
            "--base-url",
            srv.anthropic_url,
            "--model",
            "m",
            "--api-key-env",
            "MY_KEY",
        )
        assert code == 0, err
        assert srv.auth_headers() == [(None, NAMED)]


def test_pi_settings_models_and_auth_send_the_providers_own_key(tmp_path: Path, agent_dir: Path) -> None:
    session = _session(tmp_path)
    with llm_server() as srv:
        # settings.json defaultProvider: a custom provider of models.json with baseUrl + apiKey
        _write(agent_dir / "settings.json", {"defaultProvider": "local", "defaultModel": "m"})
        _write(
            agent_dir / "models.json",
            {
                "providers": {
                    "local": {
                        "baseUrl": srv.openai_url,
                        "api": "openai-completions",
                        "apiKey": "sk-models-json-local-123456",
                        "models": [{"id": "m"}],
                    }
                }
            },
        )
        code, err = _compact(session, _env(agent_dir))
        assert code == 0, err
        assert srv.auth_headers()[-1] == ("Bearer sk-models-json-local-123456", None)
        # auth.json's entry for that provider wins over models.json
        _write(agent_dir / "auth.json", {"local": {"type": "api_key", "key": "sk-auth-json-local-123456"}})
        code, err = _compact(session, _env(agent_dir))
        assert code == 0, err
        assert srv.auth_headers()[-1] == ("Bearer sk-auth-json-local-123456", None)
        # the same model named on the command line with the provider's URL: the provider's key
        code, err = _compact(
            session, _env(agent_dir), "--provider", "openai", "--base-url", srv.openai_url, "--model", "m"
        )
        assert code == 0, err
        assert srv.auth_headers()[-1] == ("Bearer sk-auth-json-local-123456", None)
        # pi's settings name the built-in openai provider, whose URL pi's models.json moved here:
        # pi itself sends OPENAI_API_KEY there, so do we
        (agent_dir / "auth.json").unlink()
        _write(agent_dir / "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-4o"})
        _write(agent_dir / "models.json", {"providers": {"openai": {"baseUrl": srv.openai_url}}})
        code, err = _compact(session, _env(agent_dir))
        assert code == 0, err
        assert srv.auth_headers()[-1] == (f"Bearer {AMBIENT_OPENAI}", None)
        # ... but a base URL typed on the command line is not that provider's: nothing is sent
        with llm_server() as other:
            code, err = _compact(
                session,
                _env(agent_dir),
                "--provider",
                "openai",
                "--base-url",
                other.openai_url,
                "--model",
                "gpt-4o",
            )
            assert code == 0, err
            assert other.auth_headers() == [(None, None)]


def test_provider_credentials_stay_with_their_hosts(agent_dir: Path) -> None:
    env = {"OPENAI_API_KEY": AMBIENT_OPENAI, "OPENROUTER_API_KEY": AMBIENT_OPENROUTER}
    official = resolve_provider(
        ProviderConfig(provider="openai", model="gpt-4o"), agent_dir=agent_dir, env=env
    )
    assert official.api_key == AMBIENT_OPENAI and official.base_url == "https://api.openai.com/v1"
    assert official.warnings == ()
    router = resolve_provider(
        ProviderConfig(provider="openai", base_url="https://openrouter.ai/api/v1", model="x/y"),
        agent_dir=agent_dir,
        env=env,
    )
    assert router.api_key == AMBIENT_OPENROUTER
    # look-alike URLs are other hosts
    for kind, url in (
        ("openai", "https://api.openai.com.evil.example/v1"),
        ("openai", "https://api.openai.com@evil.example/v1"),
        ("anthropic", "https://api.anthropic.com.evil.example"),
        ("anthropic", "https://evil.example/api.anthropic.com"),
    ):
        lookalike = resolve_provider(
            ProviderConfig(provider=kind, base_url=url, model="m"),
            agent_dir=agent_dir,
            env={**env, "ANTHROPIC_API_KEY": AMBIENT_ANTHROPIC},
        )
        assert lookalike.api_key is None, url
    # a named pi provider at somebody else's URL: its key and headers stay home
    _write(
        agent_dir / "models.json",
        {"providers": {"openai": {"headers": {"X-Secret": "sk-header-secret-123456"}}}},
    )
    moved = resolve_provider(
        ProviderConfig(
            provider="openai", pi_provider="openai", base_url="https://evil.example/v1", model="m"
        ),
        agent_dir=agent_dir,
        env=env,
    )
    assert moved.api_key is None and "X-Secret" not in moved.headers
    assert any("not a host of pi's provider 'openai'" in w for w in moved.warnings)


@pytest.mark.parametrize(
    ("url", "warns"),
    [
        ("http://192.168.1.20:11434/v1", True),
        ("http://llm.lan/v1", True),
        ("https://llm.lan/v1", False),
        ("http://127.0.0.1:11434/v1", False),
        ("http://localhost:8080/v1", False),
        ("http://[::1]:8080/v1", False),
    ],
)
def test_a_key_over_plain_http_off_this_machine_is_warned_about(
    agent_dir: Path, url: str, warns: bool
) -> None:
    r = resolve_provider(
        ProviderConfig(provider="openai", base_url=url, model="m", api_key_env="MY_KEY"),
        agent_dir=agent_dir,
        env={"MY_KEY": NAMED},
    )
    assert r.api_key == NAMED
    assert any("clear text" in w for w in r.warnings) == warns


def test_openai_without_a_key_or_a_model_says_what_the_command_line_needs(
    tmp_path: Path, agent_dir: Path
) -> None:
    """`--provider openai` without OPENAI_API_KEY sent the request anyway (and, off the network,
    failed on the host name); without --model it said to choose one "in the provider settings"."""
    session = _session(tmp_path)
    env = _env(agent_dir)
    del env["OPENAI_API_KEY"]
    code, err = _compact(session, env, "--provider", "openai", "--model", "gpt-4o")
    assert code == 1 and "No OpenAI API key found" in err and "OPENAI_API_KEY" in err
    code, err = _compact(session, _env(agent_dir), "--provider", "openai")
    assert code == 1 and "--model" in err
    with llm_server() as srv:  # another OpenAI-compatible server may take requests without a key
        code, err = _compact(
            session, env, "--provider", "openai", "--base-url", srv.openai_url, "--model", "m"
        )
        assert code == 0, err
