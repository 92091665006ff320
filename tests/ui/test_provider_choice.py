"""The summariser chosen last time is the one the Preview offers after a restart.

The choice was saved whenever a summary was generated but never read back: every launch fell
back to the offline draft, and "Branch with summary" then summarised offline too."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.core.util import U

from .conftest import write_session


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


def _pi_settings(settings: dict[str, Any]) -> None:
    """pi's global settings.json (the UI tests' PI_CODING_AGENT_DIR)."""
    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def _open(qtbot: Any, w: Any, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


@pytest.mark.parametrize(
    ("settings", "offered", "status"),
    [
        (
            {"defaultProvider": "openai", "defaultModel": "gpt-4o"},
            "pi",
            "Generate sends the context to pi's default model, openai/gpt-4o (pi's settings.json).",
        ),
        ({"defaultProvider": "openai"}, "offline", "Offline draft: nothing leaves this machine."),
        ({}, "offline", "Offline draft: nothing leaves this machine."),
    ],
)
def test_never_chosen_the_window_offers_what_the_cli_summarises_with(
    qtbot: Any, runner: Any, tmp_path: Path, settings: dict[str, Any], offered: str, status: str
) -> None:
    """Nothing chosen yet: pi's default model where pi's settings name one (what `session-studio
    compact` and pi use then), else the offline draft; the list and the status line say which."""
    _pi_settings(settings)
    w = _window(qtbot, runner, tmp_path / "cfg" / "s.ini", tmp_path / "none")
    _open(qtbot, w, write_session(tmp_path / "s.jsonl", [U("hello")]))
    combo = w.preview.provider
    assert combo.currentData() == offered
    pi_item = combo.itemText(combo.findData("pi"))
    assert pi_item == (
        "pi's default model (openai/gpt-4o)"
        if offered == "pi"
        else "pi's default model (none in settings.json)"
    )
    assert w.preview.status.text() == status
    assert w.settings.provider() is None  # offered, not chosen: the next session's settings decide again


def test_a_choice_made_is_kept_whatever_pi_names(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    _pi_settings({"defaultProvider": "openai", "defaultModel": "gpt-4o"})
    ini = tmp_path / "cfg" / "s.ini"
    w = _window(qtbot, runner, ini, tmp_path / "none")
    session = write_session(tmp_path / "s.jsonl", [U("hello")])
    _open(qtbot, w, session)
    combo = w.preview.provider
    assert combo.currentData() == "pi"
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Up)  # the user picks the offline draft (the item above)
    assert combo.currentData() == "offline"
    assert w.settings.provider() == "offline"
    w.close()
    again = _window(qtbot, runner, ini, tmp_path / "none")
    _open(qtbot, again, session)
    assert again.preview.provider.currentData() == "offline"
    assert again.preview.status.text() == "Offline draft: nothing leaves this machine."
