"""The offline BPE tokenizer real token counts use, and nothing else (a helper process imports
only this, see :mod:`.count_worker`).

`bpe-openai` (vocabularies inside the wheel, nothing downloaded) is imported lazily; where its
wheel is missing :func:`load_counter` raises :class:`TokenizerUnavailableError` with a sentence for
the user. A counter is ``text → tokens``; :func:`counts_of` counts many texts in one call where the
counter can (a counter in another process answers a batch in one round trip).
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CL100K",
    "MAX_EXACT_CHARS",
    "O200K",
    "PIECE_CHARS",
    "TokenizerUnavailableError",
    "counts_of",
    "extrapolated",
    "load_counter",
    "tokenizer_unavailable_reason",
]

O200K = "o200k_base"
CL100K = "cl100k_base"


class TokenizerUnavailableError(RuntimeError):
    """bpe-openai is not installed (no wheel for this platform) or cannot load."""


_counters: dict[str, Callable[[str], int]] = {}
_load_lock = threading.Lock()


def _bindings() -> Any:
    """bpe-openai's compiled module. Loaded from its file directly: the package's ``__init__``
    builds Python copies of every vocabulary at import (≈ 1 s and 65 MB) that counting never
    uses. Falls back to the ordinary import if the wheel's layout changes."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailableError(
            "real token counts unavailable: the bpe-openai package is not installed "
            "(pip install bpe-openai; wheels exist for Linux x86_64/aarch64, macOS arm64, Windows)"
        )
    for folder in spec.submodule_search_locations:
        for so in sorted(Path(folder).glob("_bindings*")):
            if so.suffix not in (".so", ".pyd"):
                continue
            ext = importlib.util.spec_from_file_location("bpe_openai._bindings", so)
            if ext is not None and ext.loader is not None:
                module = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(module)
                return module
    return importlib.import_module("bpe_openai._bindings")


def load_counter(encoding: str) -> Callable[[str], int]:
    """``text → token count`` for an encoding (thread-safe to call; loaded once per process)."""
    got = _counters.get(encoding)
    if got is not None:
        return got
    with _load_lock:
        got = _counters.get(encoding)
        if got is None:
            try:
                tokenizer = _bindings().tokenizer_for_encoding(encoding)
            except TokenizerUnavailableError:
                raise
            except Exception as e:  # a broken or foreign build: say so instead of crashing
                raise TokenizerUnavailableError(f"real token counts unavailable: {e}") from e
            raw_count: Callable[[str], int] = tokenizer.count

            def count_piece(text: str) -> int:
                try:
                    return int(raw_count(text))
                except UnicodeEncodeError:  # lone surrogates, valid in JavaScript strings
                    return int(raw_count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")))

            def count(text: str) -> int:
                if len(text) <= PIECE_CHARS:
                    return count_piece(text)
                if len(text) > MAX_EXACT_CHARS:  # MessageCount.texts_extrapolated says so
                    head = sum(count_piece(p) for p in _pieces(text[:MAX_EXACT_CHARS]))
                    return extrapolated(head, len(text))
                return sum(count_piece(p) for p in _pieces(text))

            _counters[encoding] = got = count
    return got


#: the tokenizer holds the GIL while it counts (≈ 3 MB/s): a long text is counted in pieces of
#: at most this many characters so no other thread (the GUI's) waits more than ~10 ms at a time
PIECE_CHARS = 32768
#: a text longer than this is counted for its first MAX_EXACT_CHARS characters and extrapolated
#: at the same rate (a 50 MB tool output would otherwise keep a core busy for seconds to minutes)
MAX_EXACT_CHARS = 1 << 22


def extrapolated(head_tokens: int, length: int) -> int:
    """The count of a text of ``length`` characters whose first MAX_EXACT_CHARS count
    ``head_tokens``, at the same rate (the counting process's counter uses it too)."""
    return round(head_tokens * length / MAX_EXACT_CHARS)


def _cut(text: str, start: int, end: int) -> int:
    """Where to end a piece in ``text[start:end]``: after a line break followed by a non-space
    (both encodings' pre-tokenizers split there and BPE never merges across their pieces, so the
    counts add up exactly), else before a space between two non-spaces (a pre-token boundary
    too), else at ``end`` (±1 token at most, for text with neither, e.g. base64)."""
    n = len(text)
    k = text.rfind("\n", start, end - 1)
    while k >= start and text[k + 1].isspace():
        k = text.rfind("\n", start, k)
    if k >= start:
        return k + 1
    k = text.rfind(" ", start + 1, end - 1)
    while k > start and (text[k - 1].isspace() or text[k + 1].isspace()):
        k = text.rfind(" ", start + 1, k)
    if k > start:
        return k
    return min(end, n)


def _pieces(text: str) -> Iterable[str]:
    """``text`` in pieces of at most PIECE_CHARS characters, cut where :func:`_cut` says."""
    i, n = 0, len(text)
    while i < n:
        j = n if i + PIECE_CHARS >= n else _cut(text, i, i + PIECE_CHARS)
        yield text[i:j]
        i = j


def tokenizer_unavailable_reason() -> str | None:
    """None when real counts work here, else a sentence for the user."""
    try:
        load_counter(O200K)
    except TokenizerUnavailableError as e:
        return str(e)
    return None


def counts_of(count: Callable[[str], int], texts: Sequence[str]) -> list[int]:
    """``[count(t) for t in texts]``, in one call to ``count.many`` where the counter has it."""
    many: Callable[[Sequence[str]], list[int]] | None = getattr(count, "many", None)
    if many is not None:
        return many(texts)
    return [count(t) for t in texts]
