"""Open a huge session in the real window (offscreen) and measure what the user waits for.

    python benchmarks/ui_open.py [SESSION.jsonl] [--no-cli] [--query WORD] [--watchdog MS] [--profile N] [--smoke] [--append] [--generate]

Without an argument a huge session is generated (gen_sessions.py --seed 5 --size huge, ~20 s) or the
copy at /tmp/huge/huge-s5-000-v3.jsonl is used. Prints JSON: time to the first tree rows (the head
of a big file is shown while the rest is indexed), time to fully loaded (planned, nothing running),
peak RSS, the longest GUI-thread stall while loading (a 10 ms QTimer measures how late it fires),
and the longest stall of each interaction once loaded: scrolling through the whole tree page by
page, jumping to the last row (End), to the leaf, typing a search and clearing it (with the time
until the results are shown; then the same in the entries' whole content, In content), moving the keepRecentTokens slider, jumping to the cut it moved to.
Each stall is also given as the GUI thread's CPU time between two heartbeats (``..._cpu_ms``): what
the GUI thread itself ran, without the time it waited for the GIL or for a core the other processes
of a busy machine held. The longest stall less the CPU time the hypervisor took from the machine
meanwhile (``..._less_host_steal``, from /proc/stat) leaves out what the host did: on a virtual
machine whose core is taken for 100 ms, the whole process stands still. Each loading stall over
50 ms is listed with when it came, its CPU time and the host's steal.

For comparison the CLI's cold ``plan`` of the same file (no index cache) runs first as a
separate process (``--no-cli`` skips it): its wall time and peak RSS, and the window's ratios; and
the memory each holds for the session beyond its own start (the CLI's plan of a one-message session;
the empty window), and their ratio (``ratio_session_memory_to_cli``).
``--append`` opens a copy of the file (in a temporary directory) and, last, appends APPENDS entries
to it one after the other, each once the previous one is shown, as pi does while the window is
open: the longest stall of the refreshes (``pi_appends_an_entry``), each one's, and the time until
the tree shows each entry.
``--generate``, last, opens the Preview tab and generates an offline summary of the plan: their
stalls, and in ``generated`` the time, the memory before, the peak's rise and the memory held after.
``--watchdog MS`` dumps the stack of every thread to stderr whenever the heartbeat is MS late (what
stalls the GUI thread: its own work, or a worker holding the GIL in one long call). A diagnostic
only: faulthandler's timed dumps read running threads' frames, and the process crashed at exit in
2 of 5 runs with it (never without it); its figures are not the benchmark's. ``--profile N``
prints, for each interaction, the N costliest calls of the GUI thread meanwhile (cProfile, to stderr).
"""

from __future__ import annotations

import cProfile
import faulthandler
import json
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
DEFAULT = Path("/tmp/huge/huge-s5-000-v3.jsonl")
#: --append: how many entries pi appends, one after the other (the stall is the longest of them)
APPENDS = 5
#: the loading stalls listed one by one (when each was, how long, the GUI thread's CPU time in it)
LOGGED_STALL_MS = 50


def cli_plan_cold(path: Path) -> dict[str, float]:
    """Wall time and peak RSS of ``session-studio plan FILE`` without the index cache (a whole process)."""
    env = dict(os.environ, SESSION_STUDIO_NO_INDEX_CACHE="1", TZ="UTC")
    cmd = [
        sys.executable,
        "-m",
        "session_studio.cli",
        "plan",
        str(path),
        "--fields",
        "cut,contextTokens,prepared",
    ]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise SystemExit(f"ui_open.py: the CLI's plan failed with status {status}")
    return {"seconds": round(wall, 3), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}


def cli_start_mb() -> float:
    """The peak RSS (MB) of the CLI's ``plan`` of a one-message session: its interpreter and imports,
    what its run of a big file holds before any of that file (the window's counterpart is the empty
    window)."""
    with tempfile.TemporaryDirectory(prefix="ss-bench-") as tmp:
        tiny = Path(tmp) / "tiny.jsonl"
        header = {
            "type": "session",
            "version": 3,
            "id": "t",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": tmp,
        }
        message = {
            "type": "message",
            "id": "00000001",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1767225601000},
        }
        tiny.write_text(json.dumps(header) + "\n" + json.dumps(message) + "\n")
        return cli_plan_cold(tiny)["peak_rss_mb"]


def count_process_peak_mb() -> float | None:
    """The peak RSS (MB) of the window's counting process (core.count_worker), None if none runs."""
    from session_studio.core.count_worker import shared_count_worker

    pid = shared_count_worker().pid
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def host_steal_ms() -> float:
    """CPU time the hypervisor has taken from this (virtual) machine's cores so far, in ms: the
    ``steal`` column of /proc/stat, all cores; 0 where there is no such file. On the 2-core CI box a
    core was taken for 100 ms at a time, a few times a minute: the process stood still then (the GUI
    thread's CPU time did not move), a stall of the heartbeat that no code of ours made."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def memory_mb() -> dict[str, float]:
    """This process's resident memory now (MB): all of it, anonymous (heap) and file-backed
    (shared libraries and the data they map, e.g. the tokenizer's vocabularies), and its peak so
    far (``peak``: whether a peak came while loading or later)."""
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "VmHWM": "peak"}
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in fields:
                    out[fields[key]] = round(int(value.split()[0]) / 1024, 1)
    except OSError:  # not Linux: the peak from getrusage is all there is
        pass
    return out


def print_tracemalloc_top(count: int) -> None:
    """The ``count`` source lines holding the most traced memory (to stderr)."""
    current, peak = tracemalloc.get_traced_memory()
    print(
        f"traced Python memory: {current / 1e6:.1f} MB now, {peak / 1e6:.1f} MB at the peak", file=sys.stderr
    )
    for stat in tracemalloc.take_snapshot().statistics("lineno")[:count]:
        frame = stat.traceback[0]
        print(
            f"{stat.size / 1e6:8.1f} MB {stat.count:9d} blocks  {frame.filename}:{frame.lineno}",
            file=sys.stderr,
        )


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` (removed from ``argv``)."""
    if name not in argv:
        return None
    i = argv.index(name)
    if i + 1 >= len(argv):
        raise SystemExit(f"ui_open.py: {name} needs a value")
    value = argv[i + 1]
    del argv[i : i + 2]
    return value


def session_path(argv: list[str]) -> Path:
    args = [a for a in argv if a != "--file"]  # `ui_open.py FILE` or `ui_open.py --file FILE`
    if args:
        path = Path(args[0])
        if not path.is_file():
            raise SystemExit(f"ui_open.py: no such session file: {path}")
        return path
    if DEFAULT.exists():
        return DEFAULT
    out = DEFAULT.parent
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/oracle/gen_sessions.py"),
            "--seed",
            "5",
            "--count",
            "1",
            "--size",
            "huge",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return DEFAULT


def main(argv: list[str]) -> int:
    argv = list(argv)
    query = option(argv, "--query") or "quoted"
    #: --tracemalloc N: trace Python allocations from the empty window on and print the N lines
    #: holding the most once loaded (to stderr; tracing makes every figure but memory meaningless)
    trace_top = option(argv, "--tracemalloc")
    with_cli = "--no-cli" not in argv
    #: --smoke: every step once or twice, short settling (CI's run on a small file checks the code
    #: paths; the figures come from the real runs)
    smoke = "--smoke" in argv
    argv = [a for a in argv if a != "--smoke"]
    settle = 0.05 if smoke else 0.3
    watchdog = option(argv, "--watchdog")
    #: --profile N: cProfile the GUI thread during each interaction, print its N costliest calls
    #: (cumulative) to stderr
    profile_top = option(argv, "--profile")
    with_append = "--append" in argv
    #: --generate: last, open the Preview tab and generate an offline summary (what making a summary
    #: costs the window: its stall, and its memory from the Preview tab's state on)
    with_generate = "--generate" in argv
    argv = [a for a in argv if a not in ("--no-cli", "--append", "--generate")]
    path = session_path(argv)
    cli = cli_plan_cold(path) if with_cli else None
    if cli is not None:
        cli["start_rss_mb"] = cli_start_mb()
    from session_studio.core.allocator import tune_allocator

    tune_allocator()  # as the app's start (cli.main) does, before the window allocates
    from session_studio.ui.import_check import forget_source_reads

    forget_source_reads()  # as launch_gui does before the window's imports
    tmp = tempfile.mkdtemp(prefix="ss-bench-")
    if with_append:  # the window opens a copy: the entry pi "appends" never touches the given file
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        path = copy
    os.environ["SESSION_STUDIO_CONFIG_DIR"] = tmp
    os.environ["SESSION_STUDIO_STATE_DIR"] = tmp
    # a cold open, as the CLI's run it is compared with (no index cache from an earlier run)
    os.environ["SESSION_STUDIO_CACHE_DIR"] = tmp
    os.environ.setdefault("PI_CODING_AGENT_DIR", tmp)
    from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.theme import apply_theme

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_theme(app, "light")
    app.setStyleSheet(stylesheet())
    win = MainWindow(AppSettings(Path(tmp) / "s.ini"), sessions_root=tmp)
    win.resize(1600, 1000)
    win.show()
    QCoreApplication.processEvents()
    # the window settles before the file is opened, as when the user picks it from the browser
    settled = time.perf_counter() + 30
    while win.runner.busy and time.perf_counter() < settled:
        QCoreApplication.processEvents()
        time.sleep(0.005)
    empty_window = memory_mb()  # the Qt/PySide6 baseline: what the window costs before a session
    if trace_top:
        tracemalloc.start()

    #: max_less_steal_ms: the longest stall less the host's steal meanwhile (see host_steal_ms)
    stall = {"max_ms": 0.0, "ticks": 0, "max_cpu_ms": 0.0, "max_less_steal_ms": 0.0}
    #: while loading: each heartbeat over LOGGED_STALL_MS late, as [seconds since open, late ms, CPU
    #: ms, the host's steal meanwhile in ms]
    load_stalls: list[list[float]] | None = None
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]
    last_cpu = [time.thread_time()]
    last_steal = [host_steal_ms()]

    def tick() -> None:
        now = clock.elapsed()
        late = now - last[0] - 10
        last[0] = now
        cpu = time.thread_time()
        stall["ticks"] += 1
        stall["max_ms"] = max(stall["max_ms"], float(late))
        # the GUI thread's own CPU time since the last tick: the stall without the time it waited for
        # the GIL or for a core (other processes), a steadier figure on a busy machine
        stall["max_cpu_ms"] = max(stall["max_cpu_ms"], (cpu - last_cpu[0]) * 1000)
        steal = host_steal_ms()
        stolen = steal - last_steal[0]
        last_steal[0] = steal
        stall["max_less_steal_ms"] = max(stall["max_less_steal_ms"], float(late) - stolen)
        if load_stalls is not None and late > LOGGED_STALL_MS:
            load_stalls.append(
                [
                    round(time.perf_counter() - t0, 3),
                    float(late),
                    round((cpu - last_cpu[0]) * 1000, 1),
                    stolen,
                ]
            )
        last_cpu[0] = cpu
        if watchdog is not None:
            # a C thread dumps every thread's stack (to stderr) when the next tick is this late:
            # what the GUI thread was doing, or which worker held the GIL meanwhile
            faulthandler.dump_traceback_later(int(watchdog) / 1000)

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()

    def profiled(name: str) -> cProfile.Profile | None:
        """A running GUI-thread profile for ``name`` (with --profile), else None."""
        if not profile_top or not name:
            return None
        prof = cProfile.Profile()
        prof.enable()
        return prof

    def report_profile(name: str, prof: cProfile.Profile | None) -> None:
        if prof is None:
            return
        prof.disable()
        print(f"--- {name}: GUI-thread profile", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(int(profile_top or 0))

    indexed: list[float] = []
    win.doc.loaded.connect(lambda _res: indexed.append(time.perf_counter() - t0))
    partial: list[float] = []
    win.doc.partial_loaded.connect(lambda _h: partial.append(time.perf_counter() - t0))
    t0 = time.perf_counter()
    last[0] = clock.elapsed()
    last_cpu[0] = time.thread_time()
    stall["max_cpu_ms"] = stall["max_less_steal_ms"] = 0.0
    last_steal[0] = host_steal_ms()
    load_stalls = []
    load_prof = profiled("loading")
    win.open_path(str(path))
    first_rows = usable = loaded = None
    deadline = t0 + 900
    while time.perf_counter() < deadline:
        QCoreApplication.processEvents()
        now = time.perf_counter() - t0
        if first_rows is None and win.tree_model.rowCount() > 0:
            first_rows = now
        planned = win.doc.state is not None and (
            win.doc.preparation is not None or win.doc.state.nothing_to_compact
        )
        if usable is None and planned:
            usable = now  # the plan and its preparation are shown (background work may go on)
        if planned and not win.runner.busy:
            loaded = now
            break
        time.sleep(0.002)
    load_stall = stall["max_ms"]
    load_stall_cpu = stall["max_cpu_ms"]
    load_stall_less_steal = stall["max_less_steal_ms"]
    stall["max_less_steal_ms"] = 0.0  # from here: the interactions'
    loading_stalls, load_stalls = load_stalls, None
    report_profile("loading", load_prof)

    gui_cpu_ms: dict[str, float] = {}
    #: per interaction: the resident memory once it is done (what each one leaves behind)
    rss_after_mb: dict[str, float] = {}
    #: per interaction: the peak RSS so far once it is done (the step where it rises made the peak)
    peak_after_mb: dict[str, float] = {}
    #: per interaction: the most CPU time the GUI thread spent between two heartbeats (see tick)
    step_cpu_ms: dict[str, float] = {}

    def measure(
        action: object,
        settle_s: float | None = None,
        *,
        timed: bool = True,
        name: str = "",
        group: str = "",
    ) -> float:
        """The longest the GUI thread was blocked by ``action`` and what it set off (ms).

        ``timed``: the action is one GUI-thread step (a key press, a scroll) and counts as a stall
        as a whole; typing a search runs the event loop itself, so only the heartbeat measures it.
        The GUI thread's CPU time meanwhile goes to ``gui_cpu_ms[name]`` (the machine may be busy
        with other work: CPU time shows what is ours)."""
        stall["max_ms"] = 0.0
        QCoreApplication.processEvents()
        stall["max_ms"] = stall["max_cpu_ms"] = 0.0
        last[0] = clock.elapsed()
        last_steal[0] = host_steal_ms()
        last_cpu[0] = time.thread_time()
        cpu = time.thread_time()
        prof = profiled(name)
        t = time.perf_counter()
        action()  # type: ignore[operator]
        win.tree.viewport().repaint()
        longest = (time.perf_counter() - t) * 1000 if timed else 0.0
        end = time.perf_counter() + (settle if settle_s is None else min(settle, settle_s))
        while time.perf_counter() < end or win.runner.busy:
            t = time.perf_counter()
            QCoreApplication.processEvents()
            longest = max(longest, (time.perf_counter() - t) * 1000)
            time.sleep(0.002)
        if name:
            gui_cpu_ms[name] = round((time.thread_time() - cpu) * 1000, 1)
        step = name or group
        step_cpu_ms[step] = round(max(step_cpu_ms.get(step, 0.0), stall["max_cpu_ms"]), 1)
        now_mb = memory_mb()
        rss_after_mb[step] = now_mb.get("rss", 0.0)
        peak_after_mb[step] = now_mb.get("peak", 0.0)
        report_profile(name, prof)
        return round(max(longest, stall["max_ms"]), 1)

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    def key(k: Qt.Key) -> None:
        win.tree.setFocus()
        QTest.keyClick(win.tree, k)

    def slider(v: int) -> None:
        win.planner.keep.slider.setValue(v)

    def scroll_through(pages: int = 40) -> float:
        """Drag the scroll bar from top to bottom in ``pages`` steps: the longest step (ms)."""
        bar = win.tree.verticalScrollBar()
        top = bar.maximum()
        cpu = time.thread_time()
        prof = profiled("scroll_through")
        worst = max(
            measure(lambda k=k: bar.setValue(top * k // pages), 0.02, group="scroll_through")
            for k in range(pages + 1)
        )
        report_profile("scroll_through", prof)
        gui_cpu_ms["scroll_through_per_step"] = round((time.thread_time() - cpu) * 1000 / (pages + 1), 1)
        return worst

    def page_down(times: int = 30) -> float:
        cpu = time.thread_time()
        prof = profiled("page_down")
        worst = max(measure(lambda: key(Qt.Key.Key_PageDown), 0.02, group="page_down") for _ in range(times))
        report_profile("page_down", prof)
        gui_cpu_ms["page_down_per_step"] = round((time.thread_time() - cpu) * 1000 / times, 1)
        return worst

    search: dict[str, object] = {}

    def type_search(text: str, label: str | None = None) -> None:
        """Type ``text`` into the tree's search box at a typist's pace (an empty text clears it); its
        figures under ``label`` (default: the text, or "cleared")."""
        if not text:
            win.search.clear()
        for ch in text:
            QTest.keyClick(win.search, ch)
            end = time.perf_counter() + 0.08
            while time.perf_counter() < end:
                QCoreApplication.processEvents()
                time.sleep(0.002)
        typed = time.perf_counter()
        while time.perf_counter() - typed < 300:
            QCoreApplication.processEvents()
            if win.tree_model.query == text.lower() and not win.runner.busy:
                break
            time.sleep(0.002)
        search[label or text or "cleared"] = {
            "results_after_last_key_s": round(time.perf_counter() - typed, 3),
            "rows": len(win.tree_model.outline),
        }

    loaded_memory = memory_mb()  # once loaded, before the interactions
    interactions: dict[str, float] = {}
    cut_moved = None
    if loaded is not None:
        interactions["scroll_to_top"] = measure(win.tree.scrollToTop, name="scroll_to_top")
        interactions["scroll_through_max_of_40_steps"] = scroll_through(2 if smoke else 40)
        interactions["scroll_to_end"] = measure(win.tree.scrollToBottom, name="scroll_to_end")
        interactions["jump_to_first_row_home"] = measure(
            lambda: key(Qt.Key.Key_Home), name="jump_to_first_row_home"
        )
        interactions["jump_to_last_row_end"] = measure(
            lambda: key(Qt.Key.Key_End), name="jump_to_last_row_end"
        )
        interactions["jump_to_leaf"] = measure(win.a_leaf.trigger, name="jump_to_leaf")
        interactions["page_down_max_of_30"] = page_down(2 if smoke else 30)
        interactions["jump_to_leaf_after_paging"] = measure(
            win.a_leaf.trigger, name="jump_to_leaf_after_paging"
        )
        interactions["search_typed"] = measure(lambda: type_search(query), timed=False, name="search_typed")
        interactions["search_cleared"] = measure(lambda: type_search(""), timed=False, name="search_cleared")
        # In content (Ctrl+Shift+F): the same text anywhere in the entries, the file read again
        win.a_search_content.setChecked(True)
        interactions["search_in_content_typed"] = measure(
            lambda: type_search(query, "in content"), timed=False, name="search_in_content_typed"
        )
        interactions["search_in_content_cleared"] = measure(
            lambda: type_search("", "in content cleared"), timed=False, name="search_in_content_cleared"
        )
        win.a_search_content.setChecked(False)
        before = win.doc.state.first_kept_record if win.doc.state else None
        worst = 0.0
        cpu = time.thread_time()
        prof = profiled("keep_slider")
        keeps = (30000, 400000) if smoke else (30000, 60000, 120000, 200000, 20000, 400000)
        for v in keeps:
            worst = max(worst, measure(lambda v=v: slider(v), 0.15, group="keep_slider"))
        report_profile("keep_slider", prof)
        gui_cpu_ms["keep_slider_per_move"] = round((time.thread_time() - cpu) * 1000 / len(keeps), 1)
        interactions["keep_slider_max_of_6_moves"] = worst
        after = win.doc.state.first_kept_record if win.doc.state else None
        cut_moved = before != after
        interactions["jump_to_cut"] = measure(win.a_goto_cut.trigger, name="jump_to_cut")
        interactions["jump_to_leaf_again"] = measure(win.a_leaf.trigger, name="jump_to_leaf_again")
    appended: dict[str, object] = {}
    if with_append and win.doc.session is not None:
        s = win.doc.session
        stalls: list[float] = []
        shown_after: list[float] = []
        for k in range(APPENDS):  # pi writes one entry after the other, as in a running session
            entry = {
                "type": "message",
                "id": f"{random.Random(k).getrandbits(32):08x}",  # pi's ids: 8 random hex digits
                "parentId": s.records[s.leaf_index()].id,
                "timestamp": f"2026-12-01T10:00:{k:02d}.000Z",
                "message": {"role": "user", "content": f"appended by the benchmark ({k})", "timestamp": 1},
            }
            written: list[float] = []

            def pi_appends(entry: dict[str, object] = entry, written: list[float] = written) -> None:
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")
                written.append(time.perf_counter())
                win.doc.refresh()  # what the file watcher's timer calls

            stalls.append(measure(pi_appends, name=f"pi_appends_entry_{k}"))
            new = len(s.records) - 1
            while not win.tree_model.index_of(new).isValid() and time.perf_counter() - written[0] < 60:
                QCoreApplication.processEvents()
                time.sleep(0.002)
            shown_after.append(round(time.perf_counter() - written[0], 3))
        interactions["pi_appends_an_entry"] = max(stalls)
        appended = {
            "entries": len(s.records),
            "stalls_ms": stalls,
            "shown_after_s": shown_after,
            "shown": win.tree_model.index_of(len(s.records) - 1).isValid(),
        }
    generated: dict[str, object] = {}
    #: the process's peak before --generate resets the kernel's high-water mark (clear_refs)
    peak_before_generate = 0.0
    if with_generate:
        for keep in (20000, 2000):  # pi's default keepRecentTokens; less where that keeps everything
            measure(lambda keep=keep: slider(keep), 0.15, group="keep_for_generate")
            waited = time.perf_counter() + 30  # the preparation follows the plan (a worker)
            while (
                win.doc.preparation is None
                and win.doc.state is not None
                and not win.doc.state.nothing_to_compact
                and time.perf_counter() < waited
            ):
                QCoreApplication.processEvents()
                time.sleep(0.002)
            if win.doc.preparation is not None:
                break
    if with_generate and win.doc.preparation is not None:
        interactions["open_preview_tab"] = measure(
            lambda: win.tabs.setCurrentWidget(win.preview), name="open_preview_tab"
        )
        before = memory_mb()
        peak_before_generate = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        try:  # the peak from here on: Linux's VmHWM, reset (the figures above keep the earlier one)
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            pass
        win.preview.provider.setCurrentIndex(win.preview.provider.findData("offline"))
        started = time.perf_counter()
        interactions["generate_offline"] = measure(win.preview.generate_button.click, name="generate_offline")
        while win.doc.outcome is None and time.perf_counter() - started < 120:
            QCoreApplication.processEvents()
            time.sleep(0.002)
        after = memory_mb()
        generated = {
            "seconds": round(time.perf_counter() - started, 3),
            "made": win.doc.outcome is not None,
            "rss_before_mb": before.get("rss"),
            "peak_before_mb": round(peak_before_generate, 1),
            "peak_rise_mb": round(after.get("peak", 0.0) - before.get("rss", 0.0), 1),
            "held_mb": round(after.get("rss", 0.0) - before.get("rss", 0.0), 1),
        }
    timer.stop()
    faulthandler.cancel_dump_traceback_later()
    counting = count_process_peak_mb()
    peak_mb = max(peak_before_generate, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    s = win.doc.session
    out = {
        "file": str(path),
        "bytes": path.stat().st_size,
        "entries": len(s.records) if s else None,
        "first_rows_s": round(first_rows, 3) if first_rows is not None else None,
        "head_shown_s": round(partial[0], 3) if partial else None,
        "plan_usable_s": round(usable, 3) if usable is not None else None,
        "fully_loaded_s": round(loaded, 3) if loaded is not None else None,
        "file_indexed_s": round(indexed[0], 3) if indexed else None,
        "first_rows_before_whole_file_indexed": bool(
            indexed and first_rows is not None and first_rows < indexed[0]
        ),
        "peak_rss_mb": round(peak_mb, 1),
        "empty_window_rss_mb": empty_window,
        "loaded_rss_mb": loaded_memory,
        "end_rss_mb": memory_mb(),
        "rss_mb_after_each_interaction": rss_after_mb,
        "peak_rss_mb_after_each_interaction": peak_after_mb,
        # the process that holds the tokenizer and counts real tokens for the window (it exits when
        # idle); with it, the most both processes held (each one's peak, added up)
        "count_process_peak_rss_mb": counting,
        "peak_rss_with_count_process_mb": round(peak_mb + (counting or 0.0), 1),
        "longest_gui_stall_while_loading_ms": round(load_stall, 1),
        "longest_gui_stall_ms_by_interaction": interactions,
        "longest_gui_stall_cpu_ms_while_loading": round(load_stall_cpu, 1),
        "longest_gui_stall_while_loading_ms_less_host_steal": round(load_stall_less_steal, 1),
        f"loading_stalls_over_{LOGGED_STALL_MS}_ms": loading_stalls,
        "longest_gui_stall_once_loaded_ms_less_host_steal": round(stall["max_less_steal_ms"], 1),
        "longest_gui_stall_cpu_ms_by_interaction": step_cpu_ms,
        "gui_thread_cpu_ms_by_interaction": gui_cpu_ms,
        "search": {"query": query, **search},
        "slider_moved_the_cut": cut_moved,
        "appended": appended,
        "generated": generated,
        "top_level_rows": win.tree_model.rowCount(),
        "timer_ticks": stall["ticks"],
    }
    if cli is not None:
        out["cli_plan_cold"] = cli
        if loaded is not None:
            out["ratio_fully_loaded_to_cli"] = round(loaded / cli["seconds"], 2)
        if usable is not None:
            out["ratio_plan_usable_to_cli"] = round(usable / cli["seconds"], 2)
        out["ratio_peak_rss_to_cli"] = round(out["peak_rss_mb"] / cli["peak_rss_mb"], 2)  # type: ignore[operator]
        # the memory each holds for the session, beyond its own start (the CLI: its interpreter and
        # imports; the window: the empty window, Qt's libraries and widgets): the Qt baseline is ~0.7x
        # the CLI's whole peak on the 1 GB file, so the whole-process ratio above is mostly that
        window_session = out["peak_rss_mb"] - empty_window.get("rss", 0.0)  # type: ignore[operator]
        cli_session = cli["peak_rss_mb"] - cli["start_rss_mb"]
        out["window_session_mb"] = round(window_session, 1)
        out["cli_session_mb"] = round(cli_session, 1)
        out["ratio_session_memory_to_cli"] = (
            round(window_session / cli_session, 2) if cli_session > 0 else None
        )
        out["ratio_peak_rss_with_count_process_to_cli"] = round(
            out["peak_rss_with_count_process_mb"] / cli["peak_rss_mb"],  # type: ignore[operator]
            2,
        )
    print(json.dumps(out, indent=2))
    if trace_top:
        print_tracemalloc_top(int(trace_top))
    win.close()
    return 0 if loaded is not None else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
