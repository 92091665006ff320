"""The window plans with the file's pi profile, shows which and why, and lets the user switch it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel

from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, ProfileChoice
from session_studio.ui.document import SessionDocument
from session_studio.ui.planner import PlannerPanel
from session_studio.ui.settings import AppSettings
from session_studio.ui.why import explain_cut
from tests.conftest import ORACLE16_DIR

CASES = ORACLE16_DIR / "cases"


def _doc(qtbot: Any, runner: Any, path: Path, plain: str = "auto") -> SessionDocument:
    d = SessionDocument(runner)
    d.profile_plain = plain
    d.open(str(path))
    qtbot.waitUntil(lambda: d.state is not None)
    return d


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copyfile(CASES / name, dst)
    return dst


def test_a_file_with_1_6_0_shapes_is_planned_as_1_6_0(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    d = _doc(qtbot, runner, _copy(tmp_path, "m2-edit-null.jsonl"))
    res = d.loaded_state
    assert res is not None and res.profile is not None
    assert res.profile.profile is PROFILE_1_6_0
    assert "context_edit" in res.profile.reason
    assert d.state is not None and d.state.profile is PROFILE_1_6_0
    assert d.state.key is not None and d.state.key.profile == "1.6.0"


def test_switching_the_profile_replans(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    d = _doc(qtbot, runner, _copy(tmp_path, "m4-example-d.jsonl"))
    assert d.loaded_state is not None and d.loaded_state.profile is not None
    assert d.loaded_state.profile.profile is PROFILE_0_80_2  # plain file, pi 0.80.2 "installed"
    d.set_params(keep=100)
    assert d.state is not None and d.state.nothing_to_compact  # quirk §12.1.2
    assert "12.1.2" in explain_cut(d.state)
    with qtbot.waitSignal(d.profile_changed) as sig:
        d.set_profile(pin="1.6.0")
    assert sig.args[0].profile.profile is PROFILE_1_6_0
    assert "pinned" in sig.args[0].profile.reason
    assert d.state.profile is PROFILE_1_6_0 and d.state.keep == 100
    assert not d.state.nothing_to_compact  # rule 27
    assert "rule 27" in explain_cut(d.state)
    assert "How pi 1.6.0 picks the cut" in explain_cut(d.state)
    d.set_profile(pin="auto", plain="1.6.0")  # the user's setting for plain files
    assert d.state.profile is PROFILE_1_6_0
    assert (
        d.loaded_state.profile is not None
        and "your preference for such files" in d.loaded_state.profile.reason
    )
    d.set_profile(plain="0.80.2")
    assert d.state.profile is PROFILE_0_80_2


def test_manual_cut_is_dropped_when_the_profile_changes(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    d = _doc(qtbot, runner, _copy(tmp_path, "m3-example-e.jsonl"))
    st = d.state
    assert st is not None
    valid = next(r for r in st.path if st.marks[r] in ("valid", "cut"))
    assert d.set_manual_cut(valid) is None and d.state is not None and d.state.manual
    d.set_profile(pin="1.6.0" if st.profile is PROFILE_0_80_2 else "0.80.2")
    assert d.state is not None and not d.state.manual


def test_planner_panel_shows_the_profile_and_switches_it(qtbot: Any) -> None:
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_profile(ProfileChoice(PROFILE_1_6_0, "the file has a usage entry (line 3)"), "auto")
    assert "pi 1.6.0" in panel.profile_note.text() and "usage entry" in panel.profile_note.text()
    assert panel.profile_combo.currentData() == "auto"
    assert "1.6.0" in panel.quirk_box.title()
    with qtbot.waitSignal(panel.profile_requested) as sig:
        panel.profile_combo.activated.emit(panel.profile_combo.findData("0.80.2"))
    assert sig.args == ["0.80.2"]
    panel.set_profile(ProfileChoice(PROFILE_0_80_2, "pinned: --pi-version 0.80.2"), "0.80.2")
    assert panel.profile_combo.currentData() == "0.80.2"
    assert "0.80.2 quirks" in panel.quirk_box.title()


def test_an_empty_1_6_0_rule_box_points_to_the_comparison_not_to_no_difference(
    qtbot: Any, runner: Any, tmp_path: Path
) -> None:
    """Seen on the 117 MB 1.6.0 session: the box titled "pi 1.6.0 rules that differ from 0.80.2"
    said "None for this plan." while Compare pi versions listed three rules and another cut. The box
    shows the rules that move the cut; its title says so and, empty, it points to the comparison."""
    d = _doc(qtbot, runner, _copy(tmp_path, "m3-example-e.jsonl"), plain="1.6.0")
    st = d.state
    assert st is not None and st.profile is PROFILE_1_6_0 and not st.quirks
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_profile(ProfileChoice(PROFILE_1_6_0, "pinned"), "1.6.0")
    panel.set_state(st)
    assert panel.quirk_box.title() == "pi 1.6.0 cut rules that apply"

    def box_text() -> str:
        return " ".join(
            w.text()
            for k in range(panel.quirk_layout.count())
            if isinstance(w := panel.quirk_layout.itemAt(k).widget(), QLabel)
        )

    assert "Compare pi versions" in box_text()
    panel.set_profile(ProfileChoice(PROFILE_0_80_2, "pinned"), "0.80.2")
    panel.set_state(st)
    assert panel.quirk_box.title() == "pi 0.80.2 quirks that apply"
    assert box_text() == "None for this plan."


def test_pi_version_setting_persists(tmp_path: Path) -> None:
    s = AppSettings(tmp_path / "s.ini")
    assert s.pi_version() == "auto"
    s.set_pi_version("1.6.0")
    s.sync()
    assert AppSettings(tmp_path / "s.ini").pi_version() == "1.6.0"
    s.set_pi_version("9.9")
    assert s.pi_version() == "auto"


def test_the_window_commits_under_the_plan_s_profile(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    import json

    from session_studio.llm.base import CancelToken
    from session_studio.ui import actions

    path = _copy(tmp_path, "m1-system-first.jsonl")
    d = _doc(qtbot, runner, path)
    d.set_params(keep=100)
    st = d.state
    assert st is not None and st.profile is PROFILE_1_6_0 and not st.nothing_to_compact
    p = actions.SummarizeParams(
        leaf_id=None,
        keep=100,
        reserve=d.reserve,
        cut_entry_id=None,
        provider="offline",
        config=None,
        plan_key=st.key,
    )
    assert p.profile is PROFILE_1_6_0
    outcome = actions.summarize_job(d.session, p, lambda _i, _t: None, CancelToken())
    entry = actions.commit_job(outcome, outcome.summary)
    assert entry["systemMessage"]["role"] == "system"
    assert json.loads(path.read_bytes().splitlines()[-1])["id"] == entry["id"]


def test_preview_after_side_under_1_6_0_matches_the_plan(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    from session_studio.ui.preview import build_context_pair

    d = _doc(qtbot, runner, _copy(tmp_path, "m1-system-first.jsonl"))
    d.set_params(keep=100)
    st = d.state
    assert st is not None and not st.nothing_to_compact
    pair = build_context_pair(st, "")
    assert pair.after_count == len(st.after_tokens)
    assert [k for _, k, _ in st.after_tokens[:2]] == ["system", "compactionSummary"]
    # the panes show the system message they count (it reaches the LLM under 1.6.0, rule 20): the
    # summary's serialisation the rest of each pane uses leaves it out
    assert pair.before_text.startswith("[System]: ") and pair.after_text.startswith("[System]: ")
    assert pair.before_text.count("[System]: ") == 1
    # a system prompt of pages shows its head in the panes (its tokens count whole)
    system = pair.before_text.split("\n\n")[0]
    from session_studio.ui.preview import SYSTEM_HEAD_CHARS

    assert len(system) < SYSTEM_HEAD_CHARS + 120 and "the whole message is in the inspector" in system
    d.set_profile(pin="0.80.2")
    st = d.state
    assert st is not None and "[System]" not in build_context_pair(st, "").before_text  # 0.80.2 drops it


def test_the_header_banner_says_what_the_files_pi_does(qtbot: Any, window: Any, tmp_path: Path) -> None:
    """A file without a valid header: pi 0.80.2 would overwrite it, pi 1.6.0 refuses it (rule 8);
    the banner follows the profile, with the same sentence `info` prints."""
    import json

    path = tmp_path / "headerless.jsonl"
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z"}
    user["message"] = {"role": "user", "content": "hi", "timestamp": 1}
    path.write_text(json.dumps(user) + "\n")
    d = window.doc
    window.open_path(str(path))
    qtbot.waitUntil(lambda: d.state is not None and d.session is not None, timeout=10_000)
    assert d.session.reset and d.state.profile is PROFILE_0_80_2  # the UI tests' machine has pi 0.80.2
    assert "pi 0.80.2 would start a new session" in window.banner.label.text()
    d.set_profile(pin="1.6.0")
    qtbot.waitUntil(lambda: "pi 1.6.0 refuses to open it" in window.banner.label.text(), timeout=10_000)


def test_a_pin_in_the_window_is_said_in_the_window_s_words() -> None:
    """The planner's note said "pinned: --pi-version 0.80.2", a command-line option, in the window."""
    from session_studio.core import Session
    from session_studio.ui.document import choose_profile

    from .conftest import SAMPLES

    session = Session.open(str(sorted(SAMPLES.glob("*.jsonl"))[0]))
    assert choose_profile(session, "0.80.2").reason == "pinned: chosen for this file in the pi version box"
    assert "your preference for such files is pi 0.80.2" in choose_profile(session, "auto", "0.80.2").reason


def test_a_pi_chosen_for_a_file_can_become_the_plain_files_preference(
    qtbot: Any, window: Any, tmp_path: Path
) -> None:
    """The preference for files without pi 1.6.0 entries had no control in the window (the note
    named it, only the settings file could change it)."""
    window.open_path(str(_copy(tmp_path, "m4-example-d.jsonl")))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    planner = window.planner
    assert not planner.plain_default_button.isVisible()
    k = planner.profile_combo.findData("1.6.0")
    planner.profile_combo.setCurrentIndex(k)
    planner.profile_combo.activated.emit(k)  # the user's pick: this file only
    qtbot.waitUntil(lambda: planner.plain_default_button.isVisible())
    assert planner.plain_default_button.text() == "Use pi 1.6.0 for every plain file"
    planner.plain_default_button.click()
    qtbot.waitUntil(lambda: "your preference for such files is pi 1.6.0" in planner.profile_note.text())
    assert window.settings.pi_version() == "1.6.0" and planner.profile_combo.currentData() == "auto"
    assert window.doc.state.profile is PROFILE_1_6_0
    assert planner.plain_default_button.text() == "Plain files: follow the installed pi"
    planner.plain_default_button.click()
    qtbot.waitUntil(lambda: not planner.plain_default_button.isVisible())
    assert window.settings.pi_version() == "auto" and window.doc.state.profile is PROFILE_0_80_2
