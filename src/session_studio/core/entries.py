"""The entries Session Studio writes, as pydantic models in pi's exact key order.

Reading stays loose (any JSON pi accepts is kept as is); writing is strict: the
models validate what goes into a user's file, and `to_json_line` serialises
with `JSON.stringify` rules so the bytes are those pi itself would write.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .ids import now_iso
from .jsvalue import js_stringify

__all__ = [
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "FileDetails",
    "LabelEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "WrittenEntry",
]


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    #: written as `null` when None (a root entry's parentId); other None fields are `undefined`
    _NULLABLE: ClassVar[frozenset[str]] = frozenset({"parentId"})

    def to_json_dict(self) -> dict[str, Any]:
        """Fields in declaration order, which is pi's key order; None means omitted."""
        dumped = self.model_dump(mode="python", by_alias=True)
        return {k: v for k, v in dumped.items() if v is not None or k in self._NULLABLE}

    def to_json_line(self) -> str:
        text = js_stringify(self.to_json_dict())
        assert text is not None
        return text + "\n"


class FileDetails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    read_files: list[str] = Field(default_factory=list, alias="readFiles")
    modified_files: list[str] = Field(default_factory=list, alias="modifiedFiles")


class SessionHeader(_Entry):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    type: Literal["session"] = "session"
    version: int = 3
    id: str
    timestamp: str = Field(default_factory=now_iso)
    cwd: str
    parent_session: str | None = Field(default=None, alias="parentSession")


class CompactionEntry(_Entry):
    """pi's CompactionEntry; `usage` and `systemMessage` are pi 1.6.0's (rule 4), omitted when None."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    type: Literal["compaction"] = "compaction"
    id: str
    parent_id: str | None = Field(alias="parentId")
    timestamp: str = Field(default_factory=now_iso)
    summary: str
    first_kept_entry_id: str = Field(alias="firstKeptEntryId")
    tokens_before: int | float = Field(alias="tokensBefore")
    details: FileDetails | None = None
    #: usage of the summarisation calls (1.6.0)
    usage: dict[str, Any] | None = None
    from_hook: bool = Field(default=False, alias="fromHook")
    #: the replayed system message at the boundary, timestamped at the compaction (1.6.0)
    system_message: dict[str, Any] | None = Field(default=None, alias="systemMessage")


class BranchSummaryEntry(_Entry):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    type: Literal["branch_summary"] = "branch_summary"
    id: str
    parent_id: str | None = Field(alias="parentId")
    timestamp: str = Field(default_factory=now_iso)
    from_id: str = Field(alias="fromId")
    summary: str
    details: FileDetails | None = None
    #: usage of the summarisation call (1.6.0), omitted when None
    usage: dict[str, Any] | None = None
    from_hook: bool = Field(default=False, alias="fromHook")


class LabelEntry(_Entry):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    type: Literal["label"] = "label"
    id: str
    parent_id: str | None = Field(alias="parentId")
    timestamp: str = Field(default_factory=now_iso)
    target_id: str = Field(alias="targetId")
    label: str | None = None  # None clears (the key is omitted, as pi writes it)


class SessionInfoEntry(_Entry):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    type: Literal["session_info"] = "session_info"
    id: str
    parent_id: str | None = Field(alias="parentId")
    timestamp: str = Field(default_factory=now_iso)
    name: str


class ContextEditEntry(_Entry):
    """pi 1.6.0's context_edit (spec §10 rule 2) as its appendContextEdit(targetId, null) writes it:
    ``replacement`` null (written, not omitted) leaves the target out of the model's context."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    _NULLABLE: ClassVar[frozenset[str]] = frozenset({"parentId", "replacement"})
    type: Literal["context_edit"] = "context_edit"
    id: str
    parent_id: str | None = Field(alias="parentId")
    timestamp: str = Field(default_factory=now_iso)
    target_id: str = Field(alias="targetId")
    replacement: None = None


WrittenEntry = CompactionEntry | BranchSummaryEntry | LabelEntry | SessionInfoEntry | ContextEditEntry
