"""Acting on sessions: compaction, branch summaries, labels, names, forks and upgrades.

Headless and Qt-free: the CLI and the desktop app drive the same functions. The
core computes, the llm package summarises, and every byte written goes through
`session_studio.core.writer`.
"""

from .compaction import (
    CompactionDraft,
    CompactionOutcome,
    commit_compaction,
    draft_compaction,
    requested_headings,
    summarize_draft,
)
from .edits import (
    BranchOutcome,
    NavigationTarget,
    append_label,
    append_session_name,
    branch_to,
    fork_to_file,
    repair_torn_tail,
    upgrade_legacy_file,
)

__all__ = [
    "BranchOutcome",
    "CompactionDraft",
    "CompactionOutcome",
    "NavigationTarget",
    "append_label",
    "append_session_name",
    "branch_to",
    "commit_compaction",
    "draft_compaction",
    "fork_to_file",
    "repair_torn_tail",
    "requested_headings",
    "summarize_draft",
    "upgrade_legacy_file",
]
