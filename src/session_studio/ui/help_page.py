"""Help ▸ How pi compacts (F1): what compaction is and where the window shows each part of it, for a
newcomer and for a teacher. The words are general; the numbers and the reasons for one session's
cut are the planner's and the Why this cut tab's (core.explain), never restated here."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

__all__ = ["HELP_HTML", "HelpDialog"]

HELP_HTML = """
<h2>How pi compacts a session</h2>
<p>pi keeps each session as a tree of entries, one JSON line each, under
<code>~/.pi/agent/sessions/</code>. The path from the current leaf back to the first entry is the
conversation pi continues; the other branches stay in the file. The tree on the left shows every
entry, the path in bold.</p>

<h3>The context</h3>
<p>What the model gets is built from the path: the summary of the latest compaction, then the
entries it kept and everything after them. Messages, tool results, branch summaries and custom
messages are part of it; labels and model or thinking-level changes are not. pi 1.6.0 also sends
the system messages stored in the session and applies <i>context edits</i>, entries that leave
another entry out of the context or replace its content. The Preview tab shows the context before
and after a compaction, as the model would get it.</p>

<h3>When pi compacts by itself</h3>
<p>After an answer, and before the next prompt, pi checks its last answer.</p>
<ul>
<li>A <b>context overflow</b> comes first: an error that pi's provider patterns take for one, or an
answer whose input passed the context window (or filled it, for an answer cut off for length). pi
compacts at once, and retries the request when the answer did not complete. pi 1.6.0 also recovers from a <b>length stop</b> below the model's output
limit, and first takes the failed answer and its tool results out of the context with context edits
(Session ▸ Omit failed attempt takes that step); its cut without them can lie further back, and the
planner says where.</li>
<li>Otherwise pi weighs the context against the <b>threshold</b>, the context window less
<code>reserveTokens</code>: the last answer's reported usage, or an estimate after a failed
answer. Over it, pi compacts when automatic compaction is on (<code>compaction.enabled</code> in its
<code>settings.json</code>).</li>
</ul>
<p>The token bar shows the context against the window: the reserve at its right end, the
threshold, and the part <code>keepRecentTokens</code> keeps. The planner says what pi's check
weighs and why.</p>

<h3>Where pi cuts</h3>
<p>pi walks back from the newest entry and adds up each message's estimate (its characters / 4)
until <code>keepRecentTokens</code> are reached. The kept part starts at the first <b>valid cut
point</b> at or after that place: a user, assistant, bash or custom message, or a summary — never a
tool result, which must stay after its call. Entries without messages just before the cut (a model
change, a label) are kept with it. The dots in the tree mark which entries of the path are valid
cut points; choose another with Cut here (Ctrl+K).</p>
<p>A cut that is not at the start of a turn is a <b>split turn</b>: the part of the turn before the
cut, the <i>turn prefix</i>, is summarised on its own and merged into the summary.</p>

<h3>The summary and the entry</h3>
<p>What lies before the cut, since the last compaction, is written out as text and summarised by the
model, with the previous summary and the lists of files read and modified. pi appends a
<code>CompactionEntry</code>: the summary, <code>firstKeptEntryId</code> (where the kept part
starts) and <code>tokensBefore</code>. The file is only ever appended to: nothing before the entry
changes, and the summarised entries stay in the tree.</p>

<h3>pi 0.80.2 and pi 1.6.0</h3>
<p>pi 1.6.0 changed what a session means: system messages, context edits and usage entries, the
cut rules (custom messages and branch summaries count, cut points are read from the context as
edited), and the summary requests. Session Studio reads each file as the pi that runs it (the pi
version box); the pi versions tab (Ctrl+Shift+V) sets both pis' plans side by side with the rules
that make them differ.</p>

<h3>In this window</h3>
<ul>
<li><b>Why this cut</b>: the steps of pi's cut for this session, with its numbers.</li>
<li><b>Preview</b>: generate the summary (streamed), edit it, and see the context after it.</li>
<li><b>Commit compaction</b> (Ctrl+Return) appends the entry pi itself would, and checks it.</li>
<li>Help ▸ Keyboard shortcuts (Ctrl+?) lists every key.</li>
</ul>
"""


class HelpDialog(QDialog):
    """A read-only page of :data:`HELP_HTML` beside the window (not modal: the user reads it while
    looking at the bar and the planner)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How pi compacts")
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)  # no link leaves the page; nothing is loaded from anywhere
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(HELP_HTML)
        self.text.setAccessibleName("How pi compacts")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)
        self.resize(620, 640)
