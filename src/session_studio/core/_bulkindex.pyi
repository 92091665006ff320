"""Types of the compiled loader helper (_bulkindex.c)."""

from collections.abc import Callable, Iterable
from typing import Any

def index_common(
    values: Iterable[Any],
    fallback: Callable[[Any], None],
    flush: Callable[[tuple[bytes, ...], tuple[bytes, bytes, bytes] | None], None],
    symbol: Callable[[Any], int],
    flags_tokens: int,
    flags_usage: int,
    flags_file_op: int,
    id_null: int,
    run_type: type,
    raw_type: type,
    loads: Callable[[Any], Any],
    decode_error: type[BaseException],
    line_fallback: Callable[[bytes, int, int, list[Any]], None],
    paths: list[str],
    path_codes: dict[str, int],
    /,
) -> int: ...
def estimate_message(message: Any, /) -> int | None: ...
def scan_entry(
    line: bytes, /
) -> tuple[str, str | None, int, int | None, int, int, int | None, bool] | None: ...
def count_newlines(data: bytes, start: int, end: int, /) -> int: ...
def branch_points(first: Any, out: Any, /) -> int: ...
def walk_parents(
    parents: Any,
    ids: Any,
    sorted: Any,
    recent: dict[int, int],
    unique: bool,
    seen: bytearray,
    cur: int,
    out: list[int],
    /,
) -> tuple[int, int]: ...
def link_parents(
    parents: Any,
    ids: Any,
    sorted: Any,
    recent: dict[int, int],
    unique: bool,
    out: Any,
    start: int,
    stop: int,
    /,
) -> None: ...
def tree_order(
    parent: Any, first: Any, kids: Any, shows: Any, match: Any, order: Any, under: Any, /
) -> int: ...
def bucket_items(keys: Any, values: Any, shift: int, first: Any, items: Any, /) -> int: ...
def chain_rows(
    vfirst: Any,
    vkids: Any,
    flags: Any,
    active: int,
    head: int,
    last: int,
    group_col: Any,
    row_col: Any,
    rows: Any,
    groups: list[tuple[int, int, int]],
    /,
) -> int: ...
def sort_ids(ids: Any, out: Any, /) -> tuple[int, bool]: ...
def add_to_tail(column: Any, start: int, delta: int, /) -> None: ...
def tune_malloc(mmap_threshold: int, arena_max: int, /) -> bool: ...
def huge_page_heap(pad: int, probe: int, /) -> int: ...
def trim_malloc() -> bool: ...
