"""The model catalogue (llm/_catalog.py) equals pi-ai 0.80.2's models.generated.js, row by row."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from session_studio.llm._catalog import CATALOG_ROWS

_DUMP = """
const m = await import(process.env.PI_ORACLE_HOME + "/node_modules/@earendil-works/pi-ai/dist/models.generated.js");
const out = {};
for (const [prov, rows] of Object.entries(m.MODELS))
  for (const [id, r] of Object.entries(rows)) out[prov + "/" + id] = [r.contextWindow, r.maxTokens, !!r.reasoning];
console.log(JSON.stringify(out));
"""


@pytest.mark.oracle
def test_catalogue_rows_equal_pi_ai(oracle_home: str) -> None:
    env = dict(os.environ, PI_ORACLE_HOME=oracle_home)
    r = subprocess.run(
        ["node", "--input-type=module", "-e", _DUMP], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    pi: dict[str, Any] = json.loads(r.stdout)
    ours = {f"{row[0]}/{row[1]}": [row[2], row[3], row[4]] for row in CATALOG_ROWS}
    missing = sorted(k for k in ours if k not in pi)
    assert not missing, f"not in pi-ai 0.80.2: {missing}"
    differ = {k: (v, pi[k]) for k, v in ours.items() if pi[k] != v}
    assert not differ, f"(ours, pi-ai) differ: {differ}"
    assert len(ours) >= 100
