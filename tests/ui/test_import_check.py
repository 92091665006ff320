"""PySide6 reads the source of each module imported after it; the window does not keep those lines."""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import pytest

from session_studio.ui import import_check


def _feature() -> object:
    feature = sys.modules.get(import_check.FEATURE_MODULE)
    if feature is None or not hasattr(feature, "pyside_feature_dict"):
        pytest.skip("this PySide6 has no per-module feature check (nothing to wrap)")
    return feature


def test_imported_modules_get_pysides_answer_and_leave_no_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feature = _feature()
    assert import_check.forget_source_reads()
    assert import_check.forget_source_reads()  # a second call keeps the one wrapper
    check = getattr(feature, import_check.CHECK)
    assert not hasattr(check.__wrapped__, "__wrapped__")
    (tmp_path / "ss_uses_qt_probe.py").write_text("from PySide6 import QtCore\nVALUE = 1\n" * 200)
    (tmp_path / "ss_plain_probe.py").write_text("VALUE = 2\n" * 200)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("ss_uses_qt_probe", "ss_plain_probe"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        __import__(name)  # an import statement's way: PySide6 hooks __import__, not importlib
    answers = feature.pyside_feature_dict  # type: ignore[attr-defined]
    # PySide6's own answer: 0 for a module naming PySide6, -1 ("ignore this module") otherwise
    assert answers["ss_uses_qt_probe"] == 0
    assert answers["ss_plain_probe"] == -1
    kept = [f for f in linecache.cache if "ss_uses_qt_probe" in f or "ss_plain_probe" in f]
    assert kept == []
    # a traceback still gets the lines: linecache reads them again when asked
    assert linecache.getline(str(tmp_path / "ss_plain_probe.py"), 3) == "VALUE = 2\n"


def test_lines_cached_before_the_check_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    feature = _feature()
    probe = tmp_path / "ss_cached_probe.py"
    probe.write_text("VALUE = 3\n")
    assert linecache.getline(str(probe), 1) == "VALUE = 3\n"  # a traceback read it first
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ss_cached_probe", raising=False)
    __import__("ss_cached_probe")
    assert feature.pyside_feature_dict["ss_cached_probe"] == -1  # type: ignore[attr-defined]
    assert str(probe) in linecache.cache


def test_without_pysides_check_nothing_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(import_check, "CHECK", "_no_such_check_in_this_pyside")
    assert import_check.forget_source_reads() is False


def test_the_app_keeps_no_source_of_its_imports(tmp_path: Path) -> None:
    """The app's start (launch_gui) wraps the check before the window's modules are imported."""
    import subprocess

    from .conftest import SAMPLES

    sample = sorted(SAMPLES.glob("*.jsonl"))[0]
    code = (
        "import linecache, sys; from session_studio.ui.launch import launch_gui; "
        f"rc = launch_gui(['--screenshot', {str(tmp_path / 'w.png')!r}, {str(sample)!r}]); "
        "print(rc, sorted(f for f in linecache.cache if 'session_studio' in f))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines()[-1] == "0 []", r.stdout + r.stderr
