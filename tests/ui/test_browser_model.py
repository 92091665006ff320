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


def test_a_fork_written_by_the_cli_is_listed_under_its_source(qtmodeltester, tmp_path: Path) -> None:
    """`fork` writes the header's parentSession as pi does; the listing reads it and the model
    (Qt's tester passes on the three levels) shows the fork under the session it came from."""
    import subprocess
    import sys

    d = tmp_path / "--proj--"
    d.mkdir()
    src = d / "2026-01-01T00-00-00-000Z_source.jsonl"
    shutil.copy(sorted(SAMPLES.glob("*.jsonl"))[0], src)
    out = d / "2026-01-02T00-00-00-000Z_fork.jsonl"
    from session_studio.core import Session

    leaf = Session.open(src).records[-1].id
    subprocess.run(
        [
            sys.executable,
            "-m",
            "session_studio.cli",
            "fork",
            str(src),
            "--leaf",
            str(leaf),
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    infos = {i.path: i for i in list_sessions(tmp_path)}
    assert infos[str(out)].parent_session == str(src) and infos[str(src)].parent_session is None
    model = build_browser_model(list(infos.values()))
    qtmodeltester.check(model)
    project = model.item(0, 0)
    assert project.rowCount() == 1  # the source; the fork is its child
    assert project.child(0, 0).rowCount() == 1
