"""Regenerate the README / AppStream screenshots (offscreen, deterministic inputs).

    python docs/screenshots/make.py

Uses a real pi session (tests/oracle/fixtures/before-compaction.jsonl, from pi's test data),
generated sessions (tests/oracle/gen_sessions.py --seed 7 --size medium) for the browser, the
split-turn session of the UI tests, the pi 1.6.0 session of the UI tests (tests/ui/pi16_sample.py),
the real MainWindow and the offline summariser: no network, no pi needed.

    python docs/screenshots/make.py pi16

renders only the pi 1.6.0 ones (pi16-*.png and profiles-side-by-side.png);

    python docs/screenshots/make.py profiles

only the side-by-side view of both pis' plans (profiles-side-by-side.png);

    python docs/screenshots/make.py ab

only ab-summaries.png: two candidate summaries of the real session (Compare summaries).

    python docs/screenshots/make.py timeline

only the context timeline (timeline.png, timeline-dark.png).

    python docs/screenshots/make.py recovery

only recovery.png: a session whose last answer failed with a context overflow, read as pi 1.6.0:
the planner says where pi's recovery cuts once it has omitted the failed attempt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TMP = Path(tempfile.mkdtemp(prefix="ss-shots-"))
for var in ("SESSION_STUDIO_CONFIG_DIR", "SESSION_STUDIO_STATE_DIR", "PI_CODING_AGENT_DIR"):
    os.environ[var] = str(TMP / "cfg")
SIZE = (1600, 1000)


def split_turn_session(path: Path) -> Path:
    """One early turn, then a long tool-using turn: keep=20000 cuts inside it (as tests/ui/conftest.py)."""
    sys.path.insert(0, str(ROOT / "tests" / "ui"))
    from conftest import write_session  # type: ignore[import-not-found]

    spec: list[object] = [("user", 3000), ("assistant", 3000), ("user", 400)]
    for _ in range(8):
        spec += [("assistant", 600), ("toolResult", 4000)]
    spec += [("assistant", 800)]
    return write_session(path, spec, cwd="/home/dev/projects/webshop")


def generated(count: int) -> list[Path]:
    out = TMP / "sessions" / "--home-dev-projects-game--"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/oracle/gen_sessions.py"),
            "--seed",
            "7",
            "--count",
            str(count),
            "--size",
            "medium",
            "--out",
            str(out),
            "--quiet",
        ],
        check=True,
    )
    return sorted(out.glob("*.jsonl"))


def failed_session(path: Path) -> Path:
    """A tool-using turn whose last answer failed with a context overflow after a big tool result:
    pi 1.6.0 omits that attempt before it compacts, and keeps from further back than this plan."""
    sys.path.insert(0, str(ROOT / "tests" / "ui"))
    from conftest import write_session  # type: ignore[import-not-found]

    call = {"type": "toolCall", "id": "call-big", "name": "read", "arguments": {"path": "src/cart.ts"}}
    failed = {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Reading the whole cart module."}, call],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "stopReason": "error",
            "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
            "timestamp": 1_700_000_100_000,
        },
    }
    result = {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": "call-big",
            "toolName": "read",
            "content": [{"type": "text", "text": "export const cart = {};\n" * 1500}],
            "isError": False,
            "timestamp": 1_700_000_100_001,
        },
    }
    spec: list[object] = [("user", 3000), ("assistant", 3000), ("user", 400)]
    for _ in range(10):
        spec += [("assistant", 600), ("toolResult", 6000)]
    spec += [failed, result]
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_session(path, spec, cwd="/home/dev/projects/webshop")


def pi16_session(path: Path) -> Path:
    """The pi 1.6.0 session of the UI tests: system messages, context edits, usage entries and a
    compaction with a system snapshot."""
    sys.path.insert(0, str(ROOT))
    from tests.ui.pi16_sample import write_pi16_session  # type: ignore[import-not-found]

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_pi16_session(path)


def main() -> int:
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.tasks import TaskRunner
    from session_studio.ui.theme import apply_theme

    app = QApplication.instance() or QApplication([sys.argv[0]])
    only_pi16 = sys.argv[1:] == ["pi16"]
    only_profiles = sys.argv[1:] == ["profiles"]
    only_ab = sys.argv[1:] == ["ab"]
    only_timeline = sys.argv[1:] == ["timeline"]
    only_recovery = sys.argv[1:] == ["recovery"]

    def pump(cond: object = None, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            QCoreApplication.processEvents()
            if cond is not None and cond():  # type: ignore[operator]
                break
            time.sleep(0.01)

    def window(theme: str) -> MainWindow:
        apply_theme(app, theme)
        app.setStyleSheet(stylesheet())
        w = MainWindow(AppSettings(TMP / f"{theme}.ini"), TaskRunner(), sessions_root=str(TMP / "sessions"))
        w.resize(*SIZE)
        w.show()
        return w

    def open_(w: MainWindow, path: Path) -> None:
        w.open_path(str(path))
        pump(lambda: w.doc.state is not None and w.doc.path == str(path), 60)
        settle(w)

    def settle(w: MainWindow) -> None:
        pump(lambda: not w.doc.preparing and not w.runner.busy, 30)
        pump(None, 0.3)

    def shot(w: MainWindow, name: str) -> None:
        out = HERE / name
        assert w.grab().save(str(out)), out
        print(out)

    def select(w: MainWindow, entry_id: str) -> None:
        record = w.doc.session.get_index(entry_id)
        w.doc.select(record)
        w.tabs.setCurrentWidget(w.inspector)
        w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        settle(w)
        # the status bar would show the (random) temporary path once "Loaded" times out
        w.statusBar().showMessage("A pi 1.6.0 session (tests/ui/pi16_sample.py)")

    def timeline_shots() -> None:
        """The real pi session with two compactions, the timeline shown, a turn selected from it."""
        session = TMP / "sessions" / "--home-dev-projects-pi-mono--" / "before-compaction.jsonl"
        session.parent.mkdir(parents=True, exist_ok=True)
        session.write_bytes((ROOT / "tests" / "oracle" / "fixtures" / "before-compaction.jsonl").read_bytes())
        for theme, name in (("light", "timeline.png"), ("dark", "timeline-dark.png")):
            w = window(theme)
            open_(w, session)
            w.a_timeline.setChecked(True)
            pump(lambda w=w: w.timeline.history is not None, 30)
            settle(w)
            chart = w.timeline.chart
            lay = chart.current_layout()
            assert lay is not None
            drop_x = lay.drops[1][1]
            chart.entry_clicked.emit(chart.hit_at(drop_x + 60, lay.area.top + 40).record)  # type: ignore[union-attr]
            w.tabs.setCurrentWidget(w.inspector)
            settle(w)
            shot(w, name)
            w.close()

    def compare_shot(session: Path) -> None:
        """Two offline candidates of the same plan: pi's default prompt, and custom instructions."""
        w = window("light")
        open_(w, session)
        w.tabs.setCurrentWidget(w.preview)
        w.preview.show_compare()
        # the candidates need the width: the tree keeps a readable column, the planner its own
        _tree, _centre, planner = w.splitter.sizes()
        w.splitter.setSizes([380, sum(w.splitter.sizes()) - 380 - planner, planner])
        settle(w)
        comp = w.comparison
        a, b = comp.pane("A"), comp.pane("B")
        b.instructions.setText("the failing tests and the files touched")
        for pane in (a, b):
            pane.set_provider("offline")
            pane.generate_button.click()

        def done() -> bool:
            return all(
                comp.runs[p].outcome is not None
                and comp.runs[p].view is not None
                and comp.runs[p].view_op is None
                for p in (a, b)
            )

        pump(done, 60)
        settle(w)
        for pane in (a, b):
            pane.summary.moveCursor(pane.summary.textCursor().MoveOperation.Start)
        w.statusBar().showMessage("Two candidate summaries of the same plan (offline summariser)")
        shot(w, "ab-summaries.png")
        w.close()

    def upgraded(path: Path) -> Path:
        """A version 3 copy of the real session (pi's fixture is version 1): Commit is enabled."""
        from session_studio.core import Session
        from session_studio.engine import upgrade_legacy_file

        v3 = TMP / "v3" / path.name
        v3.parent.mkdir(parents=True, exist_ok=True)
        v3.write_bytes(path.read_bytes())
        upgrade_legacy_file(Session.open(v3))
        return v3

    def recovery_shot() -> None:
        """pi 1.6.0's overflow recovery beside the plan: the planner names where it cuts."""
        w = window("light")
        w.doc.profile_plain = "1.6.0"  # the file has no 1.6.0 entry: read as pi 1.6.0 runs it
        open_(w, failed_session(TMP / "sessions" / "--home-dev-projects-webshop--" / "failed.jsonl"))
        import session_studio.engine  # noqa: F401  (what the window's background import does)

        w.doc.engine_imported()
        pump(lambda: w.doc.recovery is not None, 30)
        settle(w)
        w.doc.select(w.doc.session.get_index("e0023"))  # the failed answer: its error in the inspector
        w.tabs.setCurrentWidget(w.inspector)
        w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        settle(w)
        w.statusBar().showMessage("The last answer failed with a context overflow; read as pi 1.6.0")
        shot(w, "recovery.png")
        w.close()

    if only_ab:
        compare_shot(upgraded(ROOT / "tests" / "oracle" / "fixtures" / "before-compaction.jsonl"))
        return 0
    if only_recovery:
        recovery_shot()
        return 0
    if only_timeline:
        timeline_shots()
        return 0

    # pi 1.6.0: the usage filter on, a replaced tool result (both versions); the system message;
    # the compaction with its system snapshot and usage
    w = window("light")
    pi16_file = pi16_session(TMP / "sessions" / "--home-dev-projects-webshop--" / "pi16.jsonl")
    open_(w, pi16_file)
    if not only_profiles:
        w.filter_combo.setCurrentIndex(w.filter_combo.findData("usage"))
        settle(w)
        w.tree.expandAll()
        select(w, "e0011")
        shot(w, "pi16-edits.png")
        select(w, "e0000")
        shot(w, "pi16-system.png")
        select(w, "e0005")
        w.inspector.browser.toggled.emit("snap")
        settle(w)
        w.statusBar().showMessage("A pi 1.6.0 session (tests/ui/pi16_sample.py)")
        shot(w, "pi16-compaction.png")
    w.close()
    # both pis' plans of the same session side by side: keepRecentTokens 2000 cuts elsewhere in 1.6.0
    # (system messages and context edits), the compaction keeps the system snapshot
    w = window("light")
    open_(w, pi16_file)
    w.doc.set_params(keep=2000)
    w.tree.expandAll()
    w.a_compare.trigger()
    pump(lambda: w.compare.comparison is not None, 30)
    settle(w)
    c = w.compare.comparison
    assert c is not None and c.new.cut_record is not None and c.differs, c
    w.compare.entry_clicked.emit(c.new.cut_record)  # as a click on pi 1.6.0's cut
    settle(w)
    w.statusBar().showMessage("A pi 1.6.0 session (tests/ui/pi16_sample.py), compared with pi 0.80.2")
    shot(w, "profiles-side-by-side.png")
    w.close()
    if only_pi16 or only_profiles:
        return 0

    generated(4)  # the browser lists them next to the real session
    split = split_turn_session(TMP / "split.jsonl")
    # a real pi session (from pi's own test data), 90 % of its window used, before compaction
    main_session = TMP / "sessions" / "--home-dev-projects-pi-mono--" / "before-compaction.jsonl"
    main_session.parent.mkdir(parents=True, exist_ok=True)
    main_session.write_bytes(
        (ROOT / "tests" / "oracle" / "fixtures" / "before-compaction.jsonl").read_bytes()
    )
    for theme, name in (("light", "main.png"), ("dark", "main-dark.png")):
        w = window(theme)
        open_(w, main_session)
        w.tabs.setCurrentWidget(w.inspector)
        w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        settle(w)
        w.a_goto_cut.trigger()
        settle(w)
        shot(w, name)
        if theme == "light":
            w.tabs.setCurrentWidget(w.preview)
            w.preview.provider.setCurrentIndex(w.preview.provider.findData("offline"))
            w.preview.generate_button.click()
            pump(lambda w=w: bool(w.doc.outcome) and w.preview.pair is not None, 60)
            settle(w)
            pump(lambda w=w: w.preview.pair is not None and w.preview.pair.after_context is not None, 30)
            settle(w)
            shot(w, "preview.png")
        w.close()
    compare_shot(upgraded(main_session))

    timeline_shots()
    recovery_shot()
    w = window("light")
    open_(w, split)
    w.tree.setFocus(Qt.FocusReason.OtherFocusReason)
    w.a_goto_cut.trigger()
    w.tabs.setCurrentWidget(w.why)
    settle(w)
    shot(w, "split-turn.png")
    w.show_browser()
    pump(lambda: w.browser.model.rowCount() > 0, 30)
    settle(w)
    shot(w, "browser.png")
    w.close()
    (HERE / "inputs.json").write_text(
        json.dumps(
            {"generator": "tests/oracle/gen_sessions.py --seed 7 --size medium", "main": main_session.name}
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
