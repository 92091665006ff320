"""branch-to budgets the branch summary as pi's generateBranchSummary does (§8.4, 0.80.2 and 1.6.0
alike): (the session model's context window, or 128000) − settings.json branchSummary.reserveTokens;
--context-window overrides the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio import cli
from session_studio.engine import edits
from tests.core.util import A, U, chain, to_bytes

MODEL = {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}


def _session(path: Path, *, with_model: bool) -> Path:
    entries: list[dict[str, Any]] = [U(40), A(40), U(40), A(40), U(40), A(40)]
    if with_model:  # after the last answer (an assistant message sets the context's model too)
        entries.append(MODEL)
    # the target is the first answer (e1): the entries after it are the abandoned branch
    path.write_bytes(to_bytes(chain(*entries)))
    return path


@pytest.mark.parametrize("pin", ["0.80.2", "1.6.0"])
def test_branch_to_reads_pis_branch_summary_settings_and_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], pin: str
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"branchSummary": {"reserveTokens": 5000}}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    seen: list[tuple[Any, Any]] = []
    original = edits.branch_to

    def recording(*args: Any, **kw: Any) -> Any:
        seen.append((kw["context_window"], kw["reserve_tokens"]))
        return original(*args, **kw)

    monkeypatch.setattr(edits, "branch_to", recording)
    plain = _session(tmp_path / "plain.jsonl", with_model=False)
    modelled = _session(tmp_path / "model.jsonl", with_model=True)
    common = ["--summarize", "--dry-run", "--provider", "offline", "--pi-version", pin]
    assert cli.main(["branch-to", str(plain), "e1", *common]) == 0
    assert cli.main(["branch-to", str(plain), "e1", *common, "--context-window", "50000"]) == 0
    assert cli.main(["branch-to", str(modelled), "e1", *common]) == 0
    assert seen == [(128000, 5000), (50000, 5000), (200000, 5000)]
    err = capfd.readouterr().err
    assert "branch summary budget: 123,000 tokens" in err and "branch summary budget: 195,000 tokens" in err
