"""Constants and helpers shared by the LLM tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_REPO_ORACLE = Path(__file__).resolve().parents[1] / "oracle"
_SHARED_ORACLE = Path("/work/shared/oracle")
ORACLE_DIR = Path(
    os.environ.get("PI_ORACLE_DIR")
    or (str(_REPO_ORACLE) if (_REPO_ORACLE / "mock-llm.mjs").is_file() else str(_SHARED_ORACLE))
)
MOCK_SCRIPT = ORACLE_DIR / "mock-llm.mjs"
ORACLE_SCRIPT = ORACLE_DIR / "pi-oracle.mjs"
FIXTURES = ORACLE_DIR / "fixtures"
PI_HOME = Path(os.environ.get("PI_ORACLE_HOME", str(Path.home() / ".cache" / "pi-oracle-0.80.2")))
NODE = shutil.which("node")

FAKE_KEY = "sk-test-FAKEKEY-0123456789abcdefXYZ"
