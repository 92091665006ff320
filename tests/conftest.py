"""Shared fixtures: the pi oracle (real pi 0.80.2 on node), generated sessions, the mock LLM."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from session_studio.core import session as session_module
from session_studio.core.jsvalue import UNDEFINED, js_stringify
from tests.oracle.oracle_serve import SERVED_COMMANDS, OracleServer

# keep the index cache of big test files out of the user's ~/.cache
os.environ.setdefault("SESSION_STUDIO_CACHE_DIR", tempfile.mkdtemp(prefix="session-studio-test-cache-"))
# and the append journal (core.journal) out of ~/.local/state
os.environ.setdefault("SESSION_STUDIO_STATE_DIR", tempfile.mkdtemp(prefix="session-studio-test-state-"))

ROOT = Path(__file__).resolve().parent.parent
ORACLE_DIR = ROOT / "tests" / "oracle"
FIXTURES = ORACLE_DIR / "fixtures"


def _node() -> str | None:
    return shutil.which("node")


# Tests that use the real pi (node) are the oracle stage, wherever they live and however they are
# marked; every test under tests/ui is the ui stage (./scripts/test oracle|ui).
_NODE_FIXTURES = frozenset({"mock_llm", "mock_factory", "llm_mock"})


# The oracle stage's longest tests (measured with --durations, 20-60 s each on 2 cores), started
# first so that the two xdist workers (--dist load, one test at a time) finish together instead of
# one of them starting a minute-long test at the end. Only the order changes.
LONGEST_FIRST = (
    "tests/core/test_oracle_differential.py::test_compare_plan_with_pi[damaged]",
    "tests/ui/test_hostile_window.py::test_hundred_thousand_entry_chain_opens",
    "tests/core/test_oracle_differential.py::test_compare_plan_with_pi[medium-large]",
    "tests/engine/test_safe_writes.py::test_kill_9_during_a_real_30_mb_append",
    "tests/engine/test_roundtrip16.py::test_compact_under_1_6_0_matches_pi_on_scenarios",
    "tests/core/test_fuzz.py::test_type_confused_entries_agree_with_pi",
    "tests/core/test_oracle_differential.py::test_context_and_branch_agree",
    "tests/core/test_oracle16_branch.py::test_branch_agrees_on_the_scenarios",
    "tests/engine/test_roundtrip.py::test_compaction_matches_pi",
    "tests/core/test_oracle_differential.py::test_compare_plan_with_pi",
)


# ... except a test that times the GUI thread: started last, when the other worker runs the last short
# tests or nothing, not beside the multi-process comparisons (there its 0.5 s bound was missed with
# 0.56 s on a loaded box, on the unchanged suite too)
TIMED_LAST = (
    "tests/ui/test_profile_compare_view.py::test_a_hundred_thousand_entry_session_does_not_freeze_the_window",
)


def _longest_first_rank(item: pytest.Item) -> int:
    if item.nodeid.startswith(TIMED_LAST):
        return len(LONGEST_FIRST) + 1
    return next(
        (i for i, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)), len(LONGEST_FIRST)
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    ui_dir = ROOT / "tests" / "ui"
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _NODE_FIXTURES or any("oracle" in name for name in fixtures):
            item.add_marker(pytest.mark.oracle)
        if ui_dir in item.path.parents:
            item.add_marker(pytest.mark.ui)
    items.sort(key=_longest_first_rank)  # stable: the rest keep pytest's order


def _install_oracle(script: Path, home_var: str, default_home: str, what: str) -> str:
    """Install (once, idempotently) a pinned pi oracle; skip when node is missing."""
    if _node() is None:
        pytest.skip(f"node is not installed (needed for the {what} oracle)")
    env = dict(os.environ)
    env.setdefault(home_var, str(Path.home() / ".cache" / default_home))
    home = Path(env[home_var])
    home.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers each run this: one installs, the others wait and find it installed
    with open(home.parent / f".{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"{what} oracle install failed: {r.stderr[-2000:]}")
    return r.stdout.strip()


@pytest.fixture(scope="session")
def oracle_home() -> str:
    return _install_oracle(ORACLE_DIR / "install.sh", "PI_ORACLE_HOME", "pi-oracle-0.80.2", "pi 0.80.2")


class Oracle:
    """Runs pi-oracle.mjs: plan, context and branch in one `serve` process per test process (pi's
    modules imported once; each answer is what a run of its own prints), other commands each in a
    process of their own."""

    script = ORACLE_DIR / "pi-oracle.mjs"
    home_var = "PI_ORACLE_HOME"

    def __init__(self, home: str) -> None:
        self.home = home
        self.env = dict(os.environ, TZ="UTC")
        self.env[self.home_var] = home
        self._server = OracleServer(str(self.script), env=self.env)

    def run(self, *args: str, check: bool = True) -> dict:
        if args and args[0] in SERVED_COMMANDS:
            answer = self._server.run(args, timeout=300)
            code, stdout, stderr = answer.exit_code, answer.stdout, answer.stderr
        else:
            r = subprocess.run(
                ["node", str(self.script), *args], capture_output=True, env=self.env, timeout=300
            )
            code, stdout, stderr = r.returncode, r.stdout, r.stderr.decode()
        if code not in (0, 3) and check:
            raise AssertionError(f"oracle failed ({code}): {stderr[-2000:]}")
        return json.loads(stdout)

    def close(self) -> None:
        self._server.close()


@pytest.fixture(scope="session")
def oracle(oracle_home: str) -> Iterator[Oracle]:
    runner = Oracle(oracle_home)
    yield runner
    runner.close()


ORACLE16_DIR = ORACLE_DIR / "pi-1.6.0"


@pytest.fixture(scope="session")
def oracle16_home() -> str:
    return _install_oracle(ORACLE16_DIR / "install.sh", "PI16_HOME", "pi-oracle-1.6.0", "pi 1.6.0")


class Oracle16(Oracle):
    """The pi 1.6.0 oracle (tests/oracle/pi-1.6.0/pi-oracle.mjs)."""

    script = ORACLE16_DIR / "pi-oracle.mjs"
    home_var = "PI16_HOME"


@pytest.fixture(scope="session")
def oracle16(oracle16_home: str) -> Iterator[Oracle16]:
    runner = Oracle16(oracle16_home)
    yield runner
    runner.close()


def oracle_compare_module() -> ModuleType:
    """The oracle toolkit's compare.py as a module (its normalise, first_diff, field_errored)."""
    spec = importlib.util.spec_from_file_location("oracle_compare", ORACLE_DIR / "compare.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_js_json(v: Any) -> Any:
    """``v`` as a JS oracle's output holds it: JSON.stringify, then JSON.parse (undefined: null)."""
    return json.loads(js_stringify(v) or "null")


def plan_cut_fields(state: Any) -> dict[str, Any]:
    """A plan's cut as pi's ``plan`` output names it (its ``cut`` object's fields)."""
    cut = state.cut
    first = cut.first_kept_index
    entry_id = state.session.records[state.path[first]].id if first < len(state.path) else None
    return {
        "firstKeptEntryIndex": first,
        "firstKeptEntryId": None if entry_id is UNDEFINED else entry_id,
        "turnStartIndex": cut.turn_start_index,
        "isSplitTurn": cut.is_split_turn,
    }


def pi_checks(env: dict[str, str], version: str, jobs: Sequence[Sequence[str | Path | int]]) -> list[Any]:
    """What pi's own compaction check asks for on each job's session (tests/oracle/threshold-check.mjs
    --batch, one node process for all): null, "threshold" or "overflow". A job is the single form's
    arguments without --pi: the session's path, then its options."""
    if not jobs:
        return []
    out = subprocess.run(
        ["node", str(ORACLE_DIR / "threshold-check.mjs"), "--batch", "--pi", version],
        input=json.dumps([[str(a) for a in job] for job in jobs]).encode(),
        check=True,
        capture_output=True,
        env=env,
        timeout=120 + 10 * len(jobs),
    )
    answers = json.loads(out.stdout)
    assert len(answers) == len(jobs)
    return [answer["compacts"] for answer in answers]


def pi_check_job(path: Path, window: int, reserve: int, *options: str) -> list[str | Path | int]:
    """One job of ``pi_checks``: pi's check of the session for a model of this context window."""
    return [path, "--context-window", window, "--reserve", reserve, *options]


def generate_scenarios(out: Path, env: dict[str, str] | None = None) -> list[Path]:
    """pi 1.6.0's 28 hand-built scenarios (``gen_scenarios.mjs scenarios``), written to ``out``."""
    subprocess.run(
        ["node", str(ORACLE16_DIR / "gen_scenarios.mjs"), "scenarios", "--out", str(out)],
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == 28
    return files


def generate(out: Path, *args: str) -> list[Path]:
    subprocess.run(
        [sys.executable, str(ORACLE_DIR / "gen_sessions.py"), *args, "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return sorted(out.glob("*.jsonl"))


def generate_injected(out: Path, env: dict[str, str] | None, seed: int, *args: str) -> list[Path]:
    """gen_sessions.py's sessions (``--seed seed``, ``args``) with pi 1.6.0 entries injected by
    ``gen_scenarios.mjs inject`` (system messages, context edits, usage entries), in ``out``."""
    plain = out / "plain"
    generate(plain, "--seed", str(seed), *args)
    injected = out / "injected"
    subprocess.run(
        [
            "node",
            str(ORACLE16_DIR / "gen_scenarios.mjs"),
            "inject",
            "--in",
            str(plain),
            "--out",
            str(injected),
            "--seed",
            str(seed),
        ],
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )
    return sorted(injected.glob("*.jsonl"))


@pytest.fixture(scope="session")
def mock_llm() -> Iterator[dict[str, str]]:
    """The oracle's mock LLM server on 127.0.0.1 (OpenAI and Anthropic APIs)."""
    if _node() is None:
        pytest.skip("node is not installed (needed for the mock LLM)")
    proc = subprocess.Popen(
        # lives as long as the test run (the teardown ends it); --seconds only ends one left behind,
        # so it must outlast a slow run of the oracle stage (1200 s did not on a loaded box)
        ["node", str(ORACLE_DIR / "mock-llm.mjs"), "--port", "0", "--seconds", "3600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        yield json.loads(line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


@pytest.fixture(params=["compiled", "python"])
def bulk_loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the compiled helper (core/_bulkindex.c) and with the Python code it replaces.

    Without the helper (no compiler at install) the compiled run skips; CI fails on that in
    test_bulk_helper.py instead.
    """
    if request.param == "compiled":
        if session_module.BULK_HELPER is None:
            pytest.skip("the compiled loader helper is not built")
    else:
        monkeypatch.setattr(session_module, "BULK_HELPER", None)
    return str(request.param)
