"""Layering: core, llm and engine never import Qt; core never does network."""

from __future__ import annotations

import subprocess
import sys


def test_core_llm_engine_do_not_load_qt() -> None:
    code = (
        "import sys, session_studio.core, session_studio.core.oracle_schema, session_studio.core.overview, "
        "session_studio.llm, session_studio.engine, session_studio.cli; "
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]; "
        "net = [m for m in sys.modules if m.startswith('httpx') and 'session_studio.llm' not in sys.modules]; "
        "print(bad, net); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_core_does_not_import_network_or_ui() -> None:
    code = "import sys, session_studio.core.oracle_schema; print(sorted(m for m in sys.modules if m.split('.')[0] in ('httpx','PySide6','session_studio') and not m.startswith('session_studio.core') and m != 'session_studio'))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
