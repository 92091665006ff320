"""The summariser chosen last time is the one the Preview offers after a restart.

The choice was saved whenever a summary was generated but never read back: every launch fell
back to the offline draft, and "Branch with summary" then summarised offline too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def _window(qtbot: Any, runner: Any, ini: Path, root: Path) -> Any:
    from session_studio.ui.main_window import MainWindow
    from session_studio.ui.settings import AppSettings

    w = MainWindow(AppSettings(ini), runner, sessions_root=str(root))
    qtbot.addWidget(w)
    return w


@pytest.mark.parametrize(("saved", "offered"), [("pi", "pi"), ("custom", "custom"), ("gone", "offline")])
def test_the_saved_provider_is_offered_after_a_restart(
    qtbot: Any, runner: Any, tmp_path: Path, saved: str, offered: str
) -> None:
    from session_studio.ui.settings import AppSettings

    ini = tmp_path / "cfg" / "s.ini"
    AppSettings(ini).set_provider(saved)  # what generating a summary with it writes
    w = _window(qtbot, runner, ini, tmp_path / "none")
    assert w.preview.provider.currentData() == offered
