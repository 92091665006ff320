"""The architecture as a contract: every module's imports, read from its source with `ast`.

Layers, highest first: ``ui | cli > engine | export > llm > core``. A module may import its own layer
and the layers below; ``ui`` and ``cli`` are independent of each other, except that the command line
starts the window through its one door, ``ui.launch``; ``export`` (the reports) imports ``core`` only,
and ``engine`` and ``export`` are independent. Only ``ui`` imports Qt, only ``llm`` does
network (httpx), ``ui`` never imports the writer (writes go through the engine), and the modules
of the package import each other without cycles.

Every ``*.py`` under ``src/session_studio`` is parsed — imports inside functions (the lazy ones)
count too — so a new module cannot slip past the contract.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "session_studio"
SRC = Path(__file__).resolve().parent.parent / "src"

LAYER_RANK = {"core": 0, "llm": 1, "engine": 2, "export": 2, "ui": 3, "cli": 3}
#: layers that may import only these of the lower layers (the others: every lower layer)
MAY_IMPORT_ONLY = {"export": frozenset({"core"})}
CLI_MODULES = frozenset(
    {
        "session_studio.__main__",
        "session_studio.launcher",  # the console script's entry: imports the command line only
        "session_studio.cli",
        "session_studio.cli_actions",
        "session_studio.cli_common",
        "session_studio.cli_log",
        "session_studio.cli_output",
    }
)
# the command line opens the desktop app (`session-studio FILE`) through this module only
CLI_MAY_IMPORT_FROM_UI = frozenset({"session_studio.ui.launch"})
QT_TOP_LEVEL = frozenset({"PySide6", "shiboken6"})
NETWORK_TOP_LEVEL = frozenset({"httpx", "httpcore", "h11", "requests", "urllib3", "aiohttp"})
WRITER = "session_studio.core.writer"


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # absolute dotted name (a module of the package, or a third-party one)
    line: int
    type_checking_only: bool


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    found = {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}
    assert len(found) > 40, f"expected the whole package under {SRC / PACKAGE}, found {len(found)} modules"
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve_relative(importer: str, is_package: bool, level: int, module: str | None) -> str:
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, type_checking: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_checking)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(name, alias.name, node.lineno, type_checking))
        elif isinstance(node, ast.ImportFrom):
            base = (
                _resolve_relative(name, is_package, node.level, node.module)
                if node.level
                else (node.module or "")
            )
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                # `from pkg import mod` depends on pkg.mod; `from mod import name` on mod
                target = submodule if submodule in modules else base
                found.append(Import(name, target, node.lineno, type_checking))
        for child in ast.iter_child_nodes(node):
            visit(child, type_checking)

    visit(tree, False)
    return found


@functools.cache
def _package_imports() -> tuple[Import, ...]:
    modules = all_modules()
    return tuple(imp for name, path in modules.items() for imp in imports_of(name, path, modules))


def all_imports() -> list[Import]:
    return list(_package_imports())


def layer_of(module: str) -> str | None:
    if module in CLI_MODULES:
        return "cli"
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1:
        return None  # the package itself (__version__): importable from every layer
    return parts[1] if parts[1] in LAYER_RANK else None


def layering_violations(imports: list[Import]) -> list[str]:
    problems = []
    for imp in imports:
        src, dst = layer_of(imp.importer), layer_of(imp.target)
        top = imp.target.split(".")[0]
        where = f"{imp.importer}:{imp.line} imports {imp.target}"
        if src is None and imp.importer != PACKAGE:
            problems.append(f"{imp.importer} is in no layer (add it to LAYER_RANK or CLI_MODULES)")
        if top in QT_TOP_LEVEL and src != "ui":
            problems.append(f"{where}: only ui may import Qt")
        if top in NETWORK_TOP_LEVEL and src != "llm":
            problems.append(f"{where}: only llm may do network")
        if imp.importer == PACKAGE and top == PACKAGE and imp.target != PACKAGE:
            problems.append(f"{where}: the package root imports no layer")
        if src is None or dst is None or src == dst:
            continue
        if imp.target == WRITER and src == "ui":
            problems.append(f"{where}: the window writes through the engine, never the writer")
        if {src, dst} == {"ui", "cli"}:
            if not (src == "cli" and imp.target in CLI_MAY_IMPORT_FROM_UI):
                problems.append(f"{where}: ui and cli are independent")
        elif LAYER_RANK[dst] > LAYER_RANK[src]:
            problems.append(f"{where}: {src} may not import the higher layer {dst}")
        elif LAYER_RANK[dst] == LAYER_RANK[src]:
            problems.append(f"{where}: {src} and {dst} are independent")
        elif src in MAY_IMPORT_ONLY and dst not in MAY_IMPORT_ONLY[src]:
            problems.append(f"{where}: {src} may import only {', '.join(sorted(MAY_IMPORT_ONLY[src]))}")
    return sorted(set(problems))


def import_cycles(imports: list[Import]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (runtime imports only)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.importer, set())
        if imp.target.split(".")[0] == PACKAGE and not imp.type_checking_only and imp.target != imp.importer:
            graph[imp.importer].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []

    def connect(node: str) -> None:  # Tarjan
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(frozenset(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def test_every_module_is_in_a_layer_and_the_layers_hold() -> None:
    assert layering_violations(all_imports()) == []


def test_no_import_cycles_between_modules() -> None:
    assert [sorted(c) for c in import_cycles(all_imports())] == []


# The checks themselves, on made-up imports: each rule must fire.
@pytest.mark.parametrize(
    ("importer", "target", "needle"),
    [
        ("session_studio.core.reader", "PySide6.QtCore", "only ui may import Qt"),
        ("session_studio.engine.compaction", "shiboken6", "only ui may import Qt"),
        ("session_studio.core.reader", "httpx", "only llm may do network"),
        ("session_studio.ui.browser", "session_studio.core.writer", "never the writer"),
        ("session_studio.core.session", "session_studio.engine.edits", "higher layer engine"),
        ("session_studio.llm.config", "session_studio.engine", "higher layer engine"),
        ("session_studio.engine.edits", "session_studio.ui.document", "higher layer ui"),
        ("session_studio.ui.document", "session_studio.cli_common", "independent"),
        ("session_studio.cli", "session_studio.ui.main_window", "independent"),
        ("session_studio.newthing", "session_studio.core", "in no layer"),
        ("session_studio.export.report", "session_studio.llm.base", "export may import only core"),
        ("session_studio.export.report", "session_studio.engine.compaction", "independent"),
        ("session_studio.engine.compaction", "session_studio.export.report", "independent"),
        ("session_studio.core.plan", "session_studio.export", "higher layer export"),
        ("session_studio.export.report", "session_studio.ui.document", "higher layer ui"),
        ("session_studio.export.html_writer", "PySide6.QtGui", "only ui may import Qt"),
        ("session_studio.export.report", "httpx", "only llm may do network"),
    ],
)
def test_layering_rules_fire(importer: str, target: str, needle: str) -> None:
    problems = layering_violations([Import(importer, target, 1, False)])
    assert any(needle in p for p in problems), problems


def test_allowed_imports_pass() -> None:
    allowed = [
        Import("session_studio.cli", "session_studio.ui.launch", 1, False),
        Import("session_studio.ui.document", "session_studio.engine.compaction", 1, False),
        Import("session_studio.engine.compaction", "session_studio.llm.base", 1, False),
        Import("session_studio.llm.openai", "httpx", 1, False),
        Import("session_studio.core.session", "session_studio", 1, False),
        Import("session_studio.export.report", "session_studio.core.plan", 1, False),
        Import("session_studio.ui.actions", "session_studio.export", 1, False),
        Import("session_studio.cli_actions", "session_studio.export", 1, False),
    ]
    assert layering_violations(allowed) == []


def test_cycle_detection_finds_a_cycle_and_ignores_type_checking_imports() -> None:
    a, b, c = "session_studio.core.a", "session_studio.core.b", "session_studio.core.c"
    imports = [Import(a, b, 1, False), Import(b, c, 1, False), Import(c, a, 1, False)]
    assert import_cycles(imports) == [frozenset({a, b, c})]
    assert import_cycles([Import(a, b, 1, False), Import(b, a, 1, True)]) == []


def test_relative_and_lazy_imports_are_read(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import writer\n"
        "from ..engine.edits import append_label\n"
        "if TYPE_CHECKING:\n    from ..llm import base\n"
        "def f():\n    import PySide6.QtCore\n",
        encoding="utf-8",
    )
    modules = {"session_studio.core.writer": mod, "session_studio.engine.edits": mod}
    got = {(i.target, i.type_checking_only) for i in imports_of("session_studio.core.m", mod, modules)}
    assert got == {
        ("typing", False),
        ("session_studio.core.writer", False),
        ("session_studio.engine.edits", False),
        ("session_studio.llm", True),
        ("PySide6.QtCore", False),
    }


def test_core_llm_engine_do_not_load_qt_at_runtime() -> None:
    """The same contract, as Python sees it: importing the headless layers loads no Qt."""
    code = (
        "import sys, session_studio.core, session_studio.core.oracle_schema, session_studio.core.overview, "
        "session_studio.llm, session_studio.engine, session_studio.export, session_studio.cli; "
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_core_does_not_load_network_or_ui_at_runtime() -> None:
    code = (
        "import sys, session_studio.core.oracle_schema; print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('httpx', 'PySide6', 'session_studio') "
        "and not m.startswith('session_studio.core') and m != 'session_studio'))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
