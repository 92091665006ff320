"""PySide6's check of each imported module, without the source lines it leaves in memory.

PySide6 (PYSIDE-2029, its ``__feature__`` support) decides for every module imported after it
whether that module uses PySide6: it reads the module's whole source with ``inspect.getsource`` and
looks for the word. ``linecache`` keeps every line read that way, for tracebacks that rarely come:
6 MB of the window's memory for the 125 modules it imports at start, 13 MB once a summary was
generated (httpx, pydantic and the rest), in every window whatever the session.

:func:`forget_source_reads` wraps that check: PySide6 gets the same answer, and the lines the check
put into linecache leave it again (a traceback reads them anew). Where PySide6 has no such check
(another version), nothing is wrapped.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from types import ModuleType

__all__ = ["forget_source_reads"]

#: where shiboken keeps PySide6's feature support, and the name of its per-module check
FEATURE_MODULE = "shibokensupport.feature"
CHECK = "_mod_uses_pyside"


def _forgetting(check: Callable[[ModuleType], bool]) -> Callable[[ModuleType], bool]:
    def uses_pyside(module: ModuleType) -> bool:
        before = set(linecache.cache)
        try:
            return check(module)
        finally:
            for name in linecache.cache.keys() - before:
                linecache.cache.pop(name, None)

    uses_pyside.__wrapped__ = check  # type: ignore[attr-defined]
    return uses_pyside


def forget_source_reads() -> bool:
    """Wrap PySide6's per-module check (once); returns whether it is wrapped now."""
    import shiboken6  # noqa: F401  # loads the feature support, before any module is checked

    feature = sys.modules.get(FEATURE_MODULE)
    check = getattr(feature, CHECK, None)
    if feature is None or not callable(check):
        return False
    if not hasattr(check, "__wrapped__"):
        setattr(feature, CHECK, _forgetting(check))
    return True
