"""File operations read from tool calls (spec §6.3, §6.4)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .jsvalue import UNDEFINED, JsTypeError, js_sort_key, js_truthy, prop
from .profile import PROFILE_0_80_2, PiProfile

__all__ = [
    "FILE_OP_TOOLS",
    "FileOps",
    "compute_file_lists",
    "format_file_operations",
    "may_hold_file_op",
    "message_file_ops",
]

#: the tool names extractFileOpsFromMessage records (FileOps._add_op)
FILE_OP_TOOLS = ("read", "write", "edit")


def may_hold_file_op(message: Any) -> bool:
    """Whether FileOps.add_from_message could find anything in this message under any profile: a
    ``toolCall`` block whose name is a file tool, or (pi 1.6.0's tool results) ``nestedCalls``, of
    any value (an odd one throws there). Every other message adds nothing and throws nothing, so a
    long history reads only the messages this says yes of (the index keeps the answer per record:
    record_table.FILE_OP_CANDIDATE)."""
    if type(message) is not dict:
        return False
    if "nestedCalls" in message:
        return True
    content = message.get("content")
    if type(content) is not list:
        return False
    return any(
        type(block) is dict and block.get("type") == "toolCall" and block.get("name") in FILE_OP_TOOLS
        for block in content
    )


def message_file_ops(message: Any) -> tuple[Any, ...] | None:
    """What FileOps.add_from_message adds for this message under every profile, as the index keeps
    it (file_op_index): ``(kind, path, ...)`` in call order, kind an index into FILE_OP_TOOLS; None
    for a tool result with nested calls (pi 1.6.0 reads them, 0.80.2 does not, and an odd value
    throws). Only an assistant's tool calls add anything, the same way under both profiles."""
    if type(message) is dict and message.get("role") == "toolResult" and "nestedCalls" in message:
        return None
    out: list[Any] = []
    for name, args in _assistant_calls(message):
        op = _file_op(name, args)
        if op is not None:
            out.extend(op)
    return tuple(out)


def _assistant_calls(message: Any) -> Iterator[tuple[Any, Any]]:
    """The (name, arguments) of an assistant's tool calls that extractFileOpsFromMessage passes on
    to addFileOp."""
    if type(message) is not dict or message.get("role") != "assistant":
        return
    content = message.get("content", UNDEFINED)
    if type(content) is not list:
        return
    for block in content:
        if type(block) is not dict or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        args = block["arguments"]
        if js_truthy(args):
            yield block["name"], args


@dataclass
class FileOps:
    """Three insertion-ordered sets (JavaScript `Set`s), kept as dicts."""

    read: dict[Any, None] = field(default_factory=dict)
    written: dict[Any, None] = field(default_factory=dict)
    edited: dict[Any, None] = field(default_factory=dict)

    def add_from_message(self, message: Any, profile: PiProfile = PROFILE_0_80_2) -> None:
        """pi's extractFileOpsFromMessage: read/write/edit tool calls with a string `path`
        (1.6.0 also: the nested calls recorded on a tool result, rule 32)."""
        if profile.nested_file_ops and type(message) is dict and message.get("role") == "toolResult":
            self._add_nested(message)
            return
        for name, args in _assistant_calls(message):
            self._add_op(name, args)

    def _add_nested(self, message: dict[str, Any]) -> None:
        """`for (const call of message.nestedCalls?.calls ?? []) addFileOp(call.name, call.arguments)`."""
        nested = message.get("nestedCalls", UNDEFINED)
        calls = UNDEFINED if nested is None or nested is UNDEFINED else prop(nested, "calls")
        if calls is None or calls is UNDEFINED:
            return
        if type(calls) is str:
            return  # iterates characters: no name, no arguments
        if type(calls) is not list:
            raise JsTypeError("message.nestedCalls?.calls is not iterable")
        for call in calls:
            self._add_op(prop(call, "name"), prop(call, "arguments"))

    def _add_op(self, name: Any, args: Any) -> None:
        op = _file_op(name, args)
        if op is not None:
            (self.read, self.written, self.edited)[op[0]][op[1]] = None  # FILE_OP_TOOLS' order

    def seed_from_entry(self, value: Any) -> None:
        """A previous compaction's or branch summary's file lists (its ``details``), as pi seeds a
        preparation with them: not from an entry an extension's hook made (``fromHook``)."""
        if not js_truthy(value.get("fromHook", UNDEFINED)) and js_truthy(value.get("details", UNDEFINED)):
            self.seed_from_details(value["details"])

    def seed_from_details(self, details: Any) -> None:
        """readFiles → read, modifiedFiles → edited (previous compaction / branch summaries)."""
        rf = details.get("readFiles") if type(details) is dict else None
        mf = details.get("modifiedFiles") if type(details) is dict else None
        if type(rf) is list:
            for f in rf:
                self.read[_hashable(f)] = None
        if type(mf) is list:
            for f in mf:
                self.edited[_hashable(f)] = None

    def to_json(self) -> dict[str, list[Any]]:
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}


def _file_op(name: Any, args: Any) -> tuple[int, str] | None:
    """pi's addFileOp: (the tool's index in FILE_OP_TOOLS, the path), or None if it adds nothing."""
    path = args.get("path") if type(args) is dict else None
    if type(path) is not str or not path or name not in FILE_OP_TOOLS:
        return None
    return FILE_OP_TOOLS.index(name), path


def _hashable(v: Any) -> Any:
    return v if not isinstance(v, (dict, list)) else _Unhashable(v)


class _Unhashable:
    """Objects in a JavaScript Set are distinct by identity."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _js_sort_key(v: Any) -> Any:
    from .jsvalue import js_string

    return js_sort_key(v if isinstance(v, str) else js_string(v))


def compute_file_lists(ops: FileOps) -> tuple[list[Any], list[Any]]:
    """(readFiles, modifiedFiles): read-only files and modified files, JavaScript-sorted."""
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = sorted((f for f in ops.read if f not in modified), key=_js_sort_key)
    return [_plain(f) for f in read_only], [_plain(f) for f in sorted(modified, key=_js_sort_key)]


def _plain(v: Any) -> Any:
    return v.value if isinstance(v, _Unhashable) else v


def format_file_operations(read_files: list[Any], modified_files: list[Any]) -> str:
    from .jsvalue import js_string

    sections = []
    if read_files:
        sections.append(
            "<read-files>\n" + "\n".join(js_string(_plain(f)) for f in read_files) + "\n</read-files>"
        )
    if modified_files:
        sections.append(
            "<modified-files>\n"
            + "\n".join(js_string(_plain(f)) for f in modified_files)
            + "\n</modified-files>"
        )
    return "\n\n" + "\n\n".join(sections) if sections else ""
