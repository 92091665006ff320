"""The session browser's model passes Qt's model tester and groups sessions by project."""

from __future__ import annotations

import shutil
from pathlib import Path

from session_studio.core.listing import list_sessions
from session_studio.ui.browser import build_browser_model

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "session_studio" / "resources" / "samples"


def test_browser_model(qtmodeltester, tmp_path: Path) -> None:
    for i, f in enumerate(sorted(SAMPLES.glob("*.jsonl"))):
        d = tmp_path / f"--proj-{i % 2}--"
        d.mkdir(exist_ok=True)
        shutil.copy(f, d / f.name)
    infos = list_sessions(tmp_path)
    assert len(infos) == len(list(SAMPLES.glob("*.jsonl")))
    model = build_browser_model(infos)
    qtmodeltester.check(model)
    assert model.rowCount() >= 1
