"""`info --tokens real` and `plan --fields tokens`: real counts next to pi's estimate on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_studio import cli
from session_studio.cli import main
from session_studio.core import tokenizer
from tests.core.util import U, chain, to_bytes

FIXTURE = Path(__file__).resolve().parent / "oracle" / "fixtures" / "before-compaction.jsonl"
CJK = "会话工作室显示每一条消息的真实令牌数量以及估计值之间的差距。" * 40  # chars/4 300, o200k 920


@pytest.fixture(autouse=True)
def _no_pi_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "no-pi"))


def test_info_tokens_real_on_a_real_session(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(FIXTURE), "--tokens", "real", "--pi-version", "0.80.2"]) == 0
    out = capsys.readouterr().out
    assert (
        "real tokens: 161,325 (≈ o200k, approximation for claude-opus-4-5) vs pi estimate 139,429 "
        "over 446 context messages: drift +21,896 (+15.7%)"
    ) in out
    assert (
        "decision:    with real tokens this path is past the compaction threshold (195,541 > 183,616)" in out
    )
    assert "  path #1000: pi 12,802 → real 27,523 (+14,721)" in out  # `find .` output: git hashes


def test_info_without_the_flag_counts_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(FIXTURE)]) == 0
    assert "real tokens" not in capsys.readouterr().out


def test_info_says_when_nothing_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    assert main(["info", str(f), "--tokens", "real"]) == 0
    out = capsys.readouterr().out
    assert "real tokens: 2 (≈ o200k, approximation for an unknown model) vs pi estimate 3" in out
    assert "real tokens change neither the threshold decision nor the cut" in out


def test_info_reports_a_missing_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokenizer, "_counters", {})
    monkeypatch.setattr(tokenizer.importlib.util, "find_spec", lambda name: None)
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    assert main(["info", str(f), "--tokens", "real"]) == cli.EXIT_FAILURE
    assert "real token counts unavailable" in capsys.readouterr().err


def test_plan_fields_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U(CJK), U(CJK))))
    args = ["plan", str(f), "--fields", "tokens", "--context-window", "2000", "--reserve", "1000"]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    tokens = got["tokens"]
    assert (tokens["estimate"], tokens["real"], tokens["tokenizer"]) == (
        600,
        1840,
        "≈ o200k, approximation for an unknown model",
    )
    assert tokens["decision"]["estimateCompacts"] is False and tokens["decision"]["realCompacts"] is True
    assert set(got) == {"version", "piVersion", "command", "tokens"}  # nothing else was asked for


def test_plan_default_output_has_no_tokens_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The oracle schema stays as it is: `tokens` is opt-in (it loads a tokenizer)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    assert main(["plan", str(f)]) == 0
    assert "tokens" not in json.loads(capsys.readouterr().out)


def test_plan_tokens_without_a_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokenizer, "_counters", {})
    monkeypatch.setattr(tokenizer.importlib.util, "find_spec", lambda name: None)
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    assert main(["plan", str(f), "--fields", "tokens"]) == 0
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    assert tokens["estimate"] == 3 and tokens["real"] is None
    assert tokens["error"].startswith("real token counts unavailable")


def test_info_tokens_provider_counts_with_anthropic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.llm.support import FAKE_KEY
    from tests.llm.test_token_count import count_server

    monkeypatch.setenv("COUNT_KEY", FAKE_KEY)
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    with count_server(input_tokens=9) as server:
        args = ["info", str(f), "--tokens", "provider", "--provider", "anthropic", "--base-url", server.url]
        assert main([*args, "--model", "claude-x", "--api-key-env", "COUNT_KEY"]) == 0
    out = capsys.readouterr().out
    assert "real tokens: 2 (≈ o200k, approximation for an unknown model)" in out
    assert (
        "provider:    9 tokens by anthropic's count_tokens (claude-x) vs pi estimate 3: drift +6 (+200.0%)"
        in out
    )
    assert server.bodies[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
    ]
    assert FAKE_KEY not in out


def test_info_tokens_provider_needs_anthropic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(chain(U("hello world"))))
    args = [
        "info",
        str(f),
        "--tokens",
        "provider",
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]
    assert main([*args, "--model", "gpt-4o"]) == cli.EXIT_FAILURE
    assert "needs Anthropic configured" in capsys.readouterr().err
