"""File ▸ Export…: what to export (plan, path, context), the format, the file.

The report itself is made by ``session_studio.export`` from the window's current plan (the same
PlanState the token bar and planner show), in the compute pool.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

__all__ = ["ExportChoice", "ExportDialog"]

WHATS = (
    ("plan", "Compaction plan: token bar, cut and why, files, quirks"),
    ("path", "The path: every entry with its content"),
    ("context", "The context the LLM sees, now and after the compaction"),
)
FORMATS = (("html", "HTML: one self-contained file"), ("md", "Markdown"))


@dataclass(frozen=True)
class ExportChoice:
    what: str
    fmt: str
    path: str
    include_summary: bool


class ExportDialog(QDialog):
    def __init__(self, parent: QWidget | None, directory: str, stem: str, has_summary: bool) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export report")
        self._directory = directory
        self._stem = stem
        self._auto_name = True  # the file name follows the choices until the user edits it
        form = QFormLayout(self)
        self.what = QComboBox()
        for key, text in WHATS:
            self.what.addItem(text, key)
        self.fmt = QComboBox()
        for key, text in FORMATS:
            self.fmt.addItem(text, key)
        self.path = QLineEdit()
        browse = QPushButton("Browse…")
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        self.summary = QCheckBox("Use the generated summary in the context after compaction")
        self.summary.setEnabled(has_summary)
        self.summary.setChecked(has_summary)
        note = QLabel("Session content is written as text: the HTML file runs no scripts and loads nothing.")
        note.setProperty("muted", True)
        note.setWordWrap(True)
        form.addRow("Export", self.what)
        form.addRow("Format", self.fmt)
        form.addRow("File", row)
        form.addRow("", self.summary)
        form.addRow(note)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        form.addRow(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        browse.clicked.connect(self._browse)
        self.what.currentIndexChanged.connect(self._rename)
        self.fmt.currentIndexChanged.connect(self._rename)
        self.path.textEdited.connect(lambda _t: setattr(self, "_auto_name", False))
        self._rename()

    def _rename(self) -> None:
        if self._auto_name:
            name = f"{self._stem}.{self.what.currentData()}.{self.fmt.currentData()}"
            self.path.setText(os.path.join(self._directory, name))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export report", self.path.text(), "HTML (*.html);;Markdown (*.md);;All files (*)"
        )
        if path:
            self._auto_name = False
            self.path.setText(path)

    def choice(self) -> ExportChoice:
        return ExportChoice(
            str(self.what.currentData()),
            str(self.fmt.currentData()),
            self.path.text().strip(),
            self.summary.isChecked() and self.summary.isEnabled(),
        )
