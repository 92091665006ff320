"""Persistent UI state and preferences in an INI file at an explicit path.

Path: ``$SESSION_STUDIO_CONFIG_DIR/session-studio.ini`` if set (tests), else
``$XDG_CONFIG_HOME/session-studio/session-studio.ini`` (``~/.config`` by default).
UI state (geometry, splitters) lives in ``[state]``, preferences in ``[prefs]``.
No secrets are ever stored here.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

__all__ = ["AppSettings", "config_dir", "state_dir"]

MAX_RECENT = 12


def config_dir() -> Path:
    env = os.environ.get("SESSION_STUDIO_CONFIG_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "session-studio"


def state_dir() -> Path:
    env = os.environ.get("SESSION_STUDIO_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "session-studio"


class AppSettings:
    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        p = Path(path) if path is not None else config_dir() / "session-studio.ini"
        p.parent.mkdir(parents=True, exist_ok=True)
        self.path = p
        self.qs = QSettings(str(p), QSettings.Format.IniFormat)

    # recent files
    def recent_files(self) -> list[str]:
        return _strings(self.qs.value("prefs/recent", []))

    def add_recent(self, path: str) -> list[str]:
        path = os.path.abspath(path)
        rec = [path] + [p for p in self.recent_files() if p != path]
        rec = rec[:MAX_RECENT]
        self.qs.setValue("prefs/recent", rec)
        self.clear_recent_problem(path)
        return rec

    def remove_recent(self, path: str) -> list[str]:
        """Forget ``path`` (it was deleted); returns the new list."""
        path = os.path.abspath(path)
        rec = [p for p in self.recent_files() if p != path]
        self.qs.setValue("prefs/recent", rec)
        self.clear_recent_problem(path)
        return rec

    def recent_problems(self) -> dict[str, str]:
        """Recent files that could not be opened last time → why (shown in the list)."""
        out: dict[str, str] = {}
        for item in _strings(self.qs.value("prefs/recent-problems", [])):
            if "\t" in item:
                path, why = item.split("\t", 1)
                out[path] = why
        return out

    def set_recent_problem(self, path: str, why: str) -> None:
        probs = self.recent_problems()
        probs[os.path.abspath(path)] = why.replace("\t", " ").replace("\n", " ")
        self._store_problems(probs)

    def clear_recent_problem(self, path: str) -> None:
        probs = self.recent_problems()
        if probs.pop(os.path.abspath(path), None) is not None:
            self._store_problems(probs)

    def _store_problems(self, probs: dict[str, str]) -> None:
        self.qs.setValue("prefs/recent-problems", [f"{p}\t{w}" for p, w in probs.items()])

    # theme
    def theme(self) -> str:
        v = self.qs.value("prefs/theme", "system")
        return v if v in ("light", "dark", "system") else "system"

    def set_theme(self, name: str) -> None:
        self.qs.setValue("prefs/theme", name)

    def search_content(self) -> bool:
        """Whether the entry search looks at the entries' whole content (see core.content_search)."""
        return self.qs.value("prefs/search-content", False, type=bool) is True

    def set_search_content(self, on: bool) -> None:
        self.qs.setValue("prefs/search-content", on)

    def pi_version(self) -> str:
        """The pi a plain v3 session is read as: "auto" (the pi installed here, else the newest) or a
        version; a file with 1.6.0 shapes is read as 1.6.0 whatever this says."""
        from session_studio.core.profile import PIN_SETTINGS

        v = self.qs.value("prefs/pi-version", "auto")
        return v if isinstance(v, str) and v in PIN_SETTINGS else "auto"

    def set_pi_version(self, setting: str) -> None:
        self.qs.setValue("prefs/pi-version", setting)

    def provider(self) -> str | None:
        """The summariser the user chose last (None: never chosen; the window then offers pi's
        default model where pi's settings name one, as ``session-studio compact`` uses it)."""
        v = self.qs.value("prefs/provider", None)
        return v if isinstance(v, str) and v else None

    def set_provider(self, key: str) -> None:
        self.qs.setValue("prefs/provider", key)

    def custom_provider(self) -> dict[str, str]:
        """The custom provider's kind, base URL, model and key *variable name* (never a key)."""
        out = {}
        for k in ("kind", "base_url", "model", "key_env"):
            v = self.qs.value(f"provider/{k}", "")
            out[k] = v if isinstance(v, str) else ""
        return out

    def set_custom_provider(self, values: dict[str, str]) -> None:
        for k in ("kind", "base_url", "model", "key_env"):
            self.qs.setValue(f"provider/{k}", values.get(k, ""))

    def export_dir(self) -> str | None:
        """The folder the last report was exported to (None: none yet)."""
        v = self.qs.value("prefs/export-dir", None)
        return v if isinstance(v, str) and v else None

    def set_export_dir(self, folder: str) -> None:
        self.qs.setValue("prefs/export-dir", folder)

    # UI state
    def state(self, key: str) -> QByteArray | None:
        v = self.qs.value(f"state/{key}")
        return v if isinstance(v, QByteArray) else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self.qs.setValue(f"state/{key}", value)

    def sync(self) -> None:
        self.qs.sync()


def _strings(value: object) -> list[str]:
    """A QSettings list value as strings (an INI file gives one item back as a bare string)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [x for x in value if isinstance(x, str)]
    return []
